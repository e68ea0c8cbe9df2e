"""What every group of store operations shares: a connection to run in, the clock, the fabric name."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from datetime import datetime
from enum import StrEnum
from typing import TypeVar

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection

from fabric.store.records import StoreError
from fabric.store.types import ensure_utc
from tickets.sqltypes import upsert_insert

Clock = Callable[[], datetime]
E = TypeVar("E", bound=StrEnum)


class OpsBase:
    """Operations run in ``self._conn()``: a transaction of their own (``Store``) or the caller's
    (``Transaction``)."""

    fabric: str
    _clock: Clock

    def _conn(self) -> AbstractContextManager[Connection]:
        raise NotImplementedError

    def _read(self) -> AbstractContextManager[Connection]:
        """Where an operation that only reads runs: the caller's transaction, or one of its own that never takes
        SQLite's write lock (``engine.READS_ONLY``), so that the API's reads do not wait behind a cycle's writes."""
        return self._conn()

    def _now(self) -> datetime:
        return ensure_utc(self._clock(), "clock time")


def dialect_insert(conn: Connection, table: sa.Table) -> postgresql.Insert | sqlite.Insert:
    """An INSERT with ``ON CONFLICT`` support for this connection's dialect."""
    return upsert_insert(conn, table, StoreError, "the store supports")


def enum_values(kind: type[E], value: E | Iterable[E]) -> list[str]:
    """One enum member or several, as their values (for ``IN`` clauses)."""
    if isinstance(value, kind):
        return [value.value]
    return [kind(item).value for item in value]
