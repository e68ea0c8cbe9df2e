"""`fabricctl ufm snapshot`: UFM's systems, links and ports saved from the UFM simulator over real loopback HTTP,
and read back by verify and replay."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from fabric.cli.app import app
from fabric.simulator import SimState, serve
from topology.faults import FaultCounts, plant
from topology.generate import PRESETS, fat_tree

PLAN = fat_tree(PRESETS["tiny"])


def fabricctl(*args: str) -> tuple[int, str]:
    result = CliRunner(env={"FABRIC_UFM_PASSWORD": "123456", "COLUMNS": "200"}).invoke(app, list(args))
    return result.exit_code, result.output


def test_the_saved_snapshot_is_what_verify_and_replay_read(tmp_path: Path, tiny_plan: Path) -> None:
    as_built = plant(PLAN, FaultCounts(swapped=1), seed=2).fabric
    snapshot, log = tmp_path / "snapshot", tmp_path / "event.log"
    with serve(SimState.from_plan(PLAN, as_built=as_built)) as server:
        code, output = fabricctl("ufm", "snapshot", "--ufm", server.url, "--output", str(snapshot))
        assert code == 0, output
        assert f"wrote {snapshot}: 20 systems, 48 links, 96 ports from {server.url}/ufmRest" in output
        live_code, live = fabricctl("verify", "--plan", str(tiny_plan), "--ufm", server.url, "--format", "json")
        httpx.post(f"{server.url}/simulator/faults", json={"fault": "flap", "link": "pod01-spine01/1",
                                                           "cycles": 3, "period": "20s"}).raise_for_status()
        httpx.post(f"{server.url}/simulator/clock/advance", json={"by": "2m"}).raise_for_status()
        log.write_text(httpx.get(f"{server.url}/simulator/event.log").text)
    assert sorted(p.name for p in snapshot.iterdir()) == ["links.json", "ports.json", "systems.json"]
    saved_code, saved = fabricctl("verify", "--plan", str(tiny_plan), "--as-built", str(snapshot), "--format", "json")
    assert (saved_code, live_code) == (1, 1), saved
    assert json.loads(saved)["miswired"] == json.loads(live)["miswired"] != []
    code, output = fabricctl("replay", "--as-built", str(snapshot), "--events", str(log), "--format", "json")
    assert code in (0, 1), output
    summary = json.loads(output)["summary"]
    assert (summary["events"], summary["skipped_events"], summary["model"]["cables"]) == (6, {}, 48)


def test_a_second_snapshot_replaces_the_first(tmp_path: Path) -> None:
    snapshot = tmp_path / "snapshot"
    snapshot.mkdir()
    (snapshot / "links.json").write_text("[]")
    with serve(SimState.from_plan(PLAN)) as server:
        code, output = fabricctl("ufm", "snapshot", "--ufm", server.url, "-o", str(snapshot))
    assert code == 0, output
    assert len(json.loads((snapshot / "links.json").read_text())) == 48
    assert sorted(p.name for p in snapshot.iterdir()) == ["links.json", "ports.json", "systems.json"]


def test_the_timeout_option_reaches_the_reads(tmp_path: Path) -> None:
    with serve(SimState.from_plan(PLAN)) as server:
        httpx.post(f"{server.url}/simulator/faults", json={  # every attempt at every read is slow
            "fault": "api", "endpoint": "/resources/*", "mode": "delay", "delay": "1s", "requests": 9,
        }).raise_for_status()
        code, output = fabricctl("ufm", "snapshot", "--ufm", server.url, "-o", str(tmp_path / "s"),
                                 "--ufm-timeout", "0.2")
    assert code == 2 and "UFM request timed out after 0.2s (ReadTimeout)" in output, output
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize(("args", "message"), [
    (["--ufm", "http://127.0.0.1:9", "--ufm-timeout", "nan"], "--ufm-timeout: a timeout must be more than 0"),
    (["--ufm", "http://127.0.0.1:9", "--ufm-timeout", "0"], "--ufm-timeout: a timeout must be more than 0"),
    (["--ufm", "127.0.0.1:9"], "--ufm '127.0.0.1:9': the URL must start with http:// or https://"),
    ([], "--ufm URL is required"),
    (["--ufm", "http://127.0.0.1:9"], "http://127.0.0.1:9: UFM request failed: ConnectError"),
    (["--ufm", "http://127.0.0.1:9", "--ufm-auth", "kerberos"], "--ufm-auth must be one of basic, token, session"),
])
def test_unusable_options_are_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    code, output = fabricctl("ufm", "snapshot", "-o", str(tmp_path / "s"), *args)
    errors = [line for line in output.splitlines() if line.startswith("fabricctl: error:")]
    assert code == 2 and len(errors) == 1 and errors[0].startswith(f"fabricctl: error: {message}"), output
    assert "Traceback" not in output and not (tmp_path / "s").exists()


def test_an_unwritable_output_names_the_option(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with serve(SimState.from_plan(PLAN)) as server:
        code, output = fabricctl("ufm", "snapshot", "--ufm", server.url, "-o", str(blocker / "snapshot"))
    assert code == 2 and output.strip().splitlines() == [
        f"fabricctl: error: --output {blocker / 'snapshot'}: cannot write the snapshot: Not a directory"], output


def test_a_telemetry_sample_saved_beside_the_snapshot_is_what_replay_reads(tmp_path: Path) -> None:
    snapshot = tmp_path / "snapshot"
    with serve(SimState.from_plan(PLAN)) as server:
        for _ in range(2):  # two snapshots into one directory: two samples
            code, output = fabricctl("ufm", "snapshot", "--ufm", server.url, "-o", str(snapshot),
                                     "--telemetry", server.url)
            assert code == 0 and "a UFM Telemetry sample to telemetry/" in output, output
            httpx.post(f"{server.url}/simulator/clock/advance", json={"by": "1m"}).raise_for_status()
    samples = sorted((snapshot / "telemetry").iterdir())
    assert len(samples) == 2 and samples[0].name < samples[1].name
    code, output = fabricctl("replay", "--as-built", str(snapshot), "--telemetry", str(snapshot / "telemetry"),
                             "--format", "json")
    assert code == 0, output
    assert json.loads(output)["summary"]["telemetry"]["verdicts"] == {"accepted": 2}


def test_a_telemetry_sample_that_cannot_be_read_writes_nothing(tmp_path: Path) -> None:
    with serve(SimState.from_plan(PLAN)) as server:
        httpx.post(f"{server.url}/simulator/faults", json={"fault": "telemetry_malformed", "how": "truncated"}
                   ).raise_for_status()
        code, output = fabricctl("ufm", "snapshot", "--ufm", server.url, "-o", str(tmp_path / "s"),
                                 "--telemetry", server.url)
    errors = [line for line in output.splitlines() if line.startswith("fabricctl: error:")]
    assert code == 2 and len(errors) == 1 and f"--telemetry {server.url}" in errors[0], output
    assert not (tmp_path / "s").exists()
