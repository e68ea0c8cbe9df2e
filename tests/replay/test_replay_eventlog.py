"""The event.log fast path replay relies on: events identical to ``model_construct``'s, and the type pre-filter."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from replay_support import record

from fabric.ufm.eventlog import _LINE_RE, EventLogStats, iter_event_log
from fabric.ufm.models import Event

SEVERITY = {"WARNING": "Warning", "INFO": "Info", "MINOR": "Minor", "CRITICAL": "Critical"}
LINES = [
    "2016-10-17 15:56:33.245 [5744] [112] Warning [Hardware] IBPort [default(34) / Switch: leaf01 / NA / 16] "
    "[dev_id: 248a0703006d40f0]: Link-Downed counter delta threshold exceeded. Threshold is 0, calculated delta is 1",
    "2024-05-28 08:04:04 [97219] [329] WARNING Site [default] [Fabric_Topology] Link [Source 248a0703006d40f0_16  "
    "TO Dest: 0c42a10300280000_1]: Link went down: a - b",
    "2024-05-28T08:04:05,5 [97220] [1312] INFO [Fabric_Notification] Switch [default / Switch: spine-01] "
    "[dev_id: 1c34da0300728a06]:",
]


def reference(line: str, tz: timezone = UTC, extra: list[str] | None = None) -> Event:
    """What the parser built before it skipped ``model_construct``'s bookkeeping."""
    match = _LINE_RE.match(line)
    assert match is not None
    when = datetime.fromisoformat(match["ts"]).replace(tzinfo=tz).astimezone(UTC)
    description = "\n".join([match["desc"] or "", *(extra or [])]) if extra else match["desc"] or ""
    return Event.model_construct(
        id=int(match["id"]), event_id=int(match["etype"]), object_type=match["otype"], timestamp=when, name=None,
        type=match["otype"], event_type=match["etype"], severity=SEVERITY.get(match["sev"].upper(), match["sev"]),
        counter=None, category=match["cat"], object_name=match["dev"], object_path=match["path"],
        write_to_syslog=None, description=description, dev_id=match["dev"], site=match["site"])


def same(a: Event, b: Event) -> None:
    assert a == b
    assert list(a.__dict__.items()) == list(b.__dict__.items()), "same fields, same order"
    assert a.model_fields_set == b.model_fields_set and a.model_extra == b.model_extra
    assert a.__pydantic_private__ == b.__pydantic_private__
    assert a.model_dump_json() == b.model_dump_json() and repr(a) == repr(b)


@pytest.mark.parametrize("tz", [UTC, timezone(timedelta(hours=-7))])
def test_events_are_what_model_construct_builds(tz: timezone) -> None:
    parsed = list(iter_event_log([*LINES[:2], "   continued here", LINES[2]], tz=tz))
    same(parsed[0], reference(LINES[0], tz))
    same(parsed[1], reference(LINES[1], tz, ["   continued here"]))
    same(parsed[2], reference(LINES[2], tz))
    assert parsed[0].model_fields_set is not parsed[1].model_fields_set, "each event owns its fields set"


def test_a_simulated_log_parses_identically(tmp_path: Path) -> None:
    recording = record(tmp_path, [{"at": "1m", "fault": "switch_reboot", "switch": "pod01-spine01"},
                                  {"at": "2m", "fault": "storm", "count": 300}], 600)
    lines = recording.files["event.log"].read_text().splitlines()
    events = list(iter_event_log(recording.files["event.log"]))
    assert len(events) == len(lines) == recording.events
    for line, event in zip(lines, events, strict=True):
        same(event, reference(line))


def test_the_pre_filter_keeps_exactly_the_types_asked_for(tmp_path: Path) -> None:
    lines = [LINES[0], "  continuation of 112", LINES[1], "  continuation of 329", LINES[2],
             LINES[0].replace("[112]", "[64]"), "  continuation of 64", "2024-05-28 08:04:04 broken", "", LINES[1]]
    every = list(iter_event_log(lines))
    stats = EventLogStats()
    wanted = list(iter_event_log(lines, stats=stats, event_ids={329, 1312}))
    assert [e.event_id for e in every] == [112, 329, 1312, 64, 329]
    assert wanted == [e for e in every if e.event_id in (329, 1312)]
    assert wanted[0].description.endswith("continuation of 329")
    assert (stats.parsed, stats.filtered, stats.blank_lines, stats.malformed_count) == (3, 2, 1, 1)
    assert stats.continuation_lines == 3, "a filtered event's continuation lines are skipped with it"
    unfiltered = EventLogStats()
    list(iter_event_log(lines, stats=unfiltered))
    assert (unfiltered.continuation_lines, unfiltered.malformed_count) == (3, 1)
    assert [bad.line_no for bad in stats.malformed] == [8]
    assert list(iter_event_log(lines, event_ids=())) == []
