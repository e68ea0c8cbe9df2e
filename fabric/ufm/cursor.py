"""Which of the events UFM returns are new.  No clock, no I/O but a WARNING for an answer it does not believe.

UFM's ``GET /app/events`` has no documented since-id or paging parameter, so the service fetches the
list each cycle and this cursor picks out what it has not seen, by the integer event id and a
high-water mark.

UFM restarts can reset its id sequence.  A restart is believed only on evidence: the list holds an event with an
id at or below the mark that is *newer* than every event seen so far (that id was already used by an older
event, so the sequence started again).  Ids below the mark alone are no evidence: UFM answering with a short
or stale list (only its oldest events, say) looks the same, and taking it for a restart would lower the mark
and hand every event above the new one over again.  Such an answer returns nothing, keeps the mark and is
judged ``short``; a real restart shows its evidence with its first new event.

Each list fed is judged (``outcome``, ``EventRead``): believed, or not because it is empty after UFM had listed
events (its history is bounded, never emptied: it drops its oldest events, not all of them), short (the case above:
its newest events are missing) or stale (nothing new, though UFM's change counter moved since the first list that
brought nothing: a cached or frozen answer). Nothing is handed over from a list not believed,
and the mark does not move: the events it lacked come with the first list that holds them. A WARNING says when
the lists stop being believed and when they are again, not at every list (the daemon counts every one,
``fabric_event_reads``).

After a restart the cursor returns the events newer than the last event seen before it (by timestamp:
the ids cannot be compared across the restart), then adopts the new id sequence.  It never replays the
whole history, and never skips an event whose id is above the mark.  A UFM whose clock went back with its
restart shows no evidence until its events are newer than the newest seen before: the events in between are
not returned (they cannot be told from old ones).

The state is a small frozen dataclass that can be persisted (``to_dict``/``from_dict``) and restored.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta, tzinfo
from enum import StrEnum
from typing import Any

from fabric.ufm.models import Event, UfmTimestamps
from topology.numerals import whole_number

__all__ = ["CursorState", "EventCursor", "EventRead", "Lookback", "drop_handed_over", "needed_to_warm", "raw_id"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class CursorState:
    """What the cursor remembers.

    ``high_water_id``: the largest event id seen in the current id sequence (``None``: nothing yet).
    ``last_event_time``: the newest event timestamp seen so far, across restarts.
    ``restart_count``: UFM restarts (id sequence resets) recognised so far.
    """

    high_water_id: int | None = None
    last_event_time: datetime | None = None
    restart_count: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly form (timestamps as ISO 8601 with offset)."""
        return {
            "high_water_id": self.high_water_id,
            "last_event_time": self.last_event_time.isoformat() if self.last_event_time else None,
            "restart_count": self.restart_count,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CursorState:
        raw_time = data.get("last_event_time")
        when: datetime | None = None
        if raw_time is not None:
            when = datetime.fromisoformat(str(raw_time))
            when = when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)
        raw_mark = data.get("high_water_id")
        return cls(
            high_water_id=None if raw_mark is None else int(raw_mark),
            last_event_time=when,
            restart_count=int(data.get("restart_count", 0)),
        )


class EventRead(StrEnum):
    """How the cursor took an event list UFM answered."""

    OK = "ok"
    """Believed: its new events, if any, handed over."""
    EMPTY = "empty"
    """No event at all, from a UFM that had listed some."""
    SHORT = "short"
    """Every id below the mark, none newer than the newest seen: its newest events are missing."""
    STALE = "stale"
    """Nothing new, though UFM's change counter moved since the first of the lists that brought nothing: UFM raised
    events that no list has held since."""

    @property
    def meaning(self) -> str:
        return _MEANING[self]


_MEANING = {
    EventRead.OK: "UFM's event list can be believed",
    EventRead.EMPTY: "UFM listed no event at all, having listed some before",
    EventRead.SHORT: "UFM's event list lacks its newest events (every id below those already read, with no sign of "
                     "a UFM restart)",
    EventRead.STALE: "UFM's event list brings nothing new while its change counter says events were raised",
}

WATCHED_COUNTERS = ("events_version", "links_version")
"""The ``/app/versioning`` counters that say UFM raised events, best first: ``events_version`` moves with every
event (UFM's fluentd plugin reads it); where UFM has none, ``links_version``, since every link going down or up
is an event (329, 328)."""


