"""UFM Telemetry as the simulator serves it: every cabled port's counters, one CSV row a port, at request time.

``GET /csv/xcset/<instance>`` (UFM Telemetry's secondary instance, on port 9002 of a real UFM host) answers the
CSV of :mod:`fabric.simulator.counters`: the sample's time in microseconds, the port's GUIDs ``0x``-prefixed in
lower case (``Node_GUID`` and ``Port_Number`` make the REST port name, as NVIDIA's PDR plugin reads them), then
cumulative counters. What moves them:

- packets at ``utilisation`` of the port's cabled rate (width x speed) in ``packet_bytes`` packets, while the link
  is up, neither end is isolated (an isolated link stays up; the subnet manager routes around it) and no
  ``no_traffic`` step quietened it (a workload that does not reach it);
- symbol errors at the port's BER (the fabric's ``background_ber`` unless a step set one) times the bits the line
  carries while it is up;
- Link_Down_IB: on both ends each time a link goes down, but on an end disabled by hand (a disable is not a
  failure of that port) or on a system that is going down (it comes back with its counters cleared);
- a switch or host that comes back from a reboot starts again from zero; while it is down its rows are absent
  (nothing answers UFM Telemetry's queries).

``phy_effective_errors`` and ``fec_mode_active`` are served as 0 and ``phy_symbol_errors`` as ``Symbol_Errors``:
the PDR plugin's simulator serves them, nothing here reads them.

Healthy ports are not stored one by one: every port of one rate that nothing has touched has the same counters,
so a sample renders them from one template per rate (:class:`PortCounters` of that rate), and only the ports a
fault, a link change or a reset touched have counters of their own. h100-32k's ~200,000 rows are then one
string format a port (``benchmarks/bench_simulator_telemetry.py``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from fabric.simulator.counters import HEADER, PortCounters
from fabric.simulator.fabric_state import FabricState

MAX_BER = 1.0


@dataclass(frozen=True, slots=True)
class TelemetrySettings:
    instance: str = "low_freq_debug"
    """The telemetry instance served at ``/csv/xcset/<instance>``; others are 404."""
    utilisation: float = 0.5
    """The share of a link's rate that carries packets."""
    packet_bytes: int = 4096
    """Bytes a packet (InfiniBand's largest MTU): packets a second = utilisation x rate / (8 x packet_bytes)."""
    background_ber: float = 0.0
    """The BER of every port no step changed (0: healthy ports count no symbol errors)."""
    temperature: float = 45.0
    """Every module's temperature (°C) until a step changes it."""

    def __post_init__(self) -> None:
        if not 0.0 <= self.utilisation <= 1.0:  # false for NaN too
            raise ValueError(f"telemetry utilisation must be from 0 to 1, got {self.utilisation!r}")
        if not 64 <= self.packet_bytes <= 65_536:
            raise ValueError(f"telemetry packet_bytes must be from 64 to 65,536, got {self.packet_bytes!r}")
        check_ber(self.background_ber, "telemetry background_ber")
        if not -55.0 <= self.temperature <= 200.0:
            raise ValueError(f"telemetry temperature must be from -55 to 200 °C, got {self.temperature!r}")
        if not self.instance or "/" in self.instance:
            raise ValueError(f"telemetry instance must be a name without '/', got {self.instance!r}")


def check_ber(value: float, what: str) -> float:
    if not 0.0 <= value <= MAX_BER:  # false for NaN too
        raise ValueError(f"{what} must be from 0 to 1, got {value!r}")
    return float(value)


