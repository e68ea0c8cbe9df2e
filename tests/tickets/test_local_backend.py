"""``LocalTicketBackend`` on SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlalchemy as sa
from support import run_together
from ticket_helpers import KEY, OTHER, T0, FakeClock

from fabric.store import Store
from tickets.base import (
    BackendUnavailableError,
    TicketConflictError,
    TicketError,
    TicketNotFoundError,
    TicketStatus,
)
from tickets.local import LocalTicketBackend


def test_open_creates_a_ticket(backend: LocalTicketBackend) -> None:
    ticket = backend.open(KEY, "Flapping link leaf01/33", "3 cycles in 12 h", ["fabric", "leaf01"])
    assert ticket.key.startswith("LOCAL-")
    assert ticket.dedup_key == KEY
    assert ticket.status is TicketStatus.OPEN
    assert ticket.labels == ("fabric", "leaf01", KEY)
    assert ticket.url == f"https://fabric.example/tickets/{ticket.key}"
    assert ticket.created_at == T0
    assert ticket.resolved_at is None
    assert ticket.comments == 0
    assert backend.status(ticket.key) == ticket
    assert backend.find_open(KEY) == ticket


def test_open_is_idempotent(backend: LocalTicketBackend) -> None:
    first = backend.open(KEY, "Flapping link", "first", ["a"])
    second = backend.open(KEY, "Other words", "second", ["b"])
    assert second == first  # adopted, unchanged
    assert len(backend.list()) == 1
    assert backend.open(OTHER, "Port", "x").key != first.key


def test_repeated_opens_keep_adopting(backend: LocalTicketBackend) -> None:
    """Regression: psycopg prepares a statement after 5 runs, and PostgreSQL then plans it generically; an ON CONFLICT
    predicate with a bound parameter stops matching the partial index (fails on the 11th run)."""
    first = backend.open(KEY, "s", "d")
    for _ in range(15):
        assert backend.open(KEY, "s", "d") == first


def test_racing_opens_create_one_ticket(store: Store, clock: FakeClock) -> None:
    backends = [LocalTicketBackend(store.engine, clock=clock) for _ in range(2)]
    keys = run_together(6, lambda n: backends[n % 2].open(KEY, f"caller {n}", "x").key)
    assert len(keys) == 6
    assert len(set(keys)) == 1
    assert len(backends[0].list(TicketStatus.OPEN)) == 1


def test_comment_and_comment_count(backend: LocalTicketBackend, clock: FakeClock) -> None:
    ticket = backend.open(KEY, "s", "d")
    backend.comment(ticket.key, "strike 2: flapped again on probation")
    clock.advance(minutes=1)
    backend.comment(ticket.key, "technician on site")
    assert backend.status(ticket.key).comments == 2
    assert backend.comments(ticket.key) == [
        (T0, "strike 2: flapped again on probation"),
        (clock.now, "technician on site"),
    ]


def test_resolve_and_reopen(backend: LocalTicketBackend, clock: FakeClock) -> None:
    ticket = backend.open(KEY, "s", "d")
    when = clock.advance(hours=4)
    resolved = backend.resolve(ticket.key, "cable replaced")
    assert resolved.status is TicketStatus.RESOLVED
    assert resolved.resolved_at == when
    assert resolved.comments == 1
    assert backend.find_open(KEY) is None
    assert backend.resolve(ticket.key, "again") == resolved  # no change, no comment

    reopened = backend.reopen(ticket.key, "flapped again during probation")
    assert reopened.status is TicketStatus.OPEN
    assert reopened.resolved_at is None
    assert reopened.comments == 2
    assert backend.find_open(KEY) == reopened
    # Reopening an open ticket just adds the comment.
    assert backend.reopen(ticket.key, "still bad").comments == 3


def test_after_resolution_a_new_open_creates_a_new_ticket(backend: LocalTicketBackend) -> None:
    first = backend.open(KEY, "s", "d")
    backend.resolve(first.key, "fixed")
    second = backend.open(KEY, "s", "broke again")
    assert second.key != first.key
    with pytest.raises(TicketConflictError, match=second.key):
        backend.reopen(first.key, "would make two open tickets")
    assert [t.key for t in backend.list(TicketStatus.OPEN)] == [second.key]
    assert [t.key for t in backend.list(TicketStatus.RESOLVED)] == [first.key]
    assert [t.key for t in backend.list()] == [first.key, second.key]


def test_close(backend: LocalTicketBackend) -> None:
    ticket = backend.open(KEY, "s", "d")
    closed = backend.close(ticket.key, "duplicate of OPS-4")
    assert closed.status is TicketStatus.CLOSED
    assert backend.close(ticket.key, "again") == closed
    with pytest.raises(TicketError, match="it is closed"):
        backend.resolve(ticket.key, "x")
    assert backend.reopen(ticket.key, "not a duplicate after all").status is TicketStatus.OPEN


def test_unknown_keys(backend: LocalTicketBackend) -> None:
    for key in ("LOCAL-999", "OPS-1", "local-", "garbage"):
        with pytest.raises(TicketNotFoundError):
            backend.status(key)
    with pytest.raises(TicketNotFoundError):
        backend.comment("LOCAL-999", "x")
    with pytest.raises(TicketNotFoundError):
        backend.resolve("LOCAL-999", "x")
    with pytest.raises(TicketNotFoundError):
        backend.reopen("LOCAL-999", "x")
    with pytest.raises(TicketNotFoundError):
        backend.comments("LOCAL-999")


def test_keys_are_case_insensitive(backend: LocalTicketBackend) -> None:
    ticket = backend.open(KEY, "s", "d")
    assert backend.status(ticket.key.lower()) == ticket


def test_labels_are_validated(backend: LocalTicketBackend) -> None:
    with pytest.raises(ValueError, match="no whitespace"):
        backend.open(KEY, "s", "d", ["two words"])
    with pytest.raises(ValueError, match="no whitespace"):
        backend.open("bad key", "s", "d")


def test_no_url_without_a_base(store: Store) -> None:
    plain = LocalTicketBackend(store.engine)
    assert plain.open(KEY, "s", "d").url is None


def test_keys_are_never_reused(store: Store, clock: FakeClock) -> None:
    backend = LocalTicketBackend(store.engine, clock=clock)
    first = backend.open(KEY, "s", "d")
    with store.engine.begin() as conn:
        conn.exec_driver_sql("DELETE FROM local_tickets")
    second = backend.open(KEY, "s", "d")
    assert int(second.key.split("-")[1]) > int(first.key.split("-")[1])


def test_create_tables_on_a_bare_engine(tmp_path: Path) -> None:
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'bare.db'}")
    try:
        LocalTicketBackend.create_tables(engine)
        backend = LocalTicketBackend(engine)
        ticket = backend.open(KEY, "s", "d")
        assert backend.open(KEY, "s", "d") == ticket
        assert ticket.created_at.tzinfo is not None
    finally:
        engine.dispose()


def test_unreachable_database_is_backend_unavailable(tmp_path: Path) -> None:
    missing_dir = tmp_path / "does-not-exist" / "x.db"
    engine = sa.create_engine(f"sqlite:///{missing_dir}")
    try:
        with pytest.raises(BackendUnavailableError, match="unavailable"):
            LocalTicketBackend(engine).find_open(KEY)
    finally:
        engine.dispose()


def test_naive_clock_is_refused(store: Store) -> None:
    backend = LocalTicketBackend(store.engine, clock=lambda: T0.replace(tzinfo=None))
    with pytest.raises(ValueError, match="aware"):
        backend.open(KEY, "s", "d")
