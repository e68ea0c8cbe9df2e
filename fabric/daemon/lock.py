"""One daemon per SQLite database: an exclusive ``flock`` on ``<database>.lock``, held for the process's life.

Two daemons on one SQLite file would both decide and both write to UFM. The kernel releases the lock when the
process ends, however it ends (a SIGKILL too), so a stale lock file never blocks a restart; the file holds the
holder's pid, for the refusal's message. PostgreSQL needs leadership across hosts (the next issue): no lock here.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from sqlalchemy.engine import make_url

from fabric.errors import ErrorKind, FabricError


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


def hold(url: str) -> InstanceLock | None:
    """The lock of the SQLite database at ``url``, or ``InstanceLockError`` naming who holds it."""
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
