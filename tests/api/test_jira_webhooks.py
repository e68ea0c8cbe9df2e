"""The fake Jira's own webhooks, signed as a Jira admin webhook with a secret signs them, reaching the service's
receiver over loopback: a technician resolving the issue in Jira is what the service hears, and acts on once the
backend (the real ``jira`` library) confirms it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from jira_support import backend_for, fake_jira
from webhook_support import SECRET, webhooks

from fabric.config import load_config
from fabric.controller.deliveries import process_deliveries
from fabric.controller.effects import CycleReport
from fabric.controller.ticketing import Ticketing
from fabric.simulator.jira import RunningJira, WebhookTarget
from fabric.store import Store
from fabric.store.records import TicketState
from topology.generate import PRESETS, fat_tree

NOW = datetime(2026, 5, 1, 8, 0, tzinfo=UTC)


def _wait(what: str, check: object) -> None:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    monkeypatch.setenv("FABRIC_TICKETS__WEBHOOK_SECRET", SECRET)
    # The receiver keeps deliveries for tickets of the configured backend only.
    for name, value in (("BACKEND", "jira"), ("JIRA__URL", "http://127.0.0.1:9"), ("JIRA__PROJECT", "OPS")):
        monkeypatch.setenv(f"FABRIC_TICKETS__{name}", value)
    opened = Store.open(f"sqlite:///{tmp_path / 'fabric.db'}", fabric="test", clock=lambda: NOW)
    try:
        yield opened
    finally:
        opened.close()


def _ticket_in(jira: RunningJira, store: Store) -> tuple[Ticketing, str]:
    ticketing = Ticketing(store, backend_for(jira), "test")
    return ticketing, ticketing.ensure_open(None, "storm", "a storm").key


@pytest.mark.parametrize("secret", [SECRET, "another-secret"], ids=["signed", "wrongly signed"])
def test_a_resolution_in_jira_reaches_the_receiver_signed(store: Store, secret: str) -> None:
    with webhooks(store, fat_tree(PRESETS["tiny"]), load_config(), lambda: NOW) as url, \
            fake_jira(webhook=WebhookTarget(f"{url}/webhooks/jira", secret, retries=0)) as jira:
        ticketing, key = _ticket_in(jira, store)
        jira.state.resolve(key)
        assert jira.webhooks is not None
        _wait("the delivery", lambda: jira.webhooks is not None and jira.webhooks.attempts)
        (attempt,) = jira.webhooks.attempts
        deliveries = store.unprocessed_deliveries()
        if secret != SECRET:
            assert attempt.status == 401 and deliveries == []
            return
        assert attempt.status == 202
        (delivery,) = deliveries
        assert (delivery.id, delivery.source) == (attempt.identifier, "jira")
        assert delivery.payload is not None and delivery.payload["ticket"] == key
        assert delivery.payload["status"] == "resolved"
        process_deliveries(store, ticketing, NOW, CycleReport(NOW))
        (row,) = store.tickets()
        assert (row.external_key, row.state) == (key, TicketState.RESOLVED)


def test_a_receiver_that_is_down_gets_the_same_delivery_again(store: Store) -> None:
    """Jira retries a delivery the receiver did not take, with the same identifier: stored once."""
    with fake_jira(webhook=WebhookTarget("http://127.0.0.1:9/webhooks/jira", SECRET, retries=2,
                                         retry_delay=0.05)) as jira:
        _, key = _ticket_in(jira, store)
        jira.state.resolve(key)
        assert jira.webhooks is not None
        _wait("three attempts", lambda: jira.webhooks is not None and len(jira.webhooks.attempts) == 3)
        attempts = jira.webhooks.attempts
        assert [a.retry for a in attempts] == [0, 1, 2] and len({a.identifier for a in attempts}) == 1
        assert all(a.status is None and a.error for a in attempts)
