"""``fabricctl identify``: against ``fabricctl simulate --factory-names`` over real loopback HTTP, and bad input."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from support import ibnetdiscover_text
from typer.testing import CliRunner

from fabric.cli.app import app
from fabric.simulator.server import free_port
from topology.factory import factory_named
from topology.formats.nodenamemap import parse_node_name_map
from topology.generate import PRESETS, fat_tree

REPO = Path(__file__).resolve().parents[1]
runner = CliRunner(env={"COLUMNS": "80"})


def test_identify_names_every_switch_of_a_simulated_fresh_fabric_and_shows_its_miswire(tiny_plan: Path,
                                                                                       tmp_path: Path) -> None:
    port = free_port()
    command = [sys.executable, "-m", "fabric.cli", "simulate", "--preset", "tiny", "--factory-names", "--miswire", "1",
               "--seed", "3", "--port", str(port), "--speed", "0"]
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                systems = httpx.get(url + "/ufmRest/resources/systems", auth=("admin", "123456"), timeout=2).json()
                break
            except httpx.TransportError:
                assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
                assert time.monotonic() < deadline, "fabricctl simulate did not start"
                time.sleep(0.2)
        names, plan_map = tmp_path / "names.map", tmp_path / "renames.csv"
        result = runner.invoke(app, ["identify", "--plan", str(tiny_plan), "--ufm", url, "--format", "json",
                                     "--node-name-map", str(names), "--rename-plan", str(plan_map)],
                               env={"FABRIC_UFM_PASSWORD": "123456"})
        table = runner.invoke(app, ["identify", "--plan", str(tiny_plan), "--ufm", url],
                              env={"FABRIC_UFM_PASSWORD": "123456"})
    finally:
        process.terminate()
        process.wait(timeout=15)
    factory = {s["system_name"] for s in systems if s["type"] == "switch"}
    planned = {d.name for d in fat_tree(PRESETS["tiny"]).switches()}
    assert not factory & planned, "the simulator served the planned names"
    assert result.exit_code == 1, result.output  # the planted miswire
    report = json.loads(result.output)
    assert {s["confidence"] for s in report["switches"]} == {"unique"}
    assert {s["name"] for s in report["switches"]} == factory
    assert {s["planned"] for s in report["switches"]} == planned
    assert (report["verify"]["summary"]["miswired"], report["verify"]["summary"]["missing"]) == (2, 0)
    assert set(parse_node_name_map(names.read_text(), "names.map").values()) == planned
    rows = list(csv.DictReader(plan_map.open()))
    assert {r["new_name"] for r in rows} == planned and {r["current_name"] for r in rows} == factory
    assert table.exit_code == 1 and "12 unique, 0 ambiguous, 0 unmatched of 12" in table.output
    assert max(len(line) for line in table.output.splitlines()) <= 80


def test_identify_names_every_switch_from_an_ibnetdiscover_dump_of_a_fresh_fabric(tiny_plan: Path,
                                                                                 tmp_path: Path) -> None:
    """The third as-built source, end to end: the dump as ``ibnetdiscover`` prints a fabric under factory names,
    read by the reader ``verify`` uses."""
    hidden = factory_named(fat_tree(PRESETS["tiny"]), 5)
    dump = tmp_path / "fresh.ibnet"
    dump.write_text(ibnetdiscover_text(hidden.fabric))
    names = tmp_path / "names.map"
    result = runner.invoke(app, ["identify", "--plan", str(tiny_plan), "--as-built", str(dump), "--format", "json",
                                 "--node-name-map", str(names)])
    report = json.loads(result.output)
    planned = {d.name for d in fat_tree(PRESETS["tiny"]).switches()}
    assert {s["confidence"] for s in report["switches"]} == {"unique"}, result.output
    assert {(s["name"], s["planned"]) for s in report["switches"]} == {
        (hidden.fabric.devices[key].name, name) for key, name in hidden.planned.items()}
    assert set(parse_node_name_map(names.read_text(), "names.map").values()) == planned
    assert report["verify"]["summary"]["missing"] == 0 and report["verify"]["summary"]["miswired"] == 0


@pytest.mark.parametrize(("args", "message"), [
    (["--as-built", "nowhere"], "nowhere: no such file or directory"),
    ([], "give exactly one as-built source"),
    (["--as-built", "{plan}", "--ufm", "http://127.0.0.1:9"], "give exactly one as-built source"),
])
def test_bad_input_is_one_line_and_exit_2(tiny_plan: Path, args: list[str], message: str) -> None:
    argv = ["identify", "--plan", str(tiny_plan), *(a.replace("{plan}", str(tiny_plan)) for a in args)]
    result = runner.invoke(app, argv)
    lines = result.output.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1 and message in lines[0], result.output


def test_a_node_name_map_that_cannot_be_written_is_one_line(tiny_plan: Path, tmp_path: Path) -> None:
    snapshot = tmp_path / "snapshot"
    assert runner.invoke(app, ["simulate", "--preset", "tiny", "--factory-names", "--offline", "1s",
                               "--snapshot", str(snapshot)]).exit_code == 0
    result = runner.invoke(app, ["identify", "--plan", str(tiny_plan), "--as-built", str(snapshot),
                                 "--node-name-map", str(tmp_path)])
    assert result.exit_code == 2 and result.output.strip().splitlines() == [
        f"fabricctl: error: cannot write {tmp_path}: it is a directory (give a file name)"]
    good = runner.invoke(app, ["identify", "--plan", str(tiny_plan), "--as-built", str(snapshot), "--format", "csv"])
    assert good.exit_code == 0, good.output
    assert [r["confidence"] for r in csv.DictReader(good.output.splitlines())] == ["unique"] * 12
