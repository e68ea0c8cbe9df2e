"""event.log parsing: every object type, malformed lines reported with file and line, never a crash."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric.ufm.eventlog import (
    BAD_TIMESTAMP,
    FAR_OFF,
    MALFORMED,
    NOT_TEXT,
    EventLogStats,
    FarOff,
    iter_event_log,
    parse_event_line,
)
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


# --- what continues an event, and what is malformed ----------------------------------------------------------


def test_only_indented_text_continues_an_event() -> None:
    stats = EventLogStats()
    lines = [GRID, "  wrapped", "\tand tabbed", "at column 0", SITE, "\ufffd\ufffd undecodable", "  \x1b[31m colour"]
    events = list(iter_event_log(lines, stats=stats))
    assert events[0].description == "UFM non-critical event suppression\n  wrapped\n\tand tabbed"
    assert events[1].description == "Mcast group is deleted: fe80000000000000, 0000ffff"
    assert stats.continuation_lines == 2
    assert stats.kinds == {MALFORMED: 1, NOT_TEXT: 2}
    assert [bad.line_no for bad in stats.malformed] == [4, 6, 7]


def test_a_block_of_utf16_lines_is_counted_not_swallowed(tmp_path: Path) -> None:
    path = tmp_path / "event.log"
    path.write_bytes((GRID + "\n").encode() + (SWITCH + "\n" + COMPUTER + "\n").encode("utf-16") + b"\n"
                     + (SITE + "\n").encode())
    stats = EventLogStats()
    assert [e.id for e in iter_event_log(path, stats=stats)] == [97220, 97219]
    assert stats.kinds == {NOT_TEXT: 3} and stats.continuation_lines == 0


def test_the_first_example_of_each_kind_is_kept_and_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    stats = EventLogStats(keep=3)
    lines = [GRID, *(f"junk {i}" for i in range(10)), "2024-13-01 08:04:04 [1] [603] Info [M] Grid [Grid]: x"]
    with caplog.at_level("WARNING", logger="fabric.ufm.eventlog"):
        list(iter_event_log(lines, stats=stats))
    assert stats.kinds == {MALFORMED: 10, BAD_TIMESTAMP: 1}
    assert [bad.kind for bad in stats.malformed] == [MALFORMED] * 3 + [BAD_TIMESTAMP]
    assert len(caplog.records) == 2 and "<lines>:2: " in caplog.records[0].getMessage()


def test_gzip_is_told_by_its_bytes_and_a_byte_order_mark_is_dropped(tmp_path: Path) -> None:
    path = tmp_path / "event.log.1"  # rotated and gzipped, without the .gz
    path.write_bytes(gzip.compress(("\ufeff" + GRID + "\n").encode()))
    stats = EventLogStats()
    assert [e.id for e in iter_event_log(path, stats=stats)] == [97220] and stats.malformed_count == 0


def test_a_timestamp_out_of_range_in_its_zone_is_a_bad_timestamp() -> None:
    stats = EventLogStats()
    late = GRID.replace("2024-05-28 08:04:04", "9999-12-31 23:59:59")
    assert list(iter_event_log([late], stats=stats, tz=timezone(timedelta(hours=-7)))) == []
    assert stats.kinds == {BAD_TIMESTAMP: 1}


# --- timestamps far from their neighbours ----------------------------------------------------------------------


def at(day: str, line: str = GRID, event_id: int = 603) -> str:
    return line.replace("2024-05-28", day).replace("[603]", f"[{event_id}]")


def test_a_line_dated_far_from_both_neighbours_is_malformed() -> None:
    lines = [at("2024-05-28"), at("2099-05-28"), at("2024-05-29"), at("2024-05-30"), at("2099-01-01")]
    stats = EventLogStats()
    events = list(iter_event_log(lines, stats=stats, stray_days=30))
    assert [e.timestamp.day for e in events] == [28, 29, 30]
    assert stats.kinds == {FAR_OFF: 2} and [bad.line_no for bad in stats.malformed] == [2, 5]
    assert "more than 30 days" in stats.malformed[0].reason
    assert len(list(iter_event_log(lines))) == 5, "only with stray_days"
    stats = EventLogStats()
    assert len(list(iter_event_log([at("2099-05-28"), at("2024-05-28"), at("2024-05-29")], stats=stats,
                                   stray_days=30))) == 2
    assert [bad.line_no for bad in stats.malformed] == [1], "the first line, far from a second near the third"


def test_far_off_needs_a_neighbour_near_its_own_and_a_readable_date() -> None:
    assert len(list(iter_event_log([at("2099-01-01")], stray_days=30))) == 1, "no neighbour: nothing to compare"
    stats = EventLogStats()
    assert len(list(iter_event_log([at("2024-01-01"), at("2024-06-01")], stats=stats, stray_days=30))) == 2
    assert stats.malformed_count == 0, "two lines far apart: which one is wrong cannot be told"
    stats = EventLogStats()
    lines = [at("2024-01-01"), at("2024-01-01"), at("2024-13-01"), at("2024-06-01"), at("2024-06-01")]
    assert len(list(iter_event_log(lines, stats=stats, stray_days=30))) == 4
    assert stats.kinds == {BAD_TIMESTAMP: 1}


def test_lines_of_unused_types_are_neighbours_too() -> None:
    lines = [at("2024-03-01"), at("2024-03-01"), at("2024-01-01"), at("2024-01-02", event_id=66), at("2024-03-01"),
             at("2024-03-01")]
    stats = EventLogStats()
    assert len(list(iter_event_log(lines, stats=stats, event_ids={603}, stray_days=30))) == 5
    assert stats.filtered == 1 and stats.malformed_count == 0
    stats = EventLogStats()
    assert len(list(iter_event_log(lines[:3] + lines[4:], stats=stats, event_ids={603}, stray_days=30))) == 4
    assert [bad.line_no for bad in stats.malformed] == [3], "without its neighbour of another type, it is far off"


def reference_verdicts(days: list[int | None], gap: int) -> list[bool]:
    """FarOff's rule, record by record, knowing the whole file."""
    def near(i: int, j: int) -> bool:
        a, b = days[i], days[j]
        return a is None or b is None or abs(a - b) <= gap

    last = len(days) - 1
    verdicts = []
    for i in range(len(days)):
        if 0 < i < last:
            verdicts.append(not near(i, i - 1) and not near(i, i + 1))
        elif i == 0 < last:
            verdicts.append(not near(0, 1) and last >= 2 and near(1, 2))
        elif i == last > 0:
            verdicts.append(not near(i, i - 1) and last >= 2 and near(i - 1, i - 2))
        else:
            verdicts.append(False)
    return verdicts


