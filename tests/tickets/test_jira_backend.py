"""``JiraTicketBackend``: the real ``jira`` library against the fake Jira over loopback, on Data Center (a
personal access token, ``/search`` by ``startAt``) and Cloud (basic auth with an API token, ``/search/jql`` by
``nextPageToken``); then the engine's ``Ticketing`` on top of it, with a real SQLite store."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path

import pytest
from jira_support import PAT, SCOPE, TOKEN, USER, SettableTime, backend_for, fake_jira, requests_to
from ticket_helpers import KEY, OTHER, FakeClock, throwaway_store

from fabric.controller.ticketing import Ticketing
from fabric.remediation.domain import ComponentId
from fabric.simulator.jira import Fault, RunningJira
from fabric.store import Store, TicketState
from tickets.base import (
    BackendUnavailableError,
    OutcomeUnknownError,
    TicketBackend,
    TicketConflictError,
    TicketError,
    TicketNotFoundError,
    TicketStatus,
    dedup_key,
)
from tickets.jira import JiraTicketBackend

CABLE = ComponentId.parse("link:leaf01/33|spine02/5")
PORT = ComponentId.parse("port:leaf01/7")


@pytest.fixture(params=["datacenter", "cloud"])
def jira(request: pytest.FixtureRequest) -> Iterator[RunningJira]:
    with fake_jira(cloud=request.param == "cloud") as running:
        yield running


@pytest.fixture
def backend(jira: RunningJira) -> JiraTicketBackend:
    return backend_for(jira)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with throwaway_store("sqlite", tmp_path, FakeClock()) as opened:
        yield opened


def test_it_is_a_ticket_backend(backend: JiraTicketBackend) -> None:
    assert isinstance(backend, TicketBackend)
    assert backend.name == "jira"


def test_open_creates_an_issue_with_every_label(jira: RunningJira, backend: JiraTicketBackend) -> None:
    ticket = backend.open(KEY, "Flapping link leaf01/33", "3 cycles in 12 h", ["leaf01"])
    assert ticket.key == "OPS-1"
    assert ticket.dedup_key == KEY
    assert ticket.status is TicketStatus.OPEN
    assert ticket.labels == ("fabric-remediation", SCOPE, "leaf01", KEY)
    assert ticket.url == f"{jira.url}/browse/OPS-1"
    assert (ticket.summary, ticket.description, ticket.comments) == ("Flapping link leaf01/33", "3 cycles in 12 h", 0)
    (issue,) = jira.state.issues.values()
    assert (issue.project, issue.issue_type, issue.labels) == ("OPS", "Task", list(ticket.labels))
    assert backend.status("OPS-1") == ticket
    assert backend.find_open(KEY) == ticket


def test_open_adopts_the_open_issue_carrying_the_dedup_key(jira: RunningJira, backend: JiraTicketBackend) -> None:
    first = backend.open(KEY, "Flapping link", "first")
    assert backend.open(KEY, "Other words", "second") == first
    assert backend.open(OTHER, "Port", "x").key != first.key
    assert len(jira.state.issues) == 2


def test_comment_resolve_and_reopen(jira: RunningJira, backend: JiraTicketBackend) -> None:
    ticket = backend.open(KEY, "s", "d")
    backend.comment(ticket.key, "strike 2: flapped again on probation")
    resolved = backend.resolve(ticket.key, "cable replaced")
    assert resolved.status is TicketStatus.RESOLVED
    assert resolved.resolved_at is not None
    assert resolved.comments == 2
    assert backend.find_open(KEY) is None
    assert backend.resolve(ticket.key, "again") == resolved  # no change, no comment
    reopened = backend.reopen(ticket.key, "flapped again during probation")
    assert reopened.status is TicketStatus.OPEN
    assert jira.state.issues[10001].status.name == "Reopened"
    assert reopened.comments == 3
    assert backend.reopen(ticket.key, "still bad").comments == 4  # an open ticket just gets the comment
    assert [c.body for c in jira.state.issues[10001].comments][-1] == "still bad"


def test_a_resolution_that_is_no_repair_is_closed(jira: RunningJira, backend: JiraTicketBackend) -> None:
    ticket = backend.open(KEY, "s", "d")
    jira.state.resolve(ticket.key, "Won't Do")
    assert backend.status(ticket.key).status is TicketStatus.CLOSED
    with pytest.raises(TicketError, match="it is closed"):
        backend.resolve(ticket.key, "x")


def test_reopening_beside_a_newer_open_ticket_is_a_conflict(backend: JiraTicketBackend) -> None:
    first = backend.open(KEY, "s", "d")
    backend.resolve(first.key, "fixed")
    second = backend.open(KEY, "s", "broke again")
    assert second.key != first.key
    with pytest.raises(TicketConflictError, match=second.key):
        backend.reopen(first.key, "would make two open tickets")


def test_list_is_one_paginated_search_of_the_fabric(jira: RunningJira) -> None:
    jira.state.page_size = 2
    backend = backend_for(jira)
    keys = [backend.open(dedup_key("h100-4k", f"port:leaf01/{n}"), f"port {n}", "d").key for n in range(5)]
    backend_for(jira, scope_label="ibfabric-other").open(KEY, "another fabric's", "d")
    backend.resolve(keys[1], "fixed")
    before = requests_to(jira, "GET", "/search")
    assert [t.key for t in backend.list(TicketStatus.OPEN)] == [keys[0], *keys[2:]]
    assert requests_to(jira, "GET", "/search") - before == 2  # 4 open tickets, 2 a page: one query, 2 pages
    assert [t.key for t in backend.list()] == keys
    assert [t.key for t in backend.list(TicketStatus.RESOLVED)] == [keys[1]]


def test_unknown_keys(backend: JiraTicketBackend) -> None:
    with pytest.raises(TicketNotFoundError):
        backend.status("OPS-999")
    with pytest.raises(TicketNotFoundError):
        backend.comment("OPS-999", "x")
    with pytest.raises(TicketNotFoundError):
        backend.reopen("OPS-999", "x")


def test_a_transition_the_workflow_lacks_is_named(jira: RunningJira) -> None:
    """(A missing ``reopen_transition`` opens a linked ticket instead: ``test_jira_reopen``.)"""
    backend = backend_for(jira, resolve_transition="Close Issue")
    ticket = backend.open(KEY, "s", "d")
    with pytest.raises(TicketError, match=r"no transition 'Close Issue'.*'Done'.*resolve_transition"):
        backend.resolve(ticket.key, "fixed")


@pytest.mark.parametrize(("status", "retry_after"), [(503, None), (429, 1)])
def test_a_refused_create_raises_unavailable_and_is_not_sent_twice(
        jira: RunningJira, backend: JiraTicketBackend, status: int, retry_after: int | None) -> None:
    """The library would re-POST after a 429 (its retries are off): one POST, no issue, the error at once."""
    jira.state.inject(Fault(status=status, retry_after=retry_after, method="POST", path="/issue"))
    with pytest.raises(BackendUnavailableError, match=f"HTTP {status}") as raised:
        backend.open(KEY, "s", "d")
    assert not isinstance(raised.value, OutcomeUnknownError), "Jira said it did nothing: no wait for the search"
    assert raised.value.retry_after == retry_after
    assert requests_to(jira, "POST", "/issue") == 1
    assert jira.state.issues == {}
    assert backend.open(KEY, "s", "d").key == "OPS-1"
    assert len(jira.state.issues) == 1


def test_a_created_issue_that_cannot_be_read_back_still_gives_its_key(jira: RunningJira,
                                                                    backend: JiraTicketBackend) -> None:
    """The create succeeded: losing its key now would leave the next attempt to a search that may lag."""
    jira.state.inject(Fault(status=503, method="GET", path="/issue/"))
    ticket = backend.open(KEY, "s", "d", ["leaf01"])
    assert (ticket.key, ticket.status, ticket.dedup_key) == ("OPS-1", TicketStatus.OPEN, KEY)
    assert ticket.labels == backend.status("OPS-1").labels


def test_errors_never_show_the_credentials(jira: RunningJira, backend: JiraTicketBackend) -> None:
    jira.state.inject(Fault(status=503, count=2))
    basic = base64.b64encode(f"{USER}:{TOKEN}".encode()).decode()
    for call in (lambda: backend.open(KEY, "s", "d"), lambda: backend.status("OPS-1")):
        with pytest.raises(BackendUnavailableError) as raised:
            call()
        assert not {TOKEN, PAT, basic} & set(str(raised.value).split()), str(raised.value)
        assert TOKEN not in str(raised.value) and PAT not in str(raised.value) and basic not in str(raised.value)


def test_bad_credentials_are_no_outage(jira: RunningJira) -> None:
    backend = JiraTicketBackend(backend_for(jira).settings, "wrong-token")
    with pytest.raises(TicketError, match="refused the credentials") as raised:
        backend.find_open(KEY)
    assert not isinstance(raised.value, BackendUnavailableError)


def test_an_unreachable_jira_is_unavailable(jira: RunningJira) -> None:
    settings = backend_for(jira).settings
    import dataclasses

    backend = JiraTicketBackend(dataclasses.replace(settings, url="http://127.0.0.1:9"), PAT)
    with pytest.raises(BackendUnavailableError, match="unreachable"):
        backend.find_open(KEY)


# -- the engine's Ticketing over Jira -------------------------------------------------------------------------


def test_a_create_whose_answer_is_lost_is_adopted_not_duplicated(jira: RunningJira, store: Store) -> None:
    """Jira creates the issue but the answer never comes (the client times out, as a crash between create and
    record would leave it): the store's claim stays ``creating``, and the next attempt adopts the issue."""
    ticketing = Ticketing(store, backend_for(jira, timeout=0.5), "h100-4k")
    jira.state.inject(Fault(delay=2.0, method="POST", path="/issue"))
    with pytest.raises(OutcomeUnknownError, match="unreachable"):  # the outbox waits for the search to settle
        ticketing.ensure_open(CABLE, "Flapping link", "details")
    assert len(jira.state.issues) == 1
    (row,) = store.tickets(dedup_key=ticketing.key(CABLE))
    assert row.state is TicketState.CREATING
    ticket = ticketing.ensure_open(CABLE, "Flapping link", "details")
    assert ticket.key == "OPS-1"
    assert len(jira.state.issues) == 1
    (row,) = store.tickets(dedup_key=ticketing.key(CABLE))
    assert (row.state, row.external_key) == (TicketState.OPEN, "OPS-1")


