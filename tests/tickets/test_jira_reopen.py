"""A component that fails again on probation: its Jira ticket reopened by the configured transition, or, where the
workflow cannot reopen, a new ticket linked to it; through the real ``jira`` library against the fake Jira, with
the store's rows following (``Ticketing.reopen``)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from jira_support import backend_for, fake_jira

from fabric.controller.ticketing import Ticketing
from fabric.remediation.domain import ComponentId, ComponentKind
from fabric.simulator.jira import RunningJira
from fabric.store import Store
from fabric.store.records import TicketState

LINK = ComponentId(ComponentKind.LINK, "core01-01/1|pod01-spine01/5")
NOW = datetime(2026, 5, 1, 8, 0, tzinfo=UTC)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(f"sqlite:///{tmp_path / 'fabric.db'}", fabric="test", clock=lambda: NOW)
    try:
        yield opened
    finally:
        opened.close()


def _resolved_ticket(jira: RunningJira, store: Store, **settings: object) -> tuple[Ticketing, str]:
    ticketing = Ticketing(store, backend_for(jira, **settings), "test")
    key = ticketing.ensure_open(LINK, "flap on the link", "five flaps").key
    jira.state.resolve(key)
    ticketing.poll()
    assert [row.state for row in store.tickets()] == [TicketState.RESOLVED]
    return ticketing, key


def test_a_failure_on_probation_reopens_the_ticket(store: Store) -> None:
    with fake_jira() as jira:
        ticketing, key = _resolved_ticket(jira, store)
        ticket = ticketing.reopen(LINK, "failed again on probation", "flap on the link")
        assert ticket.key == key and ticket.is_open
        (issue,) = jira.state.issues.values()
        assert issue.status.name == "Reopened" and issue.comments[-1].body == "failed again on probation"
        assert [(row.external_key, row.state) for row in store.tickets()] == [(key, TicketState.OPEN)]


def test_where_the_workflow_cannot_reopen_a_linked_ticket_is_opened(store: Store) -> None:
    with fake_jira() as jira:
        ticketing, key = _resolved_ticket(jira, store, reopen_transition="Reopen Issue")
        ticket = ticketing.reopen(LINK, "failed again on probation", "flap on the link")
        assert ticket.key != key and ticket.is_open and ticket.dedup_key == ticketing.key(LINK)
        old, new = sorted(jira.state.issues.values(), key=lambda issue: issue.number)
        assert old.status.name == "Done", "the old one stays as it was"
        assert new.summary == "flap on the link (again)" and f"after {key} was resolved" in new.description
        assert new.links == [("Relates", "outward", key)] and old.links == [("Relates", "inward", new.key)]
        assert [(row.external_key, row.state) for row in store.tickets()] == [
            (key, TicketState.RESOLVED), (new.key, TicketState.OPEN)]
        # Asked again (the answer to the first was lost): the linked ticket is adopted, not opened twice.
        store.ticket_resolved(store.tickets()[-1].id)
        assert ticketing.backend.reopen(key, "again").key == new.key
        assert len(jira.state.issues) == 2
