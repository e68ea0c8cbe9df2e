"""The command line as an operator runs it: real files, real exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabric.cli.app import app
from topology.faults import FaultCounts, plant
from topology.formats.ndt import write_ndt
from topology.formats.ufm_render import write_ufm_snapshot
from topology.generate import PRESETS, fat_tree

runner = CliRunner(env={"COLUMNS": "200"})


@pytest.fixture
def tiny_plan(tmp_path: Path) -> Path:
    path = tmp_path / "plan.csv"
    result = runner.invoke(app, ["plan", "generate", "--preset", "tiny", "--output", str(path)])
    assert result.exit_code == 0, result.output
    return path


def test_plan_generate_h100_4k(tmp_path: Path) -> None:
    path = tmp_path / "plan.csv"
    result = runner.invoke(app, ["plan", "generate", "--preset", "h100-4k", "--output", str(path)])
    assert result.exit_code == 0
    assert "320 switches, 12288 cables" in result.output
    lines = path.read_text().splitlines()
    assert lines[0].startswith("#StartDevice,StartPort,EndDevice,EndPort")
    assert len(lines) == 1 + 12288


def test_plan_generate_overrides_and_refusals(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    ok = runner.invoke(app, ["plan", "generate", "--preset", "tiny", "--pods", "3", "--speed", "hdr", "-o", str(path)])
    assert ok.exit_code == 0 and "16 switches, 72 cables" in ok.output
    assert ",200000,4x" in path.read_text()
    bad = runner.invoke(app, ["plan", "generate", "--preset", "tiny", "--hosts-per-pod", "40", "-o", str(path)])
    assert bad.exit_code == 2 and "radix is 16" in bad.output
    unknown = runner.invoke(app, ["plan", "generate", "--preset", "nope", "-o", str(path)])
    assert unknown.exit_code == 2 and "unknown preset 'nope'" in unknown.output


def test_verify_plan_against_itself_exits_0(tiny_plan: Path) -> None:
    result = runner.invoke(app, ["verify", "--plan", str(tiny_plan), "--as-built", str(tiny_plan), "-f", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert next(iter(report)) == "summary"
    assert report["summary"]["ok"] == report["summary"]["planned"] == 48
    assert report["matches"] is True


def test_verify_snapshot_with_faults_exits_1_and_reports(tmp_path: Path, tiny_plan: Path) -> None:
    plan = fat_tree(PRESETS["tiny"])
    planted = plant(plan, FaultCounts(missing=1, swapped=1, degraded=1), seed=5)
    write_ufm_snapshot(planted.fabric, tmp_path / "snap")
    result = runner.invoke(app, ["verify", "-p", str(tiny_plan), "-a", str(tmp_path / "snap"), "--format", "json"])
    assert result.exit_code == 1, result.output
    summary = json.loads(result.output)["summary"]
    assert (summary["missing"], summary["miswired"], summary["degraded"]) == (1, 2, 1)
    table = runner.invoke(app, ["verify", "-p", str(tiny_plan), "-a", str(tmp_path / "snap")])
    assert table.exit_code == 1
    for heading in ("DOES NOT MATCH", "Missing cables", "Miswired cables", "Degraded cables", "swapped"):
        assert heading in table.output


def test_verify_bad_input_exits_2_naming_the_place(tmp_path: Path, tiny_plan: Path) -> None:
    broken = tmp_path / "broken.csv"
    broken.write_text("StartDevice,StartPort,EndDevice,EndPort\nsw1,Port 1,sw2,Port 1\nsw1,abra,sw2,Port 2\n")
    result = runner.invoke(app, ["verify", "-p", str(broken), "-a", str(tiny_plan)])
    assert result.exit_code == 2
    assert f"{broken}:3: column 'StartPort'" in result.output
    missing = runner.invoke(app, ["verify", "-p", str(tiny_plan), "-a", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2 and "nowhere" in missing.output


def test_verify_lenient_plan_reports_conflicts(tmp_path: Path) -> None:
    plan = tmp_path / "plan.csv"
    plan.write_text("StartDevice,StartPort,EndDevice,EndPort\nsw1,Port 1,sw2,Port 1\nsw1,Port 1,sw3,Port 1\n")
    strict = runner.invoke(app, ["verify", "-p", str(plan), "-a", str(plan)])
    assert strict.exit_code == 2 and "cabled twice" in strict.output
    built = tmp_path / "built.csv"
    built.write_text("StartDevice,StartPort,EndDevice,EndPort\nsw1,Port 1,sw2,Port 1\n")
    lenient = runner.invoke(app, ["verify", "-p", str(plan), "-a", str(built), "--lenient-plan", "-f", "json"])
    assert lenient.exit_code == 1
    report = json.loads(lenient.output)
    assert report["summary"]["plan_conflicts"] == 1
    assert report["plan_conflicts"] == [f"{plan}:3: port sw1/Port 1 is cabled twice (first at {plan}:2)"]


def test_usage_error_exits_2(tiny_plan: Path) -> None:
    assert runner.invoke(app, ["verify", "--plan", str(tiny_plan)]).exit_code == 2
    assert runner.invoke(app, ["verify", "-p", str(tiny_plan), "-a", str(tiny_plan), "-f", "xml"]).exit_code == 2


def test_installed_console_script_runs(tmp_path: Path) -> None:
    plan = tmp_path / "plan.csv"
    with plan.open("w") as handle:
        write_ndt(fat_tree(PRESETS["tiny"]), handle)
    fabricctl = Path(sys.executable).with_name("fabricctl")
    done = subprocess.run([str(fabricctl), "verify", "-p", str(plan), "-a", str(plan)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "MATCHES the plan" in done.stdout
