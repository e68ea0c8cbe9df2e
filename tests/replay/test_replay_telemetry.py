"""``fabricctl replay --telemetry DIR``: recorded UFM Telemetry samples replayed beside (or instead of) the events,
on the same virtual clock; a sample that is not UFM Telemetry's CSV is refused naming its file, line and column."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from replay_support import START, snapshot
from typer.testing import CliRunner

from fabric.cli.app import app
from fabric.simulator import SimClock, SimSettings, SimState
from fabric.simulator.scenario import parse_scenario
from fabric.simulator.telemetry_faults import Malformation, malformed
from topology.generate import PRESETS, fat_tree

runner = CliRunner(env={"COLUMNS": "200"})
PORT = "core01-01/1"


def record_samples(directory: Path, steps: list[dict[str, Any]], *, gaps: list[float]) -> list[Path]:
    """A sample now, then one after each gap (seconds), written under names out of time order."""
    directory.mkdir(parents=True, exist_ok=True)
    state = SimState.from_plan(fat_tree(PRESETS["tiny"]), clock=SimClock(START), settings=SimSettings())
    written = [directory / f"z-{len(gaps):03d}.csv"]
    written[0].write_bytes(state.telemetry.render(state.now()))
    if steps:
        parse_scenario({"name": "test", "seed": 0, "steps": steps}).schedule(state)
    for n, gap in enumerate(gaps):
        state.advance(gap)
        path = directory / f"z-{len(gaps) - n - 1:03d}.csv"  # names sort against time
        path.write_bytes(state.telemetry.render(state.now()))
        written.append(path)
    return written


def replay(*args: str) -> Any:
    return runner.invoke(app, ["replay", *args, "--format", "json"])


def test_a_ber_no_event_reported_is_replayed_from_the_samples_alone(tmp_path: Path) -> None:
    snap, plan = snapshot(tmp_path)
    # The BER stays (no reset cures it): reset first, then taken out when the samples after the reset show it on.
    record_samples(tmp_path / "telemetry", [{"at": "0s", "fault": "ber_ramp", "port": PORT, "ber": 1e-12}],
                   gaps=[12 * 60, 60, 2 * 60, 6 * 60, 5 * 60, 5 * 60])
    result = replay("--as-built", str(snap), "--plan", str(plan), "--telemetry", str(tmp_path / "telemetry"))
    assert result.exit_code == 1, result.output  # it would act
    report = json.loads(result.output)
    # (each finding first held a minute for the correlation: a spine-core cable, ``fabric.remediation.settling``)
    decided = [d for d in report["decisions"] if d["action"] != "record"]
    acted = [(d["action"], d["rule"]) for d in decided]
    assert acted == [("reset", "ber_high"), ("disable", "ber_high"), ("ticket", "ber_high")], report["decisions"]
    assert "seen by UFM Telemetry" in decided[0]["reason"]
    assert "the fault persisted after its reset" in decided[1]["reason"]
    summary = report["summary"]
    assert summary["telemetry"]["samples"] == 7 and summary["telemetry"]["verdicts"] == {"accepted": 7}
    assert summary["events"] == 0


def test_a_sample_that_is_not_telemetry_csv_is_refused_naming_file_line_and_column(tmp_path: Path) -> None:
    snap, plan = snapshot(tmp_path)
    _, second = record_samples(tmp_path / "telemetry", [], gaps=[60])
    second.write_bytes(malformed(second.read_bytes(), Malformation.TEXT_IN_NUMBER))
    result = replay("--as-built", str(snap), "--plan", str(plan), "--telemetry", str(tmp_path / "telemetry"))
    assert result.exit_code == 2, result.output
    message = " ".join(result.output.split())
    assert f"{second}:2: column" in message and "Traceback" not in result.output, result.output


def test_nothing_to_replay_is_refused(tmp_path: Path) -> None:
    snap, _ = snapshot(tmp_path)
    result = replay("--as-built", str(snap))
    assert result.exit_code == 2 and "give --events, --telemetry or both" in result.output, result.output
