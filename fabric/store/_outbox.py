"""The ticket outbox: ticket writes (open, comment, reopen) waiting for the ticket system to take them.

The engine never calls the ticket system on its way to a UFM write: it records the write here (one row, no
network) and goes on, and a sender (``fabric.controller.outbox``) carries the rows out in order, each deleted once
the ticket system took it, each failed one given a later ``next_attempt_at``. The row is the write's durable
record: a ticket system that is down delays the write, a crash or restart does not lose it.

A row holds what the write needs, not the ticket: the dedup key says which ticket, and the claim in ``tickets``
(``fabric.store._tickets``) still decides whether a ticket is created or adopted, so a row carried out twice (the
answer to the first attempt was lost) opens no second ticket. At most one ``open`` row waits per dedup key: the
reconciliation asks for an open ticket every cycle, and the second ask is the first one still waiting.

``uncertain_at``: when an attempt at an ``open`` failed in a way that leaves its outcome unknown (no answer: Jira
may have created the issue). The sender does not try again before the ticket system's search can show such an
issue (``OutboxSettings.search_settle``), so that the adoption search, not a blind create, answers the retry.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

import sqlalchemy as sa
from sqlalchemy.engine import RowMapping

from fabric.remediation.domain import ComponentId
from fabric.store._base import OpsBase
from fabric.store.schema import METADATA
from fabric.store.types import ID, UTCDateTime

__all__ = ["OutboxEntry", "OutboxFigures", "OutboxOps", "TicketWriteKind", "ticket_outbox"]


class TicketWriteKind(StrEnum):
    OPEN = "open"
    """The component's open ticket: adopted, reopened or created (``Ticketing.ensure_open``)."""
    COMMENT = "comment"
    REOPEN = "reopen"
    """The component's last ticket reopened (it broke again on probation), or a new one opened."""


ticket_outbox = sa.Table(
    "ticket_outbox",
    METADATA,
    sa.Column("id", ID, primary_key=True, autoincrement=True),
    sa.Column("fabric", sa.Text, nullable=False),
    sa.Column("kind", sa.Text, nullable=False),
    sa.Column("dedup_key", sa.Text, nullable=False),
    sa.Column("component", sa.Text, nullable=True),  # None: the fabric's storm ticket
    sa.Column("rule", sa.Text, nullable=True),  # what found the fault: the ticket's priority follows from it
    sa.Column("summary", sa.Text, nullable=False),
    sa.Column("body", sa.Text, nullable=False),
    sa.Column("created_at", UTCDateTime, nullable=False),
    sa.Column("next_attempt_at", UTCDateTime, nullable=False),
    sa.Column("attempts", sa.Integer, nullable=False),
    sa.Column("last_error", sa.Text, nullable=True),
    sa.Column("uncertain_at", UTCDateTime, nullable=True),
    sa.Index("ix_ticket_outbox_fabric_id", "fabric", "id"),
    sqlite_autoincrement=True,
)
"""Added in schema version 6 (``fabric.store.migrations``)."""


@dataclass(frozen=True, slots=True)
class OutboxEntry:
    id: int
    kind: TicketWriteKind
    dedup_key: str
    component: ComponentId | None
    rule: str | None
    summary: str
    body: str
    created_at: datetime
    next_attempt_at: datetime
    attempts: int
    """Attempts that failed so far."""
    last_error: str | None
    uncertain_at: datetime | None


@dataclass(frozen=True, slots=True)
class OutboxFigures:
    pending: int
    """Ticket writes waiting."""
    oldest_seconds: float
    """How long the oldest has waited (0 when none waits)."""


def _entry(row: RowMapping) -> OutboxEntry:
    component = row["component"]
    return OutboxEntry(
        id=int(row["id"]), kind=TicketWriteKind(row["kind"]), dedup_key=row["dedup_key"],
        component=None if component is None else ComponentId.parse(component), rule=row["rule"],
        summary=row["summary"],
        body=row["body"], created_at=row["created_at"], next_attempt_at=row["next_attempt_at"],
        attempts=int(row["attempts"]), last_error=row["last_error"], uncertain_at=row["uncertain_at"])


