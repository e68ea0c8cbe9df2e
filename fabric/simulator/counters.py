"""One port's cumulative UFM Telemetry counters as a function of simulated time, and the CSV columns they fill.

A port's counters are never ticked: each is a value at ``since`` plus a rate (or, for symbol errors, a linearly
changing BER) times the seconds after it, evaluated when a sample is asked for. Whatever changes a rate (the link
going down, a BER ramp, an isolation) first ``settle``s the port: its values at that moment become the new start.
So an h100-32k fabric of ~200,000 ports costs nothing between samples, and a sample costs one evaluation a port.

Counts are kept as floats and shown rounded down: BER x bits carried is rarely whole, and the fraction carries
into the next sample instead of being lost or rounded up (0.7 errors a sample shows 0, 1, 2, 2, 3...).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from fabric.telemetry.columns import NODE_GUID, PORT_NUMBER, TEMPERATURE, TIMESTAMP, Counter

COLUMNS = (TIMESTAMP, "source_id", "tag", NODE_GUID, "port_guid", PORT_NUMBER, *(c.value for c in Counter),
           TEMPERATURE, "phy_effective_errors", "phy_symbol_errors", "fec_mode_active")
"""The header of UFM Telemetry's ``low_freq_debug`` CSV as NVIDIA's PDR plugin simulates it (its
``tests/simulation_telemetry.py``); the plugin reads the columns by name. The last three are served, not used."""
HEADER = ",".join(COLUMNS)


@dataclass(slots=True)
class PortCounters:
    """A port's counters at ``since`` (seconds from the simulation's start) and how they move after it."""

    since: float = 0.0
    symbol_errors: float = 0.0
    packets: float = 0.0
    rcv_errors: float = 0.0
    remote_errors: float = 0.0
    link_downs: int = 0
    temperature: float = 45.0
    line_bps: float = 0.0
    """Bits a second the line carries: its rate while the link is up (idle symbols are symbols too), else 0."""
    packet_rate: float = 0.0
    """Packets a second received: 0 while the link is down, a port disabled or the link isolated."""
    ber: float = 0.0
    """The bit error rate at ``since``."""
    ber_slope: float = 0.0
    """How much the BER rises a second (a ramp); the ramp's end settles the port and sets it to 0."""
    ber_curable: bool = True
    """Whether a port reset brings the BER back to the fabric's background (a dirty connector reseated), or not
    (a failing optic)."""
    error_rate: float = 0.0
    """PortRcvErrors a second while the line is up (a drop burst)."""
    remote_rate: float = 0.0
    """PortRcvRemotePhysicalErrors a second while the line is up."""

    def copy(self) -> PortCounters:
        return replace(self)

    def ber_at(self, t: float) -> float:
        return max(0.0, self.ber + self.ber_slope * (t - self.since))

    def values(self, t: float) -> tuple[float, float, float, float]:
        """Symbol errors, packets, receive errors and remote physical errors at ``t`` (>= ``since``)."""
        dt = max(0.0, t - self.since)
        symbol = self.symbol_errors
        rcv, remote = self.rcv_errors, self.remote_errors
        if self.line_bps > 0.0:
            # The integral of BER(t) x line rate: a BER rising linearly gives errors rising quadratically.
            symbol += self.line_bps * max(0.0, self.ber * dt + self.ber_slope * dt * dt / 2.0)
            rcv += self.error_rate * dt
            remote += self.remote_rate * dt
        return symbol, self.packets + self.packet_rate * dt, rcv, remote

    def settle(self, t: float) -> None:
        """Make ``t`` the new start: the values at ``t`` become the base, rates unchanged."""
        if t <= self.since:
            return
        self.symbol_errors, self.packets, self.rcv_errors, self.remote_errors = self.values(t)
        self.ber = self.ber_at(t)
        self.since = t

    def zero(self, t: float) -> None:
        """The counters cleared at ``t`` (a switch or host reboot, a counter reset); the rates and the module's
        temperature stay."""
        self.settle(t)
        self.symbol_errors = self.packets = self.rcv_errors = self.remote_errors = 0.0
        self.link_downs = 0

    def row(self, t: float) -> str:
        """The counter columns of a CSV row at ``t``, from ``Symbol_Errors`` on."""
        symbol, packets, rcv, remote = self.values(t)
        errors = math.floor(symbol)
        return (f"{errors},{math.floor(packets)},{math.floor(rcv)},{math.floor(remote)},{self.link_downs},"
                f"{round(self.temperature)},0,{errors},0")
