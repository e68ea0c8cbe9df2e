"""UFM's ``event.log`` as ``fabricctl replay`` reads it, corrupted: its events (a bad line counted and skipped) or one
``InputError``, streamed in file order or sorted, within the time bound."""

from __future__ import annotations

from typing import Any

from fuzz_support import corrupted, fuzz_settings, recording
from hypothesis import given
from hypothesis import strategies as st

from fabric.replay.events import stream_events
from topology.errors import InputError


@fuzz_settings(150)
@given(st.data(), st.booleans())
def test_an_event_log_corrupted_is_read_or_refused_in_one_line(tmp_path_factory: Any, data: st.DataObject,
                                                               sort: bool) -> None:
    text = data.draw(corrupted("\n".join(recording().log_lines) + "\n"))
    path = tmp_path_factory.mktemp("log") / "event.log"
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    try:
        stream = stream_events(path, sort=sort)
        events = list(stream.events)
    except InputError as refused:
        assert "\n" not in str(refused)
        return
    assert stream.loaded.records >= len(events)
    assert all(event.timestamp.tzinfo is not None for event in events)
