"""``EventReader`` builds exactly the ``Event`` that validation builds, or declines and leaves it to validation."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone, tzinfo
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from fabric.simulator import SimClock, SimSettings, SimState
from fabric.simulator.events import EventShape
from fabric.simulator.faults import Storm
from fabric.ufm.models import Event, EventReader, parse_list
from topology.generate import PRESETS, fat_tree

ZONES = st.sampled_from([UTC, timezone(timedelta(hours=-7)), timezone(timedelta(hours=5, minutes=30))])
TEXT = st.text(max_size=6)
NUMBER_TEXT = st.sampled_from(["110", "0111", " 112", "113 ", "", "abc", "\u0661\u0662", "1" * 25, "Site", "IBPort"])
TIMES = st.sampled_from(["2026-05-01 08:00:00", "2017-09-19 10:49:03.018", "2026-05-01T08:00:00+02:00", " 2026-05-01 ",
                         "2026-13-01 00:00:00", "9999-12-31T23:59:59-07:00", "yesterday", ""])
ANY_VALUE = (st.none() | st.booleans() | st.integers(-3, 2**70) | st.floats(allow_nan=False) | TEXT | NUMBER_TEXT
             | TIMES | st.sampled_from(["N/A", " na ", "Critical", "warning ", "MINOR", "Info"]))
FIELD_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "id": st.integers(-3, 2**70) | ANY_VALUE,
    "timestamp": TIMES | ANY_VALUE,
    "type": NUMBER_TEXT | ANY_VALUE,
    "event_type": NUMBER_TEXT | ANY_VALUE,
    "severity": st.sampled_from(["Critical", " critical", "warning ", "MINOR", "info", "Unknown"]) | ANY_VALUE,
    "counter": st.sampled_from(["N/A", " n/a", "NULL", "", "17", "x"]) | ANY_VALUE,
}
KEYS = ["id", "event_id", "object_type", "timestamp", "name", "type", "event_type", "severity", "counter", "category",
        "object_name", "object_path", "write_to_syslog", "description", "site", "dev_id", "Event_Type"]


BASES = [
    {"id": 227, "name": "Link Downed", "type": "352", "severity": "Warning", "timestamp": "2017-09-19 10:49:03.018",
     "counter": None, "category": "Hardware", "object_name": "1c34da0300728606_1", "write_to_syslog": False,
     "object_path": "default / Switch: SLG01-02 / NA / 1", "description": "Link-Downed counter delta threshold"},
    {"id": 97213, "name": "Symbol Error", "type": "IBPort", "event_type": "110", "severity": "Minor",
     "timestamp": "2024-05-28 08:03:05", "counter": "N/A", "category": "Hardware", "object_name": "b8599fac2b_8",
     "object_path": "default / Switch: pod06-leaf03 / NA / 8", "write_to_syslog": True, "description": "rate"},
]
"""UFM's two shapes (up to 6.16, from 6.17), which the elements below are changed from."""


@st.composite
def elements(draw: st.DrawFn) -> dict[str, Any]:
    """An element of UFM's event list: one of its two shapes with a few keys dropped, added or given a value of
    another form (so that both what the reader builds and what it must decline are drawn often)."""
    item = dict(draw(st.sampled_from(BASES)))
    for key in draw(st.lists(st.sampled_from(KEYS), unique=True, max_size=4)):
        if key in item and draw(st.booleans()):
            del item[key]
        else:
            item[key] = draw(FIELD_VALUES.get(key, ANY_VALUE))
    return item


def _same_event(built: Event, validated: Event) -> None:
    # ``repr`` tells 1 from 1.0 from True and one zone from another, which ``==`` does not.
    assert repr(built.__dict__) == repr(validated.__dict__)
    assert list(built.__dict__) == list(validated.__dict__)
    assert built.model_fields_set == validated.model_fields_set
    assert repr(built.model_extra) == repr(validated.model_extra)
    assert built == validated


def _reads_as_validation_does(item: dict[str, Any], tz: tzinfo) -> None:
    """The reader builds what validation builds, or declines: always when validation refuses the element."""
    built = EventReader(tz)(item)
    try:
        validated = Event.model_validate(item, context={"tz": tz})
    except ValidationError:
        assert built is None
        return
    if built is not None:
        _same_event(built, validated)


@settings(max_examples=1000, deadline=None)
@given(item=elements(), tz=ZONES)
def test_what_the_reader_builds_is_what_validation_builds(item: dict[str, Any], tz: tzinfo) -> None:
    _reads_as_validation_does(item, tz)


