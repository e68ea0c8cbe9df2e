"""A ticket webhook through the engine: the simulator over HTTP, the webhook receiver over HTTP, a real SQLite store
and the local ticket backend. A delivery is a hint: the engine reads the ticket from the backend before acting, so
a resolved ticket brings its component back on probation once, and a stale or forged one changes nothing."""

from __future__ import annotations

import builtins
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from engine_support import Rig, rig
from webhook_support import SECRET, TOKEN, jira_body, signed, webhooks

from fabric.config import load_config
from fabric.remediation.domain import ActionKind, ComponentId, Lifecycle
from fabric.remediation.policy import LINK_CHECK
from fabric.store.records import TicketState
from tickets.base import BackendUnavailableError, Ticket, TicketStatus
from tickets.local import LocalTicketBackend
from topology.generate import PRESETS, fat_tree

TINY = fat_tree(PRESETS["tiny"])


class LaggingSearch(LocalTicketBackend):
    """The local backend with a search that lags behind (as Jira's index can): ``list`` answers from ``seen``."""

    seen: builtins.list[Ticket] | None = None
    down = False

    def list(self, status: TicketStatus | None = None) -> builtins.list[Ticket]:
        if self.seen is None:
            return super().list(status)
        return [t for t in self.seen if status is None or t.status is status]

    def status(self, key: str) -> Ticket:
        if self.down:
            raise BackendUnavailableError("the ticket system does not answer")
        return super().status(key)


def disabled_and_ticketed(r: Rig) -> tuple[ComponentId, Ticket]:
    """A flapping spine-core cable, disabled and ticketed by the engine."""
    r.inject(fault="flap", link="core01-01/1", cycles=5, period="20s")
    r.advance(30)
    r.cycle()
    r.advance(270)
    report = r.cycle()
    assert [a.kind for a in report.actions] == [ActionKind.DISABLE, ActionKind.TICKET], report.actions
    component = report.actions[0].component
    assert component is not None
    (ticket,) = r.tickets.list(TicketStatus.OPEN)
    return component, ticket


@pytest.fixture
def loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Rig, str, LaggingSearch]]:
    """The engine (its backend's search lagging only when a test sets ``seen``) and the webhook receiver's URL."""
    monkeypatch.setenv("FABRIC_TICKETS__WEBHOOK_SECRET", SECRET)
    monkeypatch.setenv("FABRIC_TICKETS__WEBHOOK_TOKEN", TOKEN)
    with rig(TINY, tmp_path) as r, webhooks(r.store, TINY, load_config(), r.state.now) as url:
        backend = LaggingSearch(r.store.engine, clock=r.state.now)
        r.engine.ticketing.backend = backend
        yield r, url, backend


def jira(url: str, key: str, identifier: str, *, category: str = "done") -> httpx.Response:
    body = jira_body(key, category=category)
    return httpx.post(f"{url}/webhooks/jira", content=body, headers=signed(body, identifier), timeout=30)


def lifecycle(r: Rig, component: ComponentId) -> Lifecycle:
    record = r.store.get_component(component)
    assert record is not None
    return record.lifecycle


def test_a_signed_resolved_delivery_brings_the_component_back_on_probation_once(
        loop: tuple[Rig, str, LaggingSearch]) -> None:
    r, url, backend = loop
    component, ticket = disabled_and_ticketed(r)
    backend.seen = r.tickets.list()  # the backend's search has not seen the repair yet: only the delivery tells
    r.tickets.resolve(ticket.key, "replaced the transceiver")
    assert [a.kind for a in r.cycle().actions] == [], "the search lags: without the delivery nothing is known"
    assert jira(url, ticket.key, "d-1").status_code == 202
    repaired = r.cycle()
    assert [a.kind for a in repaired.actions] == [ActionKind.ENABLE] and repaired.deliveries == 1
    assert lifecycle(r, component) is Lifecycle.PROBATION
    stored = r.store.get_delivery("d-1")
    assert stored is not None and stored.processed_at is not None
    # Its replay, another delivery saying the same and an older one arriving late change nothing.
    assert jira(url, ticket.key, "d-1").status_code == 200
    assert jira(url, ticket.key, "d-2").status_code == 202
    assert jira(url, ticket.key, "d-0", category="indeterminate").status_code == 202
    after = r.cycle()
    # The only decision: the link check confirms the re-enabled link is up as planned (no second enable).
    assert [(a.kind, a.rule) for a in after.actions] == [(ActionKind.RECORD, LINK_CHECK)]
    assert after.deliveries == 2
    assert lifecycle(r, component) is Lifecycle.PROBATION
    assert r.store.unprocessed_deliveries() == []


def test_a_resolved_delivery_for_a_ticket_still_open_changes_nothing(loop: tuple[Rig, str, LaggingSearch]) -> None:
    r, url, _ = loop
    component, ticket = disabled_and_ticketed(r)
    response = httpx.post(f"{url}/webhooks/generic", json={"ticket": ticket.key, "status": "resolved"},
                          headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
    assert response.status_code == 202
    report = r.cycle()
    assert report.actions == [] and report.deliveries == 1, "the backend says open: the delivery was wrong"
    assert lifecycle(r, component) is Lifecycle.AWAITING_REPAIR
    (row,) = r.store.tickets()
    assert row.state is TicketState.OPEN and r.store.unprocessed_deliveries() == []


def test_a_delivery_waits_while_the_backend_does_not_answer(loop: tuple[Rig, str, LaggingSearch]) -> None:
    r, url, backend = loop
    component, ticket = disabled_and_ticketed(r)
    backend.seen = r.tickets.list()
    r.tickets.resolve(ticket.key, "replaced the transceiver")
    assert jira(url, ticket.key, "d-1").status_code == 202
    backend.down = True
    report = r.cycle()
    assert report.deliveries == 0 and [f.action for f in report.failed] == ["delivery"]
    assert [d.id for d in r.store.unprocessed_deliveries()] == ["d-1"]
    backend.down = False
    assert [a.kind for a in r.cycle().actions] == [ActionKind.ENABLE]
    assert lifecycle(r, component) is Lifecycle.PROBATION
