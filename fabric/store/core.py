"""``Store``: the service's durable state on SQLite or PostgreSQL.

Every method of ``Store`` is its own transaction, committed when it returns.  ``Store.transaction()`` yields a
``Transaction`` with the same methods, all in one transaction, for callers that must write several things
atomically::

    with store.transaction() as tx:
        tx.put_component(link, Lifecycle.AWAITING_REPAIR, since=now, ticket_dedup_key=key)
        tx.ticket_opened(row.id, ticket.key)

A leader's engine writes through ``Store.fenced(fence)``: every transaction of that store that may write (its
``transaction()`` blocks and its dry-run scope's too; reads are not fenced, they harm nothing) first checks that
this instance's lease still runs and that the fence's epoch is still the fabric's leader epoch
(``_leadership.check_epoch``), or raises ``StaleEpochError`` before anything is written: a deposed leader records
no intent, decision, ticket or state, hence starts no UFM or ticket write.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import UTC, datetime
from types import TracebackType

import sqlalchemy as sa
from sqlalchemy.engine import URL, Connection, Engine

from fabric.store._base import Clock, Fence
from fabric.store._breaker import BreakerOps
from fabric.store._burnin import BurninOps
from fabric.store._control import ControlOps
from fabric.store._fabrics import FabricOps
from fabric.store._history import HistoryOps
from fabric.store._intents import IntentOps
from fabric.store._leadership import LeadershipOps, check_epoch
from fabric.store._outbox import OutboxOps
from fabric.store._requests import RequestOps
from fabric.store._scopes import ScopeOps, dry_run_key
from fabric.store._state import StateOps
from fabric.store._tickets import TicketOps
from fabric.store.engine import create_store_engine, normalise_url, reading, reading_one_moment
from fabric.store.migrations import (
    LEGACY_FABRIC,
    OPENING_FABRIC,
    SCHEMA_VERSION,
    SchemaReport,
    database_version,
    ensure_schema,
)
from fabric.store.records import SchemaTooNewError, StaleEpochError, StoreError
from fabric.store.schema import schema_version
from topology.redact import redacted_url

__all__ = ["ScopedStore", "Store", "Transaction", "database_errors"]


def _utcnow() -> datetime:
    return datetime.now(UTC)


@contextmanager
def _begin(engine: Engine, fence: Fence | None) -> Iterator[Connection]:
    """A transaction on ``engine``, refused (``StaleEpochError``) unless ``fence`` still leads."""
    with engine.begin() as conn:
        if fence is not None:
            if not fence.leading():
                raise StaleEpochError(fence.epoch, None)
            check_epoch(conn, fence.fabric, fence.epoch)
        yield conn


class _Operations(StateOps, IntentOps, TicketOps, ControlOps, ScopeOps, BreakerOps, BurninOps, RequestOps, OutboxOps,
                  LeadershipOps, FabricOps, HistoryOps):
    """Every store operation; where it runs is up to ``_conn``."""

    would_be: bool = False
    """These operations are on a dry run's would-be state (``dry_run_scope``), not the fabric's."""

    def dry_run_scope(self) -> _Operations:
        """The same operations on the rows of this fabric's dry run (``fabric.store._scopes``), in the same
        transaction or store. Only the desired state (components, the breaker, the storm window) is kept there."""
        raise NotImplementedError

    def state_scope(self) -> _Operations:
        """Where the desired state the running mode keeps is read: the dry run's while one is kept (a dry run
        keeps it, a live start drops it), else the fabric's own."""
        if self.would_be:
            return self
        return self.dry_run_scope() if self.dry_run_kept() else self


class Transaction(_Operations):
    """The store's operations inside one open transaction (from ``Store.transaction()``)."""

    def __init__(self, connection: Connection, *, fabric: str, clock: Clock, would_be: bool = False,
                 fence: Fence | None = None) -> None:
        self._connection = connection
        self.fabric = fabric
        self._clock = clock
        self.would_be = would_be
        self.fence = fence

    @property
    def connection(self) -> Connection:
        """The underlying connection, for a query the store does not offer."""
        return self._connection

    def _conn(self) -> AbstractContextManager[Connection]:
        return nullcontext(self._connection)

    def dry_run_scope(self) -> Transaction:
        if self.would_be:
            return self
        return type(self)(self._connection, fabric=dry_run_key(self.fabric), clock=self._clock, would_be=True,
                          fence=self.fence)


class Snapshot(Transaction):
    """The store's reads inside one transaction that only reads (from ``Store.snapshot()``): what they return is of
    one moment, and on SQLite they never wait behind a writer. A write in it is a bug, refused."""

    def _conn(self) -> AbstractContextManager[Connection]:
        raise TypeError("a store snapshot only reads: write in Store.transaction()")

    def _read(self) -> AbstractContextManager[Connection]:
        return nullcontext(self._connection)


