"""Which watched ports cross a threshold in one interval, in arrays; and the records an operator reads.

The thresholds are ``TelemetrySettings``'. Only ports read anew are judged; rates only from ports read before
(``Interval.measured``), and only over intervals in which the counters involved were not reset.
- packet drops: (ΔPortRcvErrors + ΔPortRcvRemotePhysicalErrors) / ΔPortRcvPktsExtended above ``max_pdr``, when
  packets were received;
- link down on both ends: ΔLink_Down_IB above 0 on both ends of a planned cable in the same interval (one end alone
  is a host's reboot or a counter's reset, and a link that went down is seen by both ends);
- module temperature above ``tmax``, else a rise of more than ``d_tmax`` since the module's last reading;
- BER, per window: the symbol errors since the window's reference point over the bits the port carried since
  (its rate x the time elapsed), above the window's ``max_ber``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from fabric.telemetry.columns import Counter
from fabric.telemetry.deltas import Interval
from fabric.telemetry.history import Reference
from fabric.telemetry.records import ConditionKind, TelemetryCondition
from fabric.telemetry.settings import BerWindow, TelemetrySettings

__all__ = ["BerCrossing", "Crossings"]

_US = 1e6
_DROP_COUNTERS = (Counter.RCV_PACKETS, Counter.RCV_ERRORS, Counter.RCV_REMOTE_PHYSICAL_ERRORS)


class BerCrossing(NamedTuple):
    window: BerWindow
    crossed: npt.NDArray[np.bool_]
    ber: npt.NDArray[np.float64]
    errors: npt.NDArray[np.float64]
    span_s: npt.NDArray[np.float64]


class Crossings:
    """The ports (and cables) that crossed each threshold in one interval."""

    __slots__ = ("ber", "cables", "drop_rate", "drops", "hot", "interval", "link_down", "rates", "rising",
                 "settings")

    def __init__(self, interval: Interval, settings: TelemetrySettings,
                 cables: tuple[npt.NDArray[np.intp], npt.NDArray[np.intp]], rates: npt.NDArray[np.float64],
                 references: Sequence[tuple[BerWindow, Reference | None]]) -> None:
        self.interval = interval
        self.settings = settings
        self.cables = cables
        self.rates = rates
        delta = interval.delta
        packets = delta[Counter.RCV_PACKETS]
        judged = interval.measured & ~interval.any_reset(*_DROP_COUNTERS) & (packets > 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            self.drop_rate = (delta[Counter.RCV_ERRORS] + delta[Counter.RCV_REMOTE_PHYSICAL_ERRORS]) / packets
        self.drops = judged & (self.drop_rate > settings.max_pdr)
        downed = interval.measured & ~interval.reset[Counter.LINK_DOWNED] & (delta[Counter.LINK_DOWNED] > 0)
        a, b = cables
        self.link_down = downed[a] & downed[b]
        temperature = interval.temperature
        with np.errstate(invalid="ignore"):
            self.hot = temperature > settings.tmax
            self.rising = ~self.hot & (temperature - interval.previous_temperature > settings.d_tmax)
        self.ber = [self._ber(window, reference) for window, reference in references if reference is not None]

    def _ber(self, window: BerWindow, reference: Reference) -> BerCrossing:
        interval = self.interval
        span_s = (interval.time_us - reference.times_us) / _US
        errors = reference.errors
        judged = interval.fresh & (self.rates > 0) & ~np.isnan(errors)
        with np.errstate(divide="ignore", invalid="ignore"):
            ber = errors / (self.rates * span_s)
        return BerCrossing(window, judged & (ber > window.max_ber), ber, errors, span_s)

    def ports(self) -> npt.NDArray[np.bool_]:
        """Every port that crossed any threshold (both ends of a cable whose link went down)."""
        crossed: npt.NDArray[np.bool_] = self.drops | self.hot | self.rising
        a, b = self.cables
        crossed[a[self.link_down]] = True
        crossed[b[self.link_down]] = True
        for ber in self.ber:
            crossed |= ber.crossed
        return crossed

    def records(self, names: Sequence[str]) -> list[TelemetryCondition]:
        """One record per crossing: cables whose link went down, then ports by kind, each in slot order."""
        interval, settings = self.interval, self.settings
        when = interval.sample.time
        delta = interval.delta
        found: list[TelemetryCondition] = []
        a, b = self.cables
        downed = delta[Counter.LINK_DOWNED]
        for one, other in zip(a[self.link_down].tolist(), b[self.link_down].tolist(), strict=True):
            up_a, up_b = int(downed[one]), int(downed[other])
            found.append(TelemetryCondition(
                ConditionKind.LINK_DOWN_BOTH_ENDS, (names[one], names[other]), when,
                {"link_downed_a": up_a, "link_downed_b": up_b},
                f"LinkDownedCounter rose on both ends in one sample interval: +{up_a} on {names[one]}, "
                f"+{up_b} on {names[other]}"))
        for slot in np.flatnonzero(self.drops).tolist():
            errors, remote = int(delta[Counter.RCV_ERRORS][slot]), int(delta[Counter.RCV_REMOTE_PHYSICAL_ERRORS][slot])
            packets, rate = int(delta[Counter.RCV_PACKETS][slot]), float(self.drop_rate[slot])
            found.append(TelemetryCondition(
                ConditionKind.PACKET_DROPS, (names[slot],), when,
                {"drop_rate": rate, "max_pdr": settings.max_pdr, "rcv_errors": errors,
                 "remote_physical_errors": remote, "packets": packets},
                f"packet drop rate {rate:.3g} above {settings.max_pdr:g}: {errors} receive errors and {remote} "
                f"remote physical errors in {packets:,} packets since the last reading"))
        temperature, previous = interval.temperature, interval.previous_temperature
        for slot in np.flatnonzero(self.hot).tolist():
            degrees = float(temperature[slot])
            found.append(TelemetryCondition(
                ConditionKind.MODULE_TEMPERATURE, (names[slot],), when,
                {"temperature": degrees, "tmax": settings.tmax},
                f"module at {degrees:g} °C, above {settings.tmax:g} °C"))
        for slot in np.flatnonzero(self.rising).tolist():
            degrees, before = float(temperature[slot]), float(previous[slot])
            found.append(TelemetryCondition(
                ConditionKind.TEMPERATURE_RISE, (names[slot],), when,
                {"temperature": degrees, "previous": before, "d_tmax": settings.d_tmax},
                f"module temperature rose from {before:g} to {degrees:g} °C since its last reading (more than "
                f"{settings.d_tmax:g} °C)"))
        for ber in self.ber:
            found.extend(self._ber_records(ber, names))
        return found

    def _ber_records(self, ber: BerCrossing, names: Sequence[str]) -> list[TelemetryCondition]:
        window = ber.window
        when = self.interval.sample.time
        found = []
        for slot in np.flatnonzero(ber.crossed).tolist():
            value, errors, span_s = float(ber.ber[slot]), float(ber.errors[slot]), float(ber.span_s[slot])
            rate = float(self.rates[slot])
            found.append(TelemetryCondition(
                ConditionKind.BER, (names[slot],), when,
                {"ber": value, "max_ber": window.max_ber, "window_s": window.length.total_seconds(),
                 "span_s": span_s, "symbol_errors": errors, "rate_bps": rate},
                f"BER {value:.3g} over the last {span_s / 60:.0f} min ({window.name} window) above "
                f"{window.max_ber:g}: {errors:,.0f} symbol errors at {rate / 1e9:g} Gb/s"))
        return found