@settings(max_examples=500, deadline=None)
@given(st.lists(st.none() | st.sampled_from([0, 1, 5, 40, 41, 90, 10_000]) | st.integers(0, 200), max_size=12),
       st.integers(0, 60))
def test_far_off_verdicts_come_in_order_and_follow_the_rule(days: list[int | None], gap: int) -> None:
    far_off = FarOff[int](gap)
    verdicts = [v for index, day in enumerate(days) for v in far_off.push(day, index)] + far_off.end()
    assert [index for index, _ in verdicts] == list(range(len(days))), "every record, once, in file order"
    assert [far for _, far in verdicts] == reference_verdicts(days, gap)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(st.none() | st.sampled_from([0, 1, 40, 90]) | st.integers(0, 200), st.integers(1, 3)),
                max_size=10), st.integers(0, 60))
def test_a_run_of_records_of_one_day_gets_the_verdict_of_its_records(runs: list[tuple[int | None, int]],
                                                                     gap: int) -> None:
    runs = [run for index, run in enumerate(runs) if index == 0 or run[0] is None or run[0] != runs[index - 1][0]]
    far_off = FarOff[int](gap)
    verdicts = [v for index, (day, count) in enumerate(runs) for v in far_off.push(day, index, count)]
    verdicts += far_off.end()
    assert [index for index, _ in verdicts] == list(range(len(runs)))
    records = reference_verdicts([day for day, count in runs for _ in range(count)], gap)
    first = [sum(count for _, count in runs[:index]) for index in range(len(runs))]
    assert [far for _, far in verdicts] == [records[start] for start in first]