class ScopedStore(_Operations):
    """A store's operations on its dry run's rows (``Store.dry_run_scope``), each in a transaction of its own on the
    store's engine."""

    would_be = True

    def __init__(self, store: Store) -> None:
        self._store = store
        self.fabric = dry_run_key(store.fabric)
        self._clock = store.now
        self.fence = store.fence

    def _conn(self) -> AbstractContextManager[Connection]:
        return _begin(self._store.engine, self.fence)

    def _read(self) -> AbstractContextManager[Connection]:
        return reading(self._store.engine)

    def dry_run_scope(self) -> ScopedStore:
        return self


class Store(_Operations):
    """The durable state of one fabric's remediation service."""

    def __init__(self, engine: Engine, *, fabric: str = "default", clock: Clock | None = None) -> None:
        """Wrap an engine whose schema is already in place (``Store.open`` checks and creates it)."""
        if not fabric:
            raise ValueError("a store needs a fabric name")
        if not fabric.isprintable():
            # A dry run's rows are keyed by its fabric's name and a control character (``_scopes``).
            raise ValueError(f"a fabric name cannot hold control characters: {fabric!r}")
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
        legacy_fabric: str | None = None,
    ) -> Store:
        """Connect, then create the schema (empty database), migrate it (older) or refuse it (newer:
        ``SchemaTooNewError``).  ``url``: ``sqlite:///path/to/state.db`` or ``postgresql://user@host/db``;
        ``schema``: a PostgreSQL schema of its own (created if missing).  ``legacy_fabric``: the fabric the rows of
        a database from before version 4 belong to (see ``migrations.legacy_fabric``).  For the daemon, which
        owns the database; commands that only operate on it use ``open_existing``."""
        engine = _connect(url, lambda: create_store_engine(url, schema=schema, busy_timeout=busy_timeout))
        store = cls(engine, fabric=fabric, clock=clock)
        try:
            with _database_errors(url, writing=True), engine.begin() as conn:
                if conn.dialect.name == "postgresql":
                    # Two daemons starting at once must not both create or migrate.
                    conn.execute(sa.select(sa.func.pg_advisory_xact_lock(_schema_lock_key(schema))))
                    exists = sa.text("SELECT 1 FROM pg_namespace WHERE nspname = :name")
                    if schema is not None and conn.scalar(exists, {"name": schema}) is None:
                        conn.exec_driver_sql(f"CREATE SCHEMA {schema}")  # validated name (engine.SCHEMA_NAME_RE)
                conn.info[OPENING_FABRIC] = fabric
                conn.info[LEGACY_FABRIC] = legacy_fabric
                try:
                    store.schema_report = ensure_schema(conn, store._now())
                finally:
                    conn.info.pop(OPENING_FABRIC, None)
                    conn.info.pop(LEGACY_FABRIC, None)
        except BaseException:
            engine.dispose()
            raise
        _refuse_unwritable(engine, url)  # a schema already at this version was not written to: try it now
        return store

    @classmethod
    def open_existing(
        cls,
        url: str | URL,
        *,
        fabric: str = "default",
        schema: str | None = None,
        clock: Clock | None = None,
        read_only: bool = True,
        application_name: str = "fabric-remediation",
    ) -> Store:
        """A store that must already exist at the current schema version: never creates a file, a directory, a
        schema or a table, and never migrates (a typo in a path must not look like an empty, healthy system).
        ``read_only``: for commands that only read (an SQLite file that is read-only can then be read).
        ``application_name``: PostgreSQL's name for its sessions (a daemon's name its instance)."""
        engine = _connect(url, lambda: create_store_engine(url, schema=schema, create=False, read_only=read_only,
                                                           application_name=application_name))
        store = cls(engine, fabric=fabric, clock=clock)
        try:
            with _database_errors(url, writing=not read_only), engine.connect() as conn:
                found = database_version(conn)
        except BaseException:
            engine.dispose()
            raise
        shown = _shown(url)
        if found is None or found < SCHEMA_VERSION:
            engine.dispose()
            if found is None:
                raise StoreError(f"{shown}: not a fabric-remediation database (it has no schema_version table): "
                                 f"create its tables with `fabricctl store migrate --store {shown}`")
            raise StoreError(f"{shown}: schema version {found}, this version of fabricctl needs {SCHEMA_VERSION}: "
                             f"run `fabricctl store migrate --store {shown}` first")
        if found > SCHEMA_VERSION:
            engine.dispose()
            raise SchemaTooNewError(found, SCHEMA_VERSION)
        if not read_only:
            _refuse_unwritable(engine, url)
        store.schema_report = SchemaReport(found=found, now=found, applied=())
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

    def dry_run_scope(self) -> ScopedStore:
        return ScopedStore(self)

    def fenced(self, fence: Fence) -> Store:
        """This store's operations, on the same engine (do not ``close`` both), each refused once ``fence`` no
        longer leads."""
        store = Store(self._engine, fabric=self.fabric, clock=self._clock)
        store.schema_report, store.fence = self.schema_report, fence
        return store

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """One transaction for several operations: committed when the block ends, rolled back if it raises."""
        with _begin(self._engine, self.fence) as conn:
            yield Transaction(conn, fabric=self.fabric, clock=self._clock, fence=self.fence)

    @contextmanager
    def snapshot(self) -> Iterator[Snapshot]:
        """One transaction for several reads (an API answer's figures agree with one another): it takes no write
        lock and is not fenced, so a standby reads too."""
        with reading_one_moment(self._engine) as conn:
            yield Snapshot(conn, fabric=self.fabric, clock=self._clock)

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
        return _begin(self._engine, self.fence)

    def _read(self) -> AbstractContextManager[Connection]:
        return reading(self._engine)


