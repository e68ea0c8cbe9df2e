"""event.log parsing: every object type, malformed lines reported with file and line, never a crash."""

from __future__ import annotations

import gzip
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from fabric.ufm.eventlog import BAD_TIMESTAMP, MALFORMED, NOT_TEXT, EventLogStats, iter_event_log, parse_event_line
from fabric.ufm.models import Event
from fabric.ufm.objects import PortEnd

IBPORT_SWITCH = (
    "2016-10-17 15:56:33.245 [5744] [112] WARNING [Hardware] IBPort "
    "[default(34) / Switch: c931ibsw-leaf01 / NA / 16] [dev_id: 248a0703006d40f0]: "
    "Link-Downed counter delta threshold exceeded. Threshold is 0, calculated delta is 1. "
    "Peer info: Computer: c931f03p08 HCA-1 / 1."
)
IBPORT_HOST = (
    "2024-05-28 08:03:05.101 [97214] [110] Warning [Hardware] IBPort "
    "[default / Computer: luna-0218 / NA / HCA-1/1] [dev_id: 0c42a10300280000]: "
    "Symbol-Error counter rate threshold exceeded. Threshold is 200, received value is 412. "
    "Peer info: Switch: SLG02-07 / 6."
)
LINK = (
    "2024-05-28 08:03:06.552 [97215] [329] Warning Site [default] [Fabric_Topology] Link "
    "[9c0591030090e000_33 Switch: T3-E21-N-U47 : fc6a1c0300244e00_8]: "
    "Link went down: (Switch:T3-E21-N-U47:1/17/1)9c0591030090e000:33 - "
    "(Switch:T4-E45-L-U51:1/4/2)fc6a1c0300244e00:8, cable S/N: MT2330FT09118"
)
SWITCH = (
    "2024-05-28 08:04:00.000 [97216] [907] Critical [Fabric_Topology] Switch "
    "[default / Switch: spine-01] [dev_id: 1c34da0300728a06]: "
    "Site configuration changes: spine-01 Switch is Down"
)
COMPUTER = (
    "2024-05-28 08:04:01.250 [97217] [331] Warning [Fabric_Topology] Computer "
    "[default / Computer: luna-0001] [dev_id: 0c42a103001b8256]: "
    "Site configuration changes: luna-0001 node is Down"
)
MODULE = (
    "2024-05-28 08:04:02.000 [97218] [394] Critical [Module_Status] Module "
    "[default / Switch: SLG01-02 / PSU 1] [dev_id: 1c34da0300728606]: "
    "Module PSU 1 on SLG01-02(1c34da0300728606) status is FAULT"
)
SITE = (
    "2024-05-28 08:04:03.000 [97219] [67] Info Site [default] [Fabric_Notification] Site [default(2)]: "
    "Mcast group is deleted: fe80000000000000, 0000ffff"
)
GRID = "2024-05-28 08:04:04 [97220] [603] Info [Maintenance] Grid [Grid]: UFM non-critical event suppression"


def parse(line: str) -> Event:
    event = parse_event_line(line)
    assert event is not None, line
    return event


def test_ibport_on_a_switch() -> None:
    event = parse(IBPORT_SWITCH)
    assert (event.id, event.event_id, event.object_type) == (5744, 112, "IBPort")
    assert event.severity == "Warning"  # "WARNING" normalised
    assert event.category == "Hardware"
    assert event.timestamp == datetime(2016, 10, 17, 15, 56, 33, 245000, tzinfo=UTC)
    assert event.object_path == "default(34) / Switch: c931ibsw-leaf01 / NA / 16"
    assert event.object_name == "248a0703006d40f0"
    assert event.model_extra is not None and event.model_extra["dev_id"] == "248a0703006d40f0"
    assert event.description is not None and event.description.startswith("Link-Downed counter")
    assert event.description.endswith("HCA-1 / 1.")
    ref = event.ref
    assert (ref.site, ref.device_kind, ref.device_name, ref.port_label) == (
        "default",
        "Switch",
        "c931ibsw-leaf01",
        "16",
    )
    assert event.link_ends is None


def test_ibport_on_a_host() -> None:
    event = parse(IBPORT_HOST)
    assert (event.event_id, event.severity) == (110, "Warning")
    assert (event.ref.device_kind, event.ref.device_name, event.ref.port_label) == (
        "Computer",
        "luna-0218",
        "HCA-1/1",
    )


def test_link_with_site_exposes_both_ends() -> None:
    event = parse(LINK)
    assert (event.id, event.event_id, event.object_type, event.category) == (97215, 329, "Link", "Fabric_Topology")
    assert event.model_extra is not None and event.model_extra["site"] == "default"
    assert event.object_name is None  # no dev_id on this line
    assert event.link_ends == (PortEnd("9c0591030090e000", 33), PortEnd("fc6a1c0300244e00", 8))
    assert event.description is not None and "cable S/N: MT2330FT09118" in event.description


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (SWITCH, (907, "Switch", "Critical", "Switch", "spine-01")),
        (COMPUTER, (331, "Computer", "Warning", "Computer", "luna-0001")),
        (MODULE, (394, "Module", "Critical", "Switch", "SLG01-02")),
        (SITE, (67, "Site", "Info", None, None)),
        (GRID, (603, "Grid", "Info", None, None)),
    ],
)
def test_other_object_types(line: str, expected: tuple[Any, ...]) -> None:
    event = parse(line)
    ref = event.ref
    assert (event.event_id, event.object_type, event.severity, ref.device_kind, ref.device_name) == expected
    # the same normalised shape as a UFM 6.17+ REST event
    assert event.type == event.object_type
    assert event.event_type == str(event.event_id)


