"""``POST /api/v1/burnin`` on the real daemon (two processes, live mode) against a simulated UFM: a window whose weak
ports only its stricter thresholds find, its survivors report, and the failed taken out through the same guard."""

from __future__ import annotations

import signal
import tomllib
from pathlib import Path
from typing import Any

import httpx
from daemon_support import HTTP, PASSWORD, daemon, live

SCENARIO = Path(__file__).resolve().parents[2] / "examples" / "scenarios" / "burnin-weak-ports.toml"
ADMIN_TOKEN = "burnin-admin-token"
UPLINKS = {"link:pod01-leaf01/5|pod01-spine01/1", "link:pod01-leaf01/7|pod01-spine02/1"}
HOST_LINK = "link:pod01-leaf01/1|pod01-node01 mlx5_0/1"


def _windows(api: str) -> list[dict[str, Any]]:
    response = HTTP.get(f"{api}/api/v1/burnin", timeout=10)
    assert response.status_code == 200, response.text
    return list(response.json())


def test_a_burnin_window_fails_weak_ports_and_takes_out_only_what_the_guard_allows(tiny_plan: Path,
                                                                                    tmp_path: Path) -> None:
    with live(tiny_plan, tmp_path) as setup, daemon(setup.config, setup.port, tmp_path / "daemon.log",
                                                    FABRIC_API__ADMIN_TOKEN=ADMIN_TOKEN) as running:
        running.wait_for("a first cycle", lambda: running.cycles() >= 1)
        body = {"by": "bring-up", "reason": "new pods 1-2", "duration": "10m"}
        refused = httpx.post(f"{running.api}/api/v1/burnin", json=body, timeout=10)
        assert refused.status_code == 401
        asked = httpx.post(f"{running.api}/api/v1/burnin", json=body, timeout=10,
                           headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
        assert asked.status_code == 202, asked.text
        window_id = asked.json()["window"]["id"]
        assert asked.json()["request"]["kind"] == "burnin" and asked.json()["window"]["started_at"] is None
        running.wait_for("the window opened", lambda: _windows(running.api)[0]["started_at"] is not None)

        for step in tomllib.loads(SCENARIO.read_text())["steps"]:
            setup.sim.inject(**{key: value for key, value in step.items() if key != "at"})
        setup.sim.advance(30, at_next_read=True)
        target = running.cycles() + 2
        running.wait_for("two cycles in the window", lambda: running.cycles() >= target)
        # One error event each: below the service's own threshold (three), so nothing is decided during the window.
        assert _components(running.api) == {}

        setup.sim.advance(10 * 60, at_next_read=True)  # past the window's end: the next cycle closes it
        running.wait_for("the window's report", lambda: _windows(running.api)[0]["ended_at"] is not None)
        (window,) = _windows(running.api)
        assert window["id"] == window_id and window["dry_run"] is False
        report = window["report"]
        assert {p["port"] for p in report["not_survived"]} == {
            "pod01-leaf01/Port 1", "pod01-leaf01/Port 5", "pod01-leaf01/Port 7", "pod01-spine01/Port 1",
            "pod01-spine02/Port 1"}
        assert report["ports"]["failed"] == 5 and report["switches"] == {"survived": 9, "failed": 3}
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
