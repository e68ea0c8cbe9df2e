"""The write-ahead log of side effects.

The engine calls ``begin_intent`` (its own committed transaction) *before* touching UFM or a ticket system and
``finish_intent`` after.  Whatever is still ``pending`` after a crash is what recovery must look at:
``unfinished_intents()``.  Every intent carries the leader's epoch; a writer whose epoch is not the fabric's leader
epoch (``fabric.store._leadership``), or older than one already in the log, is refused (``StaleEpochError``) in the
transaction that would record the intent, which fences a deposed leader that has not noticed yet.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import RowMapping

from fabric.remediation.domain import ActionKind, ComponentId
from fabric.store._base import OpsBase
from fabric.store._leadership import current_epoch
from fabric.store.records import (
    FINISHED_INTENT_STATES,
    IntentRecord,
    IntentState,
    InvalidTransitionError,
    StaleEpochError,
)
from fabric.store.schema import intents
from fabric.store.types import ensure_utc

_INTENT_LOCK = sa.text(
    "SELECT pg_advisory_xact_lock(hashtextextended('fabric-remediation:intents:' || current_schema() || ':' "
    "|| :fabric, 0))"
)
"""Per fabric: each fabric has a leader of its own, fenced by its own epochs."""


def _intent(row: RowMapping) -> IntentRecord:
    component = row["component"]
    return IntentRecord(
        id=int(row["id"]),
        epoch=int(row["epoch"]),
        kind=ActionKind(row["kind"]),
        component=None if component is None else ComponentId.parse(component),
        payload=dict(row["payload"]),
        state=IntentState(row["state"]),
        created_at=row["created_at"],
        finished_at=row["finished_at"],
        outcome=row["outcome"],
    )


class IntentOps(OpsBase):
    def _mine(self, intent_id: int) -> sa.ColumnElement[bool]:
        """The intent ``intent_id`` if it is this fabric's: an id never reaches another fabric's row."""
        return sa.and_(intents.c.fabric == self.fabric, intents.c.id == intent_id)

    def begin_intent(
        self,
        epoch: int,
        kind: ActionKind,
        component: ComponentId | None,
        payload: Mapping[str, Any] | None = None,
    ) -> int:
        """Log a side effect about to be attempted; returns the intent id.

        Committed when this returns (unless called inside ``transaction()``, where it commits with the block:
        do not start the side effect before the block ends).  Raises ``StaleEpochError`` when ``epoch`` is not
        the fabric's leader epoch (once one was taken) or a newer epoch has written an intent.
        """
        with self._conn() as conn:
            if conn.dialect.name == "postgresql":
                # Serialise check-and-insert between writers (SQLite's BEGIN IMMEDIATE already does), so that the
                # fence holds even when two leaders write at the same instant.
                conn.execute(_INTENT_LOCK, {"fabric": self.fabric})
            current = current_epoch(conn, self.fabric, share=True)
            if current is not None and epoch != current:
                raise StaleEpochError(epoch, current)
            newest = conn.scalar(sa.select(sa.func.max(intents.c.epoch)).where(intents.c.fabric == self.fabric))
            if newest is not None and epoch < int(newest):
                raise StaleEpochError(epoch, int(newest))
            stmt = (
                sa.insert(intents)
                .values(
                    fabric=self.fabric,
                    epoch=epoch,
                    component=None if component is None else str(component),
                    kind=ActionKind(kind).value,
                    payload=dict(payload or {}),
                    state=IntentState.PENDING.value,
                    created_at=self._now(),
                    finished_at=None,
                    outcome=None,
                )
                .returning(intents.c.id)
            )
            return int(conn.execute(stmt).scalar_one())

    def finish_intent(self, intent_id: int, state: IntentState, outcome: str = "") -> IntentRecord:
        """Mark a pending intent ``done``, ``failed`` or ``rolled_back``.

        Finishing it again with the same state changes nothing (recovery may race the original writer); any
        other change of a finished intent raises ``InvalidTransitionError``.
        """
        state = IntentState(state)
        if state not in FINISHED_INTENT_STATES:
            raise ValueError(f"an intent finishes as done, failed or rolled_back, not {state.value}")
        with self._conn() as conn:
            result = conn.execute(
                sa.update(intents)
                .where(self._mine(intent_id), intents.c.state == IntentState.PENDING.value)
                .values(state=state.value, finished_at=self._now(), outcome=outcome)
            )
            row = conn.execute(sa.select(intents).where(self._mine(intent_id))).mappings().first()
        if row is None:
            raise InvalidTransitionError(f"no intent {intent_id}")
        record = _intent(row)
        if result.rowcount != 1 and record.state is not state:
            raise InvalidTransitionError(
                f"intent {intent_id} is already {record.state.value}, cannot make it {state.value}"
            )
        return record

    def note_intent(self, intent_id: int, payload: Mapping[str, Any]) -> IntentRecord:
        """Add ``payload``'s keys to a pending intent's payload: what became known while the side effect runs
        (UFM's job id, an answer that never came), for whoever settles it later, after a crash too.

        Raises ``InvalidTransitionError`` when the intent is finished (or not this fabric's).
        """
        with self._conn() as conn:
            row = conn.execute(sa.select(intents).where(self._mine(intent_id))).mappings().first()
            if row is None:
                raise InvalidTransitionError(f"no intent {intent_id}")
            if row["state"] != IntentState.PENDING.value:
                raise InvalidTransitionError(f"intent {intent_id} is already {row['state']}: nothing to note")
            merged = {**dict(row["payload"]), **payload}
            conn.execute(sa.update(intents).where(self._mine(intent_id)).values(payload=merged))
            row = conn.execute(sa.select(intents).where(self._mine(intent_id))).mappings().one()
        return _intent(row)

    def unfinished_intents(self) -> list[IntentRecord]:
        """Every pending intent, oldest first: what a crash may have left half-done."""
        query = (sa.select(intents).where(intents.c.fabric == self.fabric, intents.c.state == IntentState.PENDING.value)
                 .order_by(intents.c.id))
        with self._conn() as conn:
            return [_intent(row) for row in conn.execute(query).mappings()]

    def get_intent(self, intent_id: int) -> IntentRecord | None:
        with self._conn() as conn:
            row = conn.execute(sa.select(intents).where(self._mine(intent_id))).mappings().first()
        return None if row is None else _intent(row)

    def intents(self, *, component: ComponentId | None = None, kinds: Collection[ActionKind] | None = None,
                limit: int = 100) -> list[IntentRecord]:
        """The newest ``limit`` intents (of ``component``, of ``kinds``), newest first."""
        query = sa.select(intents).where(intents.c.fabric == self.fabric).order_by(intents.c.id.desc()).limit(limit)
        if component is not None:
            query = query.where(intents.c.component == str(component))
        if kinds is not None:
            query = query.where(intents.c.kind.in_([kind.value for kind in kinds]))
        with self._read() as conn:
            return [_intent(row) for row in conn.execute(query).mappings()]

    def port_writes_since(self, since: datetime) -> list[IntentRecord]:
        """Disables, enables and resets attempted since ``since``, oldest first: after a restart the detectors must
        know which link events were the effect of our own writes."""
        query = (sa.select(intents)
                 .where(intents.c.fabric == self.fabric,
                        intents.c.kind.in_([ActionKind.DISABLE.value, ActionKind.ENABLE.value,
                                            ActionKind.RESET.value]),
                        intents.c.created_at >= ensure_utc(since))
                 .order_by(intents.c.id))
        with self._conn() as conn:
            return [_intent(row) for row in conn.execute(query).mappings()]

    def newest_epoch(self) -> int | None:
        """The largest epoch in the log (``None``: no intent yet)."""
        with self._conn() as conn:
            newest = conn.scalar(sa.select(sa.func.max(intents.c.epoch)).where(intents.c.fabric == self.fabric))
        return None if newest is None else int(newest)
