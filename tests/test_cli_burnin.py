"""``fabricctl burnin plan`` as an operator runs it: a plan file in, scripts and JSON out, the scripts run."""

from __future__ import annotations

import csv
import json
import os
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabric.cli.app import app
from topology.formats.ndt import write_ndt
from topology.generate import PRESETS, fat_tree

runner = CliRunner(env={"COLUMNS": "80"})


def _plan(tmp_path: Path, preset: str) -> Path:
    path = tmp_path / f"{preset}.csv"
    with path.open("w", newline="") as handle:
        write_ndt(fat_tree(PRESETS[preset]), handle)
    return path


def _planned_cables(path: Path) -> set[frozenset[tuple[str, str]]]:
    """The plan file's cables read with the csv module alone: a host end is its adapter (the port cell holds the
    adapter's node description, which starts with the host), a switch end its name and port number."""
    cables = set()
    with path.open(newline="") as handle:
        rows = csv.reader(handle)
        next(rows)
        for start, start_port, end, end_port, *_ in rows:
            ends = []
            for device, port in ((start, start_port), (end, end_port)):
                if port.startswith(device + " "):
                    ends.append((port.casefold(), "adapter"))
                else:
                    ends.append((device.casefold(), port.removeprefix("Port ")))
            cables.add(frozenset(ends))
    return cables


def _loaded_cables(report: dict[str, object]) -> set[frozenset[tuple[str, str]]]:
    loaded = set()
    for cable in report["cable_loads"]:  # type: ignore[attr-defined]
        if any(load > 0 for load in cable["load"]):
            loaded.add(frozenset(
                (end["device"].casefold(), "adapter" if end["kind"] == "adapter" else end["port"].removeprefix("Port "))
                for end in cable["ends"]))
    return loaded


def test_h100_4k_every_planned_cable_carries_traffic_in_some_stage(tmp_path: Path) -> None:
    plan = _plan(tmp_path, "h100-4k")
    out = tmp_path / "burnin"
    result = runner.invoke(app, ["burnin", "plan", "--plan", str(plan), "--out", str(out), "--stage-size", "48",
                                 "--no-plan-cache"])
    assert result.exit_code == 0, result.output
    assert all(len(line) <= 80 for line in result.output.splitlines())
    report = json.loads((out / "burnin-plan.json").read_text())
    planned = _planned_cables(plan)
    assert len(planned) == 12288
    assert _loaded_cables(report) == planned
    assert report["covered"] == 12288 and report["uncovered"] == []
    stages = report["stages"]
    assert len(stages) == 6  # 256 pairs, 48 a stage
    for stage in stages:
        assert len(stage["pairs"]) <= 48
        hosts = [host for pair in stage["pairs"] for host in (pair["client"], pair["server"])]
        assert len(hosts) == len(set(hosts))
        for pair in stage["pairs"]:
            for stream in pair["streams"]:
                assert stream["client"].split()[1] == stream["server"].split()[1] == f"mlx5_{stream['rail']}"
        script = out / stage["script"]
        assert os.access(script, os.X_OK)
        subprocess.run(["sh", "-n", str(script)], check=True)


def test_a_stage_script_runs_every_stream_and_counts_the_failures(tmp_path: Path) -> None:
    """The tiny fabric's stage run with SSH set to a stand-in that logs each command (and fails for one host)."""
    plan = _plan(tmp_path, "tiny")
    out = tmp_path / "burnin"
    assert runner.invoke(app, ["burnin", "plan", "-p", str(plan), "-o", str(out), "--duration", "90s"]).exit_code == 0
    report = json.loads((out / "burnin-plan.json").read_text())
    assert len(report["stages"]) == 1
    calls = tmp_path / "calls"
    fake_ssh = tmp_path / "fake-ssh"
    fake_ssh.write_text(f'#!/bin/sh\necho "$@" >>{calls}\n[ "$1" != "$FAIL_HOST" ]\n')
    fake_ssh.chmod(0o755)
    environment = {**os.environ, "SSH": str(fake_ssh), "SETTLE": "0", "LOGS": str(tmp_path / "logs"),
                   "FAIL_HOST": "nobody"}
    ok = subprocess.run(["sh", str(out / "stage-01.sh")], check=False, env=environment, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    lines = calls.read_text().splitlines()
    pairs = report["stages"][0]["pairs"]
    assert len(lines) == 2 * sum(len(pair["streams"]) for pair in pairs)
    for pair in pairs:
        for stream in pair["streams"]:
            device, port = stream["server"].split()[1], stream["tcp_port"]
            assert f"{pair['server']} ib_write_bw -d {device} -p {port} -b -D 90 --report_gbits" in lines
            assert f"{pair['client']} ib_write_bw -d {device} -p {port} -b -D 90 --report_gbits {pair['server']}" \
                   in lines
    failing = subprocess.run(["sh", str(out / "stage-01.sh")], check=False,
                             env={**environment, "FAIL_HOST": pairs[0]["server"]}, capture_output=True, text=True)
    streams = len(pairs[0]["streams"])
    assert failing.returncode != 0 and f"{streams} of {len(lines)} ib_write_bw processes failed" in failing.stderr


@pytest.mark.parametrize(("options", "message"), [
    (["--stage-size", "0"], "--stage-size must be at least 1"),
    (["--duration", "soon"], "--duration: "),
    (["--duration", "0s"], "--duration must be at least a second"),
])
def test_bad_options_are_one_line_and_exit_2(tmp_path: Path, options: list[str], message: str) -> None:
    plan = _plan(tmp_path, "tiny")
    result = runner.invoke(app, ["burnin", "plan", "-p", str(plan), "-o", str(tmp_path / "out"), *options])
    assert result.exit_code == 2 and result.output.count("\n") == 1 and message in result.output


def test_bad_plan_and_out_are_named(tmp_path: Path) -> None:
    broken = tmp_path / "broken.csv"
    broken.write_text("#StartDevice,StartPort,EndDevice,EndPort\nleaf1,Port 1,leaf1,Port 1\n")
    result = runner.invoke(app, ["burnin", "plan", "-p", str(broken), "-o", str(tmp_path / "out"), "--no-plan-cache"])
    assert result.exit_code == 2 and "broken.csv" in result.output and result.output.count("\n") == 1
    a_file = tmp_path / "file"
    a_file.write_text("")
    result = runner.invoke(app, ["burnin", "plan", "-p", str(_plan(tmp_path, "tiny")), "-o", str(a_file)])
    assert result.exit_code == 2 and "not a directory" in result.output
    no_hosts = tmp_path / "switches.csv"
    no_hosts.write_text("#StartDevice,StartPort,EndDevice,EndPort\nleaf1,Port 1,spine1,Port 1\n")
    result = runner.invoke(app, ["burnin", "plan", "-p", str(no_hosts), "-o", str(tmp_path / "o2"), "--no-plan-cache"])
    assert result.exit_code == 2 and "no host adapter" in result.output
