"""What the HTTP API reads and asks of the running service: the contract between ``fabric.api`` and the daemon.

The daemon (``fabric.daemon``) builds one ``ApiContext`` and puts it on the FastAPI app (``app.state.context``);
the routers reach it through dependencies (``fabric.api.deps``), never through globals, so tests build their own
context over a real store and a ``Runtime`` of their own. The store is blocking: endpoints call it in a worker
thread. ``Runtime`` is the live part the store cannot answer (what the running engine last saw and did).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol

from fabric.api.plan_index import PlanIndex
from fabric.config import ServiceConfig
from fabric.controller.telemetry import SampleOutcome
from fabric.store import Store
from fabric.ufm.cursor import EventRead

if TYPE_CHECKING:
    from fabric.api.golden import GoldenIndex


@dataclass(frozen=True, slots=True, order=True)
class LeafPaths:
    """A leaf with fewer paths to core than planned, as the capacity guard holds it (the console's guard bars)."""

    leaf: str
    """Its device key (case-folded name)."""
    paths: int
    minimum: int
    """The fewest paths the guard lets a disable leave it."""
    planned: int


DOWN_SHOWN = 1000
"""At most this many cables down in UFM but not by automation are carried to the console (a storm may hold more;
``GuardFigures.down_total`` counts them all)."""


@dataclass(frozen=True, slots=True)
class GuardFigures:
    """The capacity guard as of the last cycle (``/api/v1/status``)."""

    worst_leaf: str | None = None
    worst_leaf_fraction: float | None = None
    """The worst leaf's paths to core over its planned paths (1.0: intact)."""
    min_leaf_fraction: float = 0.0
    """The fraction of its planned paths every leaf keeps (the guard's ``c``): no disable takes a leaf below it."""
    disabled: int = 0
    cap: int = 0
    disables_last_hour: int = 0
    hourly_limit: int = 0
    reduced_leaves: tuple[LeafPaths, ...] = ()
    """Every leaf below its planned paths to core, by key (the others have all of theirs)."""
    down_not_ours: tuple[tuple[str, str], ...] = ()
    """Switch cables out of service that automation did not take out (down in UFM), as their two ends' names
    (``device/port``), in order, at most ``DOWN_SHOWN``."""
    down_total: int = 0


class Role(StrEnum):
    LEADER = "leader"
    """This instance acts: its engine runs the cycles and writes to UFM and the ticket system."""
    STANDBY = "standby"
    """It serves the API and stores webhook deliveries; it acts once it takes the leadership."""


@dataclass(frozen=True, slots=True)
class LeaderView:
    """Who acts for the fabric, as this instance knows it (``fabric.daemon.leader``)."""

    role: Role
    instance: str
    """This instance (``host:pid``)."""
    epoch: int | None
    """The epoch this instance holds, or (a standby) the newest it saw (``None``: nobody led the fabric yet)."""
    leader: str | None
    """The instance that holds the leadership (a standby: the one that took the newest epoch)."""
    takeover_blocked: str | None = None
    """Why this standby cannot take over from a leader whose lease ran out (``None``: nothing keeps it from it)."""


class EngineState(StrEnum):
    """The engine process as the daemon's API process sees it (``fabric.daemon.supervisor``)."""

    STARTING = "starting"
    """Started, and not reporting yet."""
    RUNNING = "running"
    """Running and writing its status record."""
    RESTARTING = "restarting"
    """It exited without being asked to (a crash, a kill): started again after a back-off."""
    STOPPING = "stopping"
    """The daemon is stopping: the engine finishes its job and exits."""


@dataclass(frozen=True, slots=True)
class EngineProcess:
    """The process that runs the engine's cycles, apart from the API's."""

    state: EngineState
    pid: int | None
    since: datetime
    """When it entered this state (the wall clock)."""
    restarts: int = 0
    """How often it was started again after exiting unasked."""
    last_exit: str | None = None
    """How the last one ended ("killed by SIGKILL", "exit code 1"; ``None``: none ended yet)."""
    silent_for: float | None = None
    """Seconds since it last wrote its status record (``None``: it has not written one)."""


@dataclass(frozen=True, slots=True)
class RuntimeStatus:
    """What the running engine last saw and did; the API's ``/status`` and ``/readyz`` read it."""

    started_at: datetime
    dry_run: bool
    interval_seconds: float
    last_poll_at: datetime | None = None
    last_cycle_at: datetime | None = None
    last_cycle_error: str | None = None
    """Why the last cycle failed (``None``: it completed)."""
    ufm_reachable: bool = False
    view_refused_since: datetime | None = None
    """``Engine.view_refused_since``: UFM's topology readings are refused (the daemon is not ready)."""
    event_read: EventRead | None = None
    """How the last cycle's event list was taken (``None``: no cycle yet)."""
    events_untrusted_since: datetime | None = None
    """Since when every cycle's event list has been one not believed (empty, short, stale): once that lasts
    ``[daemon] events_untrusted_for``, the daemon is not ready. ``None``: the last one was believed."""
    guard: GuardFigures = field(default_factory=GuardFigures)
    counters: dict[str, int] = field(default_factory=dict)
    """The last cycle's ``CycleReport`` counts (events, repeated_events, writes_pending, switch_faults...)."""
    starting: bool = False
    """The engine is starting: settling what the last run left pending, rebuilding its state; no job runs yet."""
    leadership: LeaderView | None = None
    """Who acts (``None``: a runtime outside the daemon, which always acts)."""
    telemetry: SampleOutcome | None = None
    """The last UFM Telemetry sample read (``None``: telemetry is not read, or no sample was read yet)."""
    engine: EngineProcess | None = None
    """The engine's process (``None``: a runtime in the API's own process, as tests build)."""


class NotApplied(StrEnum):
    """Why a reload applied nothing: a script asking for one must be able to tell (``POST /reload`` answers
    non-2xx)."""

    INVALID = "invalid"
    """The file does not load, or the engine refused its settings: the running configuration stays (422)."""
    BUSY = "busy"
    """The engine is starting or the daemon stopping: ask again later (503)."""
    STANDBY = "standby"
    """This instance stands by and runs no engine: it leads with the configuration it started with (409)."""


@dataclass(frozen=True, slots=True)
class Reload:
    """What a reload did: ``message`` for the audit and the answer; ``not_applied`` when it applied nothing."""

    message: str
    not_applied: NotApplied | None = None


class Runtime(Protocol):
    def status(self) -> RuntimeStatus: ...

    async def reload(self, by: str, reason: str) -> Reload:
        """Re-read rules and silences (``POST /api/v1/reload``, asked by ``by`` for ``reason``); what changed, or
        why nothing was."""
        ...

    def wake(self) -> None:
        """Something was stored for the engine to act on (a webhook delivery, an operator's request): act soon.
        Called from the API's worker threads."""
        ...


@dataclass(slots=True)
class ApiContext:
    config: ServiceConfig
    index: PlanIndex
    """The plan as the API reads it (``plan_index``)."""
    store: Store
    runtime: Runtime
    clock: Callable[[], datetime]
    """The service's clock (the daemon's is UTC now; tests and the demo use the simulator's)."""
    ping_ufm: Callable[[], Awaitable[bool]] | None = None
    """``/readyz``'s UFM check (``None``: the runtime's last poll says)."""
    golden: GoldenIndex = field(init=False)
    """The golden set's index over the store's history (``fabric.api.golden``), built with the context."""

    def __post_init__(self) -> None:
        from fabric.api.golden import GoldenIndex  # it reads the models, which read this module

        self.golden = GoldenIndex(self.index)