def test_same_event_from_the_log_and_from_rest_agree() -> None:
    from_log = parse(SWITCH)
    from_rest = Event.model_validate(
        {
            "id": 97216,
            "type": "Switch",
            "event_type": "907",
            "severity": "Critical",
            "timestamp": "2024-05-28 08:04:00",
            "category": "Fabric_Topology",
            "object_path": "default / Switch: spine-01",
        }
    )
    for name in ("id", "event_id", "object_type", "severity", "timestamp", "category", "object_path"):
        assert getattr(from_log, name) == getattr(from_rest, name), name


def test_description_may_contain_brackets_and_colons() -> None:
    line = GRID.replace("suppression", "suppression [rule: 3]: count=4")
    assert parse(line).description == "UFM non-critical event suppression [rule: 3]: count=4"


def test_empty_description() -> None:
    assert parse("2024-05-28 08:04:04 [1] [603] Info [Maintenance] Grid [Grid]:").description == ""


def test_local_time_zone_is_converted_to_utc() -> None:
    event = parse_event_line(GRID, tz=timezone(timedelta(hours=-7)))
    assert event is not None
    assert event.timestamp == datetime(2024, 5, 28, 15, 4, 4, tzinfo=UTC)


@pytest.mark.parametrize(
    "line",
    [
        "",
        "garbage",
        "2024-05-28 08:04:04 [x] [603] Info [Maintenance] Grid [Grid]: id is no number",
        "2024-05-28 08:04:04 [1] Info [Maintenance] Grid [Grid]: no event type",
        "2024-05-28 08:04:04 [1] [603] Info [Maintenance] Grid Grid: no brackets",
    ],
)
def test_lines_that_do_not_parse(line: str) -> None:
    assert parse_event_line(line) is None


def test_file_with_malformed_lines_is_reported_with_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "event.log"
    lines = [
        IBPORT_SWITCH,
        "",
        "    wrapped on to a second line",  # indented text: continues the previous description
        "this is not an event",  # malformed: text at column 0 without a timestamp continues nothing
        "2024-05-28 08:04:04 [12] [oops] Info [Maintenance] Grid [Grid]: bad event type",  # malformed
        LINK,
        "2024-13-45 08:04:04 [13] [603] Info [Maintenance] Grid [Grid]: impossible date",  # bad timestamp
        SWITCH + "\r",
        "\x00\x01binary junk",  # not text
        "  \x00\x01indented binary junk",  # not text either, indented or not
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    stats = EventLogStats()
    events = list(iter_event_log(path, stats=stats))
    assert [e.id for e in events] == [5744, 97215, 97216]
    assert events[0].description is not None and events[0].description.endswith("\n    wrapped on to a second line")
    assert events[2].description is not None and events[2].description.endswith("Switch is Down")
    assert stats.parsed == 3
    assert stats.malformed_count == 5
    assert stats.kinds == {MALFORMED: 2, BAD_TIMESTAMP: 1, NOT_TEXT: 2}
    assert stats.blank_lines == 1
    assert stats.continuation_lines == 1
    assert [(m.source, m.line_no) for m in stats.malformed] == [(str(path), n) for n in (4, 5, 7, 9, 10)]
    assert "not an indented continuation" in stats.malformed[0].reason
    assert "bad timestamp" in stats.malformed[2].reason
    assert f"{path}:5:" in str(stats.malformed[1])


def test_leading_junk_without_a_previous_event_is_malformed() -> None:
    stats = EventLogStats()
    events = list(iter_event_log(["junk before any event", GRID], stats=stats))
    assert [e.id for e in events] == [97220]
    assert stats.malformed[0].line_no == 1
    assert stats.malformed[0].source == "<lines>"


def test_gzip_and_undecodable_bytes(tmp_path: Path) -> None:
    path = tmp_path / "event.log.1.gz"
    with gzip.open(path, "wb") as handle:
        handle.write((SITE + "\n").encode() + b"\xff\xfe not utf-8\n" + (GRID + "\n").encode())
    stats = EventLogStats()
    assert [e.id for e in iter_event_log(path, stats=stats)] == [97219, 97220]
    assert stats.continuation_lines == 0
    assert stats.kinds == {NOT_TEXT: 1} and stats.malformed[0].line_no == 2


def test_malformed_examples_are_capped_but_all_counted() -> None:
    stats = EventLogStats(keep=3)
    list(iter_event_log([f"2024-05-28 08:04:04 broken {i}" for i in range(50)], stats=stats))
    assert stats.malformed_count == 50
    assert len(stats.malformed) == 3


def test_replay_does_not_validate_each_line(monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("per-line pydantic validation")

    monkeypatch.setattr(Event, "model_validate", forbidden)
    template = IBPORT_SWITCH.replace("[5744]", "[{}]")
    stats = EventLogStats()
    count = sum(1 for _ in iter_event_log((template.format(i) for i in range(20_000)), stats=stats))
    assert count == stats.parsed == 20_000
    assert stats.malformed_count == 0
