"""Each watched port's counters between samples: reset-aware deltas, gaps, stale rows.

A counter lower than its last value was reset (port reset, switch reboot, UFM restart): that interval contributes
nothing for that counter, never a negative delta and never the new value as a delta. The new value may be a count
since the reset or a counter re-based by UFM, which cannot be told apart; nothing but a count that rose between
two readings is evidence, as in NVIDIA's PDR plugin. The new value is the next interval's baseline.

A port missing from a sample is a gap: nothing is judged for it, and its next reading is compared with its last
one, over the longer interval. A row whose own timestamp did not move since the port's last reading was served
again, not read: a gap too.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from fabric.telemetry.columns import Counter
from fabric.telemetry.ports import Placement
from fabric.telemetry.sample import Sample

__all__ = ["Interval", "PortCounters"]

_NEVER = np.iinfo(np.int64).min


class Interval:
    """What one sample says against the last reading of each watched port (arrays by slot)."""

    __slots__ = ("delta", "errors", "fresh", "measured", "previous_temperature", "reset", "row_time_us", "sample",
                 "temperature", "values")

    def __init__(self, sample: Sample, counters: PortCounters, placement: Placement) -> None:
        rows, slots = placement.rows, placement.slots
        size = len(counters.row_time_us)
        self.sample = sample
        self.row_time_us = np.full(size, _NEVER, dtype=np.int64)
        self.row_time_us[slots] = sample.row_time_us[rows]
        self.fresh = self.row_time_us > counters.row_time_us
        """Read anew: present, and its row's time moved."""
        self.measured = self.fresh & counters.seen
        """Read anew and read before: its deltas mean something."""
        self.values: dict[Counter, npt.NDArray[np.uint64]] = {}
        self.delta: dict[Counter, npt.NDArray[np.float64]] = {}
        self.reset: dict[Counter, npt.NDArray[np.bool_]] = {}
        for counter in Counter:
            last = counters.last[counter]
            value = last.copy()
            value[slots] = sample.counters[counter][rows]
            went_down = self.measured & (value < last)
            self.values[counter] = value
            self.reset[counter] = went_down
            self.delta[counter] = np.where(self.measured & ~went_down, value - last, 0).astype(np.float64)
        self.temperature = np.full(size, np.nan)
        self.temperature[slots] = sample.temperature[rows]
        self.temperature[~self.fresh] = np.nan
        self.previous_temperature = counters.temperature.copy()
        self.errors = counters.errors + self.delta[Counter.SYMBOL_ERRORS]
        """Each port's cumulative symbol errors, resets corrected, with this interval's."""

    @property
    def time_us(self) -> int:
        return self.sample.time_us

    def any_reset(self, *counters: Counter) -> npt.NDArray[np.bool_]:
        went_down = np.zeros(len(self.fresh), dtype=bool)
        for counter in counters:
            went_down |= self.reset[counter]
        return went_down


class PortCounters:
    """The last reading of each watched port and its cumulative symbol errors, resets corrected."""

    def __init__(self, size: int) -> None:
        self.last = {counter: np.zeros(size, dtype=np.uint64) for counter in Counter}
        self.row_time_us = np.full(size, _NEVER, dtype=np.int64)
        self.seen = np.zeros(size, dtype=bool)
        self.temperature = np.full(size, np.nan)
        """The last reading (°C) of each module that gave one."""
        self.errors = np.zeros(size, dtype=np.float64)

    def interval(self, sample: Sample, placement: Placement) -> Interval:
        return Interval(sample, self, placement)

    def commit(self, interval: Interval, *, counted: bool) -> None:
        """Take ``interval``'s readings as the ports' last ones; its symbol errors count towards the BER windows
        only when ``counted`` (a sample the gate refused moves the baselines on, and adds nothing)."""
        fresh = interval.fresh
        for counter in Counter:
            np.copyto(self.last[counter], interval.values[counter], where=fresh)
        np.copyto(self.row_time_us, interval.row_time_us, where=fresh)
        self.seen |= fresh
        np.copyto(self.temperature, interval.temperature, where=~np.isnan(interval.temperature))
        if counted:
            self.errors = interval.errors
