"""The reliability history the golden set is folded from, read a piece at a time: what was added or changed since
the last read (``HistoryMark``), so that a reader keeping its own fold (the API's golden index) never reads the
whole history twice.

Findings and decisions are append-only and read by id; tickets and component records change in place and are read
by ``updated_at``, from the newest time the last read saw (rows at that instant are read again: folding one twice
changes nothing). One leader writes them all, a cycle's in one transaction, so ids and times are committed in the
order they are read.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa

from fabric.remediation.domain import ActionKind, ComponentId
from fabric.store._base import OpsBase
from fabric.store.records import TicketState
from fabric.store.schema import components, decisions, findings, schema_version, tickets
from fabric.store.types import ensure_utc

_REPAIRED = (TicketState.RESOLVED.value, TicketState.CLOSED.value)


@dataclass(frozen=True, slots=True)
class HistoryMark:
    """How far a reader has read the history."""

    finding: int = 0
    """The newest finding's id read."""
    decision: int = 0
    """The newest decision's id read."""
    changed: datetime | None = None
    """The newest ``updated_at`` of the tickets and component records read."""


@dataclass(frozen=True, slots=True)
class HistoryRows:
    """What was added or changed after a mark, and the mark after it."""

    findings: list[tuple[ComponentId, datetime]]
    quarantines: list[ComponentId]
    """Components quarantined (live or in a dry run: either way the policy judged they broke too often)."""
    tickets: list[tuple[int, ComponentId, bool]]
    """Tickets of a component: id, component, repaired (resolved or closed)."""
    strikes: list[tuple[ComponentId, int]]
    """Component records with strikes, as they are now."""
    mark: HistoryMark


class HistoryOps(OpsBase):
    def history_after(self, mark: HistoryMark, *, changed: bool = True) -> HistoryRows:
        """The history added or changed after ``mark`` (``HistoryMark()``: all of it), in one snapshot.
        ``changed=False``: the findings and decisions only (the append-only, indexed part: the tickets and records
        are read by a time no index covers, so a reader may ask for them less often)."""
        fabric = self.fabric
        with self._read() as conn:
            # The fabric compared as an expression (``fabric || ''``), which no index serves: the rows are then found
            # by the id's range, where SQLite would walk the fabric's (fabric, at) index, every row of the fabric.
            found = conn.execute(sa.select(findings.c.id, findings.c.component, findings.c.at)
                                 .where(findings.c.fabric.concat("") == fabric, findings.c.id > mark.finding)
                                 .order_by(findings.c.id)).all()
            decided = conn.execute(sa.select(decisions.c.id, decisions.c.kind, decisions.c.component)
                                   .where(decisions.c.fabric.concat("") == fabric, decisions.c.id > mark.decision)
                                   .order_by(decisions.c.id)).all()
            ticket_query = sa.select(tickets.c.id, tickets.c.component, tickets.c.state, tickets.c.updated_at).where(
                tickets.c.fabric == fabric, tickets.c.component.is_not(None))
            record_query = sa.select(components.c.id, components.c.strikes, components.c.updated_at).where(
                components.c.fabric == fabric, components.c.strikes > 0)
            if mark.changed is not None:
                ticket_query = ticket_query.where(tickets.c.updated_at >= mark.changed)
                record_query = record_query.where(components.c.updated_at >= mark.changed)
            ticketed = conn.execute(ticket_query).all() if changed else []
            records = conn.execute(record_query).all() if changed else []
        newest = max([ensure_utc(row.updated_at) for row in (*ticketed, *records)], default=mark.changed)
        if mark.changed is not None and newest is not None:
            newest = max(newest, mark.changed)
        quarantine = ActionKind.QUARANTINE.value
        return HistoryRows(
            findings=[(ComponentId.parse(row.component), ensure_utc(row.at)) for row in found],
            quarantines=[ComponentId.parse(row.component) for row in decided
                         if row.kind == quarantine and row.component is not None],
            tickets=[(int(row.id), ComponentId.parse(row.component), row.state in _REPAIRED) for row in ticketed],
            strikes=[(ComponentId.parse(row.id), int(row.strikes)) for row in records],
            mark=HistoryMark(found[-1].id if found else mark.finding, decided[-1].id if decided else mark.decision,
                             newest))

    def watched_since(self) -> datetime | None:
        """When the database was created: the service has watched its fabrics since (``None``: no schema row)."""
        with self._read() as conn:
            at: datetime | None = conn.execute(sa.select(sa.func.min(schema_version.c.applied_at))).scalar_one()
        return None if at is None else ensure_utc(at)
