"""Engines for the two supported databases, configured for a service that must not lose a write.

SQLite (the embedded default): a file in WAL mode (readers never block the writer), ``synchronous=FULL`` (a
committed transaction survives a power cut, not only a crash), foreign keys on, a busy timeout, and every
transaction that may write opened with ``BEGIN IMMEDIATE``: the write lock is taken up front, so two writers queue
on the busy timeout instead of one failing with "database is locked" halfway through, and DDL is transactional
(the sqlite3 module's own transaction handling is switched off). A transaction that only reads (``reading``)
begins deferred and takes no lock: the API's reads go on while the engine's cycle writes.

PostgreSQL (production, active/standby): psycopg 3, pre-ping, and optionally a schema of its own (``search_path``
set on every connection), so that several fabrics, or tests, share one database without sharing tables.
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import URL, Engine
from sqlalchemy.pool import ConnectionPoolEntry, StaticPool

from fabric.store.records import StoreError

__all__ = ["READS_ONLY", "SCHEMA_NAME_RE", "create_store_engine", "normalise_url", "reading",
           "reading_one_moment"]

SCHEMA_NAME_RE = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


def normalise_url(url: str | URL) -> URL:
    """Parse ``url``; ``postgresql://`` and ``postgres://`` mean psycopg 3 (the driver the project ships)."""
    parsed = sa.make_url(url) if isinstance(url, str) else url
    if parsed.drivername in {"postgresql", "postgres"}:
        parsed = parsed.set(drivername="postgresql+psycopg")
    if parsed.get_backend_name() not in {"sqlite", "postgresql"}:
        raise ValueError(f"unsupported database {parsed.get_backend_name()!r}: use sqlite:/// or postgresql://")
    return parsed


def create_store_engine(url: str | URL, *, schema: str | None = None, busy_timeout: float = 30.0,
                        create: bool = True, read_only: bool = False,
                        application_name: str = "fabric-remediation") -> Engine:
    """An engine for the store.  ``schema``: PostgreSQL only, the schema holding the store's tables.
    ``create=False``: an SQLite file must exist already (nothing is created: no directory, no file).
    ``read_only``: SQLite transactions start deferred, so a read-only file can be read (writes then fail).
    ``application_name``: what PostgreSQL's ``pg_stat_activity`` names its sessions."""
    parsed = normalise_url(url)
    if parsed.get_backend_name() == "sqlite":
        if schema is not None:
            raise ValueError("schema= is for PostgreSQL; on SQLite use another file")
        return _sqlite_engine(parsed, busy_timeout, create=create, read_only=read_only)
    return _postgres_engine(parsed, schema, application_name)


READS_ONLY = "fabric_reads_only"
"""The execution option of a connection whose transaction only reads (``reading``): on SQLite it begins
deferred, without the write lock that every other transaction takes up front."""


@contextmanager
def reading(engine: Engine) -> Iterator[sa.Connection]:
    """A transaction that only reads. On SQLite a write in it would take the lock late and could fail with
    "database is locked" instead of waiting: only reads go here."""
    with engine.connect() as conn, conn.execution_options(**{READS_ONLY: True}).begin():
        yield conn


@contextmanager
def reading_one_moment(engine: Engine) -> Iterator[sa.Connection]:
    """A transaction that only reads and whose every query sees the database as of its first: SQLite's read
    transactions already do; PostgreSQL's default (read committed) gives each statement a snapshot of its own, so it
    runs this one ``REPEATABLE READ`` (a transaction that only reads is never refused there)."""
    with engine.connect() as conn:
        if conn.dialect.name == "postgresql":
            conn.execution_options(isolation_level="REPEATABLE READ")
        with conn.execution_options(**{READS_ONLY: True}).begin():
            yield conn


SQLITE_HEADER = b"SQLite format 3\x00"


def _check_sqlite_file(path: Path) -> None:
    """Refuse, before SQLite creates anything, a path that is not an existing SQLite database file."""
    if not path.exists():
        if not path.parent.is_dir():
            raise StoreError(f"no database at {path} (its directory does not exist either: check the path)")
        raise StoreError(f"no database at {path} (check the path, or create it with `fabricctl store migrate`)")
    if path.is_dir():
        raise StoreError(f"{path} is a directory, not a database file")
    try:
        with path.open("rb") as handle:
            header = handle.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise StoreError(f"cannot read {path}: {exc.strerror or exc}") from None
    if header != SQLITE_HEADER:
        raise StoreError(f"{path} is not an SQLite database" + (" (it is empty)" if not header else ""))


def _sqlite_engine(url: URL, busy_timeout: float, *, create: bool, read_only: bool) -> Engine:
    database = url.database or ""
    in_memory = database in {"", ":memory:"} or "mode=memory" in database
    kwargs: dict[str, Any] = {"connect_args": {"timeout": busy_timeout}}
    if in_memory:
        # One connection shared by every thread, or each connection would see its own empty database.
        kwargs.update(poolclass=StaticPool, connect_args={"timeout": busy_timeout, "check_same_thread": False})
    elif create:
        Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    else:
        _check_sqlite_file(Path(database).expanduser())
    engine = sa.create_engine(url, **kwargs)
    busy_ms = int(busy_timeout * 1000)

    @event.listens_for(engine, "connect")
    def _configure(dbapi_connection: sqlite3.Connection, _record: ConnectionPoolEntry) -> None:
        dbapi_connection.isolation_level = None  # we emit BEGIN ourselves (see below)
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout={busy_ms}")
            if not in_memory and create:
                _enable_wal(cursor, database, busy_timeout)
            cursor.execute("PRAGMA synchronous=FULL")
            cursor.execute("PRAGMA foreign_keys=ON")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: sa.Connection) -> None:
        # A store opened only to read, or a transaction that only reads, never takes the write lock: a read-only
        # file can be read, and in WAL mode a reader goes on while a writer holds the lock.
        reads_only = read_only or conn.get_execution_options().get(READS_ONLY, False)
        conn.exec_driver_sql("BEGIN" if reads_only else "BEGIN IMMEDIATE")

    return engine


def _enable_wal(cursor: sqlite3.Cursor, database: str, busy_timeout: float) -> None:
    """Switch the file to WAL (a property of the file, so usually it already is).

    Switching needs an exclusive lock and SQLite does not wait for it with the busy timeout: when another connection
    is busy with the same new file (two processes starting at once), retry until the busy timeout has passed.
    """
    deadline = time.monotonic() + busy_timeout
    delay = 0.005
    while True:
        try:
            row = cursor.execute("PRAGMA journal_mode").fetchone()
            if row is not None and str(row[0]).lower() == "wal":
                return
            row = cursor.execute("PRAGMA journal_mode=WAL").fetchone()
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) or time.monotonic() >= deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.2)
            continue
        if row is None or str(row[0]).lower() != "wal":
            raise RuntimeError(f"SQLite refused WAL mode for {database} (journal_mode is {row!r})")
        return


def _postgres_engine(url: URL, schema: str | None, application_name: str) -> Engine:
    connect_args: dict[str, Any] = {"application_name": application_name}
    if schema is not None:
        if SCHEMA_NAME_RE.fullmatch(schema) is None:
            raise ValueError(f"invalid schema name {schema!r}: lower case letters, digits and _ only")
        connect_args["options"] = f"-c search_path={schema}"
    return sa.create_engine(url, pool_pre_ping=True, connect_args=connect_args)
