"""A BER window's history: what each port's error count did at points in the past, small enough to hold for
200,000 ports over two hours at any sample rate.

A point is a sample's time and, per port, the symbol errors counted (resets corrected) since the point before,
as a saturating ``uint32``, with a bit saying whether the port was read anew in that sample. At most one point is
kept per ``resolution`` of time (the first sample of each span), so a window of length L holds about
``L / resolution`` points whatever the sample rate: the 125-minute window at 5-minute resolution keeps 28 rows at a
60 s interval as at 300 s. The rows are one array made with the history, written in turn: no array is made per
sample, so the heap holds no long-lived block between a sample's passing ones.

The window's reference for a port is the newest point at least L old; when the port was not read at that point,
the point before it; else none, and the port's window is not judged this time. The errors in the window are the
increments after the reference, plus what the port counted since the newest point. Points older than those two
are dropped: later samples only ever look at newer ones. An increment past 2^32 - 1 is kept as that: a lower
bound, and a BER past any threshold.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from fabric.telemetry.settings import BerWindow

__all__ = ["BerHistory", "Reference"]

_US = 1_000_000
_MOST = np.float64(np.iinfo(np.uint32).max)


class Reference:
    """Each port's symbol errors since its reference point, and that point's time (NaN / 0 where none)."""

    __slots__ = ("errors", "times_us")

    def __init__(self, errors: npt.NDArray[np.float64], times_us: npt.NDArray[np.int64]) -> None:
        self.errors = errors
        self.times_us = times_us


class BerHistory:
    def __init__(self, window: BerWindow, ports: int) -> None:
        self.window = window
        self._length_us = int(window.length.total_seconds() * _US)
        self._resolution_us = max(int(window.resolution.total_seconds() * _US), 1)
        capacity = math.ceil(self._length_us / self._resolution_us) + 3
        # np.empty: a row's pages are taken from the system when it is first written, not before.
        self._increments = np.empty((capacity, ports), dtype=np.uint32)
        self._read = np.empty((capacity, (ports + 7) // 8), dtype=np.uint8)
        self._times: list[int] = []
        """The live points' times, oldest first; point ``k`` is row ``(self._first + k) % capacity``."""
        self._first = 0
        self._counted = np.zeros(ports, dtype=np.float64)
        """Each port's cumulative count at the newest point."""

    def __len__(self) -> int:
        return len(self._times)

    def _row(self, point: int) -> int:
        return (self._first + point) % len(self._increments)

    def reference(self, now_us: int, counted: npt.NDArray[np.float64]) -> Reference | None:
        """Every port's errors over the window ending at ``now_us``, given each port's cumulative count now;
        ``None`` when no point is L old."""
        newest = self._newest_old_enough(now_us)
        if newest is None:
            return None
        errors = counted - self._counted
        for point in range(newest + 1, len(self._times)):
            errors += self._increments[self._row(point)]
        times = np.full(len(errors), self._times[newest], dtype=np.int64)
        unread = ~self._was_read(newest)
        if newest > 0:
            before = unread & self._was_read(newest - 1)
            errors[before] += self._increments[self._row(newest)][before]
            times[before] = self._times[newest - 1]
            unread &= ~before
        errors[unread] = np.nan
        times[unread] = 0
        return Reference(errors, times)

    def _was_read(self, point: int) -> npt.NDArray[np.bool_]:
        return np.unpackbits(self._read[self._row(point)], count=len(self._counted)).astype(bool)

    def record(self, time_us: int, counted: npt.NDArray[np.float64], read: npt.NDArray[np.bool_]) -> None:
        """Keep the sample at ``time_us`` (each port's cumulative count, and which ports it read anew) as a point,
        unless the span of time it falls in has one already."""
        if self._times and self._times[-1] // self._resolution_us == time_us // self._resolution_us:
            return
        if len(self._times) == len(self._increments):
            self._drop_oldest()
        row = self._row(len(self._times))
        np.minimum(counted - self._counted, _MOST, out=self._counted)  # the increment, saturated, for a moment
        self._increments[row] = self._counted
        self._counted[:] = counted
        self._read[row] = np.packbits(read)
        self._times.append(time_us)
        newest = self._newest_old_enough(time_us)
        for _ in range(0 if newest is None else newest - 1):
            self._drop_oldest()

    def _drop_oldest(self) -> None:
        del self._times[0]
        self._first = (self._first + 1) % len(self._increments)

    def _newest_old_enough(self, now_us: int) -> int | None:
        found = None
        for point, time_us in enumerate(self._times):
            if time_us > now_us - self._length_us:
                break
            found = point
        return found
