"""Operating state: the UFM event cursor, silences and webhook deliveries."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import RowMapping

from fabric.remediation.domain import ComponentId
from fabric.remediation.muting import check_matcher, silence_matches
from fabric.store._base import OpsBase, dialect_insert
from fabric.store.records import CursorRecord, Delivery, NewDelivery, Silence
from fabric.store.schema import event_cursor, silences, tickets, webhook_deliveries
from fabric.store.types import ensure_utc


def _silence(row: RowMapping) -> Silence:
    return Silence(
        id=int(row["id"]),
        matcher=row["matcher"],
        reason=row["reason"],
        created_by=row["created_by"],
        starts_at=row["starts_at"],
        ends_at=row["ends_at"],
        created_at=row["created_at"],
    )


def _delivery(row: RowMapping) -> Delivery:
    return Delivery(
        id=row["id"],
        source=row["source"],
        received_at=row["received_at"],
        payload=row["payload"],
        processed_at=row["processed_at"],
    )


class ControlOps(OpsBase):
    # -- UFM event cursor ---------------------------------------------------------------------------------

    def load_cursor(self) -> CursorRecord | None:
        """This fabric's saved event cursor (``None``: never saved)."""
        with self._read() as conn:
            row = conn.execute(sa.select(event_cursor).where(event_cursor.c.fabric == self.fabric)).mappings().first()
        if row is None:
            return None
        return CursorRecord(
            fabric=row["fabric"],
            high_water_id=None if row["high_water_id"] is None else int(row["high_water_id"]),
            last_event_time=row["last_event_time"],
            restart_count=int(row["restart_count"]),
            updated_at=row["updated_at"],
        )

    def save_cursor(
        self, *, high_water_id: int | None, last_event_time: datetime | None, restart_count: int
    ) -> CursorRecord:
        """Save this fabric's event cursor (the fields of ``fabric.ufm.cursor.CursorState``)."""
        now = self._now()
        values: dict[str, Any] = {
            "fabric": self.fabric,
            "high_water_id": high_water_id,
            "last_event_time": None if last_event_time is None else ensure_utc(last_event_time, "last_event_time"),
            "restart_count": restart_count,
            "updated_at": now,
        }
        with self._conn() as conn:
            insert = dialect_insert(conn, event_cursor).values(**values)
            update = {name: insert.excluded[name] for name in values if name != "fabric"}
            conn.execute(insert.on_conflict_do_update(index_elements=["fabric"], set_=update))
        return CursorRecord(
            fabric=self.fabric,
            high_water_id=high_water_id,
            last_event_time=values["last_event_time"],
            restart_count=restart_count,
            updated_at=now,
        )

    # -- silences -----------------------------------------------------------------------------------------

    def add_silence(
        self,
        matcher: str,
        *,
        reason: str,
        created_by: str,
        ends_at: datetime | None = None,
        duration: timedelta | None = None,
        starts_at: datetime | None = None,
    ) -> Silence:
        """Silence components matching ``matcher`` (``kind:name`` or a glob such as ``link:pod01-*``) from
        ``starts_at`` (default now) until ``ends_at`` or for ``duration``."""
        matcher = check_matcher(matcher)
        if not reason.strip():
            raise ValueError("a silence needs a reason (a change or ticket number, why)")
        now = self._now()
        start = now if starts_at is None else ensure_utc(starts_at, "starts_at")
        if ends_at is not None and duration is None:
            end = ensure_utc(ends_at, "ends_at")
        elif duration is not None and ends_at is None:
            end = start + duration
        else:
            raise ValueError("give a silence either ends_at or duration")
        if end <= start:
            raise ValueError(f"a silence must end after it starts ({start.isoformat()} .. {end.isoformat()})")
        values = {
            "fabric": self.fabric,
            "matcher": matcher,
            "reason": reason,
            "created_by": created_by,
            "starts_at": start,
            "ends_at": end,
            "created_at": now,
        }
        with self._conn() as conn:
            new_id = conn.execute(sa.insert(silences).values(**values).returning(silences.c.id)).scalar_one()
        return Silence(
            id=int(new_id),
            matcher=matcher,
            reason=reason,
            created_by=created_by,
            starts_at=start,
            ends_at=end,
            created_at=now,
        )

    def expire_silence(self, silence_id: int) -> bool:
        """End a silence now (Alertmanager's "expire"; a future one becomes empty).  False when it does not exist or
        already ended."""
        now = self._now()
        with self._conn() as conn:
            result = conn.execute(
                sa.update(silences)
                .where(silences.c.fabric == self.fabric, silences.c.id == silence_id, silences.c.ends_at > now)
                .values(ends_at=now, starts_at=sa.case((silences.c.starts_at > now, now), else_=silences.c.starts_at))
            )
        return result.rowcount == 1

    def active_silences(self, now: datetime) -> list[Silence]:
        """Silences in force at ``now`` (``starts_at <= now < ends_at``), oldest first."""
        now = ensure_utc(now)
        query = (sa.select(silences)
                 .where(silences.c.fabric == self.fabric, silences.c.ends_at > now, silences.c.starts_at <= now)
                 .order_by(silences.c.id))
        with self._read() as conn:
            return [_silence(row) for row in conn.execute(query).mappings()]

    def silences(self, *, include_ended_since: datetime | None = None) -> list[Silence]:
        """Current and future silences, plus those that ended after ``include_ended_since``."""
        cutoff = self._now() if include_ended_since is None else ensure_utc(include_ended_since)
        query = (sa.select(silences).where(silences.c.fabric == self.fabric, silences.c.ends_at > cutoff)
                 .order_by(silences.c.id))
        with self._read() as conn:
            return [_silence(row) for row in conn.execute(query).mappings()]

    def matching_silence(self, component: ComponentId | str, now: datetime) -> Silence | None:
        """The first silence in force at ``now`` that covers ``component``."""
        for silence in self.active_silences(now):
            if silence_matches(silence.matcher, component):
                return silence
        return None

    def is_silenced(self, component: ComponentId | str, now: datetime) -> bool:
        return self.matching_silence(component, now) is not None

    # -- webhook deliveries -------------------------------------------------------------------------------

    def _delivery(self, delivery_id: str) -> sa.ColumnElement[bool]:
        return sa.and_(webhook_deliveries.c.fabric == self.fabric, webhook_deliveries.c.id == delivery_id)

    def record_delivery(self, delivery_id: str, *, source: str, payload: Any = None) -> bool:
        """Remember a webhook delivery before processing it.  False: this id was seen already (a retry)."""
        if not delivery_id:
            raise ValueError("a delivery needs an id")
        with self._conn() as conn:
            stmt = (
                dialect_insert(conn, webhook_deliveries)
                .values(fabric=self.fabric, id=delivery_id, source=source, received_at=self._now(), payload=payload,
                        processed_at=None)
                .on_conflict_do_nothing(index_elements=["fabric", "id"])
                .returning(webhook_deliveries.c.id)
            )
            # RETURNING, not rowcount: psycopg reports -1 for an INSERT here.
            return conn.execute(stmt).first() is not None

    def record_ticket_deliveries(self, backend: str, deliveries: Sequence[NewDelivery]) -> list[bool | None]:
        """Remember, in one transaction and two statements, each delivery naming a ticket of this fabric that
        ``backend`` has; for each, in order: True (stored), False (this id was seen already, in the store or earlier
        in ``deliveries``: a retry) or None (no such ticket: not stored). The webhook receiver's group commit."""
        if not deliveries:
            return []
        with self._conn() as conn:
            known = set(conn.scalars(sa.select(tickets.c.external_key).distinct().where(
                tickets.c.fabric == self.fabric, tickets.c.backend == backend,
                tickets.c.external_key.in_({d.ticket for d in deliveries}))))
            now = self._now()
            rows = {d.id: {"fabric": self.fabric, "id": d.id, "source": d.source, "received_at": now,
                           "payload": d.payload, "processed_at": None}
                    for d in reversed(deliveries) if d.ticket in known}  # reversed: the first of an id's repeats
            stored: set[str] = set()
            if rows:
                stmt = (dialect_insert(conn, webhook_deliveries).values(list(rows.values()))
                        .on_conflict_do_nothing(index_elements=["fabric", "id"]).returning(webhook_deliveries.c.id))
                stored = set(conn.scalars(stmt))
        outcomes: list[bool | None] = []
        for delivery in deliveries:
            if delivery.ticket not in known:
                outcomes.append(None)
            else:
                outcomes.append(delivery.id in stored)
                stored.discard(delivery.id)  # a repeat later in the same batch is a retry
        return outcomes

    def mark_delivery_processed(self, delivery_id: str) -> bool:
        """Record that a delivery was acted on.  False when unknown or already processed."""
        with self._conn() as conn:
            result = conn.execute(
                sa.update(webhook_deliveries)
                .where(self._delivery(delivery_id), webhook_deliveries.c.processed_at.is_(None))
                .values(processed_at=self._now())
            )
        return result.rowcount == 1

    def get_delivery(self, delivery_id: str) -> Delivery | None:
        with self._read() as conn:
            query = sa.select(webhook_deliveries).where(self._delivery(delivery_id))
            row = conn.execute(query).mappings().first()
        return None if row is None else _delivery(row)

    def unprocessed_deliveries(self, limit: int = 100) -> list[Delivery]:
        """Deliveries received but not processed (e.g. the process died in between), oldest first."""
        query = (
            sa.select(webhook_deliveries)
            .where(webhook_deliveries.c.fabric == self.fabric, webhook_deliveries.c.processed_at.is_(None))
            .order_by(webhook_deliveries.c.received_at, webhook_deliveries.c.id)
            .limit(limit)
        )
        with self._read() as conn:
            return [_delivery(row) for row in conn.execute(query).mappings()]

    def prune_deliveries(self, received_before: datetime) -> int:
        """Forget processed deliveries received before ``received_before`` (keep more than the sender's retry
        window, e.g. a day for Jira Cloud's ~30 min); returns how many."""
        with self._conn() as conn:
            result = conn.execute(
                sa.delete(webhook_deliveries).where(
                    webhook_deliveries.c.fabric == self.fabric,
                    webhook_deliveries.c.received_at < ensure_utc(received_before),
                    webhook_deliveries.c.processed_at.is_not(None),
                )
            )
        return int(result.rowcount)
