"""The external sort replay falls back on for an event.log out of time order: sorted as ``sorted`` sorts (stably),
in bounded memory, its temporary files gone once it is done."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from replay_support import SCENARIOS, Recording, record_file

from fabric.replay import timesort
from fabric.replay.report import SpooledDecisions
from fabric.replay.run import run_replay
from fabric.replay.timesort import in_time_order


class Counted:
    """An item that knows how many of its kind are alive (made, or unpickled, and not yet freed)."""

    alive: ClassVar[int] = 0
    most: ClassVar[int] = 0

    def __new__(cls, *args: object) -> Counted:
        Counted.alive += 1
        Counted.most = max(Counted.most, Counted.alive)
        return super().__new__(cls)

    def __init__(self, at: int, seq: int) -> None:
        self.at, self.seq = at, seq

    def __del__(self) -> None:
        Counted.alive -= 1


def by_at(item: tuple[int, int]) -> int:
    return item[0]


@settings(max_examples=200, deadline=None)
@given(keys=st.lists(st.integers(0, 20), max_size=300), run=st.integers(1, 40), block=st.integers(1, 15))
def test_sorted_as_sorted_sorts_keeping_the_order_of_equal_times(keys: list[int], run: int, block: int) -> None:
    items = [(at, seq) for seq, at in enumerate(keys)]
    assert list(in_time_order(iter(items), by_at, run_events=run, block_events=block)) == sorted(items, key=by_at)


@settings(max_examples=30, deadline=None)
@given(keys=st.lists(st.integers(0, 10**6), min_size=1000, max_size=2000), run=st.integers(50, 200),
       block=st.integers(1, 5))
def test_it_holds_a_run_and_a_block_of_each_run_not_the_whole_input(keys: list[int], run: int, block: int) -> None:
    def made() -> Iterator[Counted]:
        for seq, at in enumerate(keys):
            yield Counted(at, seq)

    Counted.alive = Counted.most = 0
    runs = -(-len(keys) // run)
    previous = None
    for item in in_time_order(made(), lambda item: item.at, run_events=run, block_events=block):
        assert previous is None or (previous.at, previous.seq) <= (item.at, item.seq)
        previous = item
    del previous, item
    # One run being sorted (then, merging, the last run kept in memory) and a block of each spilled run, plus
    # the item just taken and a block being read back: never the whole input once it is longer than that.
    assert Counted.most <= run + runs * block + block + 2
    assert Counted.alive == 0


def test_its_temporary_files_are_closed_when_done_or_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[object] = []
    real = timesort.tempfile.TemporaryFile

    def tracked(*args: object, **kwargs: object) -> object:
        handle = real(*args, **kwargs)  # type: ignore[call-overload]
        opened.append(handle)
        return handle

    monkeypatch.setattr(timesort.tempfile, "TemporaryFile", tracked)
    items = [(at % 7, at) for at in range(100)]
    assert len(list(in_time_order(items, by_at, run_events=10, block_events=3))) == 100
    assert len(opened) == 10 and all(handle.closed for handle in opened)  # type: ignore[attr-defined]
    opened.clear()
    partly = in_time_order(items, by_at, run_events=10, block_events=3)
    next(partly)
    partly.close()
    assert len(opened) == 10 and all(handle.closed for handle in opened)  # type: ignore[attr-defined]


def test_a_run_or_block_of_nothing_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one"):
        list(in_time_order([(1, 0)], by_at, run_events=0))


@pytest.fixture(scope="module")
def combined(tmp_path_factory: pytest.TempPathFactory) -> Recording:
    return record_file(tmp_path_factory.mktemp("combined"), SCENARIOS / "combined.toml", 7200)


def test_a_log_out_of_order_is_replayed_from_spilled_runs_as_from_the_log_in_order(
        combined: Recording, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rotated files joined the wrong way round (the newer half first): replay sorts the events in runs spilled
    to disk and decides exactly as on the log in time order."""
    lines = combined.files["event.log"].read_text().splitlines(keepends=True)
    half = len(lines) // 2
    while lines[half].startswith((" ", "\t")):  # a record's continuation line stays with its record
        half += 1
    swapped = tmp_path / "swapped.log"
    swapped.write_text("".join(lines[half:] + lines[:half]))
    in_order = run_replay(combined.snapshot, combined.files["event.log"], decisions=SpooledDecisions()).to_dict()
    monkeypatch.setattr(timesort, "RUN_EVENTS", 500)
    spills: list[int] = []
    real_spill = timesort._spill

    def counted_spill(*args: object) -> object:
        spills.append(os.getpid())
        return real_spill(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(timesort, "_spill", counted_spill)
    from_runs = run_replay(combined.snapshot, swapped, decisions=SpooledDecisions()).to_dict()
    assert from_runs["summary"]["input"] == {"file": str(swapped), "format": "event.log"}
    from_runs["summary"]["input"] = in_order["summary"]["input"]
    assert from_runs == in_order
    assert len(spills) >= 2, "the log's events went through runs on disk"
    assert in_order["decisions"]
