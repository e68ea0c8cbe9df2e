"""The simulated clock: what "now" is inside the simulator.

Two ways for time to pass, freely combined:

- ``advance(seconds)``: jump forward (the scenario runner, the admin endpoint, tests);
- ``rate``: simulated seconds per real second.  ``0`` freezes the clock between advances (the default
  for tests); ``1`` is real time; ``60`` runs a minute of scenario per second.

Thread-safe: the HTTP server, the ticker and the test thread all read it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

MonotonicFn = Callable[[], float]


class SimClock:
    """Simulated UTC time.  ``monotonic`` is injectable so the rate can be tested without waiting."""

    def __init__(
        self,
        start: datetime | None = None,
        *,
        rate: float = 0.0,
        monotonic: MonotonicFn = time.monotonic,
    ) -> None:
        if rate < 0:
            raise ValueError("clock rate cannot be negative")
        begin = start if start is not None else datetime.now(UTC).replace(microsecond=0)
        if begin.tzinfo is None:
            begin = begin.replace(tzinfo=UTC)
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
        return self._base + timedelta(seconds=elapsed)

    def now(self) -> datetime:
        """The simulated time, timezone-aware UTC."""
        with self._lock:
            return self._now_locked()

    def set_rate(self, rate: float) -> None:
        """Change how fast time passes from now on (0 freezes it)."""
        if rate < 0:
            raise ValueError("clock rate cannot be negative")
        with self._lock:
            self._base = self._now_locked()
            self._base_real = self._monotonic()
            self._rate = rate

    def advance(self, seconds: float) -> datetime:
        """Jump ``seconds`` forward; returns the new time.  Time never goes backwards."""
        if seconds < 0:
            raise ValueError("the simulated clock cannot go backwards")
        with self._lock:
            self._base = self._now_locked() + timedelta(seconds=seconds)
            self._base_real = self._monotonic()
            return self._base

    def advance_to(self, when: datetime) -> datetime:
        """Jump to ``when`` if it is in the future; returns the (possibly unchanged) time."""
        with self._lock:
            current = self._now_locked()
            if when > current:
                self._base = when
                self._base_real = self._monotonic()
                return when
            return current