def _dedupe(events: Iterable[Event]) -> dict[int, Event]:
    """One event per id; if an id repeats, the newest timestamp wins."""
    by_id: dict[int, Event] = {}
    for event in events:
        kept = by_id.get(event.id)
        if kept is None or event.timestamp > kept.timestamp:
            by_id[event.id] = event
    return by_id


class EventCursor:
    """Feed it every fetched events list; it returns only the new events, in id order.

    The first list ever fed is all new (call :meth:`prime` instead to start from "now").
    """

    def __init__(self, state: CursorState | None = None) -> None:
        self._state = state or CursorState()
        self.outcome = EventRead.OK
        """How the last list fed was taken."""
        self._quiet_from: int | None = None
        """UFM's watched change counter as given with the first of the lists fed since the last one that brought new
        events (``None``: the last list brought some, or came without the counter)."""

    @property
    def state(self) -> CursorState:
        return self._state

    def prime(self, events: Iterable[Event]) -> None:
        """Mark everything in ``events`` as seen without returning it."""
        self.advance(events)

    def is_restart(self, events: Iterable[Event]) -> bool:
        """Would this list be taken as a UFM restart?  (No state change.)"""
        return self._restarted(_dedupe(events))

    def _restarted(self, by_id: Mapping[int, Event]) -> bool:
        """An id at or below the mark on an event newer than every event seen: the ids started again."""
        mark, last = self._state.high_water_id, self._state.last_event_time
        if mark is None or last is None:
            return False
        return any(event_id <= mark and event.timestamp > last for event_id, event in by_id.items())

    def advance(self, events: Iterable[Event], counters: Mapping[str, int] | None = None) -> list[Event]:
        """Return the new events of this fetch in id order, and move the cursor past them. ``counters``: UFM's
        ``/app/versioning`` counters, read before the list (without them, the next list cannot be judged stale)."""
        counter = next((counters[name] for name in WATCHED_COUNTERS if counters and name in counters), None)
        fresh, outcome = self._fresh(_dedupe(events))
        if fresh or counter is None:
            self._quiet_from = None
        elif self._quiet_from is None:
            # Not judged against the counter of the list before, which brought events: the counter moved also with
            # those raised between its read and that list's, which that list held.
            self._quiet_from = counter
        elif counter != self._quiet_from and outcome is EventRead.OK:
            # Raised after the first quiet list was read, so due in this one, which brings nothing.
            outcome = EventRead.STALE
        self._judged(outcome)
        return fresh

    def _fresh(self, by_id: Mapping[int, Event]) -> tuple[list[Event], EventRead]:
        """The new events of ``by_id`` and how the list is taken; the cursor moved past them. Nothing is new in a
        list not believed, and the mark stays."""
        state = self._state
        mark, last = state.high_water_id, state.last_event_time
        if not by_id:
            # A UFM that never listed an event has none to lose.
            return [], EventRead.OK if mark is None else EventRead.EMPTY
        if self._restarted(by_id):
            # Ids cannot be compared across the restart: judge by time, then adopt the new sequence.
            fresh = [by_id[i] for i in sorted(by_id) if last is None or by_id[i].timestamp > last]
            log.warning("UFM's event ids started again (an id at or below %s on an event newer than %s): a UFM "
                        "restart; %d event(s) newer than that taken as new", mark, _iso(last), len(fresh))
            state = replace(state, restart_count=state.restart_count + 1)
        elif mark is not None and max(by_id) < mark:
            return [], EventRead.SHORT
        else:
            fresh = [by_id[i] for i in sorted(by_id) if mark is None or i > mark]
        newest = max(event.timestamp for event in by_id.values())
        if last is not None and last > newest:
            newest = last
        # Not a restart implies max(by_id) >= the old mark, so this never lowers it.
        self._state = replace(state, high_water_id=max(by_id), last_event_time=newest)
        return fresh, EventRead.OK

    def _judged(self, outcome: EventRead) -> None:
        """``outcome`` the last list's; a WARNING when it changes (not at every list of a fault that lasts)."""
        before, self.outcome = self.outcome, outcome
        if outcome is before:
            return
        state = self._state
        if outcome is EventRead.OK:
            log.warning("UFM's event list can be believed again (it was %s)", before.value)
        else:
            log.warning("%s (%s): the high-water mark %s and the newest event seen (%s) stay, and nothing is handed "
                        "over from such a list", outcome.meaning, outcome.value, state.high_water_id,
                        _iso(state.last_event_time))


