"""Creating, migrating and refusing schemas; connection settings; UTC round trips."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
import sqlalchemy as sa
from store_helpers import T0, Db, FakeClock, pg_schema, pg_url
from support import run_together

from fabric.remediation.domain import ComponentId, ComponentKind, ComponentRecord, Finding, Lifecycle
from fabric.store import SCHEMA_VERSION, SchemaError, SchemaTooNewError, Store, schema
from fabric.store.engine import normalise_url
from fabric.store.migrations import Migration, add_column, ensure_schema, our_table_names
from tickets.local import LOCAL_METADATA

LINK = ComponentId(ComponentKind.LINK, "leaf01/1|spine01/1")

# Version 1 as it shipped: the current schema without findings.ticket_only / findings.never_auto_restore, which
# migration 2 adds.  Written out by hand, like the database an older release left behind.  {ts} {json} {pk} are
# the dialect's timestamp, JSON and autoincrement-key spellings.
V1_DDL = """
CREATE TABLE schema_version (
    version INTEGER NOT NULL PRIMARY KEY,
    applied_at {ts} NOT NULL,
    description TEXT NOT NULL
);
CREATE TABLE components (
    id TEXT NOT NULL PRIMARY KEY,
    kind TEXT NOT NULL,
    lifecycle TEXT NOT NULL,
    strikes INTEGER NOT NULL,
    since {ts} NOT NULL,
    ticket_dedup_key TEXT,
    reason TEXT NOT NULL,
    evidence {json} NOT NULL,
    probation_until {ts},
    updated_at {ts} NOT NULL
);
CREATE INDEX ix_components_lifecycle ON components (lifecycle);
CREATE TABLE findings (
    id {pk},
    component TEXT NOT NULL,
    rule TEXT NOT NULL,
    at {ts} NOT NULL,
    reason TEXT NOT NULL,
    evidence {json} NOT NULL
);
CREATE INDEX ix_findings_component_at ON findings (component, at);
CREATE INDEX ix_findings_at ON findings (at);
CREATE TABLE intents (
    id {pk},
    epoch BIGINT NOT NULL,
    component TEXT,
    kind TEXT NOT NULL,
    payload {json} NOT NULL,
    state TEXT NOT NULL,
    created_at {ts} NOT NULL,
    finished_at {ts},
    outcome TEXT
);
CREATE INDEX ix_intents_state ON intents (state);
CREATE INDEX ix_intents_epoch ON intents (epoch);
CREATE INDEX ix_intents_component ON intents (component);
CREATE TABLE decisions (
    id {pk},
    at {ts} NOT NULL,
    kind TEXT NOT NULL,
    component TEXT,
    rule TEXT NOT NULL,
    reason TEXT NOT NULL,
    guard {json} NOT NULL,
    dry_run BOOLEAN NOT NULL
);
CREATE INDEX ix_decisions_at ON decisions (at);
CREATE INDEX ix_decisions_component_at ON decisions (component, at);
CREATE TABLE tickets (
    id {pk},
    dedup_key TEXT NOT NULL,
    backend TEXT NOT NULL,
    external_key TEXT,
    state TEXT NOT NULL,
    component TEXT,
    summary TEXT NOT NULL,
    created_at {ts} NOT NULL,
    updated_at {ts} NOT NULL,
    resolved_at {ts}
);
CREATE UNIQUE INDEX uq_tickets_active_dedup_key ON tickets (dedup_key) WHERE state IN ('creating', 'open');
CREATE INDEX ix_tickets_dedup_key ON tickets (dedup_key);
CREATE INDEX ix_tickets_external ON tickets (backend, external_key);
CREATE INDEX ix_tickets_state ON tickets (state);
CREATE TABLE event_cursor (
    fabric TEXT NOT NULL PRIMARY KEY,
    high_water_id BIGINT,
    last_event_time {ts},
    restart_count INTEGER NOT NULL,
    updated_at {ts} NOT NULL
);
CREATE TABLE silences (
    id {pk},
    matcher TEXT NOT NULL,
    reason TEXT NOT NULL,
    created_by TEXT NOT NULL,
    starts_at {ts} NOT NULL,
    ends_at {ts} NOT NULL,
    created_at {ts} NOT NULL
);
CREATE INDEX ix_silences_ends_at ON silences (ends_at);
CREATE TABLE webhook_deliveries (
    id TEXT NOT NULL PRIMARY KEY,
    source TEXT NOT NULL,
    received_at {ts} NOT NULL,
    payload {json},
    processed_at {ts}
);
CREATE INDEX ix_webhook_deliveries_processed_at ON webhook_deliveries (processed_at);
CREATE INDEX ix_webhook_deliveries_received_at ON webhook_deliveries (received_at);
CREATE TABLE breaker (
    fabric TEXT NOT NULL PRIMARY KEY,
    halted BOOLEAN NOT NULL,
    since {ts},
    reason TEXT NOT NULL,
    storm_dedup_key TEXT,
    updated_at {ts} NOT NULL
);
CREATE TABLE local_tickets (
    id {pk},
    dedup_key TEXT NOT NULL,
    summary TEXT NOT NULL,
    description TEXT NOT NULL,
    status TEXT NOT NULL,
    labels {plain_json} NOT NULL,
    created_at {ts} NOT NULL,
    updated_at {ts} NOT NULL,
    resolved_at {ts}
);
CREATE UNIQUE INDEX uq_local_tickets_open_dedup ON local_tickets (dedup_key) WHERE status = 'open';
CREATE INDEX ix_local_tickets_dedup_key ON local_tickets (dedup_key);
CREATE INDEX ix_local_tickets_status ON local_tickets (status);
CREATE TABLE local_ticket_comments (
    id {pk},
    ticket_id {fk} NOT NULL REFERENCES local_tickets (id) ON DELETE CASCADE,
    at {ts} NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX ix_local_ticket_comments_ticket ON local_ticket_comments (ticket_id);
"""

SPELLINGS = {
    "sqlite": {
        "ts": "DATETIME",
        "json": "JSON",
        "plain_json": "JSON",
        "pk": "INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT",
        "fk": "INTEGER",
    },
    "postgresql": {
        "ts": "TIMESTAMP WITH TIME ZONE",
        "json": "JSONB",
        "plain_json": "JSON",
        "pk": "BIGSERIAL NOT NULL PRIMARY KEY",
        "fk": "BIGINT",
    },
}

V1_ROWS = """
INSERT INTO schema_version (version, applied_at, description) VALUES (1, {t}, 'created');
INSERT INTO components (id, kind, lifecycle, strikes, since, ticket_dedup_key, reason, evidence, probation_until,
                        updated_at)
    VALUES ('link:leaf01/1|spine01/1', 'link', 'awaiting_repair', 1, {t}, 'ibdedup-0123456789abcdef', 'flapping',
            '[329, 330]', NULL, {t});
INSERT INTO findings (component, rule, at, reason, evidence)
    VALUES ('link:leaf01/1|spine01/1', 'flap', {t}, '3 cycles in 12 h', '[329]');
INSERT INTO tickets (dedup_key, backend, external_key, state, component, summary, created_at, updated_at)
    VALUES ('ibdedup-0123456789abcdef', 'local', 'LOCAL-1', 'open', 'link:leaf01/1|spine01/1', 'bad link', {t}, {t});
"""
V1_TIME = {"sqlite": "'2025-01-02 03:04:05.000000'", "postgresql": "'2025-01-02 03:04:05+00'"}


def _run_script(engine: sa.Engine, script: str) -> None:
    with engine.begin() as conn:
        for statement in script.split(";"):
            if statement.strip():
                conn.exec_driver_sql(statement)


def make_v1_database(db: Db) -> None:
    engine = db.raw_engine()
    try:
        _run_script(engine, V1_DDL.format(**SPELLINGS[db.backend]))
        _run_script(engine, V1_ROWS.format(t=V1_TIME[db.backend]))
    finally:
        engine.dispose()


def describe(engine: sa.Engine) -> dict[str, object]:
    """The schema's tables (the store's and the local ticket backend's), their columns (name, type, nullability)
    and indexes, as reflected: to compare two databases."""
    out: dict[str, object] = {}
    with engine.connect() as conn:
        inspector = sa.inspect(conn)
        for table in sorted(set(inspector.get_table_names()) & {*our_table_names(), *LOCAL_METADATA.tables}):
            columns = [(c["name"], str(c["type"]), c["nullable"]) for c in inspector.get_columns(table)]
            indexes = sorted(
                (i["name"] or "", tuple(str(n) for n in i["column_names"]), bool(i["unique"]))
                for i in inspector.get_indexes(table)
            )
            out[table] = (sorted(columns), indexes, inspector.get_pk_constraint(table)["constrained_columns"])
    return out


def test_empty_database_gets_the_current_schema(db: Db) -> None:
    store = db.open()
    assert store.schema_report is not None
    assert store.schema_report.found is None
    assert store.schema_report.now == SCHEMA_VERSION
    with store.engine.connect() as conn:
        tables = set(sa.inspect(conn).get_table_names())
        assert set(our_table_names()) <= tables
        assert conn.scalar(sa.text("SELECT max(version) FROM schema_version")) == SCHEMA_VERSION


def test_reopening_changes_nothing(db: Db, clock: FakeClock) -> None:
    first = db.open(clock=clock)
    first.put_component(LINK, ComponentRecord(Lifecycle.DISABLED, T0, "", ""))
    first.close()
    second = db.open(clock=clock)
    assert second.schema_report is not None
    assert (second.schema_report.found, second.schema_report.applied) == (SCHEMA_VERSION, ())
    record = second.get_component(LINK)
    assert record is not None
    assert record.lifecycle is Lifecycle.DISABLED


def test_v1_database_is_migrated_with_its_rows(db: Db, clock: FakeClock, tmp_path: Path) -> None:
    make_v1_database(db)
    store = db.open(clock=clock)
    assert store.schema_report is not None
    assert store.schema_report.found == 1
    assert store.schema_report.applied == tuple(range(2, SCHEMA_VERSION + 1))

    # The old rows are intact and the new columns took their defaults.
    old = store.findings(component=LINK)
    assert len(old) == 1
    assert old[0].evidence == (329,)
    assert old[0].at == datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert (old[0].ticket_only, old[0].never_auto_restore, old[0].no_reset) == (False, False, False)
    component = store.get_component(LINK)
    assert component is not None
    assert (component.lifecycle, component.strikes, component.reason) == (Lifecycle.AWAITING_REPAIR, 1, "flapping")
    ticket = store.active_ticket("ibdedup-0123456789abcdef")
    assert ticket is not None
    assert ticket.external_key == "LOCAL-1"

    # The new columns work.
    store.add_finding(Finding(LINK, "temp", T0, "hot", (919,), never_auto_restore=True, no_reset=True))
    new = store.findings(component=LINK)[-1]
    assert (new.never_auto_restore, new.no_reset) == (True, True)
    with store.engine.connect() as conn:
        versions = conn.execute(sa.text("SELECT version, description FROM schema_version ORDER BY version")).all()
    assert [v for v, _ in versions] == list(range(1, SCHEMA_VERSION + 1))

    # A migrated database looks exactly like a new one.
    with _fresh_engine(db, tmp_path) as fresh_engine:
        assert describe(store.engine) == describe(fresh_engine)


@contextmanager
def _fresh_engine(db: Db, tmp_path: Path) -> Iterator[sa.Engine]:
    """An engine on a freshly created database of ``db``'s kind (another file, or another schema)."""
    if db.backend == "sqlite":
        place: AbstractContextManager[str | None] = nullcontext(None)
        url = f"sqlite:///{tmp_path / 'fresh.db'}"
    else:
        place = pg_schema(db.url, "test_fresh")
        url = db.url
    with place as schema:
        fresh = Db(db.backend, url, schema)
        fresh.open()
        fresh.close_all()
        engine = fresh.raw_engine()
        try:
            yield engine
        finally:
            engine.dispose()


def test_newer_database_is_refused_naming_both_versions(db: Db) -> None:
    db.open().close()
    engine = db.raw_engine()
    with engine.begin() as conn:
        conn.execute(
            sa.text("INSERT INTO schema_version (version, applied_at, description) VALUES (:v, :t, 'future')"),
            {"v": SCHEMA_VERSION + 5, "t": "2030-01-01 00:00:00"},
        )
    engine.dispose()
    with pytest.raises(SchemaTooNewError) as info:
        db.open()
    assert info.value.found == SCHEMA_VERSION + 5
    assert info.value.supported == SCHEMA_VERSION
    message = str(info.value)
    assert f"version {SCHEMA_VERSION + 5}" in message
    assert f"version {SCHEMA_VERSION})" in message


def test_tables_without_a_version_are_refused(db: Db) -> None:
    engine = db.raw_engine()
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE components (id TEXT PRIMARY KEY)")
    engine.dispose()
    with pytest.raises(SchemaError, match="components"):
        db.open()


def test_a_failing_migration_leaves_the_database_as_it_was(db: Db) -> None:
    make_v1_database(db)

    def broken(conn: sa.Connection) -> None:
        add_column(conn, "findings", sa.Column("half_done", sa.Integer, nullable=True))
        raise RuntimeError("migration bug")

    engine = db.raw_engine()
    migrations = (Migration(2, "broken", broken),)
    try:
        with pytest.raises(RuntimeError, match="migration bug"), engine.begin() as conn:
            ensure_schema(conn, T0, migrations=migrations)
        with engine.connect() as conn:
            columns = {c["name"] for c in sa.inspect(conn).get_columns("findings")}
            assert "half_done" not in columns  # the DDL was rolled back with the transaction
            assert conn.scalar(sa.text("SELECT max(version) FROM schema_version")) == 1
    finally:
        engine.dispose()


def test_concurrent_opens_of_an_empty_database_agree(db: Db) -> None:
    reports: list[object] = run_together(4, lambda _: db.open().schema_report)
    created = [r for r in reports if getattr(r, "found", 0) is None]
    assert len(created) == 1
    engine = db.raw_engine()
    try:
        with engine.connect() as conn:  # every table the service uses, the local tickets' too
            assert {*our_table_names(), *LOCAL_METADATA.tables} <= set(sa.inspect(conn).get_table_names())
    finally:
        engine.dispose()


def test_version_8_creates_the_local_tickets_tables_a_daemon_used_to_create_at_start(
        db: Db, tmp_path: Path) -> None:
    store = db.open()
    with store.engine.begin() as conn:  # as version 7 left a database whose daemon used Jira: no local tickets
        conn.exec_driver_sql("DROP TABLE local_ticket_comments")
        conn.exec_driver_sql("DROP TABLE local_tickets")
        conn.exec_driver_sql("ALTER TABLE operator_requests DROP COLUMN instance")  # version 9's
        conn.exec_driver_sql("DROP TABLE burnin_windows")  # version 10's
        conn.exec_driver_sql("ALTER TABLE findings DROP COLUMN no_reset")  # version 11's
        conn.execute(sa.text(f"UPDATE schema_version SET version = 7 WHERE version = {SCHEMA_VERSION}"))
    store.close()
    migrated = db.open()
    assert migrated.schema_report is not None and migrated.schema_report.applied == (8, 9, 10, 11)
    with _fresh_engine(db, tmp_path) as fresh_engine:
        assert describe(migrated.engine) == describe(fresh_engine)


def test_version_11_keeps_the_findings_no_reset_and_gives_the_older_ones_false(db: Db, tmp_path: Path) -> None:
    store = db.open()
    store.add_finding(Finding(LINK, "ber_critical", T0, "before version 11", (917,)))
    with store.engine.begin() as conn:  # as version 10 left it
        conn.exec_driver_sql("ALTER TABLE findings DROP COLUMN no_reset")
        conn.execute(sa.text(f"UPDATE schema_version SET version = 10 WHERE version = {SCHEMA_VERSION}"))
    store.close()
    migrated = db.open()
    assert migrated.schema_report is not None and migrated.schema_report.applied == (11,)
    burnin = Finding(LINK, "ber_critical", T0 + timedelta(minutes=1), "a burn-in window's", (918,), no_reset=True)
    migrated.add_finding(burnin)
    assert [f.no_reset for f in migrated.findings(component=LINK)] == [False, True]
    assert migrated.findings(component=LINK)[-1] == burnin
    with _fresh_engine(db, tmp_path) as fresh_engine:
        assert describe(migrated.engine) == describe(fresh_engine)


def test_timestamps_round_trip_as_aware_utc(store: Store) -> None:
    plus_two = timezone(timedelta(hours=2))
    since = datetime(2025, 6, 1, 14, 30, 15, 123456, tzinfo=plus_two)
    record = store.put_component(
        LINK, ComponentRecord(Lifecycle.PROBATION, since, "", "", probation_until=since + timedelta(days=1)))
    loaded = store.get_component(LINK)
    assert loaded == record
    assert loaded.since == since
    assert loaded.since.tzinfo is UTC
    assert loaded.since.hour == 12
    assert loaded.probation_until == datetime(2025, 6, 2, 12, 30, 15, 123456, tzinfo=UTC)


def test_naive_datetimes_are_refused(store: Store) -> None:
    naive = datetime(2025, 1, 1)
    with pytest.raises(ValueError, match="naive"):
        store.add_finding(Finding(LINK, "flap", naive, "naive"))
    # The column type refuses them too, whoever writes.
    with pytest.raises(sa.exc.StatementError, match="naive"), store.engine.begin() as conn:
        conn.execute(
            sa.insert(schema.silences).values(
                matcher="x:y", reason="", created_by="", starts_at=naive, ends_at=naive, created_at=naive
            )
        )


def test_naive_clock_is_refused(db: Db) -> None:
    with pytest.raises(ValueError, match="naive clock time"):
        db.open(clock=lambda: datetime(2025, 1, 1))


def test_sqlite_connection_settings(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "dir" / "state.db"
    store = Store.open(f"sqlite:///{path}", busy_timeout=7.5)
    try:
        with store.engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 7500
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL
        assert store.backend == "sqlite"
        assert store.ping()
    finally:
        store.close()
    raw = sqlite3.connect(path)
    try:
        # WAL is a property of the file: it stays on for any other reader (the CLI, sqlite3).
        assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    finally:
        raw.close()


def test_foreign_keys_are_enforced(store: Store) -> None:
    with pytest.raises(sa.exc.IntegrityError), store.engine.begin() as conn:
        conn.exec_driver_sql("INSERT INTO local_ticket_comments (ticket_id, at, body) VALUES (999, '2025-01-01', 'x')")


def test_in_memory_sqlite_works_for_quick_experiments() -> None:
    with Store.open("sqlite://") as store:
        store.put_component(LINK, ComponentRecord(Lifecycle.DISABLED, T0, "", ""))
        assert list(store.components()) == [LINK]


def test_url_normalisation() -> None:
    assert normalise_url("postgresql://u@h/db").drivername == "postgresql+psycopg"
    assert normalise_url("postgres://u@h/db").drivername == "postgresql+psycopg"
    assert normalise_url("sqlite:///x.db").drivername == "sqlite"
    with pytest.raises(ValueError, match="unsupported database"):
        normalise_url("mysql://u@h/db")


def test_schema_option_is_postgresql_only(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="PostgreSQL"):
        Store.open(f"sqlite:///{tmp_path / 'x.db'}", schema="fabric_a")
    with pytest.raises(ValueError, match="invalid schema name"):
        Store.open("postgresql://u@127.0.0.1:1/db", schema="bad name; drop")


def test_indexes_behind_the_hot_queries_exist(store: Store) -> None:
    with store.engine.connect() as conn:
        inspector = sa.inspect(conn)

        def indexed(table: str) -> set[tuple[str, ...]]:
            return {tuple(str(n) for n in i["column_names"]) for i in inspector.get_indexes(table)}

        assert ("fabric", "lifecycle") in indexed("components")
        assert ("fabric", "state") in indexed("intents")
        assert ("component", "at") in indexed("findings")
        unique = {i["name"] for i in inspector.get_indexes("tickets") if i["unique"]}
        assert "uq_tickets_active_dedup_key" in unique


@pytest.mark.postgres
def test_missing_postgres_schema_is_created() -> None:
    url = pg_url()
    with pg_schema(url, "test_store_new", create=False) as name:
        with Store.open(url, schema=name) as store:
            assert store.schema_report is not None
            assert store.schema_report.found is None
            with store.engine.connect() as conn:
                assert conn.scalar(sa.text("SELECT current_schema()")) == name
        with Store.open(url, schema=name) as again:  # and found again
            assert again.schema_report is not None
            assert again.schema_report.found == SCHEMA_VERSION
