"""`make demo` must keep working: it is the first thing a newcomer runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabric.demo.story import run_demo


def test_demo_tells_the_whole_story_through_the_daemon(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # 0 only when verify finds the planted faults and the daemon (a subprocess, live, against the simulator) did
    # everything the timeline promises: 9 BER cables disabled and 2 deferred, a repair through a signed webhook
    # that passes its probation, another that fails again (strike 2), the reboots and the blip left alone, only
    # the host whose link is down unhealthy, and a clean exit on SIGTERM (see fabric/demo/loop.py); two flapping
    # cables reset first, one cured by it, the other taken out when it flaps on; a BER ramp only UFM Telemetry's
    # counters show (no UFM event) reset once, then taken out and ticketed when it goes on.
    assert run_demo(tmp_path, seed=7) == 0
    out = capsys.readouterr().out
    timeline = out[out.index("time     component"):out.index("Components by state")]
    assert all(len(line) <= 80 for line in timeline.splitlines()), "the timeline is read at 80 columns"
    for said in ("deferred+tkt ber_critical; pod03-leaf05: 736<768 paths", "webhook      signed Jira delivery",
                 "re-enabled", "confirmed up", "strike 2", "healthy      clean soak", "left alone",
                 "reset        flap: ", "UFM: reset", "healthy      no fault within 10m of its reset"):
        assert said in timeline, said
    sampled = [line[26:38].strip() for line in timeline.splitlines() if line[9:25] == "pod09-leaf02/37 "]
    assert sampled == ["injected", "finding", "reset", "UFM: reset", "finding", "disabled+tkt", "UFM: down"], sampled
    assert "pod09-leaf02/37  finding      ber_high, seen by UFM Telemetry: " in timeline
    assert "GET /api/v1/hosts/pod02-node01/health: healthy=false" in out
    assert "NOT AS PROMISED" not in out
    assert (tmp_path / "plan.csv").exists() and (tmp_path / "fabric-remediation.db").exists()
    assert '"message": "stopped"' in (tmp_path / "daemon.log").read_text()


def test_the_demo_through_jira_resolves_in_the_fake_jira_whose_signed_webhook_the_daemon_takes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # ``fabricctl demo --tickets jira``: the daemon's tickets go to the fake Jira through the real ``jira`` library;
    # the technician resolves two of them there, and the fake Jira's own webhooks, signed with the daemon's secret,
    # bring the cables back; one Jira issue per component at the end (the one that failed again reopened).
    assert run_demo(tmp_path, seed=7, jira=True) == 0
    out = capsys.readouterr().out
    timeline = out[out.index("time     component"):out.index("Components by state")]
    for said in ("resolved     OPS-", "webhook      signed Jira webhook OPS-", "re-enabled", "strike 2",
                 "healthy      clean soak"):
        assert said in timeline, said
    assert "NOT AS PROMISED" not in out
    assert 'backend = "jira"' in (tmp_path / "daemon.toml").read_text()
