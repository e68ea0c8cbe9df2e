"""The faults a scenario step can inject, each with the events UFM raises for it (``steps.py``: what a step is).

Each also moves UFM Telemetry's counters where the fault would (a link down counts on its ends, ``ber`` sets the
port's BER, ``hot_module`` its module's temperature, a reboot clears the system's counters); the steps that
change only the counters are in ``telemetry_steps.py``.

| kind            | events (UFM event ids)                                                             |
|-----------------|------------------------------------------------------------------------------------|
| `flap`          | per cycle 329 Link is Down, then 328 Link is Up                                    |
| `ber`           | 918 + 916 (high symbol / effective BER), after `escalate_after` 917 + 915 (critical) |
| `link_down`     | 329 (ports Down/Polling, link leaves /resources/links); 328 after `duration`        |
| `degrade`       | 130 non-optimal width (active_width `1x`) and/or 701 non-optimal speed, both ends  |
| `hot_module`    | 919 cable temperature, 392 + 911 module temperature; 394 module FAULT if asked     |
| `switch_reboot` | 907 Switch is Down + 329 for every link; after `downtime` 908, 1312, 328s (907 and |
|                 | 908 only if `down_event`; 1312 `rebooted_after` the switch is back, if given)      |
| `host_reboot`   | per host 331 Node is Down (if `down_event`) + 329s; after `downtime` 332 + 328s    |
| `ufm_restart`   | event history and ids reset; API answers 503 during `downtime`                     |
| `miswire`       | two cables' far ends swapped: 329 for the old links, 328 for the new ones          |
| `api`           | an endpoint: 500s, slow, truncated or a short list, for `duration` or `requests`   |
| `action_failure`| the next `count` port actions end "Completed With Errors" (337)                    |
| `job_stall`     | the next `count` port actions' jobs stay Running `runs_for` (omitted: forever)     |
| `unhealthy`     | the SM marks a port unhealthy: /app/unhealthy_ports entry and 702                  |
| `storm`         | `count` threshold events (110/111/112/113) on random ports                          |
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

from fabric.simulator.apifaults import ApiFault, ApiFaultMode
from fabric.simulator.catalog import SPECS, STORM_EVENTS, WEAK_PORT_EVENTS
from fabric.simulator.clock import later
from fabric.simulator.fabric_state import Transition
from fabric.simulator.naming import module_object
from fabric.simulator.state import ActionFailure, JobStall, SimState, TargetError
from fabric.simulator.steps import DURATION, Step, at_once_or_later, between
from fabric.simulator.telemetry import check_ber
from fabric.simulator.telemetry_steps import TELEMETRY_STEPS
from fabric.simulator.unhealthy import UNHEALTHY_ACTIONS
from topology.rates import LANE_GBPS

WIDTHS = ("1x", "2x", "4x", "8x", "12x")
"""InfiniBand link widths, as UFM writes ``active_width``."""
MAX_STORM = 2_000_000
"""The most events one storm (a step or ``POST /simulator/events/bulk``) raises."""


@dataclass(slots=True)
class Flap(Step):
    kind: ClassVar[str] = "flap"
    link: str = "random:switch"
    cycles: int = field(default=3, metadata=between(1, 10_000))
    period: float = field(default=60.0, metadata=DURATION)
    down_for: float | None = field(default=None, metadata=DURATION)

    def check(self) -> None:
        if not 0 < self._down_for() < self.period:
            raise ValueError("'down_for' must be longer than 0 and shorter than 'period'")

    def _down_for(self) -> float:
        return self.down_for if self.down_for is not None else self.period / 2

    def apply(self, state: SimState) -> None:
        port = state.resolve_link(self.link).a
        down_for = self._down_for()

        def hold(on: bool) -> Callable[[], None]:
            def run() -> None:
                link = state.fabric.link_at(port)
                if link is not None:
                    state.emit_links(state.fabric.set_hold(link, "flap", on))
            return run

        for cycle in range(self.cycles):
            at_once_or_later(state, cycle * self.period, f"flap {port} down #{cycle + 1}", hold(True))
            state.schedule(cycle * self.period + down_for, f"flap {port} up #{cycle + 1}", hold(False))


@dataclass(slots=True)
class Ber(Step):
    kind: ClassVar[str] = "ber"
    port: str = "random:switch"
    escalate_after: float | None = field(default=600.0, metadata=DURATION)
    warning_threshold: str = "1e-13"
    critical_threshold: str = "1e-12"

    def check(self) -> None:
        for name in ("warning_threshold", "critical_threshold"):
            try:
                check_ber(float(getattr(self, name)), f"'{name}'")
            except ValueError as exc:
                raise ValueError(f"'{name}' must be a BER from 0 to 1, got {getattr(self, name)!r}") from exc

    def apply(self, state: SimState) -> None:
        port = state.resolve_port(self.port)
        # The port's counters carry the BER UFM reports: symbol errors at its rate.
        state.telemetry.set_ber(port, float(self.warning_threshold), state.now(), curable=False)
        state.fabric.set_port_fields([port], high_ber_severity="Warning")
        state.emit_port(918, port, port, self.warning_threshold)
        state.emit_port(916, port, port, self.warning_threshold)
        if self.escalate_after is None:
            return

        def critical() -> None:
            state.telemetry.set_ber(port, float(self.critical_threshold), state.now(), curable=False)
            state.fabric.set_port_fields([port], high_ber_severity="Critical")
            state.emit_port(917, port, port, self.critical_threshold)
            state.emit_port(915, port, port, self.critical_threshold)

        state.schedule(self.escalate_after, f"ber {port} critical", critical)


@dataclass(slots=True)
class LinkDown(Step):
    kind: ClassVar[str] = "link_down"
    link: str = "random:switch"
    duration: float | None = field(default=None, metadata=DURATION)

    def apply(self, state: SimState) -> None:
        port = state.resolve_link(self.link).a
        link = state.fabric.link_at(port)
        assert link is not None
        state.emit_links(state.fabric.set_hold(link, "cable", True))
        if self.duration is not None:
            def restore() -> None:
                current = state.fabric.link_at(port)
                if current is not None:
                    state.emit_links(state.fabric.set_hold(current, "cable", False))
            state.schedule(self.duration, f"link_down {port} restored", restore)


@dataclass(slots=True)
class Degrade(Step):
    kind: ClassVar[str] = "degrade"
    link: str = "random:switch"
    width: str | None = None
    speed: str | None = None
    duration: float | None = field(default=None, metadata=DURATION)

    def check(self) -> None:
        if not self.width and not self.speed:
            raise ValueError("give a 'width' (e.g. 1x), a 'speed' (e.g. HDR) or both")
        if self.width and self.width.lower() not in WIDTHS:
            raise ValueError(f"'width' must be one of {', '.join(WIDTHS)}, got {self.width!r}")
        if self.speed and self.speed.upper() not in LANE_GBPS:
            raise ValueError(f"'speed' must be one of {', '.join(LANE_GBPS)}, got {self.speed!r}")

    def apply(self, state: SimState) -> None:
        link = state.resolve_link(self.link)
        ends = (link.a, link.b)
        planned_width = str(state.fabric.ports[link.a]["active_width"])
        planned_speed = str(state.fabric.ports[link.a]["active_speed"])
        if self.width:
            width = self.width.lower()
            state.fabric.set_link_width(link, width)
            for port in ends:
                state.emit_port(130, port, planned_width, width)
        if self.speed:
            state.fabric.set_port_fields(ends, active_speed=self.speed.upper())
            for port in ends:
                state.emit_port(701, port, planned_speed, self.speed.upper())
        if self.duration is not None:
            def restore() -> None:
                current = state.fabric.link_at(link.a)
                if current is not None and self.width:
                    state.fabric.set_link_width(current, planned_width)
                state.fabric.set_port_fields(ends, active_speed=planned_speed)
                for port in ends:
                    state.clear_alarms((130, 701), port)
            state.schedule(self.duration, f"degrade {link.name} restored", restore)


@dataclass(slots=True)
class HotModule(Step):
    kind: ClassVar[str] = "hot_module"
    port: str = "random:switch"
    temperature: int = field(default=85, metadata=between(-55, 200))
    threshold: int = field(default=70, metadata=between(-55, 200))
    sensor: int = field(default=1, metadata=between(0, 255))
    module_fault: bool = False

    def apply(self, state: SimState) -> None:
        port = state.resolve_port(self.port)
        name = state.port_name(port)
        state.telemetry.set_temperature(port, self.temperature)
        state.fabric.set_port_fields([port], severity="Critical")
        # The text of 919 is a bare "%s" in the policy table; this wording is UNCONFIRMED.
        state.emit_port(919, port, f"Cable temperature on port {name.sm_name} is high: {self.temperature}C "
                                   f"(threshold {self.threshold}C)")
        module = module_object(name)
        state.emit(392, module, SPECS[392].describe(self.threshold, self.temperature))
        state.emit(911, module, SPECS[911].describe(self.sensor, self.threshold, self.temperature))
        if self.module_fault:
            state.emit(394, state.node_object(name.system_guid),
                       SPECS[394].describe("cable", name.dname, name.system_name, name.guid, "FAULT"))


@dataclass(slots=True)
class SwitchReboot(Step):
    kind: ClassVar[str] = "switch_reboot"
    switch: str = "random"
    downtime: float = field(default=180.0, metadata=DURATION)
    down_event: bool = True
    """UFM raises 907 Switch is Down (and 908 Switch is Up when it is back); it does not always."""
    rebooted_after: float = field(default=0.0, metadata=DURATION)
    """How long after the switch is back UFM raises 1312 Switch was Rebooted (0: at once, before the link-ups)."""

    def apply(self, state: SimState) -> None:
        guid = state.resolve_node(self.switch, switch=True)
        if self.down_event:
            state.emit_node(907, guid)
        state.emit_links(state.fabric.set_system_down(guid, True))

        def rebooted() -> None:
            state.emit_node(1312, guid, node_guid=guid)

        def back() -> None:
            state.telemetry.clear(state.fabric.system_ports.get(guid, ()), state.now())
            change = state.fabric.set_system_down(guid, False)
            if self.down_event:
                state.clear_alarms((907,), guid)
                state.emit_node(908, guid)
            if self.rebooted_after <= 0:
                rebooted()
            state.emit_links(change)

        state.schedule(self.downtime, f"switch_reboot {guid} back", back)
        if self.rebooted_after > 0:
            state.schedule(self.downtime + self.rebooted_after, f"switch_reboot {guid} 1312", rebooted)


@dataclass(slots=True)
class HostReboot(Step):
    kind: ClassVar[str] = "host_reboot"
    hosts: list[str] = field(default_factory=list)
    count: int = field(default=0, metadata=between(0, 1_000_000))
    downtime: float = field(default=300.0, metadata=DURATION)
    stagger: float = field(default=0.0, metadata=DURATION)
    down_event: bool = True
    """UFM raises 331 Node is Down when a host goes; it may not (332 Node is Up comes when it is back)."""

    def check(self) -> None:
        if not self.hosts and not self.count:
            raise ValueError("name 'hosts' or give a 'count'")

    def apply(self, state: SimState) -> None:
        chosen = [state.resolve_node(h, switch=False) for h in self.hosts]
        if self.count:
            pool = [g for g in state.hosts() if g not in chosen]
            if self.count > len(pool):
                raise TargetError(f"host_reboot: {self.count} hosts asked, {len(pool)} available")
            chosen += state.rng.sample(pool, self.count)
        for guid in chosen:
            offset = state.rng.uniform(0.0, self.stagger) if self.stagger else 0.0
            at_once_or_later(state, offset, f"host_reboot {guid} down", self._down(state, guid, self.down_event))
            state.schedule(offset + self.downtime, f"host_reboot {guid} up", self._up(state, guid))

    @staticmethod
    def _down(state: SimState, guid: str, event: bool) -> Callable[[], None]:
        def run() -> None:
            if event:
                state.emit_node(331, guid)
            state.emit_links(state.fabric.set_system_down(guid, True))
        return run

    @staticmethod
    def _up(state: SimState, guid: str) -> Callable[[], None]:
        def run() -> None:
            state.telemetry.clear(state.fabric.system_ports.get(guid, ()), state.now())
            change = state.fabric.set_system_down(guid, False)
            state.emit_node(332, guid)
            state.emit_links(change)
        return run


@dataclass(slots=True)
class UfmRestart(Step):
    kind: ClassVar[str] = "ufm_restart"
    downtime: float = field(default=0.0, metadata=DURATION)

    def apply(self, state: SimState) -> None:
        if self.downtime > 0:
            now = state.now()
            state.api_faults.add(ApiFault("*", ApiFaultMode.ERROR, status=503, start=now,
                                          end=later(now, self.downtime)))
        state.ufm_restart()


@dataclass(slots=True)
class Miswire(Step):
    kind: ClassVar[str] = "miswire"
    links: list[str] = field(default_factory=list)
    count: int = field(default=1, metadata=between(1, 1_000_000))

    def check(self) -> None:
        if self.links and len(self.links) != 2:
            raise ValueError("'links' must name exactly two links (or give a 'count')")

    def apply(self, state: SimState) -> None:
        if self.links:
            pairs = [(state.resolve_link(self.links[0]), state.resolve_link(self.links[1]))]
        else:
            pool = [k for k in state.fabric.links.values()
                    if state.port_name(k.a).is_switch and state.port_name(k.b).is_switch]
            if 2 * self.count > len(pool):
                raise TargetError(f"miswire: {self.count} swaps need {2 * self.count} switch-switch links")
            picked = state.rng.sample(pool, 2 * self.count)
            pairs = [(picked[2 * i], picked[2 * i + 1]) for i in range(self.count)]
        for first, second in pairs:
            if first.name == second.name:
                raise TargetError("miswire: the two links must differ")
            was = [(k.a, k.b) for k in (first, second) if state.fabric.link_up(k)]
            new = state.fabric.swap_far_ends(first, second)
            now_up = [(k.a, k.b) for k in new if state.fabric.link_up(k)]
            state.emit_links(Transition(tuple(was), tuple(now_up)))


@dataclass(slots=True)
class ApiFailure(Step):
    kind: ClassVar[str] = "api"
    endpoint: str = "*"
    mode: str = "error"
    status: int = field(default=500, metadata=between(400, 599))
    delay: float = field(default=0.0, metadata=between(0, 600, duration=True))
    """Real seconds (the client's own timeout is what is tested): at most ten minutes."""
    keep: float = field(default=0.5, metadata=between(0.0, 1.0))
    count: int = field(default=0, metadata=between(0, 1_000_000_000))
    """``oldest``: how many of the list's first items are answered."""
    duration: float | None = field(default=None, metadata=DURATION)
    requests: int | None = field(default=None, metadata=between(1, 1_000_000_000))
    method: str | None = None

    def check(self) -> None:
        if self.mode not in set(ApiFaultMode):
            raise ValueError(f"'mode' must be one of {', '.join(m.value for m in ApiFaultMode)}, got {self.mode!r}")
        if self.duration is None and self.requests is None:
            raise ValueError("give a 'duration' or a number of 'requests'")

    def apply(self, state: SimState) -> None:
        mode = ApiFaultMode(self.mode)
        now = state.now()
        end = later(now, self.duration) if self.duration is not None else None
        endpoint = self.endpoint if self.endpoint.startswith(("/", "*")) else "/" + self.endpoint
        state.api_faults.add(ApiFault(endpoint, mode, status=self.status, delay=self.delay, keep=self.keep,
                                      count=self.count, start=now, end=end, remaining=self.requests,
                                      method=self.method))


@dataclass(slots=True)
class ActionFailureStep(Step):
    kind: ClassVar[str] = "action_failure"
    count: int = field(default=1, metadata=between(1, 1_000_000_000))
    port: str | None = None
    reason: str = "injected failure"

    def apply(self, state: SimState) -> None:
        port = state.resolve_port(self.port) if self.port else None
        state.action_failures.append(ActionFailure(self.count, port, self.reason))


@dataclass(slots=True)
class JobStallStep(Step):
    kind: ClassVar[str] = "job_stall"
    count: int = field(default=1, metadata=between(1, 1_000_000_000))
    port: str | None = None
    runs_for: float | None = field(default=None, metadata=DURATION)
    """How long each job stays Running before it completes (and changes the port); omitted: it never does."""

    def apply(self, state: SimState) -> None:
        port = state.resolve_port(self.port) if self.port else None
        state.job_stalls.append(JobStall(self.count, port, self.runs_for))


@dataclass(slots=True)
class Unhealthy(Step):
    kind: ClassVar[str] = "unhealthy"
    port: str = "random:switch"
    condition: str = "FLAPPING"
    action: str = "isolate"

    def check(self) -> None:
        if self.action not in UNHEALTHY_ACTIONS:
            raise ValueError(f"'action' must be one of {', '.join(UNHEALTHY_ACTIONS)}, got {self.action!r}")

    def apply(self, state: SimState) -> None:
        state.mark_unhealthy(state.resolve_port(self.port), self.action, self.condition)


@dataclass(slots=True)
class WeakPort(Step):
    """A port that passes in daily use but not a burn-in's stricter thresholds: ``count`` error threshold events
    (one by default, where the errors rule needs three)."""

    kind: ClassVar[str] = "weak_port"
    port: str = "random:switch"
    event: int = 110
    count: int = field(default=1, metadata=between(1, 100))

    def check(self) -> None:
        if self.event not in WEAK_PORT_EVENTS:
            raise ValueError(f"'event' must be one of {list(WEAK_PORT_EVENTS)}")

    def apply(self, state: SimState) -> None:
        port = state.resolve_port(self.port)
        peer = state.fabric.peer_of(port)
        peer_info = state.port_name(peer).peer_info if peer else "N/A"
        for _ in range(self.count):
            state.emit_port(self.event, port, 200, 201, peer_info)


@dataclass(slots=True)
class BandwidthAlert(Step):
    """UFM's utilisation alert on a port (123, Port Bandwidth (%) Threshold Reached): loaded past it, not a fault."""

    kind: ClassVar[str] = "bandwidth_alert"
    port: str = "random:switch"

    def apply(self, state: SimState) -> None:
        port = state.resolve_port(self.port)
        peer = state.fabric.peer_of(port)
        state.emit_port(123, port, 95, 97, state.port_name(peer).peer_info if peer else "N/A")


@dataclass(slots=True)
class Storm(Step):
    kind: ClassVar[str] = "storm"
    count: int = field(default=1000, metadata=between(1, MAX_STORM))
    events: list[int] = field(default_factory=lambda: list(STORM_EVENTS))
    duration: float = field(default=0.0, metadata=DURATION)
    batches: int = field(default=100, metadata=between(1, 10_000))

    def check(self) -> None:
        if not self.events or any(e not in STORM_EVENTS for e in self.events):
            raise ValueError(f"'events' must be a non-empty list among {list(STORM_EVENTS)}")

    def apply(self, state: SimState) -> None:
        batches = 1 if self.duration <= 0 else max(1, min(self.batches, self.count))
        size, extra = divmod(self.count, batches)
        for index in range(batches):
            amount = size + (1 if index < extra else 0)
            at_once_or_later(state, self.duration * index / batches, f"storm batch {index + 1}/{batches}",
                   functools.partial(storm, state, amount, list(self.events)))


def storm(state: SimState, count: int, events: list[int]) -> None:
    """Raise ``count`` per-port threshold events at once, on ports picked by the seeded generator."""
    with state.lock:
        ports = list(state.fabric.ports)
        rng = state.rng
        for _ in range(count):
            port = rng.choice(ports)
            event_id = rng.choice(events)
            peer = state.fabric.peer_of(port)
            peer_info = state.port_name(peer).peer_info if peer else "N/A"
            state.emit_port(event_id, port, 0 if event_id == 112 else 200, rng.randint(201, 5000), peer_info)
        state.events.warm(state.shape)


_EVENT_STEPS: tuple[type[Step], ...] = (
    Flap, Ber, LinkDown, Degrade, HotModule, SwitchReboot, HostReboot, UfmRestart, Miswire, ApiFailure,
    ActionFailureStep, JobStallStep, Unhealthy, Storm, WeakPort, BandwidthAlert,
)
STEP_TYPES: dict[str, type[Step]] = {cls.kind: cls for cls in (*_EVENT_STEPS, *TELEMETRY_STEPS)}