class OutboxOps(OpsBase):
    def enqueue_ticket_write(self, kind: TicketWriteKind, dedup_key: str, *, component: ComponentId | None,
                             summary: str, body: str, rule: str | None = None) -> tuple[OutboxEntry, bool]:
        """Record a ticket write, due now. Returns ``(entry, queued)``: an ``open`` for a dedup key that has one
        waiting already is that one (``queued`` False)."""
        kind = TicketWriteKind(kind)
        now = self._now()
        with self._conn() as conn:
            if kind is TicketWriteKind.OPEN:
                waiting = conn.execute(
                    sa.select(ticket_outbox).where(ticket_outbox.c.fabric == self.fabric,
                                                   ticket_outbox.c.dedup_key == dedup_key,
                                                   ticket_outbox.c.kind == kind.value)
                    .order_by(ticket_outbox.c.id).limit(1)).mappings().first()
                if waiting is not None:
                    return _entry(waiting), False
            values = {"fabric": self.fabric, "kind": kind.value, "dedup_key": dedup_key,
                      "component": None if component is None else str(component), "rule": rule,
                      "summary": summary, "body": body,
                      "created_at": now, "next_attempt_at": now, "attempts": 0, "last_error": None,
                      "uncertain_at": None}
            row = conn.execute(sa.insert(ticket_outbox).values(**values).returning(*ticket_outbox.c))
            return _entry(row.mappings().one()), True

    def pending_ticket_writes(self, limit: int | None = None) -> list[OutboxEntry]:
        """Every ticket write waiting, oldest first (the order they are carried out in)."""
        query = sa.select(ticket_outbox).where(ticket_outbox.c.fabric == self.fabric).order_by(ticket_outbox.c.id)
        if limit is not None:
            query = query.limit(limit)
        with self._conn() as conn:
            return [_entry(row) for row in conn.execute(query).mappings()]

    def ticket_write_sent(self, entry_id: int) -> None:
        """The ticket system took the write: it no longer waits (the intents and tickets tables keep the history)."""
        with self._conn() as conn:
            conn.execute(sa.delete(ticket_outbox).where(ticket_outbox.c.fabric == self.fabric,
                                                        ticket_outbox.c.id == entry_id))

    def ticket_write_failed(self, entry_id: int, error: str, retry_at: datetime, *, uncertain: bool) -> None:
        """An attempt failed: one more counted, tried again at ``retry_at``; ``uncertain``: it may have been carried
        out (the first such time is kept)."""
        now = self._now()
        values: dict[str, object] = {"attempts": ticket_outbox.c.attempts + 1, "last_error": error,
                                     "next_attempt_at": retry_at}
        if uncertain:
            values["uncertain_at"] = sa.func.coalesce(ticket_outbox.c.uncertain_at, now)
        with self._conn() as conn:
            conn.execute(sa.update(ticket_outbox).where(ticket_outbox.c.fabric == self.fabric,
                                                        ticket_outbox.c.id == entry_id).values(**values))

    def hold_ticket_writes(self, until: datetime) -> int:
        """No waiting write is tried before ``until`` (the ticket system is down: one backoff for all of them).
        Returns how many were moved."""
        with self._conn() as conn:
            result = conn.execute(sa.update(ticket_outbox).where(ticket_outbox.c.fabric == self.fabric,
                                                                 ticket_outbox.c.next_attempt_at < until)
                                  .values(next_attempt_at=until))
        return int(result.rowcount)

    def outbox_figures(self) -> OutboxFigures:
        """How many ticket writes wait, and how long the oldest has."""
        query = sa.select(sa.func.count(), sa.func.min(ticket_outbox.c.created_at)).where(
            ticket_outbox.c.fabric == self.fabric)
        with self._read() as conn:
            count, oldest = conn.execute(query).one()
        if not count or oldest is None:
            return OutboxFigures(0, 0.0)
        return OutboxFigures(int(count), max(0.0, (self._now() - oldest).total_seconds()))
