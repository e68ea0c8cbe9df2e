"""Webhook deliveries counted by outcome on the daemon's ``/api/v1/metrics``, over HTTP, refusals included."""

from __future__ import annotations

from pathlib import Path

import httpx
from daemon_support import START, daemon, simulator, write_config
from webhook_support import SECRET, jira_body, signed

from fabric import wiring
from fabric.controller.ticketing import Ticketing
from fabric.simulator.server import free_port
from tickets.local import LocalTicketBackend


def test_stored_duplicate_and_refused_deliveries_are_counted(tiny_plan: Path, tmp_path: Path) -> None:
    store = wiring.open_store(f"sqlite:///{tmp_path / 'fabric.db'}", fabric="test")
    key = Ticketing(store, LocalTicketBackend(store.engine, clock=lambda: START), "test").ensure_open(
        None, "storm", "a storm").key
    store.close()
    port = free_port()
    with simulator(tiny_plan) as sim:
        config = write_config(tmp_path, sim.url, tiny_plan, port=port)
        with daemon(config, port, tmp_path / "daemon.log", FABRIC_TICKETS__WEBHOOK_SECRET=SECRET) as d:
            body = jira_body(key)

            def deliver(headers: dict[str, str], content: bytes = body) -> int:
                return httpx.post(f"{d.api}/webhooks/jira", content=content, headers=headers, timeout=30).status_code

            assert deliver(signed(body, "d-1")) == 202
            assert deliver(signed(body, "d-1")) == 200  # Jira's retry
            assert deliver(signed(body, "d-2", secret="not-the-secret")) == 401
            assert deliver({"Content-Type": "application/json"}) == 401
            assert deliver(signed(b"{", "d-3"), b"{") == 400
            unknown = jira_body("OPS-404")
            assert deliver(signed(unknown, "d-4"), unknown) == 202
            counted = {outcome: d.metric("fabric_webhook_deliveries_total", source="jira", outcome=outcome)
                       for outcome in ("accepted", "duplicate", "bad_signature", "unsigned", "malformed", "ignored")}
            assert counted == dict.fromkeys(counted, 1.0)
