"""EventCursor: new events only, in id order, across UFM restarts; unit and property tests."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from random import Random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric.ufm.cursor import CursorState, EventCursor, EventRead, Lookback, drop_handed_over, needed_to_warm
from fabric.ufm.models import Event

T0 = datetime(2024, 5, 28, 8, 0, 0, tzinfo=UTC)


def ev(event_id: int, seconds: float, tag: str = "") -> Event:
    return Event.model_validate(
        {
            "id": event_id,
            "type": "IBPort",
            "event_type": "110",
            "timestamp": (T0 + timedelta(seconds=seconds)).isoformat(),
            "description": tag or f"event {event_id}",
        }
    )


def ids(events: list[Event]) -> list[int]:
    return [e.id for e in events]


def test_first_fetch_returns_everything_in_id_order() -> None:
    cursor = EventCursor()
    assert ids(cursor.advance([ev(3, 3), ev(1, 1), ev(2, 2)])) == [1, 2, 3]
    assert cursor.state == CursorState(high_water_id=3, last_event_time=T0 + timedelta(seconds=3))


def test_only_new_events_and_duplicates_collapse() -> None:
    cursor = EventCursor()
    cursor.advance([ev(1, 1), ev(2, 2)])
    assert ids(cursor.advance([ev(1, 1), ev(2, 2), ev(4, 4), ev(3, 3), ev(4, 4)])) == [3, 4]
    assert cursor.advance([ev(1, 1), ev(2, 2), ev(3, 3), ev(4, 4)]) == []
    assert cursor.advance([]) == []
    assert cursor.state.high_water_id == 4


def test_prime_starts_from_now() -> None:
    cursor = EventCursor()
    cursor.prime([ev(1, 1), ev(2, 2)])
    assert ids(cursor.advance([ev(1, 1), ev(2, 2), ev(3, 3)])) == [3]


def test_out_of_order_timestamps_are_not_a_restart() -> None:
    cursor = EventCursor()
    cursor.advance([ev(99, 10), ev(100, 5)])  # id 99 is newer than id 100
    assert not cursor.is_restart([ev(99, 10), ev(100, 5)])
    assert ids(cursor.advance([ev(99, 10), ev(100, 5), ev(101, 7)])) == [101]  # by id, though older
    assert cursor.state.restart_count == 0


def test_restart_with_ids_below_the_mark() -> None:
    cursor = EventCursor()
    cursor.advance([ev(i, i) for i in range(1, 501)])
    # UFM restarted and lost its history: a fresh sequence, all newer than event 500
    after = [ev(1, 600, "new-1"), ev(2, 601, "new-2")]
    assert cursor.is_restart(after)
    assert [e.description for e in cursor.advance(after)] == ["new-1", "new-2"]
    assert cursor.state.restart_count == 1
    assert cursor.state.high_water_id == 2  # the new sequence is adopted
    assert ids(cursor.advance([*after, ev(3, 602)])) == [3]


def test_restart_whose_new_ids_already_passed_the_mark() -> None:
    cursor = EventCursor()
    cursor.advance([ev(i, i) for i in range(1, 6)])
    after = [ev(i, 100 + i, f"new-{i}") for i in range(1, 9)]  # ids 1..8, mark was 5
    returned = cursor.advance(after)
    assert [e.description for e in returned] == [f"new-{i}" for i in range(1, 9)]
    assert cursor.state.restart_count == 1


def test_restart_keeping_old_history_does_not_replay_it() -> None:
    cursor = EventCursor()
    cursor.advance([ev(i, i) for i in range(1, 11)])
    # ids went backwards; the list still holds old events (older timestamps): only the newer are new
    mixed = [ev(1, 1), ev(2, 2), ev(3, 20, "post-restart")]
    assert [e.description for e in cursor.advance(mixed)] == ["post-restart"]


def test_a_short_answer_is_not_a_restart_and_keeps_the_mark(caplog: pytest.LogCaptureFixture) -> None:
    # Issue 9, finding 10: UFM answered once with only its 4 oldest events. Taken for a restart, the mark fell
    # from 22 to 4 and the next cycle handed events 5..22 over again.
    cursor = EventCursor()
    full = [ev(i, i) for i in range(1, 23)]
    cursor.advance(full)
    with caplog.at_level(logging.WARNING, logger="fabric.ufm.cursor"):
        assert cursor.advance(full[:4]) == []
    assert cursor.outcome is EventRead.SHORT and cursor.state.restart_count == 0
    assert cursor.state.high_water_id == 22  # never lowered on a short answer
    [warning] = caplog.records
    assert warning.getMessage().startswith("UFM's event list lacks its newest events (every id below those already "
                                           "read, with no sign of a UFM restart) (short): the high-water mark 22 ")
    assert ids(cursor.advance([*full, ev(23, 23)])) == [23]
    assert cursor.outcome is EventRead.OK


def test_a_restart_is_believed_on_its_first_new_event() -> None:
    cursor = EventCursor()
    cursor.advance([ev(i, i) for i in range(1, 23)])
    # UFM restarted: its new sequence holds, so far, only events older than the newest seen (kept history)...
    assert cursor.advance([ev(1, 20), ev(2, 21)]) == [] and cursor.outcome is EventRead.SHORT
    # ...until its first new event: an id below the mark, newer than everything seen
    assert [e.description for e in cursor.advance([ev(1, 20), ev(2, 21), ev(3, 30, "new")])] == ["new"]
    assert cursor.state == CursorState(3, T0 + timedelta(seconds=30), restart_count=1)
    assert cursor.outcome is EventRead.OK


def test_restart_with_a_clock_behind_waits_for_its_evidence() -> None:
    # Ids below the mark and nothing newer than the newest seen: no evidence of a restart (a short or stale
    # answer looks the same), so the mark stays; the restart is believed once UFM's events are newer again.
    # (Before issue 9 such a list was taken for a restart and lowered the mark: a short answer then made the
    # next cycle repeat every event above the lowered mark.)
    cursor = EventCursor()
    cursor.advance([ev(i, 1000 + i) for i in range(1, 101)])
    assert cursor.advance([ev(1, 500), ev(2, 501)]) == []
    assert cursor.state.restart_count == 0 and cursor.state.high_water_id == 100
    assert cursor.advance([ev(1, 500), ev(2, 501), ev(3, 502)]) == []
    assert ids(cursor.advance([ev(1, 500), ev(2, 501), ev(3, 502), ev(4, 1200)])) == [4]
    assert cursor.state.restart_count == 1 and cursor.state.high_water_id == 4


def test_state_round_trip() -> None:
    cursor = EventCursor()
    cursor.advance([ev(1, 1.5), ev(7, 2.25)])
    state = cursor.state
    restored = CursorState.from_dict(state.to_dict())
    assert restored == state
    assert ids(EventCursor(restored).advance([ev(7, 2.25), ev(8, 3)])) == [8]
    assert CursorState.from_dict({}) == CursorState()
    assert CursorState.from_dict({"last_event_time": "2024-05-28 08:00:00"}).last_event_time == T0


# ------------------------------------------------------------------------------------------ properties


@dataclass
class FakeUfm:
    """An event log whose id counter restarts on a UFM restart.

    ``restart(keep=0)`` loses the history; ``restart(keep=k)`` keeps the last k events but renumbers
    them from 1 (same events, new ids), and new events continue after them.  Each event's description
    is its identity, ``"<epoch it was emitted in>:<original id>"``.
    """

    cap: int | None
    epoch: int = 0
    next_id: int = 1
    clock: float = 0.0
    log: list[Event] = field(default_factory=list)

    def emit(self, count: int, gap: int) -> None:
        for _ in range(count):
            self.clock += gap  # gap 0: several events in the same second
            tag = f"{self.epoch}:{self.next_id}"
            self.log.append(ev(self.next_id, self.clock, tag))
            self.next_id += 1

    def restart(self, keep: int) -> None:
        kept = self.log[-keep:] if keep else []
        self.log = [
            ev(i, e.timestamp.timestamp() - T0.timestamp(), e.description or "") for i, e in enumerate(kept, start=1)
        ]
        self.epoch += 1
        self.next_id = len(self.log) + 1
        self.clock += 60  # a restart takes time

    def fetch(self) -> list[Event]:
        return list(self.log[-self.cap :] if self.cap else self.log)

    def play(self, action: str, count: int, gap: int) -> list[Event] | None:
        """One ``STEP`` on the log: what UFM answers for "fetch" and "short" (only the ``count`` oldest events of
        its list: issue 9, finding 10), ``None`` for the others ("persist" is the caller's)."""
        if action == "emit":
            self.emit(count, gap)
        elif action == "restart":
            self.restart(keep=count)
        elif action in ("fetch", "short"):
            return self.fetch()[:count] if action == "short" else self.fetch()
        return None


NO_RESTART = st.one_of(
    st.tuples(st.just("emit"), st.integers(1, 6), st.integers(0, 3)),
    st.tuples(st.just("fetch"), st.just(0), st.just(0)),
    st.tuples(st.just("persist"), st.just(0), st.just(0)),
    st.tuples(st.just("short"), st.integers(0, 6), st.just(0)),
)
STEP = NO_RESTART | st.tuples(st.just("restart"), st.integers(0, 8), st.just(0))


def epoch_of(tag: str) -> int:
    return int(tag.split(":", maxsplit=1)[0])


@settings(max_examples=400, deadline=None)
@given(steps=st.lists(STEP, max_size=40), cap=st.none() | st.integers(1, 12))
def test_cursor_properties(steps: list[tuple[str, int, int]], cap: int | None) -> None:
    ufm = FakeUfm(cap=cap)
    cursor = EventCursor()
    returned: list[str] = []
    required: set[str] = set()
    visible: set[str] = set()
    epoch_at_last_fetch = 0
    for action, count, gap in steps:
        fetched = ufm.play(action, count, gap)
        if action == "persist":
            cursor = EventCursor(CursorState.from_dict(cursor.state.to_dict()))
        elif fetched is not None:
            visible.update(e.description or "" for e in fetched)
            # events emitted since the last restart must all come out; kept older ones may, once
            required.update(e.description or "" for e in fetched if epoch_of(e.description or "") == ufm.epoch)
            mark = cursor.state.high_water_id
            same_sequence = ufm.epoch == epoch_at_last_fetch
            new = cursor.advance(fetched)
            tags = [e.description or "" for e in new]
            assert ids(new) == sorted(ids(new))  # id order
            if same_sequence and mark is not None:  # every event above the mark is returned
                assert {e.description for e in fetched if e.id > mark} <= set(tags)
            # nothing returned before (in particular before a restart) comes back
            assert not set(tags) & set(returned)
            returned.extend(tags)
            epoch_at_last_fetch = ufm.epoch
    assert len(returned) == len(set(returned))  # no event is ever returned twice
    assert required <= set(returned)  # no new event is ever missed
    assert set(returned) <= visible


@settings(max_examples=400, deadline=None)
@given(steps=st.lists(STEP, max_size=40), cap=st.none() | st.integers(1, 12), order=st.randoms())
def test_dropping_what_was_handed_over_before_validation_changes_nothing(steps: list[tuple[str, int, int]],
                                                                          cap: int | None, order: Random) -> None:
    """A cursor fed only the raw events ``drop_handed_over`` keeps returns what one fed the whole list returns,
    restarts, short answers and persistence included, and ends in the same state, whatever the order of the list
    (the highest id is known only at its end)."""
    ufm = FakeUfm(cap=cap)
    whole, filtered = EventCursor(), EventCursor()
    for action, count, gap in steps:
        fetched = ufm.play(action, count, gap)
        if action == "persist":
            filtered = EventCursor(CursorState.from_dict(filtered.state.to_dict()))
        elif fetched is not None:
            fetched = order.sample(fetched, len(fetched))
            raw = [{"id": e.id, "timestamp": e.timestamp.isoformat(), "n": n} for n, e in enumerate(fetched)]
            kept = [fetched[item["n"]] for item in drop_handed_over(raw, filtered.state)]
            expected = whole.advance(fetched)
            assert [(e.id, e.description) for e in filtered.advance(kept)] == [(e.id, e.description) for e in expected]
            assert (filtered.state, filtered.outcome) == (whole.state, whole.outcome)


@settings(max_examples=400, deadline=None)
@given(steps=st.lists(STEP, max_size=40), cap=st.none() | st.integers(1, 12), order=st.randoms(),
       skew=st.integers(-100, 100), horizon=st.integers(0, 200), aged=st.integers(0, 300))
def test_what_start_up_keeps_to_warm_primes_or_resumes_the_cursor_as_the_whole_list_does(
        steps: list[tuple[str, int, int]], cap: int | None, order: Random, skew: int, horizon: int, aged: int) -> None:
    """Whenever the daemon starts (on whatever list, whatever order, our clock ahead of UFM's or behind, the
    highest id on an event older than others): a cursor primed on what ``needed_to_warm`` keeps, or resumed from
    the saved state on it, returns what one fed the whole list returns and ends in the same state; and every event
    no older than the horizon before our clock is kept, for the detectors."""
    ufm = FakeUfm(cap=cap)
    running = EventCursor()
    for action, count, gap in steps:
        fetched = ufm.play(action, count, gap)
        if fetched is None:
            continue
        if fetched and aged:
            top = max(fetched, key=lambda e: e.id)
            older = top.timestamp - timedelta(seconds=aged) - T0
            fetched = [ev(e.id, older.total_seconds(), e.description or "") if e is top else e for e in fetched]
        fetched = order.sample(fetched, len(fetched))
        raw = [{"id": e.id, "timestamp": e.timestamp.isoformat(), "n": n} for n, e in enumerate(fetched)]
        lookback = Lookback(T0 + timedelta(seconds=ufm.clock + skew), timedelta(seconds=horizon))
        for state in (None, running.state):
            kept = [fetched[item["n"]] for item in needed_to_warm(raw, state, lookback)]
            whole, filtered = EventCursor(state or CursorState()), EventCursor(state or CursorState())
            if state is None:  # a first start: the cursor is primed, nothing is handed over
                whole.prime(fetched)
                filtered.prime(kept)
            else:
                assert ids(filtered.advance(kept)) == ids(whole.advance(fetched))
            assert (filtered.state, filtered.outcome) == (whole.state, whole.outcome)
            if fetched:
                line = lookback.now - lookback.horizon
                assert {n for n, e in enumerate(fetched) if e.timestamp >= line} <= {e_n for e_n, e in
                                                                                     enumerate(fetched) if e in kept}
        running.advance(fetched)


def test_the_handed_over_events_are_dropped_and_a_stale_answer_still_shows() -> None:
    cursor = EventCursor()
    cursor.advance([ev(i, i) for i in range(1, 11)])
    raw = [{"id": i, "timestamp": (T0 + timedelta(seconds=i)).isoformat()} for i in range(1, 13)]
    assert [item["id"] for item in drop_handed_over(raw, cursor.state)] == [10, 11, 12]
    # Only old events (a short answer): its highest id stays, so the cursor still sees a stale answer.
    assert [item["id"] for item in drop_handed_over(raw[:5], cursor.state)] == [5]
    # A restart's evidence (a low id newer than everything seen) and an unreadable event are kept.
    odd = [{"id": 2, "timestamp": (T0 + timedelta(hours=1)).isoformat()}, {"id": 3, "timestamp": "soon"}, {"id": 4}]
    assert [item["id"] for item in drop_handed_over([*odd, raw[9]], cursor.state)] == [2, 3, 4, 10]


# ------------------------------------------------------------------------------------------ how a list is taken


def test_an_empty_list_after_events_is_not_believed_and_the_next_full_one_is(caplog: pytest.LogCaptureFixture) -> None:
    cursor = EventCursor()
    assert cursor.advance([]) == [] and cursor.outcome is EventRead.OK  # a UFM that never listed an event
    full = [ev(i, i) for i in range(1, 6)]
    cursor.advance(full)
    with caplog.at_level(logging.WARNING, logger="fabric.ufm.cursor"):
        assert cursor.advance([]) == [] and cursor.outcome is EventRead.EMPTY
        assert cursor.advance([]) == [] and cursor.outcome is EventRead.EMPTY
        assert cursor.state.high_water_id == 5
        assert ids(cursor.advance([*full, ev(6, 6)])) == [6] and cursor.outcome is EventRead.OK
    # One line when the lists stop being believed, one when they are again: not one a list.
    assert [record.getMessage().split(" (")[0] for record in caplog.records] == [
        "UFM listed no event at all, having listed some before", "UFM's event list can be believed again"]


def test_a_frozen_list_is_stale_once_the_counter_moves_past_the_first_list_that_brought_nothing() -> None:
    cursor = EventCursor()
    frozen = [ev(i, i) for i in range(1, 6)]
    cursor.advance(frozen, {"events_version": 5, "links_version": 1})
    # The first list that brings nothing: the counter's move may be the events the list before held (raised between
    # the counter's read and the list's), so it is what the next lists are judged against.
    assert cursor.advance(frozen, {"events_version": 7, "links_version": 1}) == []
    assert cursor.outcome is EventRead.OK
    assert cursor.advance(frozen, {"events_version": 9, "links_version": 1}) == []
    assert cursor.outcome is EventRead.STALE
    assert cursor.advance(frozen, {"events_version": 9, "links_version": 1}) == []  # still lacks what was raised
    assert cursor.outcome is EventRead.STALE
    assert ids(cursor.advance([*frozen, ev(6, 6)], {"events_version": 9})) == [6] and cursor.outcome is EventRead.OK
    # Without events_version, links going down or up say events were raised.
    cursor.advance([*frozen, ev(6, 6)], {"links_version": 2})
    assert cursor.advance([*frozen, ev(6, 6)], {"links_version": 3}) == [] and cursor.outcome is EventRead.STALE
    assert cursor.advance([*frozen, ev(6, 6)]) == [] and cursor.outcome is EventRead.OK  # no counter: not judged


@settings(max_examples=300, deadline=None)
@given(steps=st.lists(NO_RESTART, max_size=40), cap=st.none() | st.integers(1, 12))
def test_a_list_that_only_grew_is_never_taken_for_a_short_empty_or_stale_one(steps: list[tuple[str, int, int]],
                                                                              cap: int | None) -> None:
    """UFM's whole list, its oldest events dropped or not (a bounded history), new ones appended, read with its
    change counter (one a new event): believed, whatever short answers and persistence came between."""
    ufm = FakeUfm(cap=cap)
    cursor = EventCursor()
    for action, count, gap in steps:
        fetched = ufm.play(action, count, gap)
        if action == "persist":
            cursor = EventCursor(CursorState.from_dict(cursor.state.to_dict()))
        elif fetched is not None:
            cursor.advance(fetched, {"events_version": ufm.next_id})
            if action == "fetch":
                assert cursor.outcome is EventRead.OK


@settings(max_examples=300, deadline=None)
@given(steps=st.lists(st.tuples(st.sampled_from(["emit", "fetch", "frozen"]), st.integers(1, 4)), max_size=30))
def test_a_frozen_list_is_stale_once_events_were_raised_after_a_list_brought_nothing(
        steps: list[tuple[str, int]]) -> None:
    """A list answered as it was at the last honest read (a cache) while UFM raises events, read with UFM's counter
    (one a new event): it never hands anything over, and it is stale once UFM raised events since the first list
    that brought nothing (an honest list that brought nothing can be told from it by then: it would hold them).
    UFM's own list is never stale."""
    ufm = FakeUfm(cap=None)
    ufm.emit(3, 1)
    cursor = EventCursor()
    cursor.advance(ufm.fetch(), {"events_version": ufm.next_id})
    frozen, quiet_from = ufm.fetch(), None
    for action, count in steps:
        if action == "emit":
            ufm.emit(count, 1)
            continue
        new = cursor.advance(ufm.fetch() if action == "fetch" else frozen, {"events_version": ufm.next_id})
        if action == "fetch":
            frozen = ufm.fetch()
            assert cursor.outcome is EventRead.OK
        else:
            assert new == []
            assert (cursor.outcome is EventRead.STALE) == (quiet_from not in (None, ufm.next_id))
        quiet_from = None if new else ufm.next_id if quiet_from is None else quiet_from