DAYS = ["2024-05-01", "2024-05-02", "2024-05-03", "2024-09-01", "2099-01-01", "2024-13-01"]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(DAYS), st.booleans()), max_size=14))
def test_days_stream_and_keep_the_verdicts_of_the_whole_file(lines: list[tuple[str, bool]]) -> None:
    """The events come out as soon as their day's run cannot be far off and nothing before it waits, and they
    are the records ``FarOff``'s rule keeps, knowing the whole file, in file order (``used``: lines of type 66
    are neighbours but not events)."""
    text = [at(day, event_id=603 if used else 66).replace("[97220]", f"[{number}]")
            for number, (day, used) in enumerate(lines, start=1)]
    stats = EventLogStats()
    events = [event.id for event in iter_event_log(text, stats=stats, event_ids={603}, stray_days=30)]
    days: list[int | None] = []
    for day, _ in lines:
        try:
            days.append(datetime.fromisoformat(day).toordinal())
        except ValueError:  # month 13: a record of no readable date, near every other
            days.append(None)
    far = reference_verdicts(days, 30)
    kept = [number for number, ((_, used), day, is_far) in enumerate(zip(lines, days, far, strict=True), start=1)
            if used and day is not None and not is_far]
    assert events == kept
    assert stats.parsed == len(kept)


def test_a_day_of_records_is_passed_on_before_the_next_day_is_read() -> None:
    """A replay reads an event.log as it goes: a run of one day is not held until the next day's first line."""
    read: list[int] = []

    def lines() -> Iterator[str]:
        for number, day in enumerate(["2024-05-01"] * 3 + ["2024-05-02"] * 3, start=1):
            read.append(number)
            yield at(day).replace("[97220]", f"[{number}]")

    seen = [(event.id, len(read)) for event in iter_event_log(lines(), stray_days=30)]
    assert [event_id for event_id, _ in seen] == [1, 2, 3, 4, 5, 6]
    # A line is complete once the next is read. The first day's first two events come out as soon as the second is
    # complete (its run cannot be far off then), the second day's likewise: no day waits for the next.
    assert [lines_read for _, lines_read in seen] == [3, 3, 4, 6, 6, 6]


# --- fuzzing: every line is accounted for, nothing raises -------------------------------------------------------

VALID = [IBPORT_SWITCH, IBPORT_HOST, LINK, SWITCH, COMPUTER, MODULE, SITE, GRID]
ODD = st.sampled_from(["", "   ", "  wrapped text", "\tx", "junk", "\x00\x01", "\ufffd", "9" * 5000,
                       "2024-05-28 08:04:04 [1] truncated", at("2099-01-01"), at("0001-01-01"), at("2024-02-30"),
                       at("9999-12-31").replace("08:04:04", "23:59:59"), "2024-05-28 08:04:04 [9" + "9" * 5000 + "]"])


@st.composite
def logs(draw: st.DrawFn) -> list[str]:
    lines = draw(st.lists(st.sampled_from(VALID) | ODD | st.text(max_size=40), max_size=25))
    if draw(st.booleans()):  # some lines in another encoding, decoded as UTF-8 the way a file would be
        lines = [line.encode("utf-16").decode("utf-8", errors="replace") if draw(st.booleans()) else line
                 for line in lines]
    return lines


@settings(max_examples=300, deadline=None)
@given(logs(), st.none() | st.just({329, 603}), st.none() | st.just(30),
       st.sampled_from([UTC, timezone(timedelta(hours=-7)), timezone(timedelta(hours=14))]))
def test_every_line_is_an_event_a_continuation_or_counted(lines: list[str], event_ids: set[int] | None,
                                                          stray_days: int | None, tz: timezone) -> None:
    lines = [line.replace("\n", " ").replace("\r", " ") for line in lines]  # one line each, as read from a file
    stats = EventLogStats()
    events = list(iter_event_log(lines, stats=stats, event_ids=event_ids, stray_days=stray_days, tz=tz))
    assert len(events) == stats.parsed
    assert stats.parsed + stats.filtered + stats.malformed_count + stats.continuation_lines + stats.blank_lines == len(
        lines)
    assert stats.kinds.total() == stats.malformed_count
    assert all(bad.line_no >= 1 and bad.source == "<lines>" for bad in stats.malformed)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=400), st.sampled_from(["plain", "gzip", "cut gzip"]))
def test_any_file_reads_or_raises_a_read_error(tmp_path_factory: pytest.TempPathFactory, data: bytes,
                                               form: str) -> None:
    path = tmp_path_factory.getbasetemp() / "fuzz-event.log"
    zipped = gzip.compress(data)
    path.write_bytes({"plain": data, "gzip": zipped, "cut gzip": zipped[: len(zipped) // 2]}[form])
    stats = EventLogStats()
    try:
        list(iter_event_log(path, stats=stats, stray_days=30))
    except (OSError, EOFError, zlib.error):
        assert data[:2] == b"\x1f\x8b" or form == "cut gzip", "only gzip data can be corrupt"
    assert all(bad.source == str(path) for bad in stats.malformed)
