"""A dry run's scope: the would-be desired state it keeps apart from the fabric's real one.

A dry run decides as live mode would but writes nothing to UFM or the ticket system, so the state it reaches
(components, the breaker, the storm window) is not the fabric's: kept with the real state, a switch to live would
take would-be disables for real ones. It is kept in the same tables under a key of its own, the fabric's name and
``DRY_RUN_SUFFIX``; the suffix holds a control character, which a fabric's name cannot (``Store`` refuses one), so
no fabric's rows are ever taken for a dry run's. Findings and decisions stay with the fabric: they are the dry
run's report. The scope is kept while its breaker row exists: a dry run begins it, a live start drops it.
"""

from __future__ import annotations

import sqlalchemy as sa

from fabric.store._breaker import BreakerOps
from fabric.store.schema import breaker, components, storm_window

DRY_RUN_SUFFIX = "\x1fdry-run"
"""Appended to a fabric's name to key its dry run's rows (``\\x1f``, the unit separator: never in a name)."""

_SCOPED = (components, storm_window, breaker)
"""The tables of the desired state; every other table belongs to the fabric alone."""


def dry_run_key(fabric: str) -> str:
    """The ``fabric`` value of the rows of ``fabric``'s dry run."""
    return fabric + DRY_RUN_SUFFIX


class ScopeOps(BreakerOps):
    def dry_run_kept(self) -> bool:
        """Whether a dry run's would-be state is kept: a dry run began it and no live start dropped it since."""
        query = sa.select(breaker.c.fabric).where(breaker.c.fabric == dry_run_key(self.fabric))
        with self._read() as conn:
            return conn.execute(query).first() is not None

    def begin_dry_run(self) -> None:
        """Begin the dry run's scope as a copy of the fabric's desired state (what live mode holds now), replacing
        any the dry run kept."""
        key = dry_run_key(self.fabric)
        with self._conn() as conn:
            for table in _SCOPED:
                conn.execute(sa.delete(table).where(table.c.fabric == key))
                copied = [sa.literal(key).label("fabric") if c.name == "fabric" else c for c in table.c]
                conn.execute(sa.insert(table).from_select(
                    [c.name for c in table.c], sa.select(*copied).where(table.c.fabric == self.fabric)))
            self._ensure_breaker_row(conn, self._now(), fabric=key)

    def drop_dry_run(self) -> bool:
        """Forget the dry run's scope (live mode starting: a later dry run begins again from live's state); whether
        one was kept."""
        key = dry_run_key(self.fabric)
        with self._conn() as conn:
            kept = conn.execute(sa.select(breaker.c.fabric).where(breaker.c.fabric == key)).first() is not None
            for table in _SCOPED:
                conn.execute(sa.delete(table).where(table.c.fabric == key))
        return kept
