"""The plan's index the engine process hands the API process (``fabric.daemon.plan_handoff``), and how the API
process gets its index at start (``process._plan_index``): from the engine, or from the plan itself only when the
engine process exited before handing it over, or none when the engine refused to start.

The engine commands below are real processes under the real supervisor: one that hands the index over and stays,
one that crashes at once (exit 1), one that refuses (exit 2).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pytest
from daemon_support import write_config
from hypothesis import given, reject, settings
from hypothesis import strategies as st

from fabric.api.plan_index import PlanIndex, plan_index
from fabric.config import load_config
from fabric.daemon import process
from fabric.daemon.plan_handoff import INDEX_NAME, hand_over, handed_over
from fabric.daemon.supervisor import REFUSED, EngineSupervisor
from topology.formats.ndt import read_ndt
from topology.generate import FatTreeSpec, fat_tree

WAIT = 60.0


@st.composite
def _specs(draw: st.DrawFn) -> FatTreeSpec:
    rails, spines, cores = draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 2))
    leaf_spine, spine_core = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    return FatTreeSpec(pods=draw(st.integers(1, 3)), hosts_per_pod=draw(st.integers(1, 4)), rails=rails,
                       spines_per_pod=spines, cores_per_group=cores, leaf_spine_cables=leaf_spine,
                       spine_core_cables=spine_core, radix=64)


@settings(max_examples=25, deadline=None)
@given(_specs())
def test_the_index_handed_over_is_the_index_of_the_plan(spec: FatTreeSpec) -> None:
    try:
        plan = fat_tree(spec)
    except ValueError:
        reject()
    with tempfile.TemporaryDirectory() as name:
        directory = Path(name)
        assert handed_over(directory) is None
        hand_over(directory, plan)
        assert handed_over(directory) == plan_index(plan)
        assert [p.name for p in directory.iterdir()] == [INDEX_NAME]  # no temporary file left beside it


def _engine(code: str) -> list[str]:
    return [sys.executable, "-c", code]


async def _index_at_start(command: list[str], config_path: Path, run_dir: Path) -> tuple[PlanIndex | None,
                                                                                          EngineSupervisor,
                                                                                          int | None]:
    """What ``_plan_index`` gives with ``command`` as the engine process; the supervisor and its result once
    stopped."""
    supervisor = EngineSupervisor(command, shutdown_wait=1.0, now=lambda: datetime.now(UTC))
    stop = asyncio.Event()
    supervising = asyncio.get_running_loop().create_task(supervisor.run(stop))
    try:
        index = await asyncio.wait_for(process._plan_index(load_config(config_path), run_dir, supervisor,
                                                           supervising), WAIT)
    finally:
        stop.set()
        result = await supervising
    return index, supervisor, result


@pytest.fixture
def config_path(tiny_plan: Path, tmp_path: Path) -> Path:
    return write_config(tmp_path, "http://127.0.0.1:9", tiny_plan, port=9)


def test_the_api_takes_the_index_the_engine_hands_over_without_reading_the_plan(
        config_path: Path, tiny_plan: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def not_read(*_: object) -> PlanIndex:
        raise AssertionError("the API process read the plan itself")

    monkeypatch.setattr(process, "_index_of_plan", not_read)
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    hands_over = ("import sys, time\nfrom pathlib import Path\nfrom fabric.daemon.plan_handoff import hand_over\n"
                  "from topology.formats.ndt import read_ndt\n"
                  f"time.sleep(0.3)\nhand_over(Path({str(run_dir)!r}), read_ndt(Path({str(tiny_plan)!r})))\n"
                  "time.sleep(60)\n")
    index, supervisor, _ = asyncio.run(_index_at_start(_engine(hands_over), config_path, run_dir))
    assert index == plan_index(read_ndt(tiny_plan))
    assert supervisor.view().restarts == 0


def test_an_engine_that_exits_before_handing_over_leaves_the_api_to_read_the_plan(
        config_path: Path, tiny_plan: Path, tmp_path: Path) -> None:
    index, supervisor, result = asyncio.run(_index_at_start(_engine("raise SystemExit(1)"), config_path, tmp_path))
    assert index == plan_index(read_ndt(tiny_plan))  # the API serves, and says the engine is not running
    assert supervisor.view().restarts >= 1 and result is None


def test_an_engine_that_refuses_to_start_leaves_no_index(config_path: Path, tmp_path: Path) -> None:
    index, _, result = asyncio.run(_index_at_start(_engine(f"raise SystemExit({REFUSED})"), config_path, tmp_path))
    assert index is None and result == REFUSED
