"""Timed callbacks on the simulated clock: scenario steps, the second half of a flap, job completions."""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

Callback = Callable[[], None]


@dataclass(order=True, slots=True)
class Scheduled:
    when: datetime
    seq: int
    label: str = field(compare=False)
    callback: Callback = field(compare=False)


class Scheduler:
    """A queue of callbacks ordered by simulated time (then by insertion)."""

    def __init__(self) -> None:
        self._heap: list[Scheduled] = []
        self._seq = itertools.count()

    def __len__(self) -> int:
        return len(self._heap)

    def at(self, when: datetime, label: str, callback: Callback) -> None:
        heapq.heappush(self._heap, Scheduled(when, next(self._seq), label, callback))

    def pop_due(self, until: datetime) -> Scheduled | None:
        """The earliest callback due at or before ``until``, removed from the queue; else None."""
        if self._heap and self._heap[0].when <= until:
            return heapq.heappop(self._heap)
        return None

    def pending(self) -> list[tuple[datetime, str]]:
        return [(item.when, item.label) for item in sorted(self._heap)]

    def clear(self) -> None:
        self._heap.clear()
