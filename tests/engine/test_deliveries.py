"""``process_deliveries`` on a real SQLite store and the local backend, without an engine: processed deliveries
are remembered a day (their repeats are recognised), then forgotten; a ticket the backend does not have is no
reason to keep a delivery."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support import FakeClock

from fabric.controller.deliveries import RETENTION, process_deliveries
from fabric.controller.effects import CycleReport
from fabric.controller.ticketing import Ticketing
from fabric.store import Store
from tickets.local import LocalTicketBackend


@pytest.fixture
def store(tmp_path: Path, clock: FakeClock) -> Iterator[Store]:
    opened = Store.open(f"sqlite:///{tmp_path / 'fabric.db'}", fabric="test", clock=clock)
    yield opened
    opened.close()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def test_a_processed_delivery_is_remembered_for_a_day_then_forgotten(store: Store, clock: FakeClock) -> None:
    ticketing = Ticketing(store, LocalTicketBackend(store.engine, clock=clock), "test")
    ticket = ticketing.ensure_open(None, "storm", "a storm")
    assert store.record_delivery("d-1", source="jira", payload={"ticket": ticket.key, "status": "resolved"})
    report = CycleReport(clock())
    process_deliveries(store, ticketing, clock(), report)
    assert report.deliveries == 1 and store.unprocessed_deliveries() == []
    assert not store.record_delivery("d-1", source="jira"), "a repeat within the day is recognised"
    clock.advance(seconds=RETENTION.total_seconds() + 1)
    process_deliveries(store, ticketing, clock(), CycleReport(clock()))
    assert store.get_delivery("d-1") is None


def test_a_delivery_naming_a_ticket_the_backend_lost_is_processed(store: Store, clock: FakeClock) -> None:
    ticketing = Ticketing(store, LocalTicketBackend(store.engine, clock=clock), "test")
    ticket = ticketing.ensure_open(None, "storm", "a storm")
    with store.engine.begin() as conn:  # the backend lost it (deleted by hand); the store still holds it open
        conn.exec_driver_sql("DELETE FROM local_tickets")
    store.record_delivery("d-1", source="generic", payload={"ticket": ticket.key, "status": "resolved"})
    report = CycleReport(clock())
    process_deliveries(store, ticketing, clock(), report)
    assert report.deliveries == 1 and report.failed == [] and store.unprocessed_deliveries() == []
