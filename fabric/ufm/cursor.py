"""Which of the events UFM returns are new.  No clock, no I/O but a WARNING for an answer it does not believe.

UFM's ``GET /app/events`` has no documented since-id or paging parameter, so the service fetches the
list each cycle and this cursor picks out what it has not seen, by the integer event id and a
high-water mark.

UFM restarts can reset its id sequence.  A restart is believed only on evidence: the list holds an event with an
id at or below the mark that is *newer* than every event seen so far (that id was already used by an older
event, so the sequence started again).  Ids below the mark alone are no evidence: UFM answering with a short
or stale list (only its oldest events, say) looks the same, and taking it for a restart would lower the mark
and hand every event above the new one over again.  Such an answer returns nothing, keeps the mark and is
logged (a WARNING) and flagged (``suspected``); a real restart shows its evidence with its first new event.

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
from datetime import UTC, datetime, tzinfo
from typing import Any

from fabric.ufm.models import Event, UfmTimestamps

__all__ = ["CursorState", "EventCursor", "drop_handed_over", "raw_id"]

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
        self.suspected = False
        """The last list fed had every id below the mark and nothing newer than the newest seen: a short or
        stale answer, not believed to be a UFM restart (nothing returned, the mark kept)."""

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

    def advance(self, events: Iterable[Event]) -> list[Event]:
        """Return the new events of this fetch in id order, and move the cursor past them."""
        by_id = _dedupe(events)
        self.suspected = False
        if not by_id:
            return []
        state = self._state
        mark, last = state.high_water_id, state.last_event_time
        if self._restarted(by_id):
            # Ids cannot be compared across the restart: judge by time, then adopt the new sequence.
            fresh = [by_id[i] for i in sorted(by_id) if last is None or by_id[i].timestamp > last]
            log.warning("UFM's event ids started again (an id at or below %s on an event newer than %s): a UFM "
                        "restart; %d event(s) newer than that taken as new", mark, _iso(last), len(fresh))
            state = replace(state, restart_count=state.restart_count + 1)
        elif mark is not None and max(by_id) < mark:
            self.suspected = True
            log.warning("UFM's event list has only ids below the high-water mark %s (highest %s, none newer than "
                        "%s): a short or stale answer, not taken for a UFM restart; the mark stays", mark,
                        max(by_id), _iso(last))
            return []
        else:
            fresh = [by_id[i] for i in sorted(by_id) if mark is None or i > mark]
        newest = max(event.timestamp for event in by_id.values())
        if last is not None and last > newest:
            newest = last
        # Not a restart implies max(by_id) >= the old mark, so this never lowers it.
        self._state = replace(state, high_water_id=max(by_id), last_event_time=newest)
        return fresh


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


def raw_id(item: Any) -> int | None:
    """The id of a raw event as the filter reads it (``None``: none that reads)."""
    raw = item.get("id") if isinstance(item, Mapping) else None
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw.strip().isdigit():
        return int(raw)
    return None


def _iso(when: datetime | None) -> str:
    return when.isoformat() if when is not None else "none"
