"""The repair loop through the real daemon: ``fabricctl run`` in live mode against the simulator, driven only over
HTTP (its API, the signed Jira webhook, UFM's REST API read back from the simulator) and the CLI (``--api`` and the
local ticket backend's ``--store``).

A flapping cable is disabled in UFM and ticketed; the ticket resolved (in the backend, then a signed delivery tells
the daemon) brings it back up on probation; a clean probation ends healthy with a closing comment. A cable that
fails again on probation is disabled again on the same ticket, and at the third strike it stays out, whatever the
ticket says, until an operator clears it.
"""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from daemon_support import HTTP, PASSWORD, Daemon, daemon, migrate, simulator, write_config
from typer.testing import CliRunner
from webhook_support import SECRET, jira_body, signed

from fabric.cli.app import app as cli
from fabric.simulator.driver import SimulatorDriver
from fabric.simulator.server import free_port

CABLE = "core01-01/1"
ADMIN_TOKEN = "daemon-admin-token"
PROBATION = "30m"
runner = CliRunner(env={"COLUMNS": "200", "FABRIC_API__ADMIN_TOKEN": ADMIN_TOKEN})


@dataclass
class Loop:
    """The running daemon, the simulator behind it and the daemon's database, with what the tests read of them."""

    daemon: Daemon
    sim: SimulatorDriver
    store_url: str
    deliveries: int = 0

    def cli(self, *args: str) -> str:
        result = runner.invoke(cli, list(args))
        assert result.exit_code == 0, result.output
        return result.output

    def tickets(self, *args: str) -> Any:
        return json.loads(self.cli("tickets", *args, "--store", self.store_url, "--fabric", "test",
                                   "--format", "json"))

    def next_cycles(self, count: int = 2) -> None:
        """Wait for ``count`` more cycles: at least one of them started after what the test just did."""
        target = self.daemon.cycles() + count
        self.daemon.wait_for(f"{count} more cycles", lambda: self.daemon.cycles() >= target)

    def components(self) -> list[dict[str, Any]]:
        return list(json.loads(self.cli("components", "list", "--api", self.daemon.api, "--format", "json")))

    def the_component(self) -> dict[str, Any]:
        (component,) = self.components()
        return component

    def wait_lifecycle(self, lifecycle: str, *, strikes: int | None = None) -> dict[str, Any]:
        """The cable's recorded lifecycle reached, and the cycle that recorded it over: its ticket writes done, its
        counts in the metrics (both come after the state is recorded)."""

        def reached() -> bool:
            found = self.components()
            return len(found) == 1 and found[0]["lifecycle"] == lifecycle \
                and (strikes is None or found[0]["strikes"] == strikes)
        self.daemon.wait_for(f"cable {lifecycle}" + (f" at strike {strikes}" if strikes else ""), reached)
        self.next_cycles(1)
        return self.the_component()

    def disabled_ports(self) -> list[str]:
        ports = HTTP.get(f"{self.sim.url}/ufmRest/resources/ports", auth=("admin", PASSWORD), timeout=30).json()
        return sorted(p["name"] for p in ports if p["physical_state"] == "Disabled")

    def wait_disabled(self, ports: list[str], why: str) -> None:
        """UFM shows exactly ``ports`` disabled (the daemon records its decision before UFM carries it out)."""
        self.daemon.wait_for(f"UFM showing {ports or 'no port'} disabled: {why}",
                             lambda: self.disabled_ports() == ports)

    def detail(self, component: str) -> dict[str, Any]:
        response = self.daemon.get(f"/components/{component}")
        assert response.status_code == 200, response.text
        return dict(response.json())

    def flap(self) -> None:
        """The cable flaps five times within 100 s and then holds (the simulator's fault ends by itself: the
        transceiver "repaired"); 300 s later the flaps are settled and the next cycle acts on them."""
        self.sim.inject(fault="flap", link=CABLE, cycles=5, period="20s")
        self.sim.advance(300)

    def resolve(self, key: str, comment: str) -> None:
        """The ticket resolved in the backend (the truth), then Jira's signed delivery saying so (the hint)."""
        self.cli("tickets", "resolve", key, "--comment", comment, "--store", self.store_url, "--fabric", "test")
        self.deliveries += 1
        body = jira_body(key, changelog=20_000 + self.deliveries)
        response = httpx.post(f"{self.daemon.api}/webhooks/jira", content=body,
                              headers=signed(body, f"delivery-{self.deliveries}"), timeout=10)
        assert response.status_code == 202 and response.json()["outcome"] == "accepted", response.text

    def decisions(self, component: str) -> list[tuple[str, str, str]]:
        return [(d["kind"], d["rule"], d["reason"]) for d in self.detail(component)["decisions"]]


@contextmanager
def loop(tiny_plan: Path, tmp_path: Path) -> Iterator[Loop]:
    """The daemon in live mode with a short probation, the webhook secret and the admin token set."""
    db = tmp_path / "fabric.db"
    migrate(db)
    port = free_port()
    with simulator(tiny_plan) as sim:
        config = write_config(tmp_path, sim.url, tiny_plan, port=port, dry_run=False)
        config.write_text(config.read_text().replace("dry_run = false", f'dry_run = false\nprobation = "{PROBATION}"'))
        with daemon(config, port, tmp_path / "daemon.log", FABRIC_TICKETS__WEBHOOK_SECRET=SECRET,
                    FABRIC_API__ADMIN_TOKEN=ADMIN_TOKEN) as running:
            running.wait_for("a first cycle", lambda: running.cycles() >= 1)
            yield Loop(running, sim, f"sqlite:///{db}")
            assert running.signal(signal.SIGTERM) == 0


