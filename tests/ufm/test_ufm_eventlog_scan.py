"""An event.log read in blocks with the lines of unused types passed over (``fabric.ufm.eventlog_scan``) gives what
reading it a line at a time gives: the same events, counts, examples and far-off verdicts; and a timestamp read
with its zone written after it is the time (or the reason) it was when read naive and placed in UTC."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric.ufm.eventlog import EventLogStats, event_log_lines, iter_event_log
from fabric.ufm.eventlog_scan import PassedOver, scanned_lines
from topology.inputs import LINE_LIMIT

USED = frozenset({110, 329, 603})
HEAD = "{day} 08:04:0{second}.{fraction} [{number}] [{event_type}] Warning [Hardware] IBPort "
TAIL = "[default / Switch: leaf01 / NA / 16] [dev_id: 248a0703006d40f0]: Symbol-Error counter rate exceeded."
DAYS = ["2024-05-01", "2024-05-02", "2099-01-01", "2024-13-01"]
TYPES = [110, 329, 603, 66, 67, 134, 1100, 11, 3290]
ODD = ["", "   ", "  wrapped text", "\tcontinued", "junk", "\x00\x01", "\ufffd",
       "2024-05-01 08:04:04 [1] truncated", "2024-05-01 08:04:04 [7] [0110] Info [x] Grid [Grid]: zero-padded type",
       "2024-05-01 08:04:04.5 [8] [66] Info [x] Grid [Grid]: half\ra line", "\ufeffno"]


@st.composite
def event_lines(draw: st.DrawFn) -> str:
    return HEAD.format(day=draw(st.sampled_from(DAYS)), second=draw(st.integers(0, 9)),
                       fraction=draw(st.sampled_from(["0", "25", "123456"])), number=draw(st.integers(1, 50)),
                       event_type=draw(st.sampled_from(TYPES))) + TAIL


@st.composite
def logs(draw: st.DrawFn) -> bytes:
    lines = draw(st.lists(event_lines() | st.sampled_from(ODD), max_size=40))
    ends = draw(st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=len(lines), max_size=len(lines)))
    text = "".join(line + end for line, end in zip(lines, ends, strict=True))
    if draw(st.booleans()) and lines:
        text = text.rstrip("\r\n")  # the last line without its end
    return (b"\xef\xbb\xbf" if draw(st.booleans()) else b"") + text.encode()


def read(lines: Any) -> tuple[list[dict[str, Any]], EventLogStats]:
    stats = EventLogStats(keep=1000)
    events = [event.model_dump() for event in iter_event_log(lines, stats=stats, event_ids=USED, stray_days=30)]
    return events, stats


def text_of(data: bytes) -> io.TextIOWrapper:
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8-sig", errors="replace")


@settings(max_examples=300, deadline=None)
@given(logs(), st.sampled_from([1, 7, 64, 1 << 20]))
def test_passing_over_in_blocks_reads_as_line_by_line(data: bytes, block: int) -> None:
    assert read(scanned_lines(text_of(data), USED, block=block)) == read(event_log_lines(io.BytesIO(data)))


def test_a_run_of_one_date_is_passed_over_as_one() -> None:
    other = [HEAD.format(day="2024-05-01", second=n, fraction="0", number=n, event_type=66) + TAIL for n in range(3)]
    used = HEAD.format(day="2024-05-01", second=5, fraction="0", number=9, event_type=110) + TAIL
    later = HEAD.format(day="2024-05-02", second=0, fraction="0", number=10, event_type=67) + TAIL
    data = "\n".join([*other, used, later, later]) + "\n"
    assert list(scanned_lines(text_of(data.encode()), USED)) == [
        PassedOver(other[0], 3), used + "\n", PassedOver(later, 2)]


@pytest.mark.parametrize("block", [1 << 16, 1 << 22])
def test_a_line_too_long_is_cut_and_read_past_as_line_by_line(block: int) -> None:
    """Whether the lines after it come in the block that ends it or in later ones (a block of 4 Mi characters
    holds the whole file)."""
    other = HEAD.format(day="2024-05-01", second=1, fraction="0", number=1, event_type=66) + TAIL
    used = HEAD.format(day="2024-05-01", second=3, fraction="0", number=3, event_type=110) + TAIL
    long_line = HEAD.format(day="2024-05-01", second=2, fraction="0", number=2, event_type=66) + "x" * LINE_LIMIT
    data = "\n".join([other, long_line, other, used, long_line + "x", used, other, used]).encode()
    scanned = read(scanned_lines(text_of(data), USED, block=block))
    assert scanned == read(event_log_lines(io.BytesIO(data)))
    assert scanned[1].kinds["line too long"] == 2
    assert len(scanned[0]) == 3


@pytest.mark.parametrize("stamp", ["2024-05-01 08:04:05", "2024-05-01T08:04:05.5", "2024-05-01 08:04:05,25",
                                   "2024-05-01 08:04:05.123456", "0001-01-01 00:00:00", "9999-12-31 23:59:59.999999",
                                   "2024-02-30 08:04:05", "2024-13-01 08:04:05.1", "2024-05-01 24:00:00"])
def test_a_timestamp_reads_as_read_naive_and_placed_in_utc(stamp: str) -> None:
    """The zone written after the text for ``fromisoformat`` to read: the same time, and for a text that is no time
    the same reason, naming the text as the file has it."""
    line = stamp + " [1] [110] Warning [Hardware] IBPort " + TAIL
    stats = EventLogStats()
    events = list(iter_event_log([line], stats=stats))
    try:
        expected = datetime.fromisoformat(stamp).replace(tzinfo=UTC)
    except ValueError as exc:
        assert not events
        assert stats.malformed[0].reason == f"bad timestamp: {exc}"
    else:
        assert [event.timestamp for event in events] == [expected]
        assert events[0].timestamp.tzinfo is UTC