def test_a_recurrence_comments_on_the_open_ticket(jira: RunningJira, store: Store) -> None:
    ticketing = Ticketing(store, backend_for(jira), "h100-4k")
    ticket = ticketing.ensure_open(CABLE, "Flapping link", "details")
    ticketing.comment(CABLE, "flapped again: 4 cycles in 10 min")
    assert ticketing.ensure_open(CABLE, "Flapping link", "details").key == ticket.key
    assert [c.body for c in jira.state.issues[10001].comments] == ["flapped again: 4 cycles in 10 min"]
    assert len(jira.state.issues) == 1


def test_the_poll_finds_resolutions_in_one_search_and_reopen_follows(jira: RunningJira, store: Store) -> None:
    ticketing = Ticketing(store, backend_for(jira), "h100-4k")
    cable = ticketing.ensure_open(CABLE, "Flapping link", "details")
    port = ticketing.ensure_open(PORT, "Port errors", "details")
    jira.state.resolve(cable.key)
    before = {path: requests_to(jira, "GET", path) for path in ("/search", f"/issue/{cable.key}", f"/issue/{port.key}")}
    assert ticketing.poll() == 1
    # One search, and a read of only the ticket missing from it, to confirm it.
    assert {path: requests_to(jira, "GET", path) - n for path, n in before.items()} == \
        {"/search": 1, f"/issue/{cable.key}": 1, f"/issue/{port.key}": 0}
    assert store.active_ticket(ticketing.key(CABLE)) is None
    assert store.active_ticket(ticketing.key(PORT)) is not None
    reopened = ticketing.reopen(CABLE, "failed again on probation", "Flapping link")
    assert reopened.key == cable.key and reopened.status is TicketStatus.OPEN
    assert len(jira.state.issues) == 2
    assert store.active_ticket(ticketing.key(CABLE)) is not None


