"""Side effects on UFM and the ticket system, each logged as an intent before it is attempted.

An intent is written (committed) before the write, and marked done or failed after it; a crash in between
leaves it pending, for ``recovery`` to settle by reading UFM. Ticket backends are blocking (``tickets.base``):
they run in a worker thread, so the event loop the engine shares with the API and webhooks never waits on them.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from fabric.controller.ticketing import Ticketing
from fabric.errors import ErrorKind
from fabric.remediation.domain import Action, ActionKind, ComponentId, Finding
from fabric.store import Store
from fabric.store.records import IntentState
from fabric.ufm.client import PortActionMethod
from fabric.ufm.errors import UfmError
from fabric.ufm.models import Event, Port, Versioning
from fabric.ufm.snapshot import TopologySource
from tickets.base import TicketError

UFM_WRITES = frozenset({ActionKind.DISABLE, ActionKind.ENABLE})
TICKET_WRITES = frozenset({ActionKind.TICKET, ActionKind.REOPEN, ActionKind.COMMENT})


class UfmApi(TopologySource, Protocol):
    """What the engine needs of UFM (``fabric.ufm.client.UfmClient`` provides it)."""

    async def port(self, name: str) -> Port: ...
    async def events(self, **filters: str) -> list[Event]: ...
    async def versioning(self) -> Versioning: ...
    async def take_out(self, port: str | Port, method: PortActionMethod) -> Any: ...
    async def put_back(self, port: str | Port, method: PortActionMethod) -> Any: ...


@dataclass(frozen=True, slots=True)
class CycleFailure:
    """A side effect that did not happen, typed so that metrics count failures by kind."""

    kind: ErrorKind
    action: str
    """What was attempted: an ``ActionKind`` value, or ``ticket`` for reconciliation's."""
    component: ComponentId | None
    cause: str

    def __str__(self) -> str:
        return f"{self.action} {self.component}: {self.cause}"


@dataclass(slots=True)
class CycleReport:
    at: datetime
    events: int = 0
    findings: list[Finding] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)
    executed: int = 0
    failed: list[CycleFailure] = field(default_factory=list)
    switch_faults: int = 0
    """Switch faults found this cycle (many cables of one switch at once: one switch ticket, no cable disabled)."""
    folded: int = 0
    """Cable findings folded into a switch fault this cycle."""

    def fail(self, kind: ErrorKind, action: str, component: ComponentId | None, cause: object) -> None:
        self.failed.append(CycleFailure(kind, action, component, str(cause)))


def ticket_summary(action: Action) -> str:
    target = str(action.component) if action.component else "the fabric"
    return f"[fabric-remediation] {action.rule} on {target}"


class Effects:
    def __init__(self, store: Store, ufm: UfmApi, ticketing: Ticketing, *, epoch: int,
                 method: PortActionMethod) -> None:
        self.store, self.ufm, self.ticketing, self.epoch, self.method = store, ufm, ticketing, epoch, method

    async def port_action(self, action: Action, port: str, report: CycleReport) -> bool:
        """Disable or enable ``port`` for ``action``; True when UFM confirmed it."""
        intent = self.store.begin_intent(self.epoch, action.kind, action.component,
                                         {"port": port, "method": self.method.value})
        try:
            if action.kind is ActionKind.DISABLE:
                await self.ufm.take_out(port, self.method)
            else:
                await self.ufm.put_back(port, self.method)
        except UfmError as exc:
            self.store.finish_intent(intent, IntentState.FAILED, str(exc))
            report.fail(ErrorKind.UFM, action.kind.value, action.component, exc)
            return False
        self.store.finish_intent(intent, IntentState.DONE, f"{action.kind.value} {port}")
        report.executed += 1
        return True

    async def ticket_action(self, action: Action, report: CycleReport) -> None:
        intent = self.store.begin_intent(self.epoch, action.kind, action.component, {"rule": action.rule})
        summary = ticket_summary(action)
        try:
            await asyncio.to_thread(self._ticket_write, action, summary)
        except TicketError as exc:
            self.store.finish_intent(intent, IntentState.FAILED, str(exc))
            report.fail(ErrorKind.TICKET, action.kind.value, action.component, exc)
            return
        self.store.finish_intent(intent, IntentState.DONE, summary)
        report.executed += 1

    def _ticket_write(self, action: Action, summary: str) -> None:
        if action.kind is ActionKind.TICKET:
            self.ticketing.ensure_open(action.component, summary, action.reason)
        elif action.kind is ActionKind.REOPEN:
            assert action.component is not None
            self.ticketing.reopen(action.component, action.reason, summary)
        else:
            self.ticketing.comment(action.component, action.reason)
