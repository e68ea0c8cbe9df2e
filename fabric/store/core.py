"""``Store``: the service's durable state on SQLite or PostgreSQL.

Every method of ``Store`` is its own transaction, committed when it returns.  ``Store.transaction()`` yields a
``Transaction`` with the same methods, all in one transaction, for callers that must write several things
atomically::

    with store.transaction() as tx:
        tx.put_component(link, Lifecycle.AWAITING_REPAIR, since=now, ticket_dedup_key=key)
        tx.ticket_opened(row.id, ticket.key)
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import UTC, datetime
from types import TracebackType

import sqlalchemy as sa
from sqlalchemy.engine import URL, Connection, Engine

from fabric.store._base import Clock
from fabric.store._control import ControlOps
from fabric.store._intents import IntentOps
from fabric.store._state import StateOps
from fabric.store._tickets import TicketOps
from fabric.store.engine import create_store_engine
from fabric.store.migrations import SchemaReport, ensure_schema

__all__ = ["Store", "Transaction"]


def _utcnow() -> datetime:
    return datetime.now(UTC)


class _Operations(StateOps, IntentOps, TicketOps, ControlOps):
    """Every store operation; where it runs is up to ``_conn``."""


class Transaction(_Operations):
    """The store's operations inside one open transaction (from ``Store.transaction()``)."""

    def __init__(self, connection: Connection, *, fabric: str, clock: Clock) -> None:
        self._connection = connection
        self.fabric = fabric
        self._clock = clock

    @property
    def connection(self) -> Connection:
        """The underlying connection, for a query the store does not offer."""
        return self._connection

    def _conn(self) -> AbstractContextManager[Connection]:
        return nullcontext(self._connection)


class Store(_Operations):
    """The durable state of one fabric's remediation service."""

    def __init__(self, engine: Engine, *, fabric: str = "default", clock: Clock | None = None) -> None:
        """Wrap an engine whose schema is already in place (``Store.open`` checks and creates it)."""
        if not fabric:
            raise ValueError("a store needs a fabric name")
        self._engine = engine
        self.fabric = fabric
        self._clock = clock or _utcnow
        self.schema_report: SchemaReport | None = None

    @classmethod
    def open(
        cls,
        url: str | URL,
        *,
        fabric: str = "default",
        schema: str | None = None,
        clock: Clock | None = None,
        busy_timeout: float = 30.0,
    ) -> Store:
        """Connect, then create the schema (empty database), migrate it (older) or refuse it (newer:
        ``SchemaTooNewError``).  ``url``: ``sqlite:///path/to/state.db`` or ``postgresql://user@host/db``;
        ``schema``: a PostgreSQL schema of its own (created if missing), e.g. one per fabric."""
        engine = create_store_engine(url, schema=schema, busy_timeout=busy_timeout)
        store = cls(engine, fabric=fabric, clock=clock)
        try:
            with engine.begin() as conn:
                if conn.dialect.name == "postgresql":
                    # Two daemons starting at once must not both create or migrate.
                    conn.execute(sa.select(sa.func.pg_advisory_xact_lock(_schema_lock_key(schema))))
                    exists = sa.text("SELECT 1 FROM pg_namespace WHERE nspname = :name")
                    if schema is not None and conn.scalar(exists, {"name": schema}) is None:
                        conn.exec_driver_sql(f"CREATE SCHEMA {schema}")  # validated name (engine.SCHEMA_NAME_RE)
                store.schema_report = ensure_schema(conn, store._now())
        except BaseException:
            engine.dispose()
            raise
        return store

    @property
    def engine(self) -> Engine:
        """The engine (e.g. for ``tickets.local.LocalTicketBackend``, whose tables the store created)."""
        return self._engine

    @property
    def backend(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self._engine.dialect.name

    def now(self) -> datetime:
        """The store's clock."""
        return self._now()

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """One transaction for several operations: committed when the block ends, rolled back if it raises."""
        with self._engine.begin() as conn:
            yield Transaction(conn, fabric=self.fabric, clock=self._clock)

    def ping(self) -> bool:
        """Whether the database answers (for ``/readyz``)."""
        try:
            with self._engine.connect() as conn:
                conn.execute(sa.select(1))
        except sa.exc.DBAPIError:
            return False
        return True

    def close(self) -> None:
        """Close every pooled connection.  The store must not be used afterwards."""
        self._engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def _conn(self) -> AbstractContextManager[Connection]:
        return self._engine.begin()


def _schema_lock_key(schema: str | None) -> int:
    """A stable signed 64-bit advisory lock key for creating/migrating ``schema``."""
    digest = hashlib.sha256(f"fabric-remediation:schema:{schema or ''}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)