def test_a_ticket_closed_without_a_repair_is_recorded_closed(jira: RunningJira, store: Store) -> None:
    ticketing = Ticketing(store, backend_for(jira), "h100-4k")
    ticket = ticketing.ensure_open(CABLE, "Flapping link", "details")
    jira.state.resolve(ticket.key, "Won't Do")
    assert ticketing.poll() == 1
    (row,) = store.tickets(dedup_key=ticketing.key(CABLE))
    assert row.state is TicketState.CLOSED


@pytest.mark.parametrize("cloud", [True, False])
def test_a_lagging_search_causes_no_duplicate_and_no_false_resolution(store: Store, cloud: bool) -> None:
    """Cloud's search misses a new issue for a while: the store's row (not the search) says the ticket exists,
    and the poll confirms a ticket missing from the search by reading it."""
    clock = SettableTime()
    with fake_jira(cloud=cloud, search_lag=30.0, clock=clock) as jira:
        ticketing = Ticketing(store, backend_for(jira), "h100-4k")
        ticket = ticketing.ensure_open(CABLE, "Flapping link", "details")
        assert ticketing.backend.list(TicketStatus.OPEN) == []  # the search does not show it yet
        assert ticketing.ensure_open(CABLE, "Flapping link", "again").key == ticket.key
        assert ticketing.poll() == 0
        assert store.active_ticket(ticketing.key(CABLE)) is not None
        clock.now += 31
        assert [t.key for t in ticketing.backend.list(TicketStatus.OPEN)] == [ticket.key]
        assert len(jira.state.issues) == 1


