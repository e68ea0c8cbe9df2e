"""The storm breaker: whether automation is halted, and the storm window that decides when it trips.

Both are stored so that a restart in the middle of a storm changes nothing: the components counted toward the
storm window, the newest finding held while halted (the quiet period runs from it) and how many were held are
written with the cycle's decisions, in the same transaction.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from fabric.remediation.domain import ComponentId
from fabric.store._base import OpsBase, dialect_insert
from fabric.store.records import BreakerState
from fabric.store.schema import breaker, storm_window
from fabric.store.types import ensure_utc


class BreakerOps(OpsBase):
    def breaker_state(self) -> BreakerState:
        """This fabric's breaker (never halted when never written)."""
        with self._read() as conn:
            row = conn.execute(sa.select(breaker).where(breaker.c.fabric == self.fabric)).mappings().first()
        if row is None:
            return BreakerState(fabric=self.fabric)
        return BreakerState(
            fabric=row["fabric"],
            halted=bool(row["halted"]),
            since=row["since"],
            reason=row["reason"],
            storm_dedup_key=row["storm_dedup_key"],
            updated_at=row["updated_at"],
            last_held=row["last_held"],
            held_count=int(row["held_count"]),
        )

    def _ensure_breaker_row(self, conn: Connection, now: datetime, *, fabric: str | None = None) -> None:
        """A running breaker's row for ``fabric`` (this store's by default) unless it has one."""
        conn.execute(
            dialect_insert(conn, breaker)
            .values(fabric=fabric or self.fabric, halted=False, since=None, reason="", storm_dedup_key=None,
                    updated_at=now, last_held=None, held_count=0)
            .on_conflict_do_nothing(index_elements=["fabric"])
        )

    def halt(self, reason: str, *, storm_dedup_key: str | None = None) -> BreakerState:
        """Trip the breaker: no UFM writes until ``resume``.  Halting a halted breaker keeps the first halt's time
        and reason (it only fills in a storm ticket key that was missing)."""
        now = self._now()
        with self._conn() as conn:
            self._ensure_breaker_row(conn, now)
            mine = breaker.c.fabric == self.fabric
            tripped = conn.execute(
                sa.update(breaker)
                .where(mine, sa.not_(breaker.c.halted))
                .values(halted=True, since=now, reason=reason, storm_dedup_key=storm_dedup_key, updated_at=now)
            )
            if tripped.rowcount == 0 and storm_dedup_key is not None:
                conn.execute(
                    sa.update(breaker)
                    .where(mine, breaker.c.storm_dedup_key.is_(None))
                    .values(storm_dedup_key=storm_dedup_key, updated_at=now)
                )
        return self.breaker_state()

    def resume(self, reason: str = "") -> BreakerState:
        """Close the breaker again (``fabricctl resume`` or the quiet period).  Resuming a running breaker changes
        nothing."""
        now = self._now()
        with self._conn() as conn:
            conn.execute(
                sa.update(breaker)
                .where(breaker.c.fabric == self.fabric, breaker.c.halted)
                .values(halted=False, since=now, reason=reason, storm_dedup_key=None, updated_at=now,
                        last_held=None, held_count=0)
            )
        return self.breaker_state()

    # -- the storm window ---------------------------------------------------------------------------------

    def storm_window(self) -> dict[ComponentId, datetime]:
        """The components counted toward the storm window, with their first finding's time."""
        query = (sa.select(storm_window.c.component, storm_window.c.first_at)
                 .where(storm_window.c.fabric == self.fabric)
                 .order_by(storm_window.c.first_at, storm_window.c.component))
        with self._read() as conn:
            return {ComponentId.parse(component): at for component, at in conn.execute(query)}

    def save_storm(self, window: Mapping[ComponentId, datetime], *, last_held: datetime | None,
                   held_count: int) -> None:
        """Replace the storm window and the held findings' figures with the policy's (written when they changed)."""
        now = self._now()
        with self._conn() as conn:
            conn.execute(sa.delete(storm_window).where(storm_window.c.fabric == self.fabric))
            if window:
                conn.execute(sa.insert(storm_window), [
                    {"fabric": self.fabric, "component": str(component), "first_at": ensure_utc(at, "first_at")}
                    for component, at in window.items()])
            self._ensure_breaker_row(conn, now)
            conn.execute(
                sa.update(breaker).where(breaker.c.fabric == self.fabric)
                .values(last_held=None if last_held is None else ensure_utc(last_held, "last_held"),
                        held_count=held_count)
            )
