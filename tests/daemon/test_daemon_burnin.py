"""``POST /api/v1/burnin`` on the real daemon (two processes, live mode, reading UFM Telemetry) against a simulated
UFM, asked as an operator asks it (``fabricctl burnin watch --api``, which waits for the report): a window whose
weak ports only its stricter thresholds find, a link the workload missed told idle from the telemetry samples read
during the window, its survivors report, and the failed taken out through the same guard."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from burnin_support import HOST_LINK, NOT_SURVIVED, UPLINKS, not_survived, plant
from daemon_support import HTTP, PASSWORD, daemon, live

ADMIN_TOKEN = "burnin-admin-token"


def _windows(api: str) -> list[dict[str, Any]]:
    response = HTTP.get(f"{api}/api/v1/burnin", timeout=10)
    assert response.status_code == 200, response.text
    return list(response.json())


def test_a_burnin_window_fails_weak_ports_and_takes_out_only_what_the_guard_allows(tiny_plan: Path,
                                                                                    tmp_path: Path) -> None:
    with live(tiny_plan, tmp_path, telemetry_every=60) as setup, daemon(
            setup.config, setup.port, tmp_path / "daemon.log", FABRIC_API__ADMIN_TOKEN=ADMIN_TOKEN) as running:
        running.wait_for("a first cycle", lambda: running.cycles() >= 1)
        body = {"by": "bring-up", "reason": "new pods 1-2", "duration": "10m"}
        refused = HTTP.post(f"{running.api}/api/v1/burnin", json=body)
        assert refused.status_code == 401 and _windows(running.api) == []
        watch = subprocess.Popen(
            [sys.executable, "-m", "fabric.cli", "burnin", "watch", "--api", running.api, "--by", "bring-up",
             "--reason", "new pods 1-2", "--duration", "10m", "--format", "json"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "FABRIC_API__ADMIN_TOKEN": ADMIN_TOKEN})
        assert watch.stderr is not None
        asked = watch.stderr.readline()
        assert asked.startswith("burn-in window "), asked + watch.stderr.read()
        window_id = int(asked.split()[2])
        running.wait_for("the window opened", lambda: _windows(running.api)[0]["started_at"] is not None)

        plant(setup.sim.inject)
        setup.sim.advance(30, at_next_read=True)
        target = running.cycles() + 2
        running.wait_for("two cycles in the window", lambda: running.cycles() >= target)
        # One error event each: below the service's own threshold (three), so nothing is decided during the window.
        assert _components(running.api) == {}

        setup.sim.advance(90, at_next_read=True)  # a UFM Telemetry sample is due: the window's first
        target = running.cycles() + 2
        running.wait_for("a sample read in the window", lambda: running.cycles() >= target)
        setup.sim.advance(10 * 60, at_next_read=True)  # past the window's end: the next cycle closes it (a sample)
        running.wait_for("the window's report", lambda: _windows(running.api)[0]["ended_at"] is not None)
        (window,) = _windows(running.api)
        out, err = watch.communicate(timeout=60)
        assert watch.returncode == 1, err  # some switches did not survive
        assert json.loads(out) == window
        assert window["id"] == window_id and window["dry_run"] is False
        report = window["report"]
        assert not_survived(report) == NOT_SURVIVED
        assert report["ports"]["failed"] == 5 and report["switches"] == {"survived": 9, "failed": 3}
        assert report["telemetry"]["compared"] is True, report["telemetry"]
        assert report["utilisation_alerts"] == ["pod02-leaf01/Port 5"]
        assert {f["component"] for f in report["findings"]} == UPLINKS | {HOST_LINK}

        # The findings went to the engine's own policy: the uplinks settle a minute (switch-to-switch cables), then
        # the guard lets one go and defers the other (pod01-leaf01 keeps 12 of 16 paths to core at least).
        setup.sim.advance(90, at_next_read=True)
        running.wait_for("both uplinks decided",
                         lambda: {c for c, state in _components(running.api).items() if c in UPLINKS
                                  and state in ("awaiting_repair", "deferred")} == UPLINKS)
        states = _components(running.api)
        assert sorted(states[c] for c in UPLINKS) == ["awaiting_repair", "deferred"]
        assert states[HOST_LINK] == "ticketed"  # a host's link: a ticket, never a disable
        running.wait_for("UFM showing one port disabled", lambda: len(_disabled(setup.sim.url)) == 1)
        assert running.signal(signal.SIGTERM) == 0


def _components(api: str) -> dict[str, str]:
    response = HTTP.get(f"{api}/api/v1/components", timeout=10)
    assert response.status_code == 200, response.text
    return {c["id"]: c["lifecycle"] for c in response.json()["items"]}


def _disabled(url: str) -> list[str]:
    ports = HTTP.get(f"{url}/ufmRest/resources/ports", auth=("admin", PASSWORD), timeout=30).json()
    return sorted(p["name"] for p in ports if p["physical_state"] == "Disabled")
