"""Column types that behave the same on SQLite and PostgreSQL."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from tickets.sqltypes import ID, UTCDateTime, ensure_utc

__all__ = ["ID", "JSON_DOC", "UTCDateTime", "ensure_utc"]


JSON_DOC = sa.JSON(none_as_null=True).with_variant(postgresql.JSONB(none_as_null=True), "postgresql")
"""A JSON document: ``jsonb`` on PostgreSQL, text on SQLite."""
