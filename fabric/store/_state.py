"""Components (desired state), findings and decisions (append-only history)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from operator import itemgetter
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import RowMapping

from fabric.remediation.domain import (
    CONVERGE_RULE,
    Action,
    ActionKind,
    ComponentId,
    ComponentRecord,
    Finding,
    Lifecycle,
)
from fabric.store._base import OpsBase, dialect_insert, enum_values
from fabric.store.records import DecisionRecord
from fabric.store.schema import components, decisions, findings
from fabric.store.types import ensure_utc

_COMPONENT_KEY = ("fabric", "id")
_ID = itemgetter("id")


def _component_record(row: RowMapping) -> ComponentRecord:
    return ComponentRecord(
        lifecycle=Lifecycle(row["lifecycle"]),
        since=row["since"],
        rule=row["rule"],
        reason=row["reason"],
        strikes=int(row["strikes"]),
        never_auto_restore=bool(row["never_auto_restore"]),
        probation_until=row["probation_until"],
    )


def _finding(row: RowMapping) -> Finding:
    return Finding(
        component=ComponentId.parse(row["component"]),
        rule=row["rule"],
        at=row["at"],
        reason=row["reason"],
        evidence=tuple(int(x) for x in row["evidence"]),
        ticket_only=bool(row["ticket_only"]),
        never_auto_restore=bool(row["never_auto_restore"]),
        no_reset=bool(row["no_reset"]),
    )


def _finding_values(fabric: str, finding: Finding) -> dict[str, Any]:
    return {
        "fabric": fabric,
        "component": str(finding.component),
        "rule": finding.rule,
        "at": ensure_utc(finding.at, "finding time"),
        "reason": finding.reason,
        "evidence": [int(x) for x in finding.evidence],
        "ticket_only": finding.ticket_only,
        "never_auto_restore": finding.never_auto_restore,
        "no_reset": finding.no_reset,
    }


def _decision_values(fabric: str, action: Action, epoch: int | None) -> dict[str, Any]:
    return {
        "fabric": fabric,
        "epoch": epoch,
        "at": ensure_utc(action.at, "decision time"),
        "kind": ActionKind(action.kind).value,
        "component": None if action.component is None else str(action.component),
        "rule": action.rule,
        "reason": action.reason,
        "guard": dict(action.guard),
        "dry_run": action.dry_run,
    }


def _decision_record(row: RowMapping) -> DecisionRecord:
    component = row["component"]
    return DecisionRecord(
        id=int(row["id"]),
        action=Action(
            kind=ActionKind(row["kind"]),
            at=row["at"],
            rule=row["rule"],
            reason=row["reason"],
            component=None if component is None else ComponentId.parse(component),
            guard=dict(row["guard"]),
            dry_run=bool(row["dry_run"]),
        ),
        epoch=None if row["epoch"] is None else int(row["epoch"]),
    )


class StateOps(OpsBase):
    # -- components ----------------------------------------------------------------------------------------

    def put_component(self, component: ComponentId, record: ComponentRecord, *,
                      ticket_dedup_key: str | None = None) -> ComponentRecord:
        """Insert or replace the desired state of ``component`` (read-modify-write callers use ``transaction()``).
        ``ticket_dedup_key``: the key its ticket is found by, kept beside it for people reading the table."""
        if record.strikes < 0:
            raise ValueError(f"strikes cannot be negative ({record.strikes})")
        values: dict[str, Any] = {
            "fabric": self.fabric,
            "id": str(component),
            "kind": component.kind.value,
            "lifecycle": Lifecycle(record.lifecycle).value,
            "strikes": record.strikes,
            "since": ensure_utc(record.since, "since"),
            "ticket_dedup_key": ticket_dedup_key,
            "reason": record.reason,
            "probation_until": None if record.probation_until is None else ensure_utc(record.probation_until,
                                                                                       "probation_until"),
            "updated_at": self._now(),
            "rule": record.rule,
            "never_auto_restore": record.never_auto_restore,
        }
        with self._conn() as conn:
            insert = dialect_insert(conn, components).values(**values)
            update = {name: insert.excluded[name] for name in values if name not in _COMPONENT_KEY}
            stmt = insert.on_conflict_do_update(index_elements=list(_COMPONENT_KEY), set_=update).returning(
                *components.c)
            return _component_record(conn.execute(stmt).mappings().one())

    def get_component(self, component: ComponentId) -> ComponentRecord | None:
        query = sa.select(components).where(components.c.fabric == self.fabric, components.c.id == str(component))
        with self._read() as conn:
            row = conn.execute(query).mappings().first()
        return None if row is None else _component_record(row)

    def components(self, lifecycle: Lifecycle | Iterable[Lifecycle] | None = None,
                   ) -> dict[ComponentId, ComponentRecord]:
        """Every component with a recorded state, or those in ``lifecycle`` (one or several), in id order (the ids'
        code points, whatever the database's collation)."""
        # Sorted here, not by the query: told to order by id, SQLite walks the whole table in its primary key's
        # order instead of the few rows of a rare state (out of service) the lifecycle index finds.
        query = sa.select(components).where(components.c.fabric == self.fabric)
        if lifecycle is not None:
            query = query.where(components.c.lifecycle.in_(enum_values(Lifecycle, lifecycle)))
        with self._read() as conn:
            rows = sorted(conn.execute(query).mappings(), key=_ID)
        return {ComponentId.parse(row["id"]): _component_record(row) for row in rows}

    def lifecycle_counts(self) -> dict[Lifecycle, int]:
        """How many components are in each lifecycle state (every state present, zeros included)."""
        query = (sa.select(components.c.lifecycle, sa.func.count()).where(components.c.fabric == self.fabric)
                 .group_by(components.c.lifecycle))
        counts = dict.fromkeys(Lifecycle, 0)
        with self._read() as conn:
            for lifecycle, count in conn.execute(query):
                counts[Lifecycle(lifecycle)] = int(count)
        return counts

    def forget_component(self, component: ComponentId) -> bool:
        """Drop the recorded state of ``component`` (e.g. healthy again and nothing left to remember)."""
        with self._conn() as conn:
            result = conn.execute(sa.delete(components).where(components.c.fabric == self.fabric,
                                                              components.c.id == str(component)))
        return result.rowcount == 1

    # -- findings ------------------------------------------------------------------------------------------

    def add_finding(self, finding: Finding) -> int:
        """Append a finding; returns its id."""
        with self._conn() as conn:
            stmt = sa.insert(findings).values(**_finding_values(self.fabric, finding)).returning(findings.c.id)
            return int(conn.execute(stmt).scalar_one())

    def add_findings(self, items: Iterable[Finding]) -> int:
        """Append several findings in one statement; returns how many."""
        rows = [_finding_values(self.fabric, finding) for finding in items]
        if rows:
            with self._conn() as conn:
                conn.execute(sa.insert(findings), rows)
        return len(rows)

    def findings(
        self,
        *,
        component: ComponentId | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int | None = None,
        as_recorded: bool = False,
    ) -> list[Finding]:
        """Findings with ``since <= at < until``, oldest first (the newest ``limit`` of them if given).
        ``as_recorded``: in the order they were recorded instead (a cycle may find what happened before the last
        cycle's findings), as the stages that look back over findings saw them arrive."""
        query = _history(sa.select(findings), findings, self.fabric, component, since, until, limit)
        if as_recorded:
            query = query.order_by(None).order_by(query.selected_columns.id)
        with self._read() as conn:
            return [_finding(row) for row in conn.execute(query).mappings()]

    # -- decisions -----------------------------------------------------------------------------------------

    def _epoch(self) -> int | None:
        return None if self.fence is None else self.fence.epoch

    def record_decision(self, action: Action) -> int:
        """Record one policy decision (acted on or not); returns its id."""
        with self._conn() as conn:
            stmt = sa.insert(decisions).values(**_decision_values(self.fabric, action, self._epoch())) \
                .returning(decisions.c.id)
            return int(conn.execute(stmt).scalar_one())

    def record_decisions(self, actions: Iterable[Action]) -> int:
        """Record several decisions in one statement; returns how many."""
        epoch = self._epoch()
        rows = [_decision_values(self.fabric, action, epoch) for action in actions]
        if rows:
            with self._conn() as conn:
                conn.execute(sa.insert(decisions), rows)
        return len(rows)

    def decisions(
        self,
        *,
        component: ComponentId | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int | None = None,
    ) -> list[DecisionRecord]:
        """Decisions with ``since <= at < until``, oldest first (the newest ``limit`` of them if given)."""
        query = _history(sa.select(decisions), decisions, self.fabric, component, since, until, limit)
        with self._read() as conn:
            return [_decision_record(row) for row in conn.execute(query).mappings()]

    def last_decided(self, kind: ActionKind, rule: str) -> datetime | None:
        """When the newest decision of ``kind`` by ``rule`` was taken (``None``: never)."""
        query = sa.select(sa.func.max(decisions.c.at)).where(
            decisions.c.fabric == self.fabric, decisions.c.kind == ActionKind(kind).value, decisions.c.rule == rule)
        with self._read() as conn:
            at: datetime | None = conn.execute(query).scalar_one()
        return None if at is None else ensure_utc(at)

    def decided_since(self, kind: ActionKind, since: datetime, *, dry_run_since: datetime | None = None,
                      ) -> list[tuple[datetime, ComponentId | None]]:
        """Live decisions of ``kind`` automation took since ``since`` (convergence writes re-asserting one are left
        out), oldest first: the disables the guard's hourly rate counts, the resets the reset ladder counts, rebuilt
        after a restart. With ``dry_run_since``, a dry run's too, those it decided since then (since its scope
        began: an earlier dry run's are not its own)."""
        mode = sa.not_(decisions.c.dry_run)
        if dry_run_since is not None:
            mode = sa.or_(mode, decisions.c.at >= ensure_utc(dry_run_since))
        query = (sa.select(decisions.c.at, decisions.c.component)
                 .where(decisions.c.fabric == self.fabric, decisions.c.kind == ActionKind(kind).value, mode,
                        decisions.c.rule != CONVERGE_RULE, decisions.c.at >= ensure_utc(since))
                 .order_by(decisions.c.at, decisions.c.id))
        with self._read() as conn:
            return [(at, None if component is None else ComponentId.parse(component))
                    for at, component in conn.execute(query)]


def _history(query: sa.Select[Any], table: sa.Table, fabric: str, component: ComponentId | None,
             since: datetime | None, until: datetime | None, limit: int | None) -> sa.Select[Any]:
    """``query`` over a history table (findings, decisions) of ``fabric``: one component's, ``since <= at < until``,
    oldest first; with ``limit``, the newest ``limit`` rows of those."""
    query = query.where(table.c.fabric == fabric)
    if component is not None:
        query = query.where(table.c.component == str(component))
    if since is not None:
        query = query.where(table.c.at >= ensure_utc(since))
    if until is not None:
        query = query.where(table.c.at < ensure_utc(until))
    if limit is None:
        return query.order_by(table.c.at, table.c.id)
    newest = query.order_by(table.c.at.desc(), table.c.id.desc()).limit(limit).subquery()
    return sa.select(newest).order_by(newest.c.at, newest.c.id)
