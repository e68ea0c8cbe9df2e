"""A read of the store goes on while another transaction holds the write lock (the API during a cycle's writes).

Every writing transaction on SQLite begins ``IMMEDIATE`` (the write lock up front); one that only reads must not, or
``/api/v1/status`` waits behind a storm's cycle for as long as it records its findings and decisions."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import pytest
from store_helpers import Db

from fabric.remediation.domain import ComponentId, ComponentKind, ComponentRecord, Lifecycle
from fabric.store import Store

NOW = datetime(2026, 5, 1, tzinfo=UTC)
READ_BOUND_S = 2.0
"""Far above a read's time and far below the busy timeout (30 s) a blocked read would wait out."""


def _reads(store: Store) -> list[object]:
    """What ``GET /api/v1/status`` reads, and the other reads the API serves."""
    held = store.state_scope()
    return [held.breaker_state(), held.lifecycle_counts(), store.pending_requests(), store.silences(),
            held.components(), store.tickets(), store.load_cursor()]


def _snapshot_reads(store: Store) -> list[object]:
    """The same, and a component's history, in one snapshot (``GET /api/v1/status``, ``/components/{id}``)."""
    with store.snapshot() as snapshot:
        held = snapshot.state_scope()
        return [held.breaker_state(), held.lifecycle_counts(), snapshot.pending_requests(), snapshot.silences(),
                held.components(), snapshot.tickets(), snapshot.load_cursor(), snapshot.findings(limit=10),
                snapshot.decisions(limit=10), snapshot.intents(limit=10)]


@pytest.mark.parametrize("reads", [_reads, _snapshot_reads], ids=["one-by-one", "snapshot"])
def test_the_reads_the_api_serves_go_on_while_a_write_transaction_is_open(
        db: Db, reads: Callable[[Store], list[object]]) -> None:
    writer, reader = db.open(), db.open()
    component = ComponentId(ComponentKind.PORT, "leaf01/1")
    with ThreadPoolExecutor(1) as pool, writer.transaction() as open_write:
        open_write.put_component(component, ComponentRecord(Lifecycle.DISABLED, NOW, "ber_critical", "a test"))
        answered = pool.submit(reads, reader)
        results = answered.result(timeout=READ_BOUND_S)  # raises TimeoutError if the read waits for the lock
    assert component not in results[4]  # it saw the last committed state
    assert writer.get_component(component) is not None


def test_a_snapshot_refuses_to_write(store: Store) -> None:
    component = ComponentId(ComponentKind.PORT, "leaf01/1")
    with store.snapshot() as snapshot, pytest.raises(TypeError, match="only reads"):
        snapshot.dry_run_scope().put_component(component, ComponentRecord(Lifecycle.DISABLED, NOW, "r", "a test"))
    assert store.components() == {}


def test_a_write_still_waits_for_the_lock_rather_than_failing_halfway(db: Db) -> None:
    """What the write lock up front is for: two writers queue; neither fails with "database is locked"."""
    if db.backend != "sqlite":
        pytest.skip("the write lock up front is SQLite's")
    first, second = db.open(), db.open()
    released = threading.Event()
    with ThreadPoolExecutor(1) as pool:
        with first.transaction():
            waiting = pool.submit(lambda: (second.halt("storm"), released.is_set()))
            with pytest.raises(TimeoutError):
                waiting.result(timeout=0.5)
            released.set()
        assert waiting.result(timeout=READ_BOUND_S)[1]


def test_a_snapshot_sees_the_store_as_of_its_first_read(db: Db) -> None:
    """Its answers agree with one another: a commit between two of its reads shows in neither."""
    reader, writer = db.open(), db.open()
    component = ComponentId(ComponentKind.PORT, "leaf01/1")
    with reader.snapshot() as snapshot:
        assert snapshot.components() == {}
        writer.put_component(component, ComponentRecord(Lifecycle.DISABLED, NOW, "ber_critical", "a test"))
        assert snapshot.components() == {} and snapshot.lifecycle_counts()[Lifecycle.DISABLED] == 0
    assert component in reader.components()
