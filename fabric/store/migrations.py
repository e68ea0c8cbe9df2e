"""Schema versions and forward migrations.

The schema version is the number of the last migration (version 1 is the first schema ever released, which has no
migration).  ``ensure_schema`` runs inside one transaction (DDL is transactional on PostgreSQL and, with the
store's own ``BEGIN``, on SQLite):

- an empty database gets the current tables (the store's and the local ticket backend's, ``tickets.local``) and
  ``schema_version`` = ``SCHEMA_VERSION``;
- an older one gets every migration above its version, in order, each recorded in ``schema_version``;
- a newer one is refused with ``SchemaTooNewError`` naming both versions; a database that holds some of our
  tables but no ``schema_version`` is refused too (it is not ours, or it was damaged).

Writing a migration: append ``Migration(n + 1, "what and why", function)``.  The function receives the open
connection and must describe its changes with literal column/table definitions (``add_column`` below), never
with the current ``Table`` objects, which keep changing after the migration is written.  Never edit a released
migration.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.schema import CreateColumn

from fabric.store import _outbox  # noqa: F401  (its table joins METADATA before any schema is created)
from fabric.store.records import SchemaError, SchemaTooNewError
from fabric.store.schema import METADATA, schema_version
from fabric.store.types import ID, JSON_DOC, UTCDateTime
from tickets.local import LocalTicketBackend

__all__ = ["LEGACY_FABRIC", "MIGRATIONS", "OPENING_FABRIC", "SCHEMA_VERSION", "Migration", "add_column",
           "ensure_schema", "legacy_fabric", "our_table_names"]


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    """The version the database has once this migration ran."""
    description: str
    apply: Callable[[Connection], None]


def add_column(conn: Connection, table: str, column: sa.Column[object]) -> None:
    """``ALTER TABLE table ADD COLUMN ...`` for this dialect.  A NOT NULL column needs a ``server_default``
    (existing rows take it)."""
    preparer = conn.dialect.identifier_preparer
    spec = CreateColumn(column).compile(dialect=conn.dialect)
    conn.exec_driver_sql(f"ALTER TABLE {preparer.quote(table)} ADD COLUMN {spec}")


def _v2_finding_flags(conn: Connection) -> None:
    add_column(conn, "findings", sa.Column("ticket_only", sa.Boolean, nullable=False, server_default=sa.false()))
    add_column(conn, "findings", sa.Column("never_auto_restore", sa.Boolean, nullable=False, server_default=sa.false()))


def _v3_component_rule(conn: Connection) -> None:
    add_column(conn, "components", sa.Column("rule", sa.Text, nullable=False, server_default=""))
    add_column(conn, "components", sa.Column("never_auto_restore", sa.Boolean, nullable=False,
                                             server_default=sa.false()))


# --- version 4: every row scoped by fabric, typed operator requests --------------------------------------------

_V4_SCOPED = ("findings", "intents", "decisions", "tickets", "silences")
"""Tables that gain a ``fabric`` column in place; ``components`` and ``webhook_deliveries`` are rebuilt (the
fabric joins their primary key, which SQLite cannot alter)."""
_V4_INDEXES = (  # (old name or None, new name, table, columns)
    ("ix_components_lifecycle", "ix_components_fabric_lifecycle", "components", ("fabric", "lifecycle")),
    ("ix_findings_at", "ix_findings_fabric_at", "findings", ("fabric", "at")),
    ("ix_intents_state", "ix_intents_fabric_state", "intents", ("fabric", "state")),
    ("ix_intents_epoch", "ix_intents_fabric_epoch", "intents", ("fabric", "epoch")),
    ("ix_decisions_at", "ix_decisions_fabric_at", "decisions", ("fabric", "at")),
    ("ix_tickets_state", "ix_tickets_fabric_state", "tickets", ("fabric", "state")),
    ("ix_silences_ends_at", "ix_silences_fabric_ends_at", "silences", ("fabric", "ends_at")),
)
LEGACY_CLEAR_RULE = "operator_clear_requested"
"""Before version 4 a clear request was this string in the component's ``rule``."""


LEGACY_FABRIC = "legacy_fabric"
"""``Connection.info`` key: the fabric an operator says a pre-version-4 database's rows belong to."""
OPENING_FABRIC = "opening_fabric"
"""``Connection.info`` key: the fabric of the store that is migrating the database."""


def legacy_fabric(conn: Connection) -> str | None:
    """The fabric the unscoped rows of a version-3 database belong to: the one an operator named, else the one its
    cursor and breaker name, else (a database that never completed a cycle) the fabric of the store opening it;
    ``None`` when the cursor and breaker name several, and the rows cannot be attributed."""
    named = conn.info.get(LEGACY_FABRIC)
    if named:
        return str(named)
    names = {row[0] for table in ("event_cursor", "breaker")
             for row in conn.exec_driver_sql(f"SELECT DISTINCT fabric FROM {table}")}
    if len(names) > 1:
        return None
    return names.pop() if names else str(conn.info.get(OPENING_FABRIC) or "default")


