"""Everything a simulated UFM knows, behind one lock: the fabric, events, alarms, jobs, unhealthy ports.

``SimState`` is what the HTTP app serves and what scenarios and the admin API change.  Every public
method takes the lock, so the server thread, the ticker and a test may call it concurrently.  Events are
stamped with the simulated time at which they happen: a scheduled callback runs "at" its own time even
when the clock has already moved past it, so ids and timestamps always rise together.
"""

from __future__ import annotations

import logging
import random
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from fabric.simulator.alarms import AlarmTable
from fabric.simulator.apifaults import ApiFaults
from fabric.simulator.catalog import spec
from fabric.simulator.clock import SimClock, check_span, later
from fabric.simulator.events import EventRecord, EventStore, shape_for_version
from fabric.simulator.fabric_state import FabricState, LinkState, Transition
from fabric.simulator.jobs import Job, JobTable
from fabric.simulator.naming import (
    EventObject,
    link_ends_text,
    link_object,
    node_object,
    port_object,
)
from fabric.simulator.scheduler import Scheduler
from fabric.simulator.telemetry import Telemetry, TelemetrySettings
from fabric.simulator.telemetry_faults import TelemetryFaultKind, TelemetryFaults, malformed
from fabric.simulator.unhealthy import UnhealthyPorts
from topology.formats.ufm_render import PortRef
from topology.model import End, Fabric
from topology.ports import switch_port

log = logging.getLogger(__name__)
_PORT_NAME = re.compile(r"^(?:0x)?([0-9a-fA-F]{16})_(\d+)$")
PORT_ACTIONS = ("disable", "enable", "reset")


class TargetError(ValueError):
    """A scenario step or admin request the simulated fabric cannot carry out: it names a port, link or node
    the fabric does not have, or asks for more than there is (hosts, cables, time before the horizon)."""


@dataclass(slots=True)
class SimSettings:
    ufm_version: str = "6.20.0"
    """Which UFM release to imitate; selects the event payload shape (6.16 and older: legacy)."""
    job_seconds: float = 2.0
    """Simulated seconds a port action's job stays Running."""
    max_events: int = 250_000
    seed: int = 0
    sweep_seconds: float = 10.0
    """Simulated seconds from ``PUT /app/unhealthy_ports`` to the subnet manager's sweep that applies it (OpenSM's
    default ``sweep_interval``): only then do ``/resources/isolated_ports``, the port's state and its traffic
    change. ``/app/unhealthy_ports`` lists the port at once (the PUT is synchronous)."""
    reset_seconds: float = 2.0
    """Simulated seconds a port reset keeps its link down (it retrains) once the reset's job completes."""
    telemetry: TelemetrySettings = field(default_factory=TelemetrySettings)

    def __post_init__(self) -> None:
        check_span(self.job_seconds, "job_seconds")
        check_span(self.sweep_seconds, "sweep_seconds")
        check_span(self.reset_seconds, "reset_seconds")


@dataclass(slots=True)
class ActionFailure:
    """Make the next ``remaining`` port actions (on ``port``, or any) end "Completed With Errors"."""

    remaining: int
    port: str | None = None
    reason: str = "injected failure"


@dataclass(slots=True)
class JobStall:
    """Make the next ``remaining`` port actions' jobs (on ``port``, or any) stay Running for ``runs_for``
    simulated seconds instead of ``job_seconds``; ``None``: they never complete (and never change the port)."""

    remaining: int
    port: str | None = None
    runs_for: float | None = None


@dataclass(frozen=True, slots=True)
class RequestSeen:
    """A request the simulator serves, as request observers see it (``fabric.simulator.middleware``)."""

    method: str
    path: str
    """The path after UFM's REST prefix (``/actions``, ``/jobs/12``), or the whole path outside it
    (``/simulator/state``)."""
    prefix: str | None
    """``/ufmRest``, ``/ufmRestV2``, ``/ufmRestV3``; None for the simulator's own API and logins."""
    moment: str = "received"
    """``received`` (before the app handles it) or ``answering`` (handled, its answer about to be sent)."""
    status: int | None = None
    """The answer's status, when ``answering``."""

    def answering(self, status: int) -> RequestSeen:
        return RequestSeen(self.method, self.path, self.prefix, "answering", status)


