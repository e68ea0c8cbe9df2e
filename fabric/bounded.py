"""Numbers and times the service takes from outside, bounded to what its store and Python can hold.

One set of types for every edge: the HTTP API's models, paths and queries validate with them (422 naming the
field), and ``fabricctl`` parses its options through the same types (``fabric.cli.common.bounded``: exit 2 naming
the option). A row id past 64 bits reaches neither SQLite nor PostgreSQL (both overflow), and a time near year 1 or
9999 overflows the first ``datetime`` sum or time-zone conversion made with it; both are refused where they enter.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import BeforeValidator, Field, WithJsonSchema

__all__ = ["EARLIEST", "LATEST", "MAX_ROW", "Instant", "RowOffset", "StoreId", "parse_instant"]

MAX_ROW = 2**63 - 1
"""The largest signed 64-bit integer: what a BIGINT column (and SQLite's INTEGER) holds."""

StoreId = Annotated[int, Field(ge=1, le=MAX_ROW, description="A row id (1 to 2^63-1).")]
"""The id of a stored row (a silence, a decision, a request)."""
RowOffset = Annotated[int, Field(ge=0, le=MAX_ROW)]
"""How many rows to skip."""

EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(3000, 1, 1, tzinfo=UTC)
"""Accepted instants lie in ``[EARLIEST, LATEST)``: far from both ends of ``datetime``, so that any duration the
service accepts (``fabric.durations.LONGEST``) can be added to or taken from one, in any time zone."""


def parse_instant(value: Any) -> datetime:
    """An aware ``datetime`` from ISO 8601 text (``2026-12-02T01:00:00+00:00``, ``...Z``) or a ``datetime``, within
    ``EARLIEST .. LATEST``; ``ValueError`` saying why otherwise. A time without a zone is refused (which one was
    meant?), and so is a number: a count of seconds is not how anyone writes a time."""
    if isinstance(value, str):
        try:
            when = datetime.fromisoformat(value.strip())
        except ValueError:
            raise ValueError(f"not a time: {value!r} (write e.g. 2026-12-02T01:00:00+00:00)") from None
    elif isinstance(value, datetime):
        when = value
    else:
        raise ValueError(f"not a time: {value!r} (write e.g. 2026-12-02T01:00:00+00:00)")
    if when.tzinfo is None or when.utcoffset() is None:
        raise ValueError(f"{value!s} has no time zone (add +00:00 for UTC): which one was meant?")
    try:
        inside = EARLIEST <= when < LATEST  # compared as instants: the conversion to UTC can overflow
    except OverflowError:
        inside = False
    if not inside:
        raise ValueError(f"{when.isoformat()} is not between {EARLIEST.date()} and {LATEST.date()} (UTC)")
    return when


Instant = Annotated[datetime, BeforeValidator(parse_instant), WithJsonSchema({
    "type": "string", "format": "date-time",
    "description": f"An ISO 8601 time with its zone, from {EARLIEST.date()} to {LATEST.date()} (UTC)."})]
"""A point in time given from outside: aware, and within ``EARLIEST .. LATEST``."""
