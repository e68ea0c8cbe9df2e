"""``EventListMemory``: decoding only what UFM appended gives the cursor what decoding the whole answer gives it."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from support import spooled

from fabric.ufm.appended import EventListMemory
from fabric.ufm.cursor import CursorState, EventCursor, drop_handed_over
from fabric.ufm.models import Event, ShapeError, parse_list
from topology.jsonlist import list_items

T0 = datetime(2026, 5, 1, 8, tzinfo=UTC)


class _Ufm:
    """A UFM's event history, answered as ``GET /app/events`` answers it: whole, in the order it was raised."""

    def __init__(self, separator: str) -> None:
        self.events: list[dict[str, Any]] = []
        self.next_id, self.at, self.separator = 1, T0, separator

    def raise_events(self, count: int, seconds: int) -> None:
        for _ in range(count):
            self.at += timedelta(seconds=seconds)
            self.events.append({"id": self.next_id, "type": "IBPort", "event_type": "110", "severity": "Warning",
                                "timestamp": self.at.strftime("%Y-%m-%d %H:%M:%S"), "object_name": "b8599fac_8",
                                "object_path": "default / Switch: leaf / NA / 8", "description": "symbol errors"})
            self.next_id += 1

    def body(self, events: list[dict[str, Any]] | None = None) -> bytes:
        shown = self.events if events is None else events
        return ("[" + self.separator.join(json.dumps(e) for e in shown) + "]").encode()


def _ids(memory: EventListMemory, body: bytes, state: CursorState | None) -> list[Any]:
    with spooled(body) as file:
        return [item["id"] for item in memory.elements(file, state)]


def _cycle(body: bytes, cursor: EventCursor, memory: EventListMemory | None) -> tuple[str, Any, Any]:
    """What one cycle hands the cursor (the raw elements the filter keeps) and what the cursor returns: with
    ``memory`` as the client reads the list, without it the whole answer decoded (the reference)."""
    state = cursor.state
    try:
        with spooled(body) as file:
            items = memory.elements(file, state) if memory is not None else list_items(body)
            kept = list(drop_handed_over(items, state))
        events = parse_list(Event, kept)
    except ShapeError:
        return "refused", None, None
    if memory is not None:
        memory.settle()
    return "read", kept, [(e.id, e.timestamp) for e in cursor.advance(events)]


step = st.one_of(
    st.tuples(st.just("raise"), st.integers(0, 30), st.integers(0, 90)),
    st.tuples(st.just("raise"), st.integers(0, 3), st.integers(0, 5)),
    st.tuples(st.just("restart"), st.integers(0, 1), st.integers(-3600, 3600)),
    st.tuples(st.just("rotate"), st.integers(1, 20), st.just(0)),
    st.tuples(st.just("stale"), st.integers(0, 10), st.just(0)),
    st.tuples(st.just("rewrite"), st.integers(0, 50), st.just(0)),
    st.tuples(st.just("repeat"), st.integers(0, 50), st.just(0)),
    st.tuples(st.just("garble"), st.integers(0, 50), st.just(0)),
    st.tuples(st.just("float id"), st.integers(0, 50), st.just(0)),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(step, min_size=1, max_size=25), st.sampled_from([",", ", ", ",\n "]))
def test_the_cursor_gets_what_the_whole_answer_gives_it(steps: list[tuple[str, int, int]], separator: str) -> None:
    """UFM raising events (a few, or none, between two polls), restarting (ids from 1 again, its clock on or back),
    dropping its oldest events, answering with a stale part of its history, an old event changed, repeated or
    made unreadable or given an id the filter does not read: every cycle, the same elements reach the cursor and
    the same events come out of it."""
    ufm = _Ufm(separator)
    ours, reference = EventCursor(), EventCursor()
    memory = EventListMemory(UTC)
    for kind, count, seconds in steps:
        shown: list[dict[str, Any]] | None = None
        if kind == "raise":
            ufm.raise_events(count, seconds)
        elif kind == "restart":
            ufm.events, ufm.next_id = ufm.events if count else [], 1
            ufm.at += timedelta(seconds=seconds)
        elif kind == "rotate":
            del ufm.events[:count]
        elif kind == "stale":
            shown = ufm.events[:count]
        elif ufm.events:
            at = count % len(ufm.events)
            if kind == "rewrite":
                ufm.events[at] = {**ufm.events[at], "description": "rewritten"}
            elif kind == "repeat":
                ufm.events.append(dict(ufm.events[at]))
            elif kind == "float id":  # valid as an event, not read by the filter, which keeps it every time
                ufm.events[at] = {**ufm.events[at], "id": float(ufm.events[at]["id"])}
            else:
                ufm.events[at] = {**ufm.events[at], "timestamp": "not a time"}
        body = ufm.body(shown)
        assert _cycle(body, ours, memory) == _cycle(body, reference, None)
        assert ours.state == reference.state


def test_an_answer_that_only_grew_is_decoded_from_where_the_last_one_ended() -> None:
    """The shortcut is taken: of the second answer, only the old highest id and the new elements are read."""
    ufm = _Ufm(",")
    ufm.raise_events(100, 1)
    cursor, memory = EventCursor(), EventListMemory(UTC)
    _cycle(ufm.body(), cursor, memory)
    ufm.raise_events(3, 1)
    assert _ids(memory, ufm.body(), cursor.state) == [100, 101, 102, 103]
    # That answer was not settled (its cycle did not read it through): the next is read from the one before.
    ufm.raise_events(1, 1)
    assert _ids(memory, ufm.body(), cursor.state) == [100, 101, 102, 103, 104]


def test_a_cursor_that_did_not_advance_past_the_last_answer_gets_the_whole_answer() -> None:
    """A state the cursor did not reach by reading that answer (behind it, ahead of it, its newest time older)."""
    ufm = _Ufm(",")
    ufm.raise_events(10, 1)
    cursor, memory = EventCursor(), EventListMemory(UTC)
    _cycle(ufm.body(), cursor, memory)
    newest = T0 + timedelta(seconds=10)
    assert cursor.state == CursorState(high_water_id=10, last_event_time=newest)
    for state in (CursorState(high_water_id=4, last_event_time=newest),
                  CursorState(high_water_id=50, last_event_time=newest),
                  CursorState(high_water_id=10, last_event_time=newest - timedelta(seconds=3)), None):
        assert len(_ids(memory, ufm.body(), state)) == 10, state
    assert len(_ids(memory, ufm.body(), cursor.state)) == 1
