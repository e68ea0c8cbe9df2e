"""Scenario steps that change what UFM Telemetry reports, and raise no UFM event of their own.

| kind                  | what the counters (or the answer) do                                               |
|-----------------------|------------------------------------------------------------------------------------|
| `ber_ramp`            | the port's BER rises (or falls) to `ber` over `over` (0: at once); a port reset     |
|                       | brings it back to the background only if `cured_by_reset`                           |
| `drop_burst`          | `errors` PortRcvErrors and `remote_errors` PortRcvRemotePhysicalErrors, spread     |
|                       | over `over` (0: at once)                                                            |
| `link_down_counter`   | Link_Down_IB moves by `count` on the port, and on its peer if `both_ends`, with no  |
|                       | link change UFM sees (a flap while UFM was restarting)                              |
| `module_temperature`  | the port's module at `temperature`, or `rise` degrees warmer                        |
| `counter_reset`       | every port of the switch counts from 0 again, its links stay up                     |
| `no_traffic`          | the link of `port` stays up but carries no packets (a burn-in workload that misses  |
|                       | it), for `duration` (0: until the end)                                              |
| `telemetry_stale`     | the answer frozen as it is now (timestamp and counters), for `duration`/`requests`  |
| `telemetry_missing`   | rows left out: `ports`, `count` random ports or a `switch`'s ports                  |
| `telemetry_malformed` | `how`: `bad_header`, `text_in_number` or `truncated` (``telemetry_faults.py``)      |

The event steps of ``faults.py`` move the counters too where the fault would: ``ber`` sets the port's BER to its
thresholds, ``hot_module`` its module's temperature, every link that goes down counts a link down on its ends, and
``switch_reboot``/``host_reboot`` clear the system's counters when it is back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from fabric.simulator.clock import later
from fabric.simulator.state import SimState, TargetError
from fabric.simulator.steps import DURATION, Step, between
from fabric.simulator.telemetry import MAX_BER
from fabric.simulator.telemetry_faults import Malformation, TelemetryFault, TelemetryFaultKind

MAX_COUNT = 1_000_000_000


@dataclass(slots=True)
class BerRamp(Step):
    kind: ClassVar[str] = "ber_ramp"
    port: str = "random:switch"
    ber: float = field(default=1e-12, metadata=between(0.0, MAX_BER))
    over: float = field(default=0.0, metadata=DURATION)
    cured_by_reset: bool = False

    def apply(self, state: SimState) -> None:
        port = state.resolve_port(self.port)
        telemetry = state.telemetry
        telemetry.set_ber(port, self.ber, state.now(), over=self.over, curable=self.cured_by_reset)
        if self.over <= 0:
            return
        counters = telemetry.port(port)
        slope = counters.ber_slope

        def end() -> None:
            # A reset that cured the ramp on the way, or a later step, has made the BER someone else's.
            if counters.ber_slope == slope:
                telemetry.end_ramp(port, self.ber, state.now())

        state.schedule(self.over, f"ber_ramp {port} at {self.ber:g}", end)


@dataclass(slots=True)
class DropBurst(Step):
    kind: ClassVar[str] = "drop_burst"
    port: str = "random:switch"
    errors: int = field(default=1000, metadata=between(0, MAX_COUNT))
    remote_errors: int = field(default=0, metadata=between(0, MAX_COUNT))
    over: float = field(default=0.0, metadata=DURATION)

    def check(self) -> None:
        if not self.errors and not self.remote_errors:
            raise ValueError("give 'errors', 'remote_errors' or both")

    def apply(self, state: SimState) -> None:
        port = state.resolve_port(self.port)
        telemetry = state.telemetry
        if self.over <= 0:
            telemetry.add_drops(port, errors=self.errors, remote=self.remote_errors)
            return
        telemetry.set_drops(port, state.now(), errors=self.errors / self.over, remote=self.remote_errors / self.over)
        state.schedule(self.over, f"drop_burst {port} over",
                       lambda: telemetry.set_drops(port, state.now(), errors=0.0, remote=0.0))


@dataclass(slots=True)
class LinkDownCounter(Step):
    kind: ClassVar[str] = "link_down_counter"
    port: str = "random:switch"
    both_ends: bool = True
    count: int = field(default=1, metadata=between(1, MAX_COUNT))

    def apply(self, state: SimState) -> None:
        port = state.resolve_port(self.port)
        peer = state.fabric.peer_of(port) if self.both_ends else None
        state.telemetry.bump_link_downs([port] if peer is None else [port, peer], self.count)


@dataclass(slots=True)
class ModuleTemperature(Step):
    kind: ClassVar[str] = "module_temperature"
    port: str = "random:switch"
    temperature: float | None = field(default=None, metadata=between(-55, 200))
    rise: float | None = field(default=None, metadata=between(-200, 200))

    def check(self) -> None:
        if (self.temperature is None) == (self.rise is None):
            raise ValueError("give a 'temperature' or a 'rise', not both")

    def apply(self, state: SimState) -> None:
        port = state.resolve_port(self.port)
        counters = state.telemetry.port(port)
        target = self.temperature if self.temperature is not None else counters.temperature + (self.rise or 0.0)
        if not -55.0 <= target <= 200.0:
            raise TargetError(f"module_temperature: {target:g} °C is outside -55..200")
        state.telemetry.set_temperature(port, target)


@dataclass(slots=True)
class CounterReset(Step):
    kind: ClassVar[str] = "counter_reset"
    switch: str = "random"

    def apply(self, state: SimState) -> None:
        guid = state.resolve_node(self.switch, switch=True)
        state.telemetry.clear(state.fabric.system_ports.get(guid, ()), state.now())


@dataclass(slots=True)
class NoTraffic(Step):
    kind: ClassVar[str] = "no_traffic"
    port: str = "random:switch"
    duration: float = field(default=0.0, metadata=DURATION)

    def apply(self, state: SimState) -> None:
        port = state.resolve_port(self.port)
        peer = state.fabric.peer_of(port)
        ports = [port] if peer is None else [port, peer]
        telemetry = state.telemetry
        telemetry.set_quiet(ports, True, state.now())
        if self.duration > 0:
            state.schedule(self.duration, f"no_traffic {port} over",
                           lambda: telemetry.set_quiet(ports, False, state.now()))


@dataclass(slots=True)
class _FeedFault(Step):
    """A fault of the telemetry answer, for ``duration``, ``requests`` answers, both, or until cleared."""

    duration: float | None = field(default=None, metadata=DURATION)
    requests: int | None = field(default=None, metadata=between(1, MAX_COUNT))

    def fault(self, state: SimState) -> TelemetryFault:
        raise NotImplementedError

    def apply(self, state: SimState) -> None:
        fault = self.fault(state)
        fault.end = later(state.now(), self.duration) if self.duration is not None else None
        fault.remaining = self.requests
        state.telemetry_faults.add(fault)


@dataclass(slots=True)
class TelemetryStale(_FeedFault):
    kind: ClassVar[str] = "telemetry_stale"

    def fault(self, state: SimState) -> TelemetryFault:
        with state.lock:
            return TelemetryFault(TelemetryFaultKind.STALE, frozen=state.telemetry.render(state.now()))


@dataclass(slots=True)
class TelemetryMissing(_FeedFault):
    kind: ClassVar[str] = "telemetry_missing"
    ports: list[str] = field(default_factory=list)
    count: int = field(default=0, metadata=between(0, MAX_COUNT))
    switch: str | None = None

    def check(self) -> None:
        if not self.ports and not self.count and self.switch is None:
            raise ValueError("name 'ports', a 'switch', or give a 'count'")

    def fault(self, state: SimState) -> TelemetryFault:
        chosen = {state.resolve_port(p) for p in self.ports}
        if self.switch is not None:
            chosen.update(state.fabric.system_ports.get(state.resolve_node(self.switch, switch=True), ()))
        if self.count:
            pool = sorted(set(state.fabric.ports) - chosen)
            if self.count > len(pool):
                raise TargetError(f"telemetry_missing: {self.count} ports asked, {len(pool)} available")
            chosen.update(state.rng.sample(pool, self.count))
        return TelemetryFault(TelemetryFaultKind.MISSING, ports=frozenset(chosen))


@dataclass(slots=True)
class TelemetryMalformed(_FeedFault):
    kind: ClassVar[str] = "telemetry_malformed"
    how: str = Malformation.TRUNCATED.value

    def check(self) -> None:
        if self.how not in set(Malformation):
            raise ValueError(f"'how' must be one of {', '.join(m.value for m in Malformation)}, got {self.how!r}")

    def fault(self, state: SimState) -> TelemetryFault:
        return TelemetryFault(TelemetryFaultKind.MALFORMED, malformation=Malformation(self.how))


TELEMETRY_STEPS: tuple[type[Step], ...] = (BerRamp, DropBurst, LinkDownCounter, ModuleTemperature, CounterReset,
                                           NoTraffic, TelemetryStale, TelemetryMissing, TelemetryMalformed)