@settings(max_examples=300, deadline=None)
@given(items=st.lists(elements(), max_size=12), tz=ZONES)
def test_one_reader_over_a_list_builds_each_element_as_validation_does(items: list[dict[str, Any]],
                                                                       tz: tzinfo) -> None:
    """What a reader shares among the events it reads (the repeated texts, the fields sets by the element's keys)
    never gives one element what another had: elements of different keys and forms, read one after another."""
    reader = EventReader(tz)
    for item in items:
        built = reader(item)
        if built is not None:
            _same_event(built, Event.model_validate(item, context={"tz": tz}))


EDGES = [("severity", value) for value in ("critical", " Warning ", "MINOR", "Unknown", "", None, 3)] + [
    ("counter", value) for value in ("N/A", " n/a", "NULL", "", "17", 17, 1.5, True, None)] + [
    ("type", value) for value in ("110", " 110", "IBPort", 110, None)] + [
    ("event_type", value) for value in ("110", "0110", "\u0661\u0661\u0660", "x", 110, None)] + [
    ("timestamp", value) for value in ("2026-05-01T08:00:00+02:00", " 2026-05-01 08:00 ", "2026-02-30 00:00:00",
                                       1_700_000_000, None)] + [
    ("id", value) for value in (0, -1, "5", True, 5.0, None)] + [
    ("write_to_syslog", value) for value in (True, None, "true", 1)] + [
    ("object_type", value) for value in ("Link", None, 5)] + [("event_id", 110), ("site", "default"),
                                                              ("name", 7), ("description", None)]
"""One field of one of UFM's shapes given a value of an edge form: each way the reader normalises, or declines."""


@pytest.mark.parametrize(("key", "value"), EDGES)
@pytest.mark.parametrize("base", BASES, ids=["6.16", "6.17"])
def test_each_edge_form_of_a_field_reads_as_validation_reads_it(base: dict[str, Any], key: str, value: Any) -> None:
    _reads_as_validation_does({**base, key: value}, UTC)


def _storm_elements(shape: EventShape) -> list[dict[str, Any]]:
    state = SimState.from_plan(fat_tree(PRESETS["tiny"]), clock=SimClock(datetime(2026, 5, 1, 8, tzinfo=UTC)),
                               settings=SimSettings(max_events=200, seed=5))
    Storm(count=200, duration=60.0, batches=4).apply(state)
    state.advance(120)
    return [record.to_rest(shape) for record in state.events.records()]


def test_the_reader_builds_every_event_of_both_shapes_the_simulator_sends() -> None:
    """Both of UFM's shapes, as UFM sends them, are read without validation: the reader is no path never taken."""
    for shape in EventShape:
        items = _storm_elements(shape)
        reader = EventReader(timezone(timedelta(hours=2)))
        assert items and all(reader(item) is not None for item in items), shape
        for item in items:
            built = reader(item)
            assert built is not None
            _same_event(built, Event.model_validate(item, context={"tz": timezone(timedelta(hours=2))}))


def test_a_list_takes_the_reader_for_what_it_reads_and_validates_the_rest() -> None:
    items = _storm_elements(EventShape.CURRENT)[:3]
    odd = {**items[1], "type": 7, "object_name": 12}  # numbers where UFM sends strings: validation's to coerce
    events = parse_list(Event, [items[0], odd, items[2]])
    assert events[1].object_name == "12"
    assert events == [Event.model_validate(item) for item in (items[0], odd, items[2])]


def test_the_events_of_a_list_share_their_repeated_texts_and_fields_set_and_refuse_a_change() -> None:
    """A storm's events hold one object for each text they repeat and one fields set for each set of keys, not one
    each: what a storm's cycle holds of its events halves. The shared set refuses a change, so that an assignment to
    one event cannot reach the others' ``model_fields_set``."""
    items = _storm_elements(EventShape.CURRENT)
    reader = EventReader(UTC)
    events = [reader(item) for item in items]
    assert all(event is not None for event in events)
    first, *others = [event for event in events if event is not None]
    same_type = [event for event in others if event.event_id == first.event_id]
    assert same_type
    for event in same_type:
        assert event.name is first.name and event.category is first.category and event.type is first.type
        assert event.model_fields_set is first.model_fields_set
    assert first.object_name is not None  # the object's own texts stay the event's own
    with pytest.raises(TypeError, match="shared"):
        first.description = "changed"
    assert first.model_fields_set == Event.model_validate(items[0]).model_fields_set
