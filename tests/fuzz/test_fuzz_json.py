"""The JSON readers: the decoder itself, UFM's event list (in pieces, from bytes and from a file), JSON lines, and the
memory of the last event list answered. Only their typed errors, within the time bound; a list refused leaves the
memory as it was."""

from __future__ import annotations

import json
from datetime import UTC
from typing import Any

from fuzz_support import corrupted, corrupted_json, fuzz_settings, recording
from hypothesis import given
from hypothesis import strategies as st
from support import spooled, whole_list

from fabric.replay.events import load_events
from fabric.ufm.appended import EventListMemory
from fabric.ufm.cursor import CursorState, drop_handed_over
from fabric.ufm.models import ShapeError, UfmTimestamps
from topology import strictjson
from topology.errors import InputError
from topology.jsonlist import file_items, list_items
from topology.strictjson import JsonError


def _events() -> list[dict[str, Any]]:
    return recording().events


def _pieces(body: bytes, piece_bytes: int) -> tuple[str, Any]:
    try:
        return "ok", list(list_items(body, piece_bytes=piece_bytes))
    except JsonError:
        return "error", JsonError
    except ShapeError:
        return "error", ShapeError


@fuzz_settings(300)
@given(st.text() | st.binary() | st.builds(json.dumps, st.lists(st.integers())).flatmap(corrupted))
def test_the_decoder_gives_what_json_gives_or_a_json_error(text: str | bytes) -> None:
    try:
        value = strictjson.loads(text)
    except JsonError as refused:
        assert "\n" not in str(refused)
        return
    assert value == json.loads(text)  # nothing it accepts reads otherwise (and no NaN, which equals nothing)


@fuzz_settings(200)
@given(st.data(), st.sampled_from([1, 200, 1 << 18]), st.booleans())
def test_an_event_list_corrupted_decodes_in_pieces_as_it_does_whole(data: st.DataObject, piece_bytes: int,
                                                                    wrapped: bool) -> None:
    document: Any = {"data": _events()} if wrapped else _events()
    body = data.draw(corrupted_json(document)).encode("utf-8", "surrogatepass")
    assert _pieces(body, piece_bytes) == whole_list(body)


@fuzz_settings(100)
@given(st.data(), st.sampled_from([64, 1 << 18]))
def test_an_event_list_file_gives_what_its_bytes_give(tmp_path_factory: Any, data: st.DataObject,
                                                      piece_bytes: int) -> None:
    body = data.draw(corrupted_json(_events())).encode("utf-8", "surrogatepass")
    path = tmp_path_factory.mktemp("list") / "events.json"
    path.write_bytes(body)
    try:
        with path.open("rb") as file:
            read: tuple[str, Any] = "ok", list(file_items(file, piece_bytes=piece_bytes))
    except (JsonError, ShapeError) as refused:
        read = "error", type(refused)
    assert read == _pieces(body, piece_bytes)


@fuzz_settings(100)
@given(st.data(), st.sampled_from(["events.jsonl", "events.json"]))
def test_an_event_file_in_json_is_read_or_refused_in_one_line(tmp_path_factory: Any, data: st.DataObject,
                                                              name: str) -> None:
    """JSON lines (a line refused is counted and skipped) or a JSON list (refused whole): ``InputError`` only."""
    if name.endswith(".jsonl"):
        lines = [json.dumps(event) for event in _events()]
        at = data.draw(st.integers(0, len(lines) - 1))
        lines[at] = data.draw(corrupted_json(_events()[at]))
        text = "\n".join(lines) + "\n"
    else:
        text = data.draw(corrupted_json(_events()))
    path = tmp_path_factory.mktemp("events") / name
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    try:
        loaded = load_events(path)
    except InputError as refused:
        assert "\n" not in str(refused)
        return
    assert loaded.records >= len(loaded.events)


def _read(memory: EventListMemory, body: bytes, state: CursorState) -> list[Any] | type[Exception]:
    """One poll as the client reads it: the elements the cursor's filter keeps, the answer settled once read."""
    try:
        with spooled(body) as file:
            kept = list(drop_handed_over(memory.elements(file, state), state))
    except (JsonError, ShapeError) as refused:
        return type(refused)
    memory.settle()
    return kept


@fuzz_settings(100)
@given(st.data())
def test_an_event_list_refused_leaves_the_memory_of_the_last_one_as_it_was(data: st.DataObject) -> None:
    """UFM's next answer is read after a garbled one exactly as it is read when the garbled one never came."""
    first, later = _events()[:-5], _events()
    newest = max(UfmTimestamps(UTC).parse(event["timestamp"]) for event in first)
    state = CursorState(high_water_id=max(event["id"] for event in first), last_event_time=newest)
    garbled = data.draw(corrupted_json(later)).encode("utf-8", "surrogatepass")
    if whole_list(garbled)[0] == "ok":
        return  # corrupted where it still decodes: not a refusal
    seen, fresh = EventListMemory(UTC), EventListMemory(UTC)
    body = json.dumps(first).encode()
    assert _read(seen, body, state) == _read(fresh, body, state)
    assert _read(seen, garbled, state) in (JsonError, ShapeError)
    assert _read(seen, json.dumps(later).encode(), state) == _read(fresh, json.dumps(later).encode(), state)
