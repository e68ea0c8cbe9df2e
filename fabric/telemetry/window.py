"""``TelemetryWindow``: the history samples are judged against, and the gate a sample passes before it counts.

One per fabric: made with the watched ports (the plan's, as UFM names them), each port's rate in bits per second
(width x lane speed, from the plan) and the planned cables as pairs of port names; then ``observe`` each sample in
time order. Memory is a fixed set of arrays of the watched ports plus each BER window's points
(``history.BerHistory``), whatever the sample rate or what a sample holds.

The gate: a sample whose time did not move is stale and ignored whole. A sample missing more than
``partial_fraction`` of the watched ports, or in which more than ``implausible_fraction`` of the ports read anew
cross a threshold, yields no condition; it still moves the ports' baselines on, without counting (its
intervals add no symbol errors to the BER windows), so that the next sample is judged on its own interval
(a burst of junk counters kept as the baseline would otherwise be judged implausible again at every sample).
A sample older than the last one is refused with ``TelemetryInputError``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy.typing as npt

from fabric.telemetry.conditions import Crossings
from fabric.telemetry.deltas import PortCounters
from fabric.telemetry.errors import TelemetryInputError
from fabric.telemetry.history import BerHistory
from fabric.telemetry.ports import PortIndex
from fabric.telemetry.records import SampleVerdict, Verdict
from fabric.telemetry.sample import Sample, instant
from fabric.telemetry.settings import TelemetrySettings

__all__ = ["TelemetryWindow"]


class TelemetryWindow:
    def __init__(self, ports: Sequence[str], *, rates: npt.ArrayLike | Mapping[str, float],
                 cables: Iterable[tuple[str, str]] = (), settings: TelemetrySettings | None = None) -> None:
        """``ports``: UFM port names (``<guid>_<n>``, ``0x`` and upper case read too) to watch; ``rates``: bits per
        second of each, in the order of ``ports`` or by name (0 or absent: no BER judged); ``cables``: the
        planned cables' two ends, for link-down on both ends. ``ValueError`` for names that are not port names,
        a port given twice, a rate per port missing or negative, a cable end not watched."""
        self.settings = settings or TelemetrySettings()
        self.ports = PortIndex(ports)
        self._rates = self.ports.rates(rates)
        self._cables = self.ports.pairs(cables)
        self._counters = PortCounters(len(self.ports))
        self._histories = [BerHistory(window, len(self.ports)) for window in self.settings.ber_windows]
        self._last: tuple[int, str] | None = None
        """The time and source of the last sample taken (not the sample: its arrays would live on)."""

    @property
    def last_time_us(self) -> int | None:
        """The time of the last sample observed (stale ones aside), ``None`` before the first."""
        return None if self._last is None else self._last[0]

    def observe(self, sample: Sample) -> SampleVerdict:
        """Judge ``sample``, the next in time, and take it into the history."""
        last = self._last
        if last is not None and sample.time_us < last[0]:
            raise TelemetryInputError(
                f"the sample's time {sample.time.isoformat()} is before the previous sample's, "
                f"{instant(last[0]).isoformat()} ({last[1]}): timestamps went backwards",
                source=sample.source, line=sample.newest_line, column="timestamp")
        placement = self.ports.place(sample)
        watched = len(self.ports)
        if last is not None and sample.time_us == last[0]:
            return SampleVerdict(Verdict.STALE, sample.time, (),
                                 f"stale: the sample's time has not moved since the last one ({sample.time})",
                                 watched, 0, placement.unknown, 0)
        interval = self._counters.interval(sample, placement)
        references = [(history.window, history.reference(sample.time_us, interval.errors))
                      for history in self._histories]
        crossings = Crossings(interval, self.settings, self._cables, self._rates, references)
        crossed = crossings.ports()
        fresh, crossing = int(interval.fresh.sum()), int(crossed.sum())
        verdict, reason = self._gate(watched, fresh, crossing)
        accepted = verdict is Verdict.ACCEPTED
        conditions = tuple(crossings.records(self.ports.names)) if accepted else ()
        self._counters.commit(interval, counted=accepted)
        for history in self._histories:
            history.record(sample.time_us, self._counters.errors, interval.fresh)
        self._last = (sample.time_us, sample.source)
        if accepted:
            reason = f"{fresh:,} of {watched:,} ports read, {len(conditions)} conditions on {crossing:,} ports"
        return SampleVerdict(verdict, sample.time, conditions, reason, watched, fresh, placement.unknown, crossing,
                             since=None if last is None else instant(last[0]))

    def _gate(self, watched: int, fresh: int, crossing: int) -> tuple[Verdict, str]:
        settings = self.settings
        missing = watched - fresh
        if missing > settings.partial_fraction * watched:
            return Verdict.PARTIAL, (f"partial: {missing:,} of {watched:,} ports missing or not read again "
                                     f"(more than {settings.partial_fraction:.0%})")
        if crossing > settings.implausible_fraction * fresh:
            return Verdict.IMPLAUSIBLE, (f"implausible: {crossing:,} of {fresh:,} ports crossed a threshold at once "
                                         f"(more than {settings.implausible_fraction:.0%})")
        return Verdict.ACCEPTED, ""


