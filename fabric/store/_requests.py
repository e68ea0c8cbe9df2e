"""Operator requests: release a quarantine, resume after a storm. Written by the command line (or the API),
carried out and marked handled by the engine, so every request and what came of it stays on record."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import RowMapping

from fabric.remediation.domain import ComponentId
from fabric.store._base import OpsBase
from fabric.store.records import OperatorRequest, RequestKind
from fabric.store.schema import operator_requests


def _request(row: RowMapping) -> OperatorRequest:
    component = row["component"]
    return OperatorRequest(
        id=int(row["id"]),
        kind=RequestKind(row["kind"]),
        component=None if component is None else ComponentId.parse(component),
        reason=row["reason"],
        requested_by=row["requested_by"],
        requested_at=row["requested_at"],
        handled_at=row["handled_at"],
        outcome=row["outcome"],
    )


class RequestOps(OpsBase):
    def request(self, kind: RequestKind, *, reason: str, requested_by: str,
                component: ComponentId | None = None) -> OperatorRequest:
        """Record an operator's request; the engine carries it out at its next cycle."""
        kind = RequestKind(kind)
        if (component is None) != (kind is RequestKind.RESUME):
            raise ValueError(f"a {kind.value} request {'names no' if kind is RequestKind.RESUME else 'needs a'} "
                             "component")
        if not reason.strip():
            raise ValueError("a request needs a reason (it is kept in the audit trail)")
        values = {"fabric": self.fabric, "kind": kind.value, "component": None if component is None else str(component),
                  "reason": reason.strip(), "requested_by": requested_by, "requested_at": self._now(),
                  "handled_at": None, "outcome": None}
        with self._conn() as conn:
            row = conn.execute(sa.insert(operator_requests).values(**values).returning(*operator_requests.c))
            return _request(row.mappings().one())

    def pending_requests(self, kind: RequestKind | None = None) -> list[OperatorRequest]:
        """Requests not yet carried out, oldest first."""
        query = (sa.select(operator_requests)
                 .where(operator_requests.c.fabric == self.fabric, operator_requests.c.handled_at.is_(None))
                 .order_by(operator_requests.c.id))
        if kind is not None:
            query = query.where(operator_requests.c.kind == RequestKind(kind).value)
        with self._read() as conn:
            return [_request(row) for row in conn.execute(query).mappings()]

    def handle_request(self, request_id: int, outcome: str) -> bool:
        """Mark a pending request carried out, with what came of it. False when unknown or already handled."""
        with self._conn() as conn:
            result = conn.execute(
                sa.update(operator_requests)
                .where(operator_requests.c.fabric == self.fabric, operator_requests.c.id == request_id,
                       operator_requests.c.handled_at.is_(None))
                .values(handled_at=self._now(), outcome=outcome))
        return result.rowcount == 1