RequestObserver = Callable[[RequestSeen], None]


@dataclass(slots=True)
class _Counters:
    ticks: int = 0
    callbacks: int = 0
    restarts: int = 0
    requests: dict[str, int] = field(default_factory=dict)


class SimState:
    def __init__(
        self,
        fabric: Fabric,
        *,
        plan: Fabric | None = None,
        clock: SimClock | None = None,
        settings: SimSettings | None = None,
    ) -> None:
        self.lock = threading.RLock()
        self.settings = settings or SimSettings()
        self.shape = shape_for_version(self.settings.ufm_version)
        self.clock = clock or SimClock()
        self.plan = plan
        self.fabric = FabricState(fabric)
        self.fabric.warm()
        self.started = self.clock.now()
        self.telemetry = Telemetry(self.fabric, self.settings.telemetry, self.started)
        self.telemetry_faults = TelemetryFaults()
        self._sweep_due = False
        self.events = EventStore(self.settings.max_events)
        self.alarms = AlarmTable()
        self.jobs = JobTable()
        self.unhealthy = UnhealthyPorts()
        self.api_faults = ApiFaults()
        self.scheduler = Scheduler()
        self.action_failures: list[ActionFailure] = []
        self.job_stalls: list[JobStall] = []
        self.restart_listeners: list[Callable[[], None]] = []
        self.request_observers: list[RequestObserver] = []
        """Called with every request the app serves (``fabric.simulator.middleware``): tests act on them."""
        self.rng = random.Random(self.settings.seed)
        self.counters = _Counters()
        self.errors: list[str] = []
        """Scheduled steps that failed (the last 100), e.g. a scenario naming a port that does not exist."""
        self._now_override: datetime | None = None

    @classmethod
    def from_plan(
        cls,
        plan: Fabric,
        *,
        as_built: Fabric | None = None,
        clock: SimClock | None = None,
        settings: SimSettings | None = None,
    ) -> SimState:
        """A UFM over ``plan``; ``as_built`` (e.g. from ``topology.faults.plant``) is what it discovers."""
        return cls(as_built if as_built is not None else plan, plan=plan, clock=clock, settings=settings)

    # ------------------------------------------------------------------------------------------ time

    def now(self) -> datetime:
        """The current simulated time (inside a scheduled callback: the time it was scheduled for)."""
        override = self._now_override
        return override if override is not None else self.clock.now()

    def schedule(self, delay: float, label: str, callback: Callable[[], None]) -> datetime:
        """Run ``callback`` ``delay`` simulated seconds from now (0: at the next tick)."""
        try:
            when = later(self.now(), max(0.0, delay))
        except ValueError as exc:  # NaN, or past the horizon: refused, never a datetime overflow
            raise TargetError(f"{label}: {exc}") from None
        with self.lock:
            self.scheduler.at(when, label, callback)
        return when

    def tick(self) -> int:
        """Run every callback due by the clock's time, in time order; expire alarms.  Returns callbacks run."""
        with self.lock:
            self.counters.ticks += 1
            return self._run_due(self.clock.now())

    def advance(self, seconds: float) -> datetime:
        """Move the clock ``seconds`` forward, running what falls due on the way at its own time."""
        with self.lock:
            target = later(self.clock.now(), seconds)
            self._run_due(target)
            self.clock.advance_to(target)
            return target

    def _run_due(self, until: datetime) -> int:
        ran = 0
        while (item := self.scheduler.pop_due(until)) is not None:
            self._now_override = item.when
            try:
                item.callback()
            except Exception as exc:  # a bad scenario step must not stop the simulator
                message = f"{item.when.isoformat()} {item.label}: {type(exc).__name__}: {exc}"
                log.warning("simulator step failed: %s", message)
                self.errors.append(message)
                del self.errors[:-100]
            finally:
                self._now_override = None
            ran += 1
        self.counters.callbacks += ran
        if self.alarms.expire(until):
            self.fabric.versions.bump("alarms")
        return ran

    # ------------------------------------------------------------------------------------------ events

    @property
    def ufm_version(self) -> str:
        return self.settings.ufm_version

    def set_ufm_version(self, version: str) -> None:
        with self.lock:
            self.shape = shape_for_version(version)
            self.settings.ufm_version = version

    def emit(self, event_id: int, obj: EventObject, description: str) -> EventRecord:
        with self.lock:
            record = self.events.append(spec(event_id), obj, description, self.now())
            self.fabric.versions.bump("events")
            if self.alarms.observe(record):
                self.fabric.versions.bump("alarms")
            return record

    def emit_port(self, event_id: int, port: str, *args: object) -> EventRecord:
        name = self.fabric.names[port]
        return self.emit(event_id, port_object(name), spec(event_id).describe(*args))

    def emit_links(self, change: Transition) -> None:
        """329 for every link that went down, 328 for every link that came up; their ports' counters told."""
        if change:
            went_down = [port for pair in change.down for port in pair]
            self.telemetry.links_changed([*went_down, *(p for pair in change.up for p in pair)], went_down,
                                         self.now())
        for event_id, pairs in ((329, change.down), (328, change.up)):
            for a, b in pairs:
                first, second = self.fabric.names[a], self.fabric.names[b]
                self.emit(event_id, link_object(first, second), spec(event_id).describe(link_ends_text(first, second)))

    def node_object(self, guid: str) -> EventObject:
        system = self.fabric.systems[guid]
        return node_object(guid, system["system_name"], switch=system["type"] == "switch")

    def emit_node(self, event_id: int, guid: str, **named: object) -> EventRecord:
        item = spec(event_id)
        name = self.fabric.systems[guid]["system_name"]
        description = item.describe(**named) if named else item.describe(name)
        return self.emit(event_id, self.node_object(guid), description)

    def clear_alarms(self, event_ids: tuple[int, ...], object_name: str) -> None:
        with self.lock:
            if self.alarms.clear(event_ids, object_name):
                self.fabric.versions.bump("alarms")

    # ------------------------------------------------------------------------------------------ targets

    def port_name(self, port: str) -> PortRef:
        return self.fabric.names[port]

    def resolve_port(self, text: str) -> str:
        """A port from ``<guid>_<n>``, ``<switch>/<label>``, ``<adapter name>[/1]`` or ``random[:switch|host]``."""
        value = text.strip()
        if value.lower().startswith("random"):
            return self._random_link(value).a
        match = _PORT_NAME.match(value)
        if match:
            name = f"{match.group(1).lower()}_{int(match.group(2))}"
            if name in self.fabric.ports:
                return name
            raise TargetError(f"no port {name} in the fabric")
        devices = self.fabric.fabric.devices
        device = devices.get(value.casefold())
        if device is not None:
            ports = [p for end, p in self.fabric.port_at.items() if end.device == device.key]
            if len(ports) == 1:
                return ports[0]
            raise TargetError(f"{value!r} has {len(ports)} ports; name one as {value}/<port>")
        for index in (i for i, ch in enumerate(value) if ch == "/"):
            head, label = value[:index].strip(), value[index + 1:].strip()
            device = devices.get(head.casefold())
            if device is None:
                continue
            found = self.fabric.port_at.get(End(device.key, switch_port(label) or label))
            if found is not None:
                return found
            raise TargetError(f"{head!r} has no cabled port {label!r}")
        raise TargetError(f"no port {value!r} (use <guid>_<n>, <switch>/<port> or an adapter name)")

    def resolve_link(self, text: str) -> LinkState:
        """A link by its UFM name (``a:b``, either order), by one of its ports, or ``random[:switch|host]``."""
        value = text.strip()
        if value.lower().startswith("random"):
            return self._random_link(value)
        if ":" in value and _PORT_NAME.match(value.split(":")[0].strip()):
            a, _, b = value.partition(":")
            for name in (f"{a.strip().lower()}:{b.strip().lower()}", f"{b.strip().lower()}:{a.strip().lower()}"):
                if name in self.fabric.links:
                    return self.fabric.links[name]
            raise TargetError(f"no link {value!r}")
        link = self.fabric.link_at(self.resolve_port(value))
        if link is None:
            raise TargetError(f"port {value!r} is not cabled")
        return link

    def _random_link(self, selector: str) -> LinkState:
        _, _, kind = selector.partition(":")
        kind = kind.strip().lower()
        if kind not in ("", "switch", "host"):
            raise TargetError(f"unknown selector {selector!r} (random, random:switch or random:host)")
        candidates = []
        for link in self.fabric.links.values():
            switch_link = self.fabric.names[link.a].is_switch and self.fabric.names[link.b].is_switch
            if kind == "" or (kind == "switch") == switch_link:
                candidates.append(link)
        if not candidates:
            raise TargetError(f"no {kind or 'any'} link to choose from")
        return self.rng.choice(candidates)

    def resolve_node(self, text: str, *, switch: bool) -> str:
        """A switch (or host) system GUID from its name, its GUID, or ``random``."""
        value = text.strip()
        wanted = "switch" if switch else "host"
        if value.lower() == "random":
            choices = [g for g, s in self.fabric.systems.items() if s["type"] == wanted]
            if not choices:
                raise TargetError(f"no {wanted} to choose from")
            return self.rng.choice(choices)
        guid = self.fabric.resolve_system(value)
        if guid is None or self.fabric.systems[guid]["type"] != wanted:
            raise TargetError(f"no {wanted} {value!r}")
        return guid

    def hosts(self) -> list[str]:
        return [g for g, s in self.fabric.systems.items() if s["type"] == "host"]

    # ------------------------------------------------------------------------------------------ actions

    def start_action(self, action: str, system_guid: str, port: str, user: str) -> Job:
        """``POST /actions``: a job that completes after ``job_seconds`` (or as a stall says), then changes the
        port."""
        with self.lock:
            job = self.jobs.create(action, system_guid, port, self.now(), user)
            stall = self._stall_for(port)
            runs_for = self.settings.job_seconds if stall is None else stall.runs_for
            if runs_for is not None:
                self.schedule(runs_for, f"job {job.id}: {action} {port}", lambda: self._finish(job))
            return job

    def _stall_for(self, port: str) -> JobStall | None:
        for rule in self.job_stalls:
            if rule.remaining > 0 and rule.port in (None, port):
                rule.remaining -= 1
                return rule
        return None

    def _failure_for(self, port: str) -> ActionFailure | None:
        for rule in self.action_failures:
            if rule.remaining > 0 and rule.port in (None, port):
                rule.remaining -= 1
                return rule
        return None

    def _finish(self, job: Job) -> None:
        port = job.port or ""
        error = self._action_error(job, port)
        if error is None:
            rule = self._failure_for(port)
            error = rule.reason if rule else None
        job.finish(self.now(), error)
        if error is not None:
            known = port in self.fabric.names
            obj = port_object(self.fabric.names[port]) if known else EventObject(
                "IBPort", port, f"default / {job.system_guid}", job.system_guid)
            self.emit(337, obj, spec(337).describe(port, job.action))
            return
        self.emit_port(336, port, port, job.action)
        if job.action == "disable":
            self.emit_links(self.fabric.set_disabled(port, True))
        elif job.action == "enable":
            self.emit_links(self.fabric.set_disabled(port, False))
        else:
            self._reset(port)

    def _reset(self, port: str) -> None:
        """The port retrains: its link goes down (both ends count a link down) for ``reset_seconds``, and what a
        reset cures on either end stops."""
        link = self.fabric.link_at(port)
        if link is None:
            return
        self.telemetry.reset_port((link.a, link.b), self.now())
        self.emit_links(self.fabric.set_hold(link, "reset", True))

        def retrained() -> None:
            current = self.fabric.link_at(port)
            if current is not None:
                self.emit_links(self.fabric.set_hold(current, "reset", False))

        self.schedule(self.settings.reset_seconds, f"reset {port}: link retrained", retrained)

    def _action_error(self, job: Job, port: str) -> str | None:
        if job.action not in PORT_ACTIONS:
            return f"unsupported action {job.action!r}"
        name = self.fabric.names.get(port)
        if name is None:
            return f"port {port!r} not found"
        if job.system_guid not in (name.system_guid, name.guid):
            return f"port {port} is not a port of system {job.system_guid}"
        if name.system_guid in self.fabric.down_systems:
            return f"system {name.system_name} is not reachable"
        return None

    # ------------------------------------------------------------------------------------------ unhealthy

    def mark_unhealthy(self, port: str, action: str, condition: str) -> None:
        with self.lock:
            name = self.fabric.names[port]
            peer = self.fabric.peer_of(port)
            if self.unhealthy.mark(name, self.fabric.names[peer] if peer else None, action, condition, self.now()):
                subject = self.fabric.names[peer] if peer else name
                self.emit(702, port_object(name), spec(702).describe(subject.sm_name, condition))
                self._sweep_soon()

    def mark_healthy(self, port: str) -> None:
        with self.lock:
            if self.unhealthy.clear(port):
                self.clear_alarms((702,), port)
                self._sweep_soon()

    def _sweep_soon(self) -> None:
        """The subnet manager's next sweep applies the unhealthy ports as they are then (one sweep for every
        change made before it)."""
        if not self._sweep_due:
            self._sweep_due = True
            self.schedule(self.settings.sweep_seconds, "subnet manager sweep", self._sweep)

    def _sweep(self) -> None:
        self._sweep_due = False
        changed = self.fabric.set_isolated(self.unhealthy.isolated())
        peers = [peer for port in changed if (peer := self.fabric.peer_of(port)) is not None]
        self.telemetry.links_changed([*changed, *peers], (), self.now())

    # ------------------------------------------------------------------------------------------ telemetry

    def telemetry_sample(self) -> bytes:
        """UFM Telemetry's answer now: the CSV of every port's counters, as the telemetry faults shape it."""
        with self.lock:
            now = self.now()
            faults = self.telemetry_faults.current(now)
            stale = next((f for f in faults if f.kind is TelemetryFaultKind.STALE), None)
            missing = [f for f in faults if f.kind is TelemetryFaultKind.MISSING]
            mangled = next((f for f in faults if f.kind is TelemetryFaultKind.MALFORMED), None)
            if stale is not None and stale.frozen is not None:
                body = stale.frozen
                stale.count()
            else:
                body = self.telemetry.render(now, frozenset().union(*(f.ports for f in missing)))
                for fault in missing:
                    fault.count()
            if mangled is not None:
                mangled.count()
                body = malformed(body, mangled.malformation)
            return body

    # ------------------------------------------------------------------------------------------ restart

    def ufm_restart(self) -> None:
        """UFM restarts: REST event history and ids, alarms, jobs and sessions are gone; the fabric stays."""
        with self.lock:
            self.events.reset()
            self.alarms.reset()
            self.jobs.reset()
            self.fabric.versions.bump("alarms", "ports", "links", "switches", "servers", "sites")
            self.counters.restarts += 1
            for listener in self.restart_listeners:
                listener()

    def observe(self, seen: RequestSeen) -> None:
        """Tell every request observer, outside the lock (one may read the state, or stop a client)."""
        for observer in list(self.request_observers):
            observer(seen)

    # ------------------------------------------------------------------------------------------ reading

    def summary(self) -> dict[str, Any]:
        with self.lock:
            fabric = self.fabric
            return {
                "now": self.now().isoformat(),
                "clock_rate": self.clock.rate,
                "ufm_version": self.ufm_version,
                "event_shape": self.shape.value,
                "systems": len(fabric.systems),
                "ports": len(fabric.ports),
                "links": len(fabric.links),
                "links_up": len(fabric.up_links()),
                "links_down": sorted(k.name for k in fabric.links.values() if not fabric.link_up(k)),
                "disabled_ports": sorted(fabric.disabled),
                "down_systems": sorted(fabric.down_systems),
                "events": len(self.events),
                "last_event_id": self.events.last_id,
                "alarms": len(self.alarms),
                "jobs": len(self.jobs),
                "unhealthy_ports": self.unhealthy.names(),
                "isolated_ports": list(fabric.isolated),
                "telemetry_faults": self.telemetry_faults.to_list(),
                "restarts": self.counters.restarts,
                "errors": list(self.errors),
                "pending": [{"at": when.isoformat(), "what": label} for when, label in self.scheduler.pending()],
                "api_faults": [rule.to_dict() for rule in self.api_faults.rules()],
                "versions": dict(fabric.versions.counters),
            }