def test_jira_down_leaves_the_claim_and_creates_once_when_back(jira: RunningJira, store: Store) -> None:
    ticketing = Ticketing(store, backend_for(jira), "h100-4k")
    jira.state.inject(Fault(status=503, count=3))
    for _ in range(3):
        with pytest.raises(BackendUnavailableError):
            ticketing.ensure_open(CABLE, "Flapping link", "details")
    assert jira.state.issues == {}
    assert ticketing.ensure_open(CABLE, "Flapping link", "details").key == "OPS-1"
    assert ticketing.ensure_open(CABLE, "Flapping link", "details").key == "OPS-1"
    assert len(jira.state.issues) == 1


def test_a_resolution_without_a_done_status_is_resolved(jira: RunningJira, backend: JiraTicketBackend) -> None:
    """Some workflows set a resolution and stay in a status outside the done category: still resolved."""
    ticket = backend.open(KEY, "s", "d")
    jira.state.issues[10001].resolution = "Fixed"
    assert jira.state.issues[10001].category == "new"
    assert backend.status(ticket.key).status is TicketStatus.RESOLVED
    assert backend.find_open(KEY) is None


def test_the_configuration_builds_the_jira_backend(jira: RunningJira, store: Store,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from fabric import wiring
    from fabric.config import load_config

    assert wiring.ticket_backend(store, config=load_config()).name == "local"
    cloud = jira.state.cloud
    for name, value in {"FABRIC_FABRIC__NAME": "H100 4k", "FABRIC_TICKETS__BACKEND": "jira",
                        "FABRIC_TICKETS__JIRA__URL": jira.url, "FABRIC_TICKETS__JIRA__PROJECT": "OPS",
                        "FABRIC_TICKETS__JIRA__AUTH": "cloud" if cloud else "datacenter",
                        "FABRIC_JIRA_TOKEN": TOKEN if cloud else PAT, "FABRIC_TICKETS__JIRA__TIMEOUT": "3s"}.items():
        monkeypatch.setenv(name, value)
    if cloud:
        monkeypatch.setenv("FABRIC_TICKETS__JIRA__USER", USER)
    backend = wiring.ticket_backend(store, config=load_config())
    assert isinstance(backend, JiraTicketBackend)
    assert (backend.settings.scope_label, backend.settings.timeout) == ("ibfabric-h100-4k", 3.0)
    assert backend.open(KEY, "s", "d").labels == ("fabric-remediation", "ibfabric-h100-4k", KEY)
