"""The locks that keep two daemons from both acting for one fabric: two would both decide and both write to UFM.

- SQLite: one daemon per database, for the process's life: an exclusive ``flock`` on ``<database>.lock``. The
  kernel releases it when the process ends, however it ends (a SIGKILL too), so a stale lock file never blocks a
  restart; the file holds the holder's pid, for the refusal's message.
- PostgreSQL: any number of daemons per fabric, one leading: ``fabric.daemon.leader`` holds a session-level
  advisory lock keyed by the fabric (``advisory_key``); a second daemon is a standby, not a refusal.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import Connection, make_url

from fabric.errors import ErrorKind, FabricError
from fabric.store import Store


class InstanceLockError(FabricError):
    kind = ErrorKind.STORE


class InstanceLock:
    def __init__(self, path: Path, handle: int) -> None:
        self.path, self._handle = path, handle

    def release(self) -> None:
        os.close(self._handle)  # closing the descriptor releases the flock


def sqlite_file(url: str) -> Path | None:
    """The database file of an SQLite URL (``None``: another backend, or an in-memory database)."""
    parsed = make_url(url)
    database = parsed.database or ""
    if parsed.get_backend_name() != "sqlite" or database in {"", ":memory:"} or "mode=memory" in database:
        return None
    return Path(database).expanduser()


def advisory_key(fabric: str) -> int:
    """The fabric's advisory lock id: a signed 64-bit number from its name (stable across versions and hosts)."""
    digest = hashlib.sha256(f"fabric-remediation:{fabric}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def hold(store: Store) -> InstanceLock | None:
    """The lock of ``store``'s SQLite database, or ``InstanceLockError`` naming who holds it (``None``: PostgreSQL,
    where leadership decides who acts, or an in-memory SQLite database, which no other process can open)."""
    if store.backend == "postgresql":
        return None
    return _hold_file(str(store.engine.url))


ADVISORY_LOCK = ("l.locktype = 'advisory' AND l.granted "
                 "AND ((l.classid::bigint << 32) | l.objid::bigint) = (:key & x'ffffffffffffffff'::bigint)")
"""The rows of ``pg_locks l`` of the granted advisory lock ``:key`` (PostgreSQL splits a bigint key in two)."""


def describe_holder(connection: Connection, key: int) -> str:
    """Which PostgreSQL session holds the advisory lock ``key``, for a log line."""
    holder = connection.execute(sa.text(
        f"SELECT a.pid, a.client_addr FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE {ADVISORY_LOCK}"
    ), {"key": key}).first()
    if holder is None:
        return "no session (it was just released)"
    return f"backend pid {holder.pid}" + (f" from {holder.client_addr}" if holder.client_addr else "")


def _hold_file(url: str) -> InstanceLock | None:
    database = sqlite_file(url)
    if database is None:
        return None
    path = database.with_name(database.name + ".lock")
    try:
        handle = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise InstanceLockError(f"cannot create the lock file {path}: {exc.strerror or exc}") from None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(handle, 32, 0).decode(errors="replace").strip() or "unknown"
        os.close(handle)
        raise InstanceLockError(f"another fabricctl run (pid {holder}) already runs on {database} (it holds "
                                f"{path}): one daemon per SQLite database") from None
    os.ftruncate(handle, 0)
    os.pwrite(handle, f"{os.getpid()}\n".encode(), 0)
    return InstanceLock(path, handle)
