"""SQL pieces that behave the same on SQLite and PostgreSQL, shared by the local ticket tables and the service's
store (``fabric.store``): aware UTC datetimes, autoincrement ids, ``INSERT ... ON CONFLICT``.

They live here, not in ``fabric.store``, because ``tickets`` depends on nothing of ``fabric``.
"""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Dialect

__all__ = ["ID", "UTCDateTime", "ensure_utc", "upsert_insert"]


def ensure_utc(value: datetime, what: str = "datetime") -> datetime:
    """``value`` in UTC; a naive datetime is refused (it is always a bug: which zone was it?)."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"naive {what} {value!r}: only aware UTC datetimes are stored")
    return value.astimezone(UTC)


class UTCDateTime(sa.TypeDecorator[datetime]):
    """Aware UTC datetimes in and out.

    PostgreSQL stores ``timestamptz``; SQLite has no time zones, so it stores naive UTC in SQLAlchemy's fixed
    ``YYYY-MM-DD HH:MM:SS.ffffff`` text, which sorts and compares correctly as text.
    """

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        value = ensure_utc(value)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
"""Autoincrement primary keys: ``bigserial`` on PostgreSQL, ``INTEGER PRIMARY KEY AUTOINCREMENT`` on SQLite."""


def upsert_insert(conn: Connection, table: sa.Table, unsupported: type[Exception],
                  who: str) -> postgresql.Insert | sqlite.Insert:
    """An INSERT with ``ON CONFLICT`` support for this connection's dialect; ``unsupported`` names any other."""
    name = conn.dialect.name
    if name == "postgresql":
        return postgresql.insert(table)
    if name == "sqlite":
        return sqlite.insert(table)
    raise unsupported(f"{who} SQLite and PostgreSQL, not {name}")