def flap_out(r: Loop) -> tuple[str, str, str]:
    """The cable flaps until the daemon disables it in UFM and opens its ticket: component id, port, ticket key."""
    r.flap()
    component = r.wait_lifecycle("awaiting_repair")
    r.daemon.wait_for("UFM showing one port disabled", lambda: len(r.disabled_ports()) == 1)
    (port,) = r.disabled_ports()
    (ticket,) = r.tickets("list")
    assert ticket["status"] == "open"
    return component["component"], port, ticket["key"]


def test_a_flapping_cable_is_disabled_ticketed_repaired_through_a_signed_webhook_and_ends_healthy(
        tiny_plan: Path, tmp_path: Path) -> None:
    with loop(tiny_plan, tmp_path) as r:
        component, _, key = flap_out(r)
        detail = r.detail(component)
        assert [(t["external_key"], t["state"]) for t in detail["tickets"]] == [(key, "open")]
        assert [kind for kind, _, _ in r.decisions(component)] == ["disable", "ticket"]
        assert r.daemon.metric("fabric_decisions_total", kind="disable") == 1
        # The five flaps read from UFM's event log, counted by event type (328 Link is Up, 329 Link is Down; the
        # disable's own link-down may be read by now or not).
        assert r.daemon.metric("fabric_events_total", type="328") == 5
        assert r.daemon.metric("fabric_events_total", type="329") >= 5

        r.resolve(key, "replaced the transceiver")
        r.wait_lifecycle("probation")
        r.wait_disabled([], "re-enabled")
        assert r.detail(component)["state"]["probation_until"] is not None
        assert r.daemon.metric("fabric_decisions_total", kind="enable") == 1
        r.daemon.wait_for("the delivery processed", lambda: r.daemon.metric("fabric_deliveries_total") == 1)
        assert [t["state"] for t in r.detail(component)["tickets"]] == ["resolved"]

        r.sim.advance(30)  # the link trains: the daemon reads it back up at its planned width and speed
        r.daemon.wait_for("the link confirmed up", lambda: any(
            rule == "link_check" and "as planned" in reason for _, rule, reason in r.decisions(component)))
        r.sim.advance(20 * 60)
        r.next_cycles()
        assert r.the_component()["lifecycle"] == "probation", "a probation of 30m is not over after 20m"
        r.sim.advance(11 * 60)
        r.wait_lifecycle("healthy")
        assert r.disabled_ports() == []
        closing = f"clean soak of {PROBATION}: healthy"
        assert r.decisions(component)[-1] == ("comment", "probation", closing)
        (ticket,) = r.tickets("list")
        assert ticket["key"] == key and ticket["status"] == "resolved"
        # The comment goes through the outbox, sent beside the cycles: it reaches the ticket within a send interval.
        r.daemon.wait_for("the closing comment", lambda: [c["text"] for c in r.tickets("show", key)["comments"]][-1]
                          == closing)
        r.next_cycles()
        assert r.daemon.metric("fabric_decisions_total", kind="disable") == 1, "nothing disabled twice"
        assert r.daemon.metric("fabric_decisions_total", kind="enable") == 1


def test_a_cable_failing_again_on_probation_is_quarantined_at_the_third_strike_until_cleared(
        tiny_plan: Path, tmp_path: Path) -> None:
    with loop(tiny_plan, tmp_path) as r:
        component, port, key = flap_out(r)
        assert r.the_component()["strikes"] == 1
        for strike in (2, 3):
            r.resolve(key, f"replaced the transceiver (repair {strike - 1})")
            r.wait_lifecycle("probation")
            r.wait_disabled([], "re-enabled")
            r.sim.advance(30)
            r.sim.advance(20 * 60)  # past the flaps of the re-enable itself (the detectors' own-action window)
            r.next_cycles()
            r.flap()
            expected = "quarantined" if strike == 3 else "awaiting_repair"
            r.wait_lifecycle(expected, strikes=strike)
            r.wait_disabled([port], "disabled again")
            # The same ticket, reopened: through the outbox, within a send interval of the decision.
            r.daemon.wait_for("the ticket reopened", lambda: [(t["key"], t["status"]) for t in r.tickets("list")]
                              == [(key, "open")])

        # Quarantined: a resolved ticket no longer brings it back.
        r.resolve(key, "replaced it once more")
        r.daemon.wait_for("the delivery processed", lambda: r.daemon.metric("fabric_deliveries_total") == 3)
        r.next_cycles()
        assert r.the_component()["lifecycle"] == "quarantined"
        assert r.disabled_ports() == [port], "a quarantined cable waits for an operator"
        assert r.daemon.metric("fabric_decisions_total", kind="enable") == 2

        # Cleared with the admin token: back on probation, in service.
        out = r.cli("components", "clear", component, "--reason", "optics and cable replaced, checked with "
                    "mlxlink", "--by", "alice", "--api", r.daemon.api)
        assert "clear requested" in out
        r.wait_lifecycle("probation")
        assert r.detail(component)["state"]["probation_until"] is not None
        r.wait_disabled([], "released")
        assert r.daemon.metric("fabric_decisions_total", kind="enable") == 3
