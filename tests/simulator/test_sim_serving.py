"""Serving: the in-process helper (HTTP and HTTPS), and ``fabricctl simulate`` as an operator runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from sim_support import PASSWORD, USER, Sim, make_state, run
from typer.testing import CliRunner

from fabric.cli.app import app
from fabric.simulator import serve
from fabric.simulator.server import free_port
from fabric.ufm import BasicAuth, UfmClient, UfmTransportError

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()


def test_helper_picks_free_ports_and_stops_cleanly() -> None:
    with serve(make_state()) as first, serve(make_state()) as second:
        assert first.port != second.port and first.url.startswith("http://127.0.0.1:")
        assert httpx.get(first.url + "/ufmRest/app/versioning", auth=(USER, PASSWORD)).status_code == 200
        url = second.url
    with pytest.raises(httpx.ConnectError):
        httpx.get(url + "/simulator/state", timeout=2)


def test_tls_with_a_fresh_self_signed_certificate(sim_factory: Callable[..., Sim]) -> None:
    sim = sim_factory(tls=True)
    assert sim.url.startswith("https://") and sim.server.cert is not None
    assert "BEGIN CERTIFICATE" in sim.server.cert.read_text()

    async def scenario() -> None:
        async with UfmClient(sim.url, BasicAuth(USER, PASSWORD), ca_bundle=sim.server.cert) as ufm:
            assert len(await ufm.links()) == 48
        async with UfmClient(sim.url, BasicAuth(USER, PASSWORD)) as ufm:  # verifying against the system CAs
            with pytest.raises(UfmTransportError):
                await ufm.links()
        async with UfmClient(sim.url, BasicAuth(USER, PASSWORD), verify=False) as ufm:
            assert len(await ufm.systems()) == 20
    run(scenario())


def test_posted_scenario_and_state_summary(sim: Sim) -> None:
    posted = sim.http.post("/simulator/scenario", json={"name": "p", "steps": [
        {"at": "0s", "fault": "link_down", "link": "pod01-spine01/1"},
        {"at": "1m", "fault": "switch_reboot", "switch": "pod02-spine01", "downtime": "1m"}]})
    assert posted.status_code == 200 and posted.json()["steps"] == 2
    summary = sim.get("/simulator/state")
    assert summary["links_up"] == 47 and len(summary["pending"]) == 1 and summary["last_event_id"] == 1
    sim.advance(60)
    summary = sim.get("/simulator/state")
    assert summary["down_systems"] == [sim.state.resolve_node("pod02-spine01", switch=True)]
    assert sim.http.post("/simulator/scenario", json={"steps": "none"}).status_code == 400
    assert sim.http.put("/simulator/clock", json={"rate": -1}).status_code == 400
    assert sim.http.post("/simulator/clock/advance", json={"by": "soon"}).status_code == 400


def test_an_advance_at_next_read_is_made_when_the_clock_is_read_and_not_before(sim: Sim) -> None:
    start = sim.state.now()
    sim.inject(fault="link_down", link="pod01-spine01/1", at="30s")
    answer = sim.http.post("/simulator/clock/advance", json={"seconds": 20, "at_next_read": True}).json()
    sim.http.post("/simulator/clock/advance", json={"by": "40s", "at_next_read": True})
    assert answer["now"] == start.isoformat() and answer["pending_seconds"] == 20
    # Nothing moves until the clock is read: UFM's answers still show the time before the jump.
    assert sim.state.now() == start and len(sim.get("/ufmRest/resources/links")) == 48
    summary = sim.get("/simulator/state")
    assert summary["now"] == (start + timedelta(seconds=60)).isoformat() and summary["links_up"] == 47
    assert sim.get("/simulator/state")["now"] == summary["now"], "made once"
    refused = sim.http.post("/simulator/clock/advance", json={"seconds": 1, "at_next_read": "yes"})
    assert refused.status_code == 400 and "at_next_read" in refused.json()["detail"]


def test_fabricctl_simulate_serves_a_plan(tmp_path: Path) -> None:
    plan = tmp_path / "plan.csv"
    assert runner.invoke(app, ["plan", "generate", "--preset", "tiny", "--output", str(plan)]).exit_code == 0
    port = free_port()
    log = tmp_path / "event.log"
    command = [sys.executable, "-m", "fabric.cli", "simulate", "--plan", str(plan), "--port", str(port),
               "--speed", "0", "--user", "ops", "--password", "s3cret", "--ufm-version", "6.16",
               "--scenario", str(REPO / "examples" / "scenarios" / "miswire.toml"), "--event-log", str(log),
               "--snapshot", str(tmp_path / "snapshot")]
    process = subprocess.Popen(command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                response = httpx.get(url + "/ufmRest/resources/links", auth=("ops", "s3cret"), timeout=2)
                break
            except httpx.TransportError:
                assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
                assert time.monotonic() < deadline, "fabricctl simulate did not start"
                time.sleep(0.2)
        assert response.status_code == 200 and len(response.json()) == 48
        assert json.loads((tmp_path / "snapshot" / "links.json").read_text()) == response.json()
        assert httpx.get(url + "/ufmRest/resources/links", auth=(USER, PASSWORD)).status_code == 401
        httpx.post(url + "/simulator/clock/advance", json={"by": "10s"})
        events = httpx.get(url + "/ufmRest/app/events", auth=("ops", "s3cret")).json()
        assert [e["type"] for e in events] == ["329", "329", "328", "328"]  # 6.16: the legacy shape
        assert log.read_text().count("\n") == 4
    finally:
        process.terminate()
        process.wait(timeout=15)
    banner = process.stderr.read().decode() if process.stderr else ""
    assert f"UFM simulator on http://127.0.0.1:{port}" in banner and "48 links" in banner


@pytest.mark.parametrize(("args", "message"), [
    (["--preset", "tiny", "--scenario", "nope.toml"], "nope.toml: no such file"),
    (["--preset", "tiny", "--ufm-version", "latest"], "not a UFM version"),
    (["--preset", "huge"], "unknown preset"),
    (["--preset", "tiny", "--offline", "forever"], "not a duration"),
])
def test_fabricctl_simulate_refuses_bad_input(args: list[str], message: str) -> None:
    result = runner.invoke(app, ["simulate", *args])
    assert result.exit_code == 2 and message in result.output


def test_fabricctl_simulate_offline_with_planted_miswires(tmp_path: Path) -> None:
    log = tmp_path / "event.log"
    result = runner.invoke(app, ["simulate", "--preset", "tiny", "--miswire", "2", "--seed", "5", "--offline", "1h",
                                 "--scenario", str(REPO / "examples" / "scenarios" / "flapping-link.toml"),
                                 "--event-log", str(log)])
    assert result.exit_code == 0, result.output
    assert "10 events" in result.output and log.read_text().count("[329]") == 5
