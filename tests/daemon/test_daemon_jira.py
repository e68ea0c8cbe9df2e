"""The daemon with its tickets in Jira: the real ``fabricctl run`` against the UFM simulator and the fake Jira, both
over loopback. A disabled cable gets one Jira issue carrying its dedup label; the technician resolves it in Jira,
Jira's signed webhook reaches the daemon, and the cable comes back on probation."""

from __future__ import annotations

import signal
from pathlib import Path

import httpx
from daemon_support import daemon, migrate, simulator, write_config
from jira_support import PAT, backend_for, fake_jira
from webhook_support import SECRET, jira_body, signed

from fabric.simulator.server import free_port
from tickets.base import dedup_key


def test_a_disable_opens_one_jira_issue_and_its_resolution_brings_the_cable_back(tiny_plan: Path,
                                                                                  tmp_path: Path) -> None:
    migrate(tmp_path / "fabric.db")
    port = free_port()
    with simulator(tiny_plan) as sim, fake_jira() as jira:
        tickets = f'\n[tickets]\nbackend = "jira"\n\n[tickets.jira]\nurl = "{jira.url}"\nproject = "OPS"\n'
        config = write_config(tmp_path, sim.url, tiny_plan, port=port, dry_run=False, extra=tickets)
        env = {"FABRIC_TICKETS__JIRA__TOKEN": PAT, "FABRIC_TICKETS__WEBHOOK_SECRET": SECRET}
        with daemon(config, port, tmp_path / "daemon.log", **env) as d:
            d.wait_for("a first cycle", lambda: d.cycles() >= 1)
            sim.inject(fault="flap", link="core01-01/1", cycles=5, period="20s")
            sim.advance(300)
            d.wait_for("the disable and its ticket", lambda: d.metric("fabric_components", state="awaiting_repair")
                       == 1)
            (issue,) = jira.state.issues.values()
            (component,) = d.get("/components").json()["items"]
            assert dedup_key("test", component["id"]) in issue.labels and "ibfabric-test" in issue.labels
            backend_for(jira).resolve(issue.key, "replaced the optic")
            body = jira_body(issue.key)
            answer = httpx.post(f"{d.api}/webhooks/jira", content=body, headers=signed(body, "jira-1"), timeout=10)
            assert answer.status_code == 202, answer.text
            d.wait_for("the re-enable", lambda: d.metric("fabric_decisions_total", kind="enable") == 1)
            assert d.metric("fabric_components", state="probation") == 1
            assert len(jira.state.issues) == 1
            assert d.signal(signal.SIGTERM) == 0