def _v4_fabric_scope(conn: Connection) -> None:
    fabric = legacy_fabric(conn)
    if fabric is None:
        raise SchemaError(
            "version 4 scopes every row by fabric, but this database's breaker and cursor name several fabrics, so "
            "its components, tickets and history cannot be attributed to one: migrate it with "
            "`fabricctl store migrate --store URL --legacy-fabric NAME`, naming the fabric they belong to")
    for old, *_ in _V4_INDEXES:
        conn.exec_driver_sql(f"DROP INDEX IF EXISTS {old}")
    for table in _V4_SCOPED:
        add_column(conn, table, sa.Column("fabric", sa.Text, nullable=False, server_default=""))
        conn.execute(sa.text(f"UPDATE {table} SET fabric = :fabric"), {"fabric": fabric})
    v4 = sa.MetaData()
    components = sa.Table(
        "components_v4", v4,
        sa.Column("fabric", sa.Text, primary_key=True), sa.Column("id", sa.Text, primary_key=True),
        sa.Column("kind", sa.Text, nullable=False), sa.Column("lifecycle", sa.Text, nullable=False),
        sa.Column("strikes", sa.Integer, nullable=False), sa.Column("since", UTCDateTime, nullable=False),
        sa.Column("ticket_dedup_key", sa.Text, nullable=True), sa.Column("reason", sa.Text, nullable=False),
        sa.Column("probation_until", UTCDateTime, nullable=True), sa.Column("updated_at", UTCDateTime, nullable=False),
        sa.Column("rule", sa.Text, nullable=False), sa.Column("never_auto_restore", sa.Boolean, nullable=False))
    deliveries = sa.Table(
        "webhook_deliveries_v4", v4,
        sa.Column("fabric", sa.Text, primary_key=True), sa.Column("id", sa.Text, primary_key=True),
        sa.Column("source", sa.Text, nullable=False), sa.Column("received_at", UTCDateTime, nullable=False),
        sa.Column("payload", JSON_DOC, nullable=True), sa.Column("processed_at", UTCDateTime, nullable=True))
    requests = sa.Table(
        "operator_requests", v4,
        sa.Column("id", ID, primary_key=True, autoincrement=True), sa.Column("fabric", sa.Text, nullable=False),
        sa.Column("kind", sa.Text, nullable=False), sa.Column("component", sa.Text, nullable=True),
        sa.Column("reason", sa.Text, nullable=False), sa.Column("requested_by", sa.Text, nullable=False),
        sa.Column("requested_at", UTCDateTime, nullable=False), sa.Column("handled_at", UTCDateTime, nullable=True),
        sa.Column("outcome", sa.Text, nullable=True),
        sa.Index("ix_operator_requests_fabric_pending", "fabric", "handled_at"), sqlite_autoincrement=True)
    v4.create_all(conn)
    # A clear requested before version 4 was a magic rule: it becomes a pending request of its own.
    conn.execute(sa.insert(requests).from_select(
        ["fabric", "kind", "component", "reason", "requested_by", "requested_at"],
        sa.select(sa.literal(fabric), sa.literal("clear"), sa.column("id"), sa.literal("requested before version 4"),
                  sa.literal("operator"), sa.column("updated_at"))
        .select_from(sa.table("components")).where(sa.column("rule") == LEGACY_CLEAR_RULE)))
    conn.exec_driver_sql(f"UPDATE components SET rule = 'quarantine' WHERE rule = '{LEGACY_CLEAR_RULE}'")
    for old, new in (("components", components), ("webhook_deliveries", deliveries)):
        columns = [c.name for c in new.c if c.name != "fabric"]
        conn.execute(sa.insert(new).from_select(
            ["fabric", *columns], sa.select(sa.literal(fabric), *map(sa.column, columns)).select_from(sa.table(old))))
        conn.exec_driver_sql(f"DROP TABLE {old}")
        conn.exec_driver_sql(f"ALTER TABLE {new.name} RENAME TO {old}")
    conn.exec_driver_sql("CREATE INDEX ix_webhook_deliveries_processed_at ON webhook_deliveries (processed_at)")
    conn.exec_driver_sql("CREATE INDEX ix_webhook_deliveries_received_at ON webhook_deliveries (received_at)")
    for _, new_index, table, index_columns in _V4_INDEXES:
        conn.exec_driver_sql(f"CREATE INDEX {new_index} ON {table} ({', '.join(index_columns)})")
    # One active ticket per dedup key and fabric (dedup keys already hash the fabric; the store does not rely on it).
    conn.exec_driver_sql("DROP INDEX uq_tickets_active_dedup_key")
    conn.exec_driver_sql("CREATE UNIQUE INDEX uq_tickets_active_dedup_key ON tickets (fabric, dedup_key) "
                         "WHERE state IN ('creating', 'open')")