def drop_handed_over(items: Iterable[Any], state: CursorState, tz: tzinfo = UTC) -> Iterator[Any]:
    """The raw events of a fetched list (JSON objects) that ``advance`` could take as new under ``state``, found
    before they are validated into ``Event`` objects: UFM returns its whole history every time, and validating it
    all each cycle costs time and memory that grow with that history. One pass, one element at a time: what is
    dropped is never held (``jsonlist.list_items`` decodes the list a piece at a time as it is read, and
    ``appended`` does not decode again what the last answer held).

    Dropped: an event whose id is below the mark and whose timestamp is no newer than the newest seen, which
    ``advance`` never returns (not even after a restart, where it judges by time). Kept whatever they hold: the
    events at or above the mark, those newer than the newest seen (a restart's evidence), the list's highest id (so
    that a short or stale answer is still recognised as one), and any event whose id or time does not read (its
    validation names what is wrong). Which id is the highest is known only at the end: the elements holding the
    highest id seen so far that would be dropped are held aside, and come last if it is still the highest (the
    cursor sorts by id and keeps the newest of a repeated id, so their place in the list does not matter)."""
    mark, last = state.high_water_id, state.last_event_time
    if mark is None or last is None:
        yield from items
        return
    timestamps = UfmTimestamps(tz)
    top: int | None = None
    top_aside: list[Any] = []
    """The dropped elements whose id is ``top``, the highest seen so far."""
    for item in items:
        event_id = raw_id(item)
        if event_id is not None and (top is None or event_id > top):
            top, top_aside = event_id, []
        if event_id is None or event_id >= mark:
            yield item
            continue
        try:
            when = timestamps.parse(item.get("timestamp"))
        except ValueError:
            yield item
            continue
        if when > last:
            yield item
        elif event_id == top:
            top_aside.append(item)
    yield from top_aside


@dataclass(frozen=True, slots=True)
class Lookback:
    """How far back a reading of the whole history is wanted besides what the cursor could hand over: start-up's
    and a reload's, which warm the detectors on the past (``needed_to_warm``)."""

    now: datetime
    horizon: timedelta


def needed_to_warm(items: Iterable[Any], state: CursorState | None, lookback: Lookback,
                   tz: tzinfo = UTC) -> Iterator[Any]:
    """The raw events of a fetched list (JSON objects) that start-up (or a reload) needs, found before they are
    validated: with UFM's history at hundreds of thousands of events, validating it all at start held it all at
    once (on h100-4k, a 250,000-event history took the engine from 117 MiB to 700 MiB and more).

    Kept: the events no older than ``lookback.now`` less the horizon (the detectors drop every signal older than
    that when they are warmed, ``Detectors.evaluate``); what ``drop_handed_over`` keeps under ``state``
    (everything when the cursor has handed over nothing yet); the elements holding the list's highest id and one
    holding its newest time, which a cursor primed on the list (no ``state``) needs; and any event whose id or time
    does not read. A cursor primed, or resumed from ``state``, on what is kept ends as it would on the whole
    list."""
    mark = state.high_water_id if state is not None else None
    last = state.last_event_time if state is not None else None
    everything = state is not None and (mark is None or last is None)
    line = lookback.now - lookback.horizon
    timestamps = UfmTimestamps(tz)
    top: int | None = None
    newest: datetime | None = None
    top_aside: list[Any] = []
    """Elements not kept otherwise that hold the highest id read so far."""
    newest_aside: Any = None
    """One element not kept otherwise that holds the newest time read so far (a storm's thousands share it)."""
    for item in items:
        event_id = raw_id(item)
        try:
            when = timestamps.parse(item.get("timestamp")) if isinstance(item, Mapping) else None
        except ValueError:
            when = None
        if event_id is None or when is None:
            yield item
            continue
        if top is None or event_id > top:
            top, top_aside = event_id, []
        if newest is None or when > newest:
            newest, newest_aside = when, None
        if everything or when >= line or (mark is not None and event_id >= mark) or (last is not None and when > last):
            yield item
            continue
        if event_id == top:
            top_aside.append(item)
        if when == newest and newest_aside is None:
            newest_aside = item
    yield from top_aside
    if newest_aside is not None and not any(newest_aside is given for given in top_aside):
        yield newest_aside


def raw_id(item: Any) -> int | None:
    """The id of a raw event as the filter reads it (``None``: none that reads)."""
    raw = item.get("id") if isinstance(item, Mapping) else None
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    return whole_number(raw.strip()) if isinstance(raw, str) else None


def _iso(when: datetime | None) -> str:
    return when.isoformat() if when is not None else "none"
