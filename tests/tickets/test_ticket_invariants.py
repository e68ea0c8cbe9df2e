"""Property: whatever happens (claims, opens, crashes between steps, resolutions seen or missed, reopenings,
racing daemons), one dedup key never has two open tickets: neither in the store nor in the backend.

Run on the local backend and on the Jira backend (the real ``jira`` library against the fake Jira, Data Center and
Cloud).  Jira has no unique index to make two racing creates one: two daemons acting at once are kept apart by
leadership, not by the backend, so ``race_open`` runs on the local backend only."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jira_support import backend_for, fake_jira
from support import run_together

from fabric.store import Store, TicketState
from tickets.base import TicketBackend, TicketConflictError, TicketStatus
from tickets.local import LocalTicketBackend

OPERATIONS = (
    "claim",  # claim only: the daemon crashed right after claiming
    "open",  # the whole flow: claim, open (or adopt) in the backend, record the key
    "crash_open",  # claim and open in the backend, crash before recording the key
    "race_open",  # two daemons run the whole flow at the same time
    "resolve",  # the ticket is resolved and the store hears of it
    "resolve_unseen",  # resolved in the backend, the webhook is lost
    "reconcile",  # the poll notices resolutions the store missed
    "reopen",  # the component broke again: reopen its last ticket
    "abandon",  # a claim that never got a ticket is closed
)


def ensure_ticket(store: Store, backend: TicketBackend, key: str) -> None:
    """What the engine does to make sure ``key`` has a ticket (claim, create or adopt, record)."""
    row, _ = store.claim_ticket(key, backend=backend.name, summary=f"fault {key}")
    if row.state is TicketState.CREATING:
        ticket = backend.open(key, f"fault {key}", "details")
        store.ticket_opened(row.id, ticket.key)


def apply(store: Store, backend: TicketBackend, operation: str, key: str) -> None:
    active = store.active_ticket(key)
    if operation == "claim":
        store.claim_ticket(key, backend=backend.name, summary=f"fault {key}")
    elif operation == "open":
        ensure_ticket(store, backend, key)
    elif operation == "crash_open":
        row, _ = store.claim_ticket(key, backend=backend.name, summary=f"fault {key}")
        if row.state is TicketState.CREATING:
            backend.open(key, f"fault {key}", "details")
    elif operation == "race_open":
        run_together(2, lambda _: ensure_ticket(store, backend, key))  # raises what either daemon raised
    elif operation == "resolve":
        if active is not None and active.state is TicketState.OPEN and active.external_key is not None:
            backend.resolve(active.external_key, "repaired")
            store.ticket_resolved(active.id)
    elif operation == "resolve_unseen":
        ticket = backend.find_open(key)
        if ticket is not None:
            backend.resolve(ticket.key, "repaired, webhook lost")
    elif operation == "reconcile":
        external = active.external_key if active is not None and active.state is TicketState.OPEN else None
        if active is not None and external is not None and backend.status(external).status is not TicketStatus.OPEN:
            store.ticket_resolved(active.id)
    elif operation == "reopen":
        finished = [t for t in store.tickets(dedup_key=key) if t.state is TicketState.RESOLVED]
        last = finished[-1] if finished and active is None else None
        if last is not None and last.external_key is not None:
            try:
                backend.reopen(last.external_key, "broke again on probation")
            except TicketConflictError:
                return  # the backend already has an open ticket for this key; the next "open" adopts it
            store.ticket_reopened(last.id)
    elif operation == "abandon":
        if active is not None and active.state is TicketState.CREATING:
            store.ticket_closed(active.id)
    else:  # pragma: no cover
        raise AssertionError(operation)


def check_invariants(store: Store, backend: TicketBackend, keys: list[str]) -> None:
    for key in keys:
        rows = store.tickets(dedup_key=key)
        active = [row for row in rows if row.state in (TicketState.CREATING, TicketState.OPEN)]
        assert len(active) <= 1, f"store has {len(active)} active tickets for {key}: {active}"
    open_tickets = [t for t in backend.list(TicketStatus.OPEN) if t.dedup_key in keys]
    per_key = Counter(t.dedup_key for t in open_tickets)
    assert all(n == 1 for n in per_key.values()), f"backend has two open tickets for one key: {per_key}"
    if isinstance(backend, LocalTicketBackend):  # the same, asked of the database directly
        with store.engine.connect() as conn:
            doubled = conn.execute(sa.text(
                "SELECT dedup_key FROM local_tickets WHERE status = 'open' GROUP BY dedup_key HAVING count(*) > 1"
            )).all()
        assert doubled == []
    # Every open row of the store names a backend ticket for its own key.
    for row in store.tickets(state=TicketState.OPEN):
        if row.dedup_key in keys and row.external_key is not None:
            assert backend.status(row.external_key).dedup_key == row.dedup_key


@pytest.fixture(params=["local", "jira-datacenter", "jira-cloud"])
def any_backend(request: pytest.FixtureRequest, backend: LocalTicketBackend) -> Iterator[TicketBackend]:
    if request.param == "local":
        yield backend
        return
    with fake_jira(cloud=request.param == "jira-cloud") as jira:
        yield backend_for(jira)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=st.lists(st.tuples(st.sampled_from(OPERATIONS), st.integers(min_value=0, max_value=2)), max_size=20))
def test_never_two_open_tickets_for_one_key(
    store: Store, any_backend: TicketBackend, steps: list[tuple[str, int]]
) -> None:
    backend = any_backend
    # Hypothesis reuses the fixtures across examples: each example gets dedup keys of its own.
    prefix = uuid.uuid4().hex[:8]
    keys = [f"ibdedup-{prefix}{n}" for n in range(3)]
    racing = isinstance(backend, LocalTicketBackend)
    for operation, index in steps:
        apply(store, backend, operation if racing or operation != "race_open" else "open", keys[index])
        check_invariants(store, backend, keys)
    # And whatever happened, the engine's flow can always (re)establish exactly one open ticket per key.
    for key in keys:
        ensure_ticket(store, backend, key)
        active = store.active_ticket(key)
        assert active is not None
        assert active.state is TicketState.OPEN
    check_invariants(store, backend, keys)