def _v5_storm_window(conn: Connection) -> None:
    add_column(conn, "breaker", sa.Column("last_held", UTCDateTime, nullable=True))
    add_column(conn, "breaker", sa.Column("held_count", sa.Integer, nullable=False, server_default="0"))
    # A breaker halted before version 5 kept no held finding's time: its quiet period runs from its last update.
    conn.exec_driver_sql("UPDATE breaker SET last_held = updated_at WHERE halted")
    v5 = sa.MetaData()
    sa.Table("storm_window", v5, sa.Column("fabric", sa.Text, primary_key=True),
             sa.Column("component", sa.Text, primary_key=True), sa.Column("first_at", UTCDateTime, nullable=False))
    v5.create_all(conn)


def _v6_ticket_outbox(conn: Connection) -> None:
    v6 = sa.MetaData()
    sa.Table("ticket_outbox", v6,
             sa.Column("id", ID, primary_key=True, autoincrement=True), sa.Column("fabric", sa.Text, nullable=False),
             sa.Column("kind", sa.Text, nullable=False), sa.Column("dedup_key", sa.Text, nullable=False),
             sa.Column("component", sa.Text, nullable=True), sa.Column("rule", sa.Text, nullable=True),
             sa.Column("summary", sa.Text, nullable=False),
             sa.Column("body", sa.Text, nullable=False), sa.Column("created_at", UTCDateTime, nullable=False),
             sa.Column("next_attempt_at", UTCDateTime, nullable=False),
             sa.Column("attempts", sa.Integer, nullable=False), sa.Column("last_error", sa.Text, nullable=True),
             sa.Column("uncertain_at", UTCDateTime, nullable=True),
             sa.Index("ix_ticket_outbox_fabric_id", "fabric", "id"), sqlite_autoincrement=True)
    v6.create_all(conn)


def _v7_leadership(conn: Connection) -> None:
    v7 = sa.MetaData()
    sa.Table("leadership", v7, sa.Column("fabric", sa.Text, primary_key=True),
             sa.Column("epoch", sa.BigInteger, nullable=False), sa.Column("holder", sa.Text, nullable=False),
             sa.Column("acquired_at", UTCDateTime, nullable=False), sa.Column("heartbeat_at", sa.Float, nullable=True))
    v7.create_all(conn)
    add_column(conn, "decisions", sa.Column("epoch", sa.BigInteger, nullable=True))


def _v8_local_tickets(conn: Connection) -> None:
    # Before version 8 the daemon created these at start, if missing: an older database may hold them already.
    v8 = sa.MetaData()
    open_only = sa.text("status = 'open'")
    sa.Table("local_tickets", v8,
             sa.Column("id", ID, primary_key=True, autoincrement=True), sa.Column("dedup_key", sa.Text, nullable=False),
             sa.Column("summary", sa.Text, nullable=False), sa.Column("description", sa.Text, nullable=False),
             sa.Column("status", sa.Text, nullable=False), sa.Column("labels", sa.JSON, nullable=False),
             sa.Column("created_at", UTCDateTime, nullable=False), sa.Column("updated_at", UTCDateTime, nullable=False),
             sa.Column("resolved_at", UTCDateTime, nullable=True),
             sa.Index("uq_local_tickets_open_dedup", "dedup_key", unique=True, postgresql_where=open_only,
                      sqlite_where=open_only),
             sa.Index("ix_local_tickets_dedup_key", "dedup_key"), sa.Index("ix_local_tickets_status", "status"),
             sqlite_autoincrement=True)
    sa.Table("local_ticket_comments", v8,
             sa.Column("id", ID, primary_key=True, autoincrement=True),
             sa.Column("ticket_id", ID, sa.ForeignKey("local_tickets.id", ondelete="CASCADE"), nullable=False),
             sa.Column("at", UTCDateTime, nullable=False), sa.Column("body", sa.Text, nullable=False),
             sa.Index("ix_local_ticket_comments_ticket", "ticket_id"), sqlite_autoincrement=True)
    v8.create_all(conn)


def _v9_request_instance(conn: Connection) -> None:
    add_column(conn, "operator_requests", sa.Column("instance", sa.Text, nullable=True))