class Telemetry:
    """The counters of every cabled port of ``fabric``, from ``start`` (their zero) on."""

    def __init__(self, fabric: FabricState, settings: TelemetrySettings, start: datetime) -> None:
        self.fabric = fabric
        self.settings = settings
        self.start = start
        self._packet_bits = 8.0 * settings.packet_bytes
        self._rate: dict[str, float] = {}
        for cable in fabric.fabric.cables:
            bps = (cable.speed_gbps or 0.0) * 1e9
            for end in (cable.a, cable.b):
                port = fabric.port_at.get(end)
                if port is not None:
                    self._rate[port] = bps
        self._templates: dict[float, PortCounters] = {
            bps: PortCounters(temperature=settings.temperature, line_bps=bps, packet_rate=self._packets(bps),
                              ber=settings.background_ber) for bps in set(self._rate.values())}
        self._prefix: dict[str, str] = {}
        for port, ref in fabric.names.items():
            guid = f"0x{ref.guid}"
            self._prefix[port] = f"{guid},,{guid},{guid},{ref.number},"
        self.touched: dict[str, PortCounters] = {}
        """Ports with counters of their own; every other port is its rate's template."""
        self.quiet: set[str] = set()
        """Ports whose links carry no packets though they are up (``no_traffic``: a workload that misses them)."""

    def seconds(self, when: datetime) -> float:
        """Simulated seconds from the counters' zero to ``when``."""
        return max(0.0, (when - self.start).total_seconds())

    def _packets(self, bps: float) -> float:
        return self.settings.utilisation * bps / self._packet_bits

    def port(self, port: str) -> PortCounters:
        """``port``'s own counters (taken from its rate's template the first time: they are the same until now)."""
        found = self.touched.get(port)
        if found is None:
            found = self.touched[port] = self._templates[self._rate[port]].copy()
        return found

    # ------------------------------------------------------------------------------------------ changes

    def links_changed(self, ports: Iterable[str], went_down: Iterable[str], when: datetime) -> None:
        """The links of ``ports`` may carry differently from ``when`` (up, down, disabled, isolated): each port's
        rates are set from the fabric as it is now. ``went_down``: the ends of links that went down, whose
        Link_Down_IB moves unless the end was disabled by hand or its system is going down."""
        t = self.seconds(when)
        for port in ports:
            line, packets = self._carrying(port)
            current = self.touched.get(port) or self._templates[self._rate[port]]
            if current.line_bps != line or current.packet_rate != packets:
                counters = self.port(port)
                counters.settle(t)
                counters.line_bps, counters.packet_rate = line, packets
        fabric = self.fabric
        for port in went_down:
            if port not in fabric.disabled and fabric.names[port].system_guid not in fabric.down_systems:
                counters = self.port(port)
                counters.link_downs += 1

    def _carrying(self, port: str) -> tuple[float, float]:
        fabric = self.fabric
        link = fabric.link_at(port)
        if link is None or not fabric.link_up(link):
            return 0.0, 0.0
        bps = self._rate[port]
        if link.a in fabric.isolated or link.b in fabric.isolated or port in self.quiet:
            return bps, 0.0
        return bps, self._packets(bps)

    def set_quiet(self, ports: Iterable[str], quiet: bool, when: datetime) -> None:
        """``ports`` carry no packets from ``when`` (``quiet``) or carry again as their links do."""
        listed = list(ports)
        if quiet:
            self.quiet.update(listed)
        else:
            self.quiet.difference_update(listed)
        self.links_changed(listed, (), when)

    def bump_link_downs(self, ports: Iterable[str], count: int) -> None:
        """Link_Down_IB moves on ``ports`` though UFM saw no link change (a flap while UFM was restarting)."""
        for port in ports:
            self.port(port).link_downs += count

    def clear(self, ports: Iterable[str], when: datetime) -> None:
        """``ports``' counters start again from zero (their switch or host rebooted, or was told to)."""
        t = self.seconds(when)
        for port in ports:
            self.port(port).zero(t)

    def set_ber(self, port: str, ber: float, when: datetime, *, over: float = 0.0, curable: bool = True) -> None:
        """``port``'s BER becomes ``ber``, at once or rising (falling) linearly ``over`` seconds; the caller
        schedules :meth:`end_ramp` at the end."""
        counters = self.port(port)
        t = self.seconds(when)
        counters.settle(t)
        if over > 0.0:
            counters.ber_slope = (ber - counters.ber) / over
        else:
            counters.ber, counters.ber_slope = ber, 0.0
        counters.ber_curable = curable

    def end_ramp(self, port: str, ber: float, when: datetime) -> None:
        counters = self.port(port)
        counters.settle(self.seconds(when))
        counters.ber, counters.ber_slope = ber, 0.0

    def set_drops(self, port: str, when: datetime, *, errors: float, remote: float) -> None:
        """Receive errors a second (``errors``) and remote physical errors a second (``remote``) from ``when``."""
        counters = self.port(port)
        counters.settle(self.seconds(when))
        counters.error_rate, counters.remote_rate = errors, remote

    def add_drops(self, port: str, *, errors: int, remote: int) -> None:
        """A burst counted at once."""
        counters = self.port(port)
        counters.rcv_errors += errors
        counters.remote_errors += remote

    def set_temperature(self, port: str, celsius: float) -> None:
        self.port(port).temperature = celsius

    def reset_port(self, ports: Iterable[str], when: datetime) -> list[str]:
        """A port reset: what a reset cures (a curable BER, drops) ends on ``ports``; returns the ports cured."""
        t = self.seconds(when)
        cured = []
        for port in ports:
            counters = self.touched.get(port)
            if counters is None:
                continue
            counters.settle(t)
            counters.error_rate = counters.remote_rate = 0.0
            if counters.ber_curable and (counters.ber_slope or counters.ber != self.settings.background_ber):
                counters.ber, counters.ber_slope = self.settings.background_ber, 0.0
                cured.append(port)
        return cured

    # ------------------------------------------------------------------------------------------ the CSV

    def render(self, when: datetime, leave_out: frozenset[str] = frozenset()) -> bytes:
        """The CSV at ``when``: a row for every port but those of systems that are down and ``leave_out``."""
        t = self.seconds(when)
        fabric = self.fabric
        absent = set(leave_out)
        for guid in fabric.down_systems:
            absent.update(fabric.system_ports.get(guid, ()))
        shared = {bps: template.row(t) for bps, template in self._templates.items()}
        touched, rate = self.touched, self._rate
        stamp = f"{_micros(when)},"
        lines = [HEADER]
        for port, prefix in self._prefix.items():
            if port in absent:
                continue
            own = touched.get(port)
            lines.append(stamp + prefix + (own.row(t) if own is not None else shared[rate[port]]))
        lines.append("")
        return "\n".join(lines).encode()


def _micros(when: datetime) -> int:
    """Microseconds since the epoch, exactly (no float: a float of today's microseconds loses the last digits)."""
    delta = when - datetime(1970, 1, 1, tzinfo=when.tzinfo)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
