"""Tickets kept in the service's own database: for sites without Jira, for the demo and for tests.

Two tables, ``local_tickets`` and ``local_ticket_comments``, defined here in their own ``MetaData``
(``LOCAL_METADATA``) and owned by this backend (``LocalTicketBackend.create_tables``), beside the service's own
tables in the same database; the service's schema creates them (``fabricctl store migrate``), never a daemon
starting. This package needs nothing from ``fabric/``.

Keys are ``LOCAL-<id>``; ids are never reused.  At most one ticket per dedup key is open at any time: a
partial unique index enforces it, and ``open`` claims with ``INSERT ... ON CONFLICT DO NOTHING`` against that
index, so two racing callers (threads, processes, an active and a standby daemon) get the same ticket.
Nobody resolves these tickets but an operator (``fabricctl tickets resolve``), through ``resolve``.

Works on SQLite and PostgreSQL.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Connection, Engine, RowMapping

from tickets.base import (
    BackendUnavailableError,
    Ticket,
    TicketConflictError,
    TicketError,
    TicketNotFoundError,
    TicketStatus,
    ticket_labels,
)
from tickets.sqltypes import ID, UTCDateTime, ensure_utc, upsert_insert

__all__ = ["KEY_PREFIX", "LOCAL_METADATA", "LocalTicketBackend", "local_ticket_comments", "local_tickets"]

KEY_PREFIX = "LOCAL-"
_KEY_RE = re.compile(rf"^{KEY_PREFIX}(\d+)$", re.IGNORECASE)

Clock = Callable[[], datetime]


LOCAL_METADATA = sa.MetaData()

# Literal SQL, in the partial index and in ON CONFLICT alike: PostgreSQL must prove that the ON CONFLICT target's
# predicate implies the index's, which it cannot do with a bound parameter once psycopg has prepared the statement.
_OPEN_PREDICATE = sa.text("status = 'open'")

local_tickets = sa.Table(
    "local_tickets",
    LOCAL_METADATA,
    sa.Column("id", ID, primary_key=True, autoincrement=True),
    sa.Column("dedup_key", sa.Text, nullable=False),
    sa.Column("summary", sa.Text, nullable=False),
    sa.Column("description", sa.Text, nullable=False),
    sa.Column("status", sa.Text, nullable=False),
    sa.Column("labels", sa.JSON, nullable=False),
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Column("updated_at", UTCDateTime, nullable=False),
    sa.Column("resolved_at", UTCDateTime, nullable=True),
    sa.Index(
        "uq_local_tickets_open_dedup",
        "dedup_key",
        unique=True,
        postgresql_where=_OPEN_PREDICATE,
        sqlite_where=_OPEN_PREDICATE,
    ),
    sa.Index("ix_local_tickets_dedup_key", "dedup_key"),
    sa.Index("ix_local_tickets_status", "status"),
    sqlite_autoincrement=True,
)

local_ticket_comments = sa.Table(
    "local_ticket_comments",
    LOCAL_METADATA,
    sa.Column("id", ID, primary_key=True, autoincrement=True),
    sa.Column("ticket_id", ID, sa.ForeignKey("local_tickets.id", ondelete="CASCADE"), nullable=False),
    sa.Column("at", UTCDateTime, nullable=False),
    sa.Column("body", sa.Text, nullable=False),
    sa.Index("ix_local_ticket_comments_ticket", "ticket_id"),
    sqlite_autoincrement=True,
)

_OPEN_ONLY = local_tickets.c.status == TicketStatus.OPEN.value


def _utcnow() -> datetime:
    return datetime.now(UTC)


def _ticket_id(key: str) -> int:
    match = _KEY_RE.fullmatch(key.strip())
    if match is None:
        raise TicketNotFoundError(key)
    return int(match.group(1))


class LocalTicketBackend:
    """``TicketBackend`` over ``local_tickets``.  Thread-safe: every call is its own transaction."""

    name = "local"

    def __init__(self, engine: Engine, *, url_base: str | None = None, clock: Clock | None = None) -> None:
        """``engine``: the service's database (its tables must exist, see ``create_tables``).  ``url_base``:
        prefix of the ticket links shown to people (e.g. ``https://fabric.example/api/v1/tickets/``);
        ``None``: tickets have no URL."""
        self._engine = engine
        self._url_base = url_base
        self._clock = clock or _utcnow

    @staticmethod
    def create_tables(bind: Engine | Connection) -> None:
        """Create the two tables if missing (on a ``Connection``: in its transaction, the schema's creation)."""
        LOCAL_METADATA.create_all(bind)

    # -- the protocol ------------------------------------------------------------------------------------

    def open(self, dedup_key: str, summary: str, description: str, labels: Sequence[str] = (), *,
             severity: int | None = None) -> Ticket:
        """See ``TicketBackend.open``; local tickets have no priority (``severity`` is not kept)."""
        all_labels = ticket_labels(dedup_key, labels)
        now = self._now()
        with self._begin() as conn:
            insert = upsert_insert(conn, local_tickets, TicketError, "local tickets support")
            stmt = (
                insert.values(
                    dedup_key=dedup_key,
                    summary=summary,
                    description=description,
                    status=TicketStatus.OPEN.value,
                    labels=list(all_labels),
                    created_at=now,
                    updated_at=now,
                    resolved_at=None,
                )
                .on_conflict_do_nothing(index_elements=["dedup_key"], index_where=_OPEN_PREDICATE)
                .returning(local_tickets.c.id)
            )
            new_id = conn.execute(stmt).scalar_one_or_none()
            if new_id is not None:
                return self._load(conn, int(new_id))
            existing = self._find_open(conn, dedup_key)
            if existing is None:  # pragma: no cover - the conflicting row vanished between two statements
                raise TicketError(f"could not open or adopt a ticket for {dedup_key}")
            return existing

    def comment(self, key: str, text: str) -> None:
        ticket_id = _ticket_id(key)
        with self._begin() as conn:
            self._row(conn, ticket_id)
            self._add_comment(conn, ticket_id, text)

    def reopen(self, key: str, comment: str) -> Ticket:
        ticket_id = _ticket_id(key)
        now = self._now()
        try:
            with self._begin() as conn:
                row = self._row(conn, ticket_id)
                if row["status"] != TicketStatus.OPEN.value:
                    other = self._find_open(conn, row["dedup_key"])
                    if other is not None:
                        raise TicketConflictError(
                            f"cannot reopen {key}: {other.key} is open for the same dedup key {row['dedup_key']}"
                        )
                    conn.execute(
                        sa.update(local_tickets)
                        .where(local_tickets.c.id == ticket_id)
                        .values(status=TicketStatus.OPEN.value, resolved_at=None, updated_at=now)
                    )
                self._add_comment(conn, ticket_id, comment)
                return self._load(conn, ticket_id)
        except sa_exc.IntegrityError as err:  # another caller opened one for the same key meanwhile
            raise TicketConflictError(f"cannot reopen {key}: another ticket with its dedup key is open") from err

    def status(self, key: str) -> Ticket:
        ticket_id = _ticket_id(key)
        with self._begin() as conn:
            return self._load(conn, ticket_id)

    def find_open(self, dedup_key: str) -> Ticket | None:
        with self._begin() as conn:
            return self._find_open(conn, dedup_key)

    def resolve(self, key: str, resolution_comment: str) -> Ticket:
        return self._finish(key, TicketStatus.RESOLVED, resolution_comment)

    def list(self, status: TicketStatus | None = None) -> builtins.list[Ticket]:
        query = _ticket_query()
        if status is not None:
            query = query.where(local_tickets.c.status == TicketStatus(status).value)
        with self._begin() as conn:
            return [self._to_ticket(row) for row in conn.execute(query.order_by(local_tickets.c.id)).mappings()]

    # -- beyond the protocol -----------------------------------------------------------------------------

    def close(self, key: str, comment: str) -> Ticket:
        """Close without a repair (duplicate, won't fix).  Closing a closed ticket changes nothing."""
        return self._finish(key, TicketStatus.CLOSED, comment)

    def comments(self, key: str) -> builtins.list[tuple[datetime, str]]:
        """The comments of a ticket, oldest first, as ``(at, body)``."""
        ticket_id = _ticket_id(key)
        with self._begin() as conn:
            self._row(conn, ticket_id)
            rows = conn.execute(
                sa.select(local_ticket_comments.c.at, local_ticket_comments.c.body)
                .where(local_ticket_comments.c.ticket_id == ticket_id)
                .order_by(local_ticket_comments.c.id)
            ).all()
        return [(row.at, row.body) for row in rows]

    # -- internals ---------------------------------------------------------------------------------------

    def _finish(self, key: str, to: TicketStatus, comment: str) -> Ticket:
        ticket_id = _ticket_id(key)
        now = self._now()
        with self._begin() as conn:
            row = self._row(conn, ticket_id)
            current = TicketStatus(row["status"])
            if current is to:
                return self._load(conn, ticket_id)
            if current is not TicketStatus.OPEN:
                raise TicketError(f"cannot mark {key} {to.value}: it is {current.value}")
            conn.execute(
                sa.update(local_tickets)
                .where(local_tickets.c.id == ticket_id)
                .values(status=to.value, resolved_at=now, updated_at=now)
            )
            self._add_comment(conn, ticket_id, comment)
            return self._load(conn, ticket_id)

    def _now(self) -> datetime:
        return ensure_utc(self._clock(), "clock time")

    @contextmanager
    def _begin(self) -> Iterator[Connection]:
        try:
            with self._engine.begin() as conn:
                yield conn
        except (sa_exc.OperationalError, sa_exc.InterfaceError) as err:
            raise BackendUnavailableError(f"local ticket database unavailable: {err}") from err

    def _add_comment(self, conn: Connection, ticket_id: int, text: str) -> None:
        if not text:
            return
        now = self._now()
        conn.execute(sa.insert(local_ticket_comments).values(ticket_id=ticket_id, at=now, body=text))
        conn.execute(sa.update(local_tickets).where(local_tickets.c.id == ticket_id).values(updated_at=now))

    def _row(self, conn: Connection, ticket_id: int) -> RowMapping:
        row = conn.execute(sa.select(local_tickets).where(local_tickets.c.id == ticket_id)).mappings().first()
        if row is None:
            raise TicketNotFoundError(f"{KEY_PREFIX}{ticket_id}")
        return row

    def _load(self, conn: Connection, ticket_id: int) -> Ticket:
        row = conn.execute(_ticket_query().where(local_tickets.c.id == ticket_id)).mappings().first()
        if row is None:
            raise TicketNotFoundError(f"{KEY_PREFIX}{ticket_id}")
        return self._to_ticket(row)

    def _find_open(self, conn: Connection, dedup_key: str) -> Ticket | None:
        query = _ticket_query().where(local_tickets.c.dedup_key == dedup_key, _OPEN_ONLY)
        row = conn.execute(query).mappings().first()
        return None if row is None else self._to_ticket(row)

    def _to_ticket(self, row: RowMapping) -> Ticket:
        key = f"{KEY_PREFIX}{row['id']}"
        return Ticket(
            key=key,
            dedup_key=row["dedup_key"],
            summary=row["summary"],
            description=row["description"],
            status=TicketStatus(row["status"]),
            labels=tuple(row["labels"]),
            url=None if self._url_base is None else f"{self._url_base}{key}",
            created_at=row["created_at"],
            resolved_at=row["resolved_at"],
            comments=int(row["comments"]),
        )


def _ticket_query() -> sa.Select[Any]:
    comment_count = (
        sa.select(sa.func.count())
        .where(local_ticket_comments.c.ticket_id == local_tickets.c.id)
        .correlate(local_tickets)
        .scalar_subquery()
    )
    return sa.select(local_tickets, comment_count.label("comments"))