def _v10_burnin_windows(conn: Connection) -> None:
    v10 = sa.MetaData()
    sa.Table("burnin_windows", v10,
             sa.Column("id", ID, primary_key=True, autoincrement=False), sa.Column("fabric", sa.Text, nullable=False),
             sa.Column("duration_s", sa.Float, nullable=False), sa.Column("started_at", UTCDateTime, nullable=True),
             sa.Column("ends_at", UTCDateTime, nullable=True), sa.Column("ended_at", UTCDateTime, nullable=True),
             sa.Column("dry_run", sa.Boolean, nullable=True), sa.Column("report", JSON_DOC, nullable=True),
             sa.Index("ix_burnin_windows_fabric", "fabric", "id"))
    v10.create_all(conn)


def _v11_finding_no_reset(conn: Connection) -> None:
    add_column(conn, "findings", sa.Column("no_reset", sa.Boolean, nullable=False, server_default=sa.false()))


MIGRATIONS: tuple[Migration, ...] = (
    Migration(2, "findings keep the ticket_only and never_auto_restore flags", _v2_finding_flags),
    Migration(3, "components keep the rule that put them in their state and whether they may be auto-restored",
              _v3_component_rule),
    Migration(4, "every row is scoped by fabric (one database, several fabrics); operator requests are rows",
              _v4_fabric_scope),
    Migration(5, "the storm breaker's window and held findings survive a restart", _v5_storm_window),
    Migration(6, "ticket writes wait in a durable outbox while the ticket system is down", _v6_ticket_outbox),
    Migration(7, "leadership: each fabric's leader epoch (fencing token), holder and heartbeat; decisions carry "
              "the epoch", _v7_leadership),
    Migration(8, "the local ticket backend's tables are created by the migration, never by a daemon starting",
              _v8_local_tickets),
    Migration(9, "operator requests may name the daemon instance they are for: a reload reaches that instance's "
              "engine process through the store", _v9_request_instance),
    Migration(10, "burn-in windows: asked for by an operator request, opened and judged by the engine, their "
              "survivors report kept", _v10_burnin_windows),
    Migration(11, "findings keep no_reset: a burn-in window's finding held to settle across a restart is still taken "
              "out without a reset first", _v11_finding_no_reset),
)

SCHEMA_VERSION = 1 + len(MIGRATIONS)
"""The version this code reads and writes."""


def _check_sequence(migrations: Sequence[Migration]) -> None:
    for expected, migration in enumerate(migrations, start=2):
        if migration.version != expected:
            raise AssertionError(f"migration {migration.description!r} has version {migration.version}, not {expected}")


_check_sequence(MIGRATIONS)


def our_table_names() -> list[str]:
    """Every table the store owns (the local ticket backend owns its own, which the schema creates too)."""
    return list(METADATA.tables)


@dataclass(frozen=True, slots=True)
class SchemaReport:
    found: int | None
    """The version before ``ensure_schema`` (``None``: the database was empty)."""
    now: int
    applied: tuple[int, ...]
    """The migrations applied."""


def database_version(conn: Connection) -> int | None:
    """The schema version of the database behind ``conn`` (``None`` when it has no ``schema_version`` table)."""
    if not sa.inspect(conn).has_table(schema_version.name):
        return None
    found = conn.scalar(sa.select(sa.func.max(schema_version.c.version)))
    if found is None:
        raise SchemaError("the schema_version table is empty: the database was damaged or not created by this service")
    return int(found)


def ensure_schema(
    conn: Connection,
    now: datetime,
    *,
    migrations: Sequence[Migration] = MIGRATIONS,
) -> SchemaReport:
    """Create, migrate or refuse the database behind ``conn`` (see the module docstring).  Call it inside a
    transaction that serialises concurrent callers (the store takes an advisory lock on PostgreSQL; SQLite's
    ``BEGIN IMMEDIATE`` is one)."""
    target = 1 + len(migrations)
    found = database_version(conn)
    if found is None:
        inspector = sa.inspect(conn)
        present = sorted(name for name in our_table_names() if inspector.has_table(name))
        if present:
            raise SchemaError(
                f"the database has tables {', '.join(present)} but no schema_version: refusing to guess its version"
            )
        METADATA.create_all(conn)
        LocalTicketBackend.create_tables(conn)  # whichever backend a daemon is configured with, later or now
        conn.execute(sa.insert(schema_version).values(version=target, applied_at=now, description="created"))
        return SchemaReport(found=None, now=target, applied=())
    if found > target:
        raise SchemaTooNewError(found, target)
    applied: list[int] = []
    for migration in migrations:
        if migration.version <= found:
            continue
        migration.apply(conn)
        conn.execute(
            sa.insert(schema_version).values(
                version=migration.version, applied_at=now, description=migration.description
            )
        )
        applied.append(migration.version)
    return SchemaReport(found=found, now=target, applied=tuple(applied))
