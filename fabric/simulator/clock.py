"""The simulated clock: what "now" is inside the simulator.

Two ways for time to pass, freely combined:

- ``advance(seconds)``: jump forward (the scenario runner, the admin endpoint, tests);
- ``rate``: simulated seconds per real second.  ``0`` freezes the clock between advances (the default
  for tests); ``1`` is real time; ``60`` runs a minute of scenario per second.

Thread-safe: the HTTP server, the ticker and the test thread all read it.

Time is bounded: the rate by ``MAX_RATE`` and the clock by ``HORIZON``, where it stops.  A clock that
could run past what ``datetime`` holds would fail every later request that asks for the time.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from fabric import durations

MonotonicFn = Callable[[], float]

MAX_RATE = 1_000_000.0
"""Simulated seconds per real second, at most (11.5 simulated days a second)."""
MAX_SPAN_S = durations.LONGEST.total_seconds()
"""The longest simulated time one input may name (a duration, an advance, ``--offline``): ten years."""
HORIZON = datetime(9000, 1, 1, tzinfo=UTC)
"""The clock stops here: far past any scenario, and a millennium short of ``datetime.max``."""


class PastHorizon(ValueError):
    """A time the simulated clock cannot reach (past ``HORIZON``)."""


def check_rate(rate: float) -> float:
    """``rate`` as a float if the clock can run at it; ValueError (naming the limits) for NaN, infinity, < 0 or
    > MAX_RATE."""
    if not 0.0 <= rate <= MAX_RATE:  # false for NaN too; no float() that could overflow
        raise ValueError(f"the clock rate must be a number from 0 to {MAX_RATE:,.0f} simulated seconds per second, "
                         f"got {rate!r:.40}")
    return float(rate)


def check_span(seconds: float, what: str) -> float:
    """``seconds`` as a float if it is from 0 to ``MAX_SPAN_S``; else ValueError naming ``what``."""
    if not 0.0 <= seconds <= MAX_SPAN_S:  # false for NaN too
        raise ValueError(f"{what} must be from 0 to {MAX_SPAN_S:,.0f} seconds (ten years), got {seconds!r:.40}")
    return float(seconds)


def later(start: datetime, seconds: float) -> datetime:
    """``seconds`` after ``start``; PastHorizon when that is past ``HORIZON`` (checked before any overflow)."""
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"not a number of seconds from now: {seconds!r}")
    if seconds > (HORIZON - start).total_seconds():
        raise PastHorizon(f"{seconds:g}s after {start.isoformat()} is past the simulator's horizon "
                          f"({HORIZON.date().isoformat()})")
    return start + timedelta(seconds=seconds)


class SimClock:
    """Simulated UTC time.  ``monotonic`` is injectable so the rate can be tested without waiting."""

    def __init__(
        self,
        start: datetime | None = None,
        *,
        rate: float = 0.0,
        monotonic: MonotonicFn = time.monotonic,
    ) -> None:
        rate = check_rate(rate)
        begin = start if start is not None else datetime.now(UTC).replace(microsecond=0)
        if begin.tzinfo is None:
            begin = begin.replace(tzinfo=UTC)
        if begin > HORIZON:
            raise PastHorizon(f"the clock cannot start after its horizon ({HORIZON.date().isoformat()})")
        self._lock = threading.Lock()
        self._monotonic = monotonic
        self._base = begin.astimezone(UTC)
        self._base_real = monotonic()
        self._rate = rate

    @property
    def rate(self) -> float:
        return self._rate

    def _now_locked(self) -> datetime:
        if self._rate == 0.0:
            return self._base
        elapsed = (self._monotonic() - self._base_real) * self._rate
        return self._base + timedelta(seconds=min(elapsed, (HORIZON - self._base).total_seconds()))

    def now(self) -> datetime:
        """The simulated time, timezone-aware UTC."""
        with self._lock:
            return self._now_locked()

    def set_rate(self, rate: float) -> None:
        """Change how fast time passes from now on (0 freezes it); ValueError outside 0..MAX_RATE."""
        rate = check_rate(rate)
        with self._lock:
            self._base = self._now_locked()
            self._base_real = self._monotonic()
            self._rate = rate

    def advance(self, seconds: float) -> datetime:
        """Jump ``seconds`` forward; returns the new time.  Time never goes backwards, nor past ``HORIZON``."""
        if seconds < 0:
            raise ValueError("the simulated clock cannot go backwards")
        with self._lock:
            self._base = later(self._now_locked(), seconds)
            self._base_real = self._monotonic()
            return self._base

    def advance_to(self, when: datetime) -> datetime:
        """Jump to ``when`` if it is in the future; returns the (possibly unchanged) time."""
        if when > HORIZON:
            raise PastHorizon(f"{when.isoformat()} is past the simulator's horizon ({HORIZON.date().isoformat()})")
        with self._lock:
            current = self._now_locked()
            if when > current:
                self._base = when
                self._base_real = self._monotonic()
                return when
            return current
