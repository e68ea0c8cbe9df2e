"""A BER window's history: each port's error count at points in the past, few enough to hold for 200,000 ports.

A point is the time of a sample and, per port, its reset-corrected cumulative symbol-error count then (NaN for a
port not read anew in that sample: its count at that time is unknown). At most one point is kept per
``resolution`` of time (the first sample of each span), so a window of length L holds about ``L / resolution``
points whatever the sample rate: the 125-minute window at 5-minute resolution keeps 27 arrays at a 60 s interval
as at 300 s.

The window's reference for a port is the newest point at least L old; when the port was not read at that point,
the point before it; else none, and the port's window is not judged this time. Points older than those two are
dropped: later samples only ever look at newer ones.
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np
import numpy.typing as npt

from fabric.telemetry.settings import BerWindow

__all__ = ["BerHistory", "Reference"]

_US = 1_000_000


class Reference:
    """Each port's count at its reference point, and that point's time (NaN / 0 where there is none)."""

    __slots__ = ("counts", "times_us")

    def __init__(self, counts: npt.NDArray[np.float64], times_us: npt.NDArray[np.int64]) -> None:
        self.counts = counts
        self.times_us = times_us


class BerHistory:
    def __init__(self, window: BerWindow) -> None:
        self.window = window
        self._length_us = int(window.length.total_seconds() * _US)
        self._resolution_us = max(int(window.resolution.total_seconds() * _US), 1)
        capacity = math.ceil(self._length_us / self._resolution_us) + 3
        self._points: deque[tuple[int, npt.NDArray[np.float64]]] = deque(maxlen=capacity)
        """(time, counts), oldest first; the bound is a backstop: ``_prune`` keeps fewer."""

    def __len__(self) -> int:
        return len(self._points)

    def reference(self, now_us: int) -> Reference | None:
        """The reference of every port for a window ending at ``now_us``; ``None`` when no point is L old."""
        newest = self._newest_old_enough(now_us)
        if newest is None:
            return None
        time_us, counts = self._points[newest]
        times = np.full(len(counts), time_us, dtype=np.int64)
        if newest > 0:
            earlier_us, earlier = self._points[newest - 1]
            unread = np.isnan(counts)
            counts = np.where(unread, earlier, counts)
            times[unread & ~np.isnan(earlier)] = earlier_us
        times[np.isnan(counts)] = 0
        return Reference(counts, times)

    def record(self, time_us: int, counts: npt.NDArray[np.float64]) -> None:
        """Keep ``counts`` (NaN for ports not read anew) as the point at ``time_us`` unless the span of time it
        falls in has one already."""
        if self._points and self._points[-1][0] // self._resolution_us == time_us // self._resolution_us:
            return
        self._points.append((time_us, counts))
        self._prune(time_us)

    def _newest_old_enough(self, now_us: int) -> int | None:
        found = None
        for index, (time_us, _) in enumerate(self._points):
            if time_us > now_us - self._length_us:
                break
            found = index
        return found

    def _prune(self, now_us: int) -> None:
        newest = self._newest_old_enough(now_us)
        for _ in range(0 if newest is None else newest - 1):
            self._points.popleft()
