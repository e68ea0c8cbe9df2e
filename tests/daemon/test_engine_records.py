"""What crosses between the daemon's two processes: the status record (a file renamed into place) and a reload's
outcome (a request row's text), each read back as it was written."""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from fabric.api.context import GuardFigures, LeaderView, NotApplied, Reload, Role, RuntimeStatus
from fabric.daemon.reload_requests import outcome_text, reload_of
from fabric.daemon.status_record import RECORD_NAME, RecordReader, StatusRecord, write_record

NOW = datetime(2026, 5, 1, 8, tzinfo=UTC)


@given(message=st.text(), not_applied=st.none() | st.sampled_from(NotApplied))
def test_a_reload_outcome_reads_back_as_the_reload_it_records(message: str, not_applied: NotApplied | None) -> None:
    said = Reload(message, not_applied=not_applied)
    assert reload_of(outcome_text(said)) == said


def test_an_outcome_not_written_as_a_reload_reads_as_nothing_applied() -> None:
    assert reload_of("handled by hand") == Reload("handled by hand", not_applied=NotApplied.INVALID)


def _record(pid: int, counters: dict[str, int]) -> StatusRecord:
    status = RuntimeStatus(started_at=NOW, dry_run=False, interval_seconds=30.0, last_cycle_at=NOW,
                           guard=GuardFigures(worst_leaf="leaf01", worst_leaf_fraction=0.5, disabled=2, cap=10),
                           counters=counters, leadership=LeaderView(Role.LEADER, "host:1", 3, "host:1"))
    return StatusRecord(pid, 12.5, NOW, status, "# HELP fabric_x x\n")


@given(pid=st.integers(1, 2**22), counters=st.dictionaries(st.text(min_size=1, max_size=20),
                                                           st.integers(0, 2**40), max_size=8))
def test_a_status_record_reads_back_as_written(pid: int, counters: dict[str, int]) -> None:
    with tempfile.TemporaryDirectory() as name:
        directory = Path(name)
        record = _record(pid, counters)
        write_record(directory, record)
        assert RecordReader(directory).read() == record
        assert [path.name for path in directory.iterdir()] == [RECORD_NAME]  # no temporary file left behind


def test_the_reader_sees_each_new_record_and_none_before_the_first(tmp_path: Path) -> None:
    reader = RecordReader(tmp_path)
    assert reader.read() is None
    write_record(tmp_path, _record(7, {"events": 1}))
    assert reader.read() == _record(7, {"events": 1})
    write_record(tmp_path, _record(8, {"events": 2}))
    assert reader.read() == _record(8, {"events": 2})


def test_a_record_this_code_cannot_read_is_no_record(tmp_path: Path) -> None:
    (tmp_path / RECORD_NAME).write_text('{"pid": "not a number"}')
    assert RecordReader(tmp_path).read() is None
