"""Every table is scoped by fabric: two fabrics writing to one database (SQLite and PostgreSQL) never see or touch
each other's rows. Property: whatever the two do, interleaved, each one's view of the store is exactly what it
would be had it been alone in a database of its own."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_helpers import T0, Db, pg_schema

from fabric.remediation.domain import (
    Action,
    ActionKind,
    ComponentId,
    ComponentKind,
    ComponentRecord,
    Finding,
    Lifecycle,
)
from fabric.store import IntentState, RequestKind, Store

COMPONENTS = [ComponentId(ComponentKind.LINK, f"leaf0{n}/1|spine01/{n}") for n in range(1, 4)]
Op = tuple[str, int]
"""(operation, argument): what one fabric's daemon or operator does."""

OPS = st.tuples(st.sampled_from(["component", "finding", "decision", "intent", "ticket", "resolve", "silence",
                                 "delivery", "request", "halt", "resume", "cursor", "forget"]),
                st.integers(0, 2))


def apply(store: Store, op: Op, step: int) -> None:
    """One write; ``step`` makes values differ between steps (and is the same in the solo replay)."""
    name, n = op
    component = COMPONENTS[n]
    at = T0 + timedelta(minutes=step)
    if name == "component":
        store.put_component(component, ComponentRecord(list(Lifecycle)[step % len(Lifecycle)], at, "flap", f"s{step}"))
    elif name == "forget":
        store.forget_component(component)
    elif name == "finding":
        store.add_finding(Finding(component, "flap", at, f"s{step}", (step,)))
    elif name == "decision":
        store.record_decision(Action(ActionKind.DISABLE, at, "flap", f"s{step}", component, dry_run=False))
    elif name == "intent":
        intent = store.begin_intent(1, ActionKind.DISABLE, component, {"port": f"p{n}"})
        if step % 2:
            store.finish_intent(intent, IntentState.DONE, "done")
    elif name == "ticket":
        row, _ = store.claim_ticket(f"ibdedup-{n:016x}", backend="local", summary=f"s{step}", component=component)
        if row.external_key is None:
            store.ticket_opened(row.id, f"LOCAL-{step}")
    elif name == "resolve":
        active = store.active_ticket(f"ibdedup-{n:016x}")
        if active is not None and active.external_key is not None:
            store.ticket_resolved(active.id)
    elif name == "silence":
        store.add_silence(f"link:leaf0{n + 1}*", reason=f"s{step}", created_by="op", starts_at=at,
                          duration=timedelta(hours=1))
    elif name == "delivery":
        store.record_delivery(f"d{n}", source="jira", payload={"step": step})
    elif name == "request":
        store.request(RequestKind.CLEAR, component=component, reason=f"s{step}", requested_by="op")
    elif name == "halt":
        store.halt(f"s{step}")
    elif name == "resume":
        store.resume(f"s{step}")
    else:
        store.save_cursor(high_water_id=step, last_event_time=at, restart_count=n)


def view(store: Store) -> dict[str, Any]:
    """Everything a daemon or an operator can read of its fabric (row ids left out: each database numbers its own,
    and the shared one numbers both fabrics' rows together)."""
    cursor = store.load_cursor()
    breaker = store.breaker_state()
    return {
        "components": store.components(),
        "findings": store.findings(),
        "decisions": [d.action for d in store.decisions()],
        "intents": [(i.kind, i.component, i.payload, i.state) for i in store.intents(limit=1000)],
        "pending": [(i.kind, i.component) for i in store.unfinished_intents()],
        "tickets": [(t.dedup_key, t.external_key, t.state, t.component) for t in store.tickets()],
        "silences": [(s.matcher, s.reason, s.starts_at, s.ends_at) for s in store.silences(include_ended_since=T0)],
        "deliveries": [(d.id, d.payload) for d in store.unprocessed_deliveries()],
        "requests": [(r.kind, r.component, r.reason) for r in store.pending_requests()],
        "breaker": (breaker.halted, breaker.reason),
        "cursor": None if cursor is None else (cursor.high_water_id, cursor.restart_count),
        "counts": store.lifecycle_counts(),
    }


