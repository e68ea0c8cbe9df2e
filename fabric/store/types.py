"""Column types that behave the same on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
from sqlalchemy.engine import Dialect

__all__ = ["ID", "JSON_DOC", "UTCDateTime", "ensure_utc"]


def ensure_utc(value: datetime, what: str = "datetime") -> datetime:
    """``value`` in UTC; a naive datetime is refused (it is always a bug: which zone was it?)."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"naive {what} {value!r}: the store keeps aware UTC datetimes only")
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


JSON_DOC = sa.JSON(none_as_null=True).with_variant(postgresql.JSONB(none_as_null=True), "postgresql")
"""A JSON document: ``jsonb`` on PostgreSQL, text on SQLite."""

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
"""Autoincrement primary keys: ``bigserial`` on PostgreSQL, ``INTEGER PRIMARY KEY AUTOINCREMENT`` on SQLite."""
