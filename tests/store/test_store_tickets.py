"""The tickets table: claims (including racing ones), transitions, history."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import sqlalchemy as sa
from store_helpers import Db, FakeClock

from fabric.remediation.domain import ComponentId, ComponentKind
from fabric.store import InvalidTransitionError, Store, TicketRecord, TicketState, Transaction

LINK = ComponentId(ComponentKind.LINK, "leaf01/33|spine02/5")
KEY = "ibdedup-00112233aabbccdd"


def test_claim_creates_once(store: Store, clock: FakeClock) -> None:
    row, created = store.claim_ticket(KEY, backend="jira", summary="Flapping link", component=LINK)
    assert created
    assert row.state is TicketState.CREATING
    assert row.external_key is None
    assert (row.dedup_key, row.backend, row.component, row.summary) == (KEY, "jira", LINK, "Flapping link")
    assert row.created_at == clock.now
    again, created_again = store.claim_ticket(KEY, backend="jira", summary="other words")
    assert not created_again
    assert again == row
    assert store.active_ticket(KEY) == row
    assert store.get_ticket(row.id) == row


def test_claim_validates_the_key(store: Store) -> None:
    with pytest.raises(ValueError, match="dedup key"):
        store.claim_ticket("has space", backend="jira", summary="x")
    with pytest.raises(ValueError, match="dedup key"):
        store.claim_ticket("", backend="jira", summary="x")


def test_lifecycle_of_a_ticket(store: Store, clock: FakeClock) -> None:
    row, _ = store.claim_ticket(KEY, backend="jira", summary="x", component=LINK)
    opened = store.ticket_opened(row.id, "OPS-17")
    assert (opened.state, opened.external_key) == (TicketState.OPEN, "OPS-17")
    assert store.ticket_opened(row.id, "OPS-17") == opened  # repeated: no-op
    with pytest.raises(InvalidTransitionError, match="already open as OPS-17"):
        store.ticket_opened(row.id, "OPS-99")
    assert store.ticket_by_external_key("jira", "OPS-17") == opened
    assert store.ticket_by_external_key("local", "OPS-17") is None

    when = clock.advance(hours=5)
    resolved = store.ticket_resolved(row.id)
    assert resolved.state is TicketState.RESOLVED
    assert resolved.resolved_at == when
    assert store.ticket_resolved(row.id) == resolved  # a webhook delivered twice
    assert store.active_ticket(KEY) is None

    reopened = store.ticket_reopened(row.id)
    assert reopened.state is TicketState.OPEN
    assert reopened.resolved_at is None
    assert reopened.external_key == "OPS-17"
    closed = store.ticket_closed(row.id)
    assert closed.state is TicketState.CLOSED


def test_refused_transitions(store: Store) -> None:
    row, _ = store.claim_ticket(KEY, backend="jira", summary="x")
    with pytest.raises(InvalidTransitionError, match="creating, cannot make it resolved"):
        store.ticket_resolved(row.id)
    with pytest.raises(InvalidTransitionError, match="creating, cannot make it open"):
        store.ticket_reopened(row.id)
    with pytest.raises(ValueError, match="backend's key"):
        store.ticket_opened(row.id, "")
    store.ticket_opened(row.id, "OPS-1")
    store.ticket_resolved(row.id)
    with pytest.raises(InvalidTransitionError, match="resolved, cannot make it open"):
        store.ticket_opened(row.id, "OPS-2")  # a resolved ticket is reopened, not opened
    with pytest.raises(InvalidTransitionError, match="no ticket"):
        store.ticket_resolved(999_999)


def test_abandoned_claim_is_closed(store: Store) -> None:
    row, _ = store.claim_ticket(KEY, backend="jira", summary="x")
    closed = store.ticket_closed(row.id)
    assert closed.state is TicketState.CLOSED
    assert closed.external_key is None
    assert store.active_ticket(KEY) is None


def test_a_new_claim_after_resolution_keeps_history(store: Store) -> None:
    first, _ = store.claim_ticket(KEY, backend="jira", summary="first", component=LINK)
    store.ticket_opened(first.id, "OPS-1")
    store.ticket_resolved(first.id)
    second, created = store.claim_ticket(KEY, backend="jira", summary="second", component=LINK)
    assert created
    assert second.id != first.id
    history = store.tickets(dedup_key=KEY)
    assert [t.state for t in history] == [TicketState.RESOLVED, TicketState.CREATING]
    assert [t.id for t in store.tickets(component=LINK)] == [first.id, second.id]
    assert [t.id for t in store.tickets(state=TicketState.CREATING)] == [second.id]
    assert len(store.tickets(state=[TicketState.RESOLVED, TicketState.CREATING])) == 2
    # The old ticket cannot be reopened while the new one is active.
    with pytest.raises(InvalidTransitionError, match="same dedup key"):
        store.ticket_reopened(first.id)


def test_the_database_itself_refuses_two_active_rows(store: Store) -> None:
    store.claim_ticket(KEY, backend="jira", summary="x")
    with pytest.raises(sa.exc.IntegrityError), store.engine.begin() as conn:
        conn.execute(
            sa.text(
                "INSERT INTO tickets (dedup_key, backend, state, summary, created_at, updated_at) "
                "VALUES (:k, 'jira', 'open', 'sneaky', :t, :t)"
            ),
            {"k": KEY, "t": "2025-01-01 00:00:00+00:00"},
        )


def test_claims_inside_a_transaction_are_atomic_with_other_writes(store: Store) -> None:
    with store.transaction() as tx:
        row, created = tx.claim_ticket(KEY, backend="local", summary="x")
        again, created_again = tx.claim_ticket(KEY, backend="local", summary="x")
        assert created and not created_again and again.id == row.id
        tx.ticket_opened(row.id, "LOCAL-1")
    active = store.active_ticket(KEY)
    assert active is not None
    assert active.state is TicketState.OPEN


def _claim_in_thread(store: Store, key: str) -> tuple[threading.Thread, list[tuple[TicketRecord, bool]]]:
    out: list[tuple[TicketRecord, bool]] = []
    thread = threading.Thread(target=lambda: out.append(store.claim_ticket(key, backend="jira", summary="B")))
    thread.start()
    return thread, out


@pytest.mark.parametrize("winner_commits", [True, False])
def test_a_claim_waits_for_a_racing_uncommitted_claim(db: Db, winner_commits: bool) -> None:
    """Two daemons: A has claimed but not committed; B's claim must wait and then see A's outcome."""
    daemon_a, daemon_b = db.open(), db.open()
    with daemon_a.engine.connect() as conn:
        transaction = conn.begin()
        tx = Transaction(conn, fabric=daemon_a.fabric, clock=daemon_a.now)
        row_a, created_a = tx.claim_ticket(KEY, backend="jira", summary="A")
        assert created_a
        thread, out = _claim_in_thread(daemon_b, KEY)
        time.sleep(0.3)
        assert thread.is_alive(), "B returned while A's claim was uncommitted"
        if winner_commits:
            transaction.commit()
        else:
            transaction.rollback()
    thread.join(30)
    [(row_b, created_b)] = out
    if winner_commits:
        assert (row_b.id, created_b, row_b.summary) == (row_a.id, False, "A")
    else:
        assert created_b
        assert row_b.summary == "B"
    assert len(daemon_a.tickets(dedup_key=KEY)) == 1


def test_many_racing_claims_create_exactly_one_row_per_key(db: Db) -> None:
    daemons = [db.open(), db.open()]
    keys = [f"ibdedup-race{n:02d}" for n in range(12)]
    workers = 6
    results: dict[str, list[tuple[int, bool]]] = {key: [] for key in keys}
    lock = threading.Lock()
    barrier = threading.Barrier(workers)

    def work(worker: int) -> None:
        store = daemons[worker % 2]
        for key in keys:
            barrier.wait(30)
            row, created = store.claim_ticket(key, backend="jira", summary=f"w{worker}")
            with lock:
                results[key].append((row.id, created))

    with ThreadPoolExecutor(workers) as pool:
        for future in [pool.submit(work, n) for n in range(workers)]:
            future.result()

    for key, claims in results.items():
        assert len(claims) == workers
        assert sum(created for _, created in claims) == 1, key
        assert len({row_id for row_id, _ in claims}) == 1, key
        assert len(daemons[0].tickets(dedup_key=key)) == 1


def test_claiming_again_returns_the_same_row(store: Store) -> None:
    """A second claim of each key, one short transaction each, finds the first one's row (how fast is a matter
    for benchmarks, not for a unit test on a shared machine)."""
    first = [store.claim_ticket(f"ibdedup-again{n}", backend="jira", summary="x") for n in range(40)]
    again = [store.claim_ticket(f"ibdedup-again{n}", backend="jira", summary="x") for n in range(40)]
    assert all(created for _, created in first) and not any(created for _, created in again)
    assert [row.id for row, _ in again] == [row.id for row, _ in first]
