"""Schema versions and forward migrations.

The schema version is the number of the last migration (version 1 is the first schema ever released, which has no
migration).  ``ensure_schema`` runs inside one transaction (DDL is transactional on PostgreSQL and, with the
store's own ``BEGIN``, on SQLite):

- an empty database gets the current tables and ``schema_version`` = ``SCHEMA_VERSION``;
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

from fabric.store.records import SchemaError, SchemaTooNewError
from fabric.store.schema import METADATA, schema_version
from tickets.local import LOCAL_METADATA

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "Migration", "add_column", "ensure_schema", "our_table_names"]


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


MIGRATIONS: tuple[Migration, ...] = (
    Migration(2, "findings keep the ticket_only and never_auto_restore flags", _v2_finding_flags),
    Migration(3, "components keep the rule that put them in their state and whether they may be auto-restored",
              _v3_component_rule),
)

SCHEMA_VERSION = 1 + len(MIGRATIONS)
"""The version this code reads and writes."""


def _check_sequence(migrations: Sequence[Migration]) -> None:
    for expected, migration in enumerate(migrations, start=2):
        if migration.version != expected:
            raise AssertionError(f"migration {migration.description!r} has version {migration.version}, not {expected}")


_check_sequence(MIGRATIONS)


def our_table_names() -> list[str]:
    """Every table the store owns, its own and the local ticket backend's."""
    return [*METADATA.tables, *LOCAL_METADATA.tables]


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
        LOCAL_METADATA.create_all(conn)
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
