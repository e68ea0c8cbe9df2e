"""Real inputs for the replay tests: the simulator runs a scenario offline on the ``tiny`` preset, and its
events are written in every form ``fabricctl replay`` reads, beside a UFM snapshot of the same fabric."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fabric.simulator import SimClock, SimSettings, SimState
from fabric.simulator.events import EventShape
from fabric.simulator.scenario import parse_scenario
from topology.formats.ndt import write_ndt
from topology.formats.ufm_render import write_ufm_snapshot
from topology.generate import PRESETS, fat_tree

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = REPO / "examples" / "scenarios"
START = datetime(2026, 6, 1, 8, 0, tzinfo=UTC)
FORMATS = ("event.log", "rest-6.17.json", "rest-6.16.json", "rest-data.json", "events.jsonl")


@dataclass(frozen=True)
class Recording:
    snapshot: Path
    plan: Path
    files: dict[str, Path]
    """Input form -> file; every form holds the same events."""
    events: int


def snapshot(directory: Path) -> tuple[Path, Path]:
    """The tiny fabric as a UFM snapshot directory and as an NDT plan (same names, same GUIDs as the simulator)."""
    fabric = fat_tree(PRESETS["tiny"])
    snap = directory / "as-built"
    if not snap.exists():
        write_ufm_snapshot(fabric, snap)
    plan = directory / "plan.csv"
    if not plan.exists():
        with plan.open("w", newline="") as handle:
            write_ndt(fabric, handle)
    return snap, plan


def record(directory: Path, steps: list[dict[str, Any]], seconds: float, *, seed: int = 0) -> Recording:
    """Run ``steps`` (scenario steps, as in a scenario file) for ``seconds`` and write the events in every form."""
    directory.mkdir(parents=True, exist_ok=True)
    snap, plan = snapshot(directory)
    state = SimState.from_plan(fat_tree(PRESETS["tiny"]), clock=SimClock(START), settings=SimSettings(seed=seed))
    parse_scenario({"name": "test", "seed": seed, "steps": steps}).schedule(state)
    state.advance(seconds)
    assert not state.errors, state.errors
    return write_recording(directory, state, snap, plan)


def record_file(directory: Path, scenario: Path, seconds: float) -> Recording:
    from fabric.simulator.scenario import load_scenario

    directory.mkdir(parents=True, exist_ok=True)
    snap, plan = snapshot(directory)
    state = SimState.from_plan(fat_tree(PRESETS["tiny"]), clock=SimClock(START), settings=SimSettings())
    load_scenario(scenario).schedule(state)
    state.advance(seconds)
    return write_recording(directory, state, snap, plan)


def write_recording(directory: Path, state: SimState, snap: Path, plan: Path) -> Recording:
    records = state.events.records()
    files = {name: directory / name for name in FORMATS}
    files["event.log"].write_text("".join(line + "\n" for line in state.events.log_lines()))
    current = [r.to_rest(EventShape.CURRENT) for r in records]
    files["rest-6.17.json"].write_text(json.dumps(current))
    files["rest-6.16.json"].write_text(json.dumps([r.to_rest(EventShape.LEGACY) for r in records], indent=1))
    files["rest-data.json"].write_text(json.dumps({"data": current}))
    files["events.jsonl"].write_text("".join(json.dumps(item) + "\n" for item in current))
    return Recording(snap, plan, files, len(records))


def fabricctl(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The real command in its own process (``python -m fabric.cli``)."""
    return subprocess.run([sys.executable, "-m", "fabric.cli", *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=REPO, timeout=300, check=False)
