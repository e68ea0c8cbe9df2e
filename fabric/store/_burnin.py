"""Burn-in windows: asked for through the API (an operator request and its window's row, together), opened and
judged by the engine, which keeps the survivors report. At most one window of a fabric is open at a time (the
engine opens the next once the open one ended)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import RowMapping

from fabric.store._requests import RequestOps
from fabric.store.records import BurninWindow, OperatorRequest, RequestKind
from fabric.store.schema import burnin_windows


def _window(row: RowMapping) -> BurninWindow:
    return BurninWindow(id=int(row["id"]), duration=timedelta(seconds=float(row["duration_s"])),
                        started_at=row["started_at"], ends_at=row["ends_at"], ended_at=row["ended_at"],
                        dry_run=None if row["dry_run"] is None else bool(row["dry_run"]), report=row["report"])


class BurninOps(RequestOps):
    def ask_burnin(self, duration: timedelta, *, reason: str, requested_by: str) -> tuple[OperatorRequest,
                                                                                          BurninWindow]:
        """A burn-in request and its window's row (use in a transaction: both or neither)."""
        if duration <= timedelta(0):
            raise ValueError("a burn-in window lasts more than no time")
        request = self.request(RequestKind.BURNIN, reason=reason, requested_by=requested_by)
        with self._conn() as conn:
            conn.execute(sa.insert(burnin_windows).values(id=request.id, fabric=self.fabric,
                                                          duration_s=duration.total_seconds()))
        return request, BurninWindow(request.id, duration)

    def burnin_window(self, window_id: int) -> BurninWindow | None:
        return next(iter(self._windows(burnin_windows.c.id == window_id)), None)

    def running_burnin(self) -> BurninWindow | None:
        """The window opened and not judged yet, if any."""
        return next(iter(self._windows(burnin_windows.c.started_at.is_not(None),
                                       burnin_windows.c.ended_at.is_(None))), None)

    def burnin_windows(self, limit: int = 20) -> list[BurninWindow]:
        """The newest windows first."""
        return self._windows(limit=limit)

    def open_burnin(self, window_id: int, started_at: datetime, *, dry_run: bool) -> BurninWindow:
        window = self.burnin_window(window_id)
        if window is None:
            raise ValueError(f"no burn-in window {window_id}")
        with self._conn() as conn:
            conn.execute(sa.update(burnin_windows).where(burnin_windows.c.fabric == self.fabric,
                                                         burnin_windows.c.id == window_id)
                         .values(started_at=started_at, ends_at=started_at + window.duration, dry_run=dry_run))
        opened = self.burnin_window(window_id)
        assert opened is not None
        return opened

    def end_burnin(self, window_id: int, ended_at: datetime, report: dict[str, Any]) -> None:
        with self._conn() as conn:
            conn.execute(sa.update(burnin_windows).where(burnin_windows.c.fabric == self.fabric,
                                                         burnin_windows.c.id == window_id)
                         .values(ended_at=ended_at, report=report))

    def _windows(self, *where: sa.ColumnElement[bool], limit: int | None = None) -> list[BurninWindow]:
        query = (sa.select(burnin_windows).where(burnin_windows.c.fabric == self.fabric, *where)
                 .order_by(burnin_windows.c.id.desc()).limit(limit))
        with self._read() as conn:
            return [_window(row) for row in conn.execute(query).mappings()]