def _schema_lock_key(schema: str | None) -> int:
    """A stable signed 64-bit advisory lock key for creating/migrating ``schema``."""
    digest = hashlib.sha256(f"fabric-remediation:schema:{schema or ''}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def _shown(url: str | URL) -> str:
    """The URL as messages show it: never with its password (``topology.redact``)."""
    return redacted_url(url if isinstance(url, str) else url.render_as_string(hide_password=False))


def _connect(url: str | URL, make: Callable[[], Engine]) -> Engine:
    """``make()``, with what can go wrong before any SQL (a malformed URL, an unknown or missing driver, a path that
    is not a database) as one ``StoreError`` naming the URL. Misuse (``schema=`` on SQLite) stays a ``ValueError``."""
    try:
        normalise_url(url)
    except (sa.exc.ArgumentError, ValueError) as exc:
        raise StoreError(f"{_shown(url)}: {exc}") from None
    try:
        return make()
    except (sa.exc.ArgumentError, sa.exc.NoSuchModuleError, OSError) as exc:
        raise StoreError(f"{_shown(url)}: {exc}") from None
    except StoreError as exc:
        raise StoreError(f"{_shown(url)}: {exc}") from None


def database_errors(url: str | URL) -> AbstractContextManager[None]:
    """The database refusing us (wrong host, port, user or database; a file that is not a database, truncated or
    read-only) as one ``StoreError`` line naming the URL, without its password."""
    return _database_errors(url, writing=False)


@contextmanager
def _database_errors(url: str | URL, *, writing: bool) -> Iterator[None]:
    """``database_errors``; ``writing``: for a command that will write, a database that refuses writes says so."""
    try:
        yield
    except sa.exc.DBAPIError as exc:
        raise (_unwritable(url, exc) if writing and _is_read_only(exc) else _refused(url, exc)) from None


def _cause(exc: sa.exc.DBAPIError) -> str:
    return str(exc.orig).strip().splitlines()[0] if exc.orig is not None else str(exc)


def _refused(url: str | URL, exc: sa.exc.DBAPIError) -> StoreError:
    return StoreError(f"{_shown(url)}: {_cause(exc)}")


_READ_ONLY_CAUSES = ("readonly database", "read-only", "unable to open database file", "permission denied")
"""What SQLite (a read-only file, or a directory where its journal cannot be made) and PostgreSQL (a read-only
transaction or replica, a role without the privilege) say when the store cannot be written."""


def _is_read_only(exc: sa.exc.DBAPIError) -> bool:
    cause = _cause(exc).lower()
    return any(said in cause for said in _READ_ONLY_CAUSES)


def _unwritable(url: str | URL, exc: sa.exc.DBAPIError) -> StoreError:
    return StoreError(f"{_shown(url)}: the database cannot be written ({_cause(exc)}): check write access (SQLite: "
                      "to the file and its directory, on a read-write file system; PostgreSQL: the role's "
                      "privileges, on the primary)")


def _refuse_unwritable(engine: Engine, url: str | URL) -> None:
    """Refuse, at start, a store this process will write to and cannot: a write that changes nothing, tried once
    (SQLite and PostgreSQL both refuse it as they would a real one), rather than a failure at the first real
    write, halfway through a start-up or a cycle."""
    try:
        with _database_errors(url, writing=True), engine.begin() as conn:
            conn.execute(sa.update(schema_version).where(sa.false()).values(version=schema_version.c.version))
    except StoreError:
        engine.dispose()
        raise
