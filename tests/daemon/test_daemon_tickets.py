"""Repairs reach the live daemon without waiting: a signed webhook delivery wakes its cycle, and a delivery that
never came is healed by the ticket fallback poll, a job of its own."""

from __future__ import annotations

import re
import signal
from pathlib import Path

import httpx
from daemon_support import Daemon, daemon, migrate, simulator, write_config
from webhook_support import SECRET, jira_body, signed

from fabric import wiring
from fabric.simulator.driver import SimulatorDriver
from fabric.simulator.server import free_port
from tickets.base import Ticket, TicketStatus

LINK = "core01-01/1"


def _schedule(interval: str, poll: str) -> str:
    return (f'\n[daemon]\ninterval = "{interval}"\nticket_poll_interval = "{poll}"\nshutdown_wait = "20s"\n'
            "engine_niceness = 0\n")


def _config(tmp_path: Path, sim: SimulatorDriver, plan: Path, port: int, interval: str, poll: str) -> Path:
    config = write_config(tmp_path, sim.url, plan, port=port, dry_run=False)
    text = re.sub(r"\[daemon\]\n(?:[^\[\n].*\n)*", "", config.read_text())  # the section, for ``_schedule``'s
    config.write_text(text + _schedule(interval, poll))
    return config


def _disable_a_flapping_cable(d: Daemon, sim: SimulatorDriver) -> None:
    d.wait_for("a first cycle", lambda: d.cycles() >= 1)
    sim.inject(fault="flap", link=LINK, cycles=5, period="20s")
    sim.advance(300)
    d.wait_for("the disable and its ticket", lambda: d.metric("fabric_components", state="awaiting_repair") == 1)


def _the_ticket(db: Path) -> Ticket:
    with wiring.open_existing_store(f"sqlite:///{db}", fabric="test") as store:
        (ticket,) = wiring.local_tickets(store).list(TicketStatus.OPEN)
    return ticket


def _repaired(db: Path, key: str) -> None:
    """The technician's side: the ticket resolved in the ticket system (the flaps are over: the cable is sound)."""
    with wiring.open_existing_store(f"sqlite:///{db}", fabric="test", read_only=False) as store:
        wiring.local_tickets(store).resolve(key, "replaced the optic")


def test_a_signed_delivery_is_acted_on_at_once_not_at_the_next_interval(tiny_plan: Path, tmp_path: Path) -> None:
    db = tmp_path / "fabric.db"
    migrate(db)
    port = free_port()
    with simulator(tiny_plan) as sim:
        with daemon(_config(tmp_path, sim, tiny_plan, port, "1s", "1h"), port, tmp_path / "first.log") as first:
            _disable_a_flapping_cable(first, sim)
            assert first.signal(signal.SIGTERM) == 0
        key = _the_ticket(db).key
        # One cycle at start-up, then one an hour: only the delivery can bring the next one.
        slow = _config(tmp_path, sim, tiny_plan, port, "1h", "1h")
        env = {"FABRIC_TICKETS__WEBHOOK_SECRET": SECRET}
        with daemon(slow, port, tmp_path / "second.log", **env) as second:
            second.wait_for("the start-up cycle", lambda: second.cycles() >= 1)
            _repaired(db, key)
            body = jira_body(key)
            answer = httpx.post(f"{second.api}/webhooks/jira", content=body, headers=signed(body, "delivery-1"),
                                timeout=10)
            assert answer.status_code == 202, answer.text
            second.wait_for("the re-enable", lambda: second.metric("fabric_decisions_total", kind="enable") == 1)
            assert second.cycles() == 2
            assert second.metric("fabric_components", state="probation") == 1
            assert second.signal(signal.SIGTERM) == 0


def test_a_lost_delivery_is_healed_by_the_ticket_poll(tiny_plan: Path, tmp_path: Path) -> None:
    db = tmp_path / "fabric.db"
    migrate(db)
    port = free_port()
    with simulator(tiny_plan) as sim, daemon(_config(tmp_path, sim, tiny_plan, port, "1s", "3s"), port,
                                             tmp_path / "daemon.log") as d:
        _disable_a_flapping_cable(d, sim)
        _repaired(db, _the_ticket(db).key)  # and no delivery reaches the daemon
        d.wait_for("the re-enable", lambda: d.metric("fabric_decisions_total", kind="enable") == 1)
        assert d.metric("fabric_components", state="probation") == 1
        assert any(line["message"].startswith("ticket poll done") and "1 ticket(s) found resolved" in
                   line["message"] for line in d.lines())
        assert d.signal(signal.SIGTERM) == 0