@contextmanager
def databases(backend: str, url: str | None) -> Iterator[Callable[[str], Store]]:
    """Fresh databases of ``backend`` for one example: ``open(name)`` opens a store on database ``name``."""
    stores: list[Store] = []
    with TemporaryDirectory() as tmp:
        def open_sqlite(name: str) -> Store:
            file = "shared" if name.startswith("shared-") else name  # both fabrics in one file, each solo alone
            stores.append(Store.open(f"sqlite:///{Path(tmp) / file}.db", fabric=fabric_of(name)))
            return stores[-1]

        if backend == "sqlite":
            try:
                yield open_sqlite
            finally:
                for store in stores:
                    store.close()
            return
        assert url is not None
        with pg_schema(url, "test_fabrics_shared") as shared, pg_schema(url, "test_fabrics_solo") as solo:
            schemas = {"shared-east": shared, "shared-west": shared, "solo-east": solo, "solo-west": solo}

            def open_pg(name: str) -> Store:
                stores.append(Store.open(url, schema=schemas[name], fabric=fabric_of(name)))
                return stores[-1]

            try:
                yield open_pg
            finally:
                for store in stores:
                    store.close()


def fabric_of(name: str) -> str:
    return name.rpartition("-")[2]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.booleans(), OPS), max_size=25))
def test_two_fabrics_in_one_database_never_see_each_other(db: Db, script: list[tuple[bool, Op]]) -> None:
    with databases(db.backend, db.url if db.backend == "postgresql" else None) as open_store:
        shared = {"east": open_store("shared-east"), "west": open_store("shared-west")}
        for step, (east, op) in enumerate(script):
            apply(shared["east" if east else "west"], op, step)
        for fabric, mine in (("east", True), ("west", False)):
            # The solo databases: east in one, west in the other (SQLite files; PostgreSQL schemas, where two
            # fabrics sharing the solo schema would be the very thing under test, so each gets its turn alone).
            solo = open_store(f"solo-{fabric}")
            for step, (east, op) in enumerate(script):
                if east is mine:
                    apply(solo, op, step)
            assert view(shared[fabric]) == view(solo)
            if db.backend == "postgresql":
                _wipe(solo)


def _wipe(store: Store) -> None:
    """Empty a solo schema for the other fabric's turn."""
    from fabric.store.schema import METADATA

    with store.engine.begin() as conn:
        for table in reversed(METADATA.sorted_tables):
            if table.name != "schema_version":
                conn.execute(table.delete())


def test_an_id_never_reaches_another_fabrics_row(db: Db) -> None:
    east, west = db.open(fabric=f"east-{uuid.uuid4().hex[:6]}"), db.open(fabric="west")
    intent = east.begin_intent(1, ActionKind.DISABLE, COMPONENTS[0], {"port": "p"})
    row, _ = east.claim_ticket("ibdedup-00000000000000aa", backend="local", summary="s", component=COMPONENTS[0])
    silence = east.add_silence("link:*", reason="r", created_by="op", duration=timedelta(hours=1))
    request = east.request(RequestKind.RESUME, reason="r", requested_by="op")
    east.record_delivery("d1", source="jira")
    assert west.get_intent(intent) is None and west.get_ticket(row.id) is None
    assert not west.expire_silence(silence.id) and not west.handle_request(request.id, "x")
    assert not west.mark_delivery_processed("d1") and west.get_delivery("d1") is None
    assert west.record_delivery("d1", source="jira")  # the same webhook id, delivered to each fabric
    assert east.get_intent(intent) is not None and east.pending_requests() != []
    # Epochs fence per fabric: west's leader at epoch 1 is not stale because east's is at 5.
    east.begin_intent(5, ActionKind.ENABLE, COMPONENTS[0])
    west.begin_intent(1, ActionKind.ENABLE, COMPONENTS[0])
