"""``fabricctl burnin watch`` as an operator runs it: the real command against a simulated UFM on loopback, a
window in which a few weak ports fail, judged by the service's own policy and capacity guard."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from burnin_support import HOST_LINK, NOT_SURVIVED, UPLINKS, not_survived, plant
from daemon_support import simulator
from typer.testing import CliRunner

from fabric.cli.app import app
from topology.formats.ndt import write_ndt
from topology.generate import PRESETS, fat_tree

FABRICCTL = [sys.executable, "-m", "fabric.cli"]


def test_weak_ports_fail_and_only_what_the_guard_allows_is_taken_out(tmp_path: Path) -> None:
    plan = tmp_path / "tiny.csv"
    with plan.open("w", newline="") as handle:
        write_ndt(fat_tree(PRESETS["tiny"]), handle)
    with simulator(plan) as sim:
        # Real seconds: the window is a wall-clock wait (3 s), opened before the weak ports show.
        watch = subprocess.Popen(
            [*FABRICCTL, "burnin", "watch", "--plan", str(plan), "--ufm", sim.url, "--telemetry", sim.url,
             "--duration", "3s", "--format", "json"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "FABRIC_UFM__PASSWORD": "123456", "XDG_CACHE_HOME": str(tmp_path / "cache")})
        assert watch.stderr is not None
        opened = watch.stderr.readline()
        assert opened.startswith("burn-in window open:"), opened + watch.stderr.read()
        plant(sim.inject)
        sim.advance(60)  # the simulated fabric's minute of traffic: every port's received packets grow
        out, err = watch.communicate(timeout=60)
    assert watch.returncode == 1, err
    report = json.loads(out)

    assert report["events"] == 4 and report["telemetry"] is True
    assert not_survived(report) == NOT_SURVIVED
    assert report["ports"] == {"survived": 73, "failed": 5, "down": 0, "idle": 2}
    assert report["utilisation_alerts"] == ["pod02-leaf01/Port 5"]
    assert report["switches"] == {"survived": 9, "failed": 3}

    # One error event each, under the errors rule's threshold of three: only the window's stricter one finds them.
    acted = [(d["action"], d["component"]) for d in report["decisions"] if d["action"] != "record"]
    taken_out = {component for action, component in acted if action == "disable"}
    deferred = {component for action, component in acted if action == "defer"}
    # The guard: taking both uplinks would leave pod01-leaf01 8 of 16 paths to core (it keeps 12): one goes, the
    # other is deferred. With the guard bypassed both would be disabled.
    assert len(taken_out) == 1 and len(deferred) == 1 and taken_out | deferred == UPLINKS
    assert "below the guard" in next(d["reason"] for d in report["decisions"] if d["action"] == "defer")
    # A host's link is ticketed, never disabled; every failure is ticketed.
    assert ("ticket", HOST_LINK) in acted and ("disable", HOST_LINK) not in acted
    assert {component for action, component in acted if action == "ticket"} == UPLINKS | {HOST_LINK}


def test_watch_needs_a_ufm_and_a_usable_duration(tmp_path: Path) -> None:
    plan = tmp_path / "tiny.csv"
    with plan.open("w", newline="") as handle:
        write_ndt(fat_tree(PRESETS["tiny"]), handle)
    runner = CliRunner(env={"FABRIC_UFM_URL": None, "FABRIC_UFM__PASSWORD": "x"})
    for argv, message in ((["--duration", "1s"], "--ufm URL is required"),
                          (["--ufm", "http://127.0.0.1:9", "--duration", "soon"], "--duration: "),
                          (["--ufm", "ftp://127.0.0.1:9"], "--ufm 'ftp://127.0.0.1:9'"),
                          (["--api", "http://127.0.0.1:9", "--reason", "r"], "leave out --plan")):
        result = runner.invoke(app, ["burnin", "watch", "--plan", str(plan), *argv])
        assert result.exit_code == 2 and message in result.output and result.output.count("\n") == 1, result.output
    for argv, message in ((["--duration", "1s"], "--plan is required"),
                          (["--api", "http://127.0.0.1:9"], "--reason: give a reason"),
                          (["--api", "http://127.0.0.1:9", "--reason", "r", "--duration", "0s"], "--duration: "),
                          (["--api", "http://127.0.0.1:9", "--reason", "r"], "unreachable")):
        result = runner.invoke(app, ["burnin", "watch", *argv], env={"FABRIC_API__ADMIN_TOKEN": "t"})
        assert result.exit_code == 2 and message in result.output and result.output.count("\n") == 1, result.output


def test_the_daemons_report_as_a_table_names_each_port_that_did_not_survive(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    from datetime import UTC, datetime

    from fabric.api.models import BurninWindowOut
    from fabric.cli.burnin import _print_daemon_window
    from fabric.remediation.burnin import WindowFacts, failures_found, report_dict, survivors
    from fabric.remediation.domain import Finding
    from fabric.remediation.signals import link_id
    from fabric.remediation.view import fabric_context

    plan = fat_tree(PRESETS["tiny"])
    failed, idle = plan.cables[0], plan.cables[-1]
    at = datetime(2026, 5, 1, 8, 0, tzinfo=UTC)
    found = [Finding(link_id(failed.key), "port_errors", at, "1 port_errors event within 2:00:00 (threshold 1)", ())]
    idle_end = next(end for end in idle.key if plan.devices[end.device].kind.value == "switch")
    ports, switches = survivors(plan, fabric_context(plan), failures_found(found),
                                WindowFacts(idle=frozenset({idle_end})))
    report = {**report_dict(ports, switches), "telemetry": {"compared": True, "first": at.isoformat(),
                                                             "last": at.isoformat()},
              "findings": [{"component": str(f.component), "rule": f.rule, "at": f.at.isoformat(), "reason": f.reason}
                           for f in found]}
    window = BurninWindowOut.model_validate({"id": 3, "duration_s": 600.0, "started_at": at, "ends_at": at,
                                             "ended_at": at, "dry_run": False, "report": report})
    assert window.report is not None
    _print_daemon_window(window, window.report)
    out = capsys.readouterr().out
    assert out.startswith("burn-in window 3 of the daemon, 08:00:00-08:00:00 UTC")
    assert "port_errors" in out and ": idle: carried no traffic" in out and "no UFM Telemetry" not in out
    assert "1 finding(s) handed to the daemon's policy (live" in out
    assert max(len(line) for line in out.splitlines()) <= 80, out
