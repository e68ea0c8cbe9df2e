"""What the store hands back: small frozen records, the state enums, and the store's errors."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from fabric.errors import ErrorKind, FabricError
from fabric.remediation.domain import Action, ActionKind, ComponentId

__all__ = [
    "ACTIVE_TICKET_STATES",
    "FINISHED_INTENT_STATES",
    "BreakerState",
    "CursorRecord",
    "DecisionRecord",
    "Delivery",
    "IntentRecord",
    "IntentState",
    "InvalidTransitionError",
    "OperatorRequest",
    "RequestKind",
    "SchemaError",
    "SchemaTooNewError",
    "Silence",
    "StaleEpochError",
    "StoreError",
    "TicketRecord",
    "TicketState",
]


class IntentState(StrEnum):
    PENDING = "pending"
    """Written before the side effect; still pending after a crash means "find out what happened"."""
    DONE = "done"
    FAILED = "failed"
    ROLLED_BACK = "rolled_back"
    """Recovery found the side effect had not happened (or undid it)."""


FINISHED_INTENT_STATES = frozenset({IntentState.DONE, IntentState.FAILED, IntentState.ROLLED_BACK})


class TicketState(StrEnum):
    CREATING = "creating"
    """Claimed; the backend ticket may or may not exist yet (adopt it by dedup key before creating one)."""
    OPEN = "open"
    RESOLVED = "resolved"
    CLOSED = "closed"


ACTIVE_TICKET_STATES = frozenset({TicketState.CREATING, TicketState.OPEN})


class RequestKind(StrEnum):
    CLEAR = "clear"
    """Release a quarantined component (it comes back, within the guard, on probation)."""
    RESUME = "resume"
    """Resume automation after the storm breaker halted it."""
    RELOAD = "reload"
    """Re-read one instance's configuration file (``POST /api/v1/reload``): its engine process answers it."""
    BURNIN = "burnin"
    """Open a burn-in window (``POST /api/v1/burnin``): its length and, once it ended, its report are in
    ``burnin_windows`` under the request's id."""


ENGINE_REQUESTS = frozenset({RequestKind.CLEAR, RequestKind.RESUME})
"""What the engine's cycle carries out; a reload is the engine process's runtime's (``pending_reloads``)."""


@dataclass(frozen=True, slots=True)
class BurninWindow:
    """A burn-in window an operator asked for (its id is the request's), as the engine opened and closed it."""

    id: int
    duration: timedelta
    started_at: datetime | None = None
    """When the engine opened it (``None``: asked, not opened yet)."""
    ends_at: datetime | None = None
    ended_at: datetime | None = None
    """When the engine judged it (``None``: still open, or not opened)."""
    dry_run: bool | None = None
    """Whether the engine judged it in dry run (nothing taken out, nothing ticketed)."""
    report: dict[str, Any] | None = None
    """The survivors report (``fabric.remediation.burnin.report_dict``), once it ended."""


@dataclass(frozen=True, slots=True)
class OperatorRequest:
    """Something an operator asked automation to do; the engine carries it out at its next cycle."""

    id: int
    kind: RequestKind
    component: ComponentId | None
    reason: str
    requested_by: str
    requested_at: datetime
    handled_at: datetime | None = None
    outcome: str | None = None
    """What the engine did about it (``None`` while pending)."""
    instance: str | None = None
    """The daemon instance it is for (a reload: that instance's configuration file); ``None``: whichever leads."""
"""At most one ticket row per dedup key is in one of these states (a partial unique index)."""


@dataclass(frozen=True, slots=True)
class IntentRecord:
    """One side effect, logged before it was attempted."""

    id: int
    epoch: int
    kind: ActionKind
    component: ComponentId | None
    payload: dict[str, Any]
    state: IntentState
    created_at: datetime
    finished_at: datetime | None
    outcome: str | None


@dataclass(frozen=True, slots=True)
class DecisionRecord:
    """One recorded policy decision."""

    id: int
    action: Action
    epoch: int | None = None
    """The leader epoch that decided it (``None``: recorded outside leadership, or before version 7)."""


@dataclass(frozen=True, slots=True)
class TicketRecord:
    """The service's own record of a ticket: the source of truth for "is there a ticket for this?"."""

    id: int
    dedup_key: str
    backend: str
    external_key: str | None
    """The backend's key (``OPS-123``, ``LOCAL-17``); ``None`` while ``creating``."""
    state: TicketState
    component: ComponentId | None
    summary: str
    created_at: datetime
    updated_at: datetime
    resolved_at: datetime | None


@dataclass(frozen=True, slots=True)
class CursorRecord:
    """The UFM event cursor of one fabric (the fields of ``fabric.ufm.cursor.CursorState``)."""

    fabric: str
    high_water_id: int | None
    last_event_time: datetime | None
    restart_count: int
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class Silence:
    """An operator's "not now": findings on matching components are recorded but not acted on."""

    id: int
    matcher: str
    """A component id (``link:a/1|b/2``) or an ``fnmatch`` glob over component ids (``link:pod01-*``)."""
    reason: str
    created_by: str
    starts_at: datetime
    ends_at: datetime
    created_at: datetime

    def active(self, now: datetime) -> bool:
        return self.starts_at <= now < self.ends_at


@dataclass(frozen=True, slots=True)
class Delivery:
    """A webhook delivery, kept so that a repeated delivery is recognised and a received one is processed."""

    id: str
    source: str
    received_at: datetime
    payload: Any
    processed_at: datetime | None


@dataclass(frozen=True, slots=True)
class NewDelivery:
    """A webhook delivery just received, for ``record_ticket_deliveries``: its id, sender and the ticket it names."""

    id: str
    source: str
    ticket: str
    """The backend's key of the ticket the delivery is about (``OPS-123``)."""
    payload: Any = None


@dataclass(frozen=True, slots=True)
class BreakerState:
    """The storm breaker of one fabric.  While halted, no UFM writes."""

    fabric: str
    halted: bool = False
    since: datetime | None = None
    reason: str = ""
    storm_dedup_key: str | None = None
    updated_at: datetime | None = None
    last_held: datetime | None = None
    """The newest finding held while halted: the quiet period runs from it."""
    held_count: int = 0
    """Findings held since the breaker tripped."""


class StoreError(FabricError):
    """Base class of the store's errors."""

    kind = ErrorKind.STORE


class SchemaError(StoreError):
    """The database's schema cannot be used by this code."""


class SchemaTooNewError(SchemaError):
    """The database was written by a newer version of the service."""

    def __init__(self, found: int, supported: int) -> None:
        self.found = found
        self.supported = supported
        super().__init__(
            f"database schema version {found} is newer than this code supports (version {supported}): "
            "upgrade fabric-remediation before using this database (downgrades are not supported)"
        )


class InvalidTransitionError(StoreError):
    """A state change that the record's current state does not allow (e.g. finishing a finished intent)."""


class StaleEpochError(StoreError):
    """A writer whose leader epoch is not the fabric's current one: it is no longer the leader and must stop acting.
    ``newest``: the fabric's epoch now (``None``: this instance's own lease ran out before anyone took a newer one)."""

    def __init__(self, epoch: int, newest: int | None) -> None:
        self.epoch = epoch
        self.newest = newest
        why = ("this instance's leadership lease ran out" if newest is None
               else f"the fabric's leader epoch is {newest}")
        super().__init__(f"leader epoch {epoch} is stale: {why}")
