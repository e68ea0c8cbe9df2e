"""Every UFM event counts once: what makes an event the same event, and the memory of those already counted.

UFM numbers its events but starts again from 1 when it restarts, so an id alone does not name an event: its
identity is the id with its time, its type (UFM's event policy id) and its object (``object_name`` and
``object_path``). The pipeline keeps one :class:`SeenEvents` and drops every event whose identity it has counted
already, whoever delivers it again: the cursor after a UFM restart, start-up's warm history, a UFM answer
repeated, a replayed file that holds a list twice.

The memory is bounded by the detectors' horizon (``RuleSettings.history``), measured on UFM's own clock: the
identities of events older than the newest event seen minus the horizon are forgotten, and an event older than
that line is dropped too, since it may be one of those forgotten (nothing the detectors keep is that old).
Events of types no rule reads are passed on without being remembered (the signal mapper counts them); so are
objects that are not events, which the mapper counts as malformed and skips.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection, Iterable
from datetime import datetime, timedelta
from operator import attrgetter
from typing import TypeVar

from fabric.remediation.signals import EventLike

EventKey = tuple[int, datetime, int, str | None, str | None]
"""(UFM event id, timestamp, event type, object name, object path)."""

event_key: Callable[[EventLike], EventKey] = attrgetter("id", "timestamp", "event_id", "object_name", "object_path")
"""An event's identity (built in C: replay computes a million of them)."""

E = TypeVar("E", bound=EventLike)


class SeenEvents:
    """The identities counted within the horizon; ``first_time`` lets through only events not counted yet."""

    def __init__(self, horizon: timedelta, counted_types: Collection[int]) -> None:
        self.horizon = horizon
        self._types = frozenset(counted_types)
        self._seen: set[EventKey] = set()
        self._order: deque[EventKey] = deque()
        """The identities in the order they were counted, to forget the oldest first."""
        self._newest: datetime | None = None
        self._line: datetime | None = None
        """Events older than this are forgotten, or dropped when they come (the newest seen minus the horizon)."""

    def first_time(self, events: Iterable[E]) -> tuple[list[E], int]:
        """``events`` less those counted before (or twice in ``events``), in their order, and how many were
        dropped; remembers the rest."""
        seen, order, types, line = self._seen, self._order, self._types, self._line
        fresh: list[E] = []
        newest = self._newest
        repeated = 0
        for event in events:
            try:
                key = event_key(event)
                if key[2] in types:
                    at = key[1]
                    if key in seen or (line is not None and at < line):
                        repeated += 1
                        continue
                    if newest is None or at > newest:
                        newest = at
                    seen.add(key)
                    order.append(key)
            except AttributeError:
                pass  # not an event: the signal mapper counts it as malformed and skips it
            fresh.append(event)
        if newest is not None and newest != self._newest:
            self._newest = newest
            self._forget_before(newest)
        return fresh, repeated

    def _forget_before(self, newest: datetime) -> None:
        try:
            line = newest - self.horizon
        except OverflowError:  # an event dated within the horizon of year 1: nothing is that old
            return
        seen, order = self._seen, self._order
        while order and order[0][1] < line:
            seen.discard(order.popleft())
        self._line = line

    def __len__(self) -> int:
        return len(self._seen)
