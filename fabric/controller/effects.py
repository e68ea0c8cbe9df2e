"""Side effects on the ticket system, each logged as an intent; what a cycle reports.

A ticket write is queued in the store's outbox (``outbox``), not sent: the cycle never waits on the ticket system,
so a Jira that is down or slow delays no UFM write. The intent is written before the write is queued and marked
done once it is; a crash in between leaves it pending, for ``recovery`` to settle (the reconciliation asks for the
ticket again). UFM's port writes are ``writes``'.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from fabric.controller.outbox import TicketOutbox
from fabric.controller.telemetry import SampleOutcome
from fabric.errors import ErrorKind
from fabric.remediation.detectors import Explained
from fabric.remediation.domain import Action, ActionKind, ComponentId, Finding
from fabric.store import Store
from fabric.store.records import IntentState
from fabric.ufm.client import PortActionMethod, PostedAction
from fabric.ufm.cursor import CursorState, EventRead, Lookback
from fabric.ufm.errors import UfmError
from fabric.ufm.models import Event, Job, Port, UnhealthyPort, Versioning
from fabric.ufm.snapshot import TopologySource

UFM_WRITES = frozenset({ActionKind.DISABLE, ActionKind.ENABLE, ActionKind.RESET})
TICKET_WRITES = frozenset({ActionKind.TICKET, ActionKind.REOPEN, ActionKind.COMMENT})


class UfmApi(TopologySource, Protocol):
    """What the engine needs of UFM (``fabric.ufm.client.UfmClient`` provides it)."""

    async def port(self, name: str) -> Port: ...
    async def events(self, *, handed_over: CursorState | None = None, lookback: Lookback | None = None,
                     **filters: str) -> list[Event]: ...
    async def versioning(self) -> Versioning: ...
    async def unhealthy_ports(self) -> list[UnhealthyPort]: ...
    async def take_out(self, port_name: str, method: PortActionMethod) -> PostedAction: ...
    async def post_port_action(self, port_name: str, action: str) -> PostedAction: ...
    async def put_back(self, port_name: str, method: PortActionMethod) -> PostedAction: ...
    async def await_jobs(self, job_ids: Sequence[str], within: float) -> dict[str, Job | UfmError]: ...
    async def running_jobs(self) -> list[Job]: ...
    async def external_event(self, description: str, *, object_name: str | None = None, otype: str = "Switch",
                             event_id: int = ...) -> None: ...


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
    """New events handed to the pipeline (with those read at start-up or while readings were refused)."""
    events_by_type: dict[str, int] = field(default_factory=dict)
    """``events`` by UFM event type: its id as UFM numbers it (``"329"``: Link is Down)."""
    telemetry: SampleOutcome | None = None
    """The UFM Telemetry sample read this cycle (``None``: none was due, or telemetry is not read)."""
    repeated_events: int = 0
    """Events handed over again (same id, time, type and object), dropped by the pipeline as counted already."""
    event_read: EventRead | None = None
    """How the cursor took the cycle's event list (``fabric.ufm.cursor``): believed, or empty, short or stale and
    nothing handed over from it (``None``: no event list read, a reconcile)."""
    views_refused: int = 0
    """Readings of UFM's topology refused as ones that cannot be true (``fabric.ufm.plausibility``)."""
    findings: list[Finding] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)
    executed: int = 0
    failed: list[CycleFailure] = field(default_factory=list)
    writes_pending: int = 0
    """UFM port writes sent and not settled at the end of the cycle: the job runs, or the POST got no answer."""
    writes_backing_off: int = 0
    """Components whose last write UFM did not confirm, waiting for their next attempt."""
    writes_given_up: int = 0
    """Components whose write UFM did not confirm in ``[ufm] write_attempts`` tries: nothing more is sent."""
    ports_out_unheld: int = 0
    """Planned cables UFM shows out (a port disabled or isolated) that no component automation holds out: an
    operator's (or another tool's) action, recorded once and left alone (``reconcile.explain_unheld``)."""
    switch_faults: int = 0
    """Switch faults found this cycle (many cables of one switch at once: one switch ticket, no cable disabled)."""
    folded: int = 0
    """Cable findings folded into a switch fault this cycle."""
    settling: int = 0
    """Cable findings held back this cycle for ``[rules] immediate_settle``, to be acted on in a later one."""
    repairs_backed_out: int = 0
    """Re-enabled links UFM did not show up at their planned width and speed in time: backed out this cycle."""
    deliveries: int = 0
    """Ticket webhook deliveries processed this cycle (``fabric.controller.deliveries``)."""
    explained: list[Explained] = field(default_factory=list)
    """Link-downs not counted as faults this cycle, and why (a reboot, automation's own port action, a silence)."""
    poll_seconds: float = 0.0
    """How long UFM took to answer the cycle's event poll (wall time, for the metrics; nothing decides on it)."""

    def fail(self, kind: ErrorKind, action: str, component: ComponentId | None, cause: object) -> None:
        self.failed.append(CycleFailure(kind, action, component, str(cause)))


def ticket_summary(action: Action) -> str:
    target = str(action.component) if action.component else "the fabric"
    return f"[fabric-remediation] {action.rule} on {target}"


class Effects:
    def __init__(self, store: Store, outbox: TicketOutbox, *, epoch: int) -> None:
        self.store, self.outbox, self.epoch = store, outbox, epoch

    def ticket_action(self, action: Action, report: CycleReport, body: str) -> None:
        """Queue the ticket write ``action`` asks for in the outbox, saying ``body`` (the store only: it is sent
        later)."""
        intent = self.store.begin_intent(self.epoch, action.kind, action.component, {"rule": action.rule})
        summary = ticket_summary(action)
        if action.kind is ActionKind.TICKET:
            self.outbox.queue_open(action.component, summary, body, action.rule)
        elif action.kind is ActionKind.REOPEN:
            assert action.component is not None
            self.outbox.queue_reopen(action.component, summary, body, action.rule)
        else:
            self.outbox.queue_comment(action.component, body)
        self.store.finish_intent(intent, IntentState.DONE, f"queued: {summary}")
        report.executed += 1
