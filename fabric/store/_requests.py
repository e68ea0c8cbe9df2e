"""Operator requests: release a quarantine, resume after a storm, reload an instance's configuration. Written by
the command line (or the API), carried out and marked handled by the engine (a reload: by the engine process of the
instance it names), so every request and what came of it stays on record."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import RowMapping

from fabric.remediation.domain import ComponentId
from fabric.store._base import OpsBase
from fabric.store.records import ENGINE_REQUESTS, OperatorRequest, RequestKind
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
        instance=row["instance"],
    )


class RequestOps(OpsBase):
    def request(self, kind: RequestKind, *, reason: str, requested_by: str,
                component: ComponentId | None = None, instance: str | None = None) -> OperatorRequest:
        """Record an operator's request; the engine carries it out at its next cycle (a reload: the engine process
        of ``instance``, as soon as it is signalled)."""
        kind = RequestKind(kind)
        if (component is None) != (kind is not RequestKind.CLEAR):
            raise ValueError(f"a {kind.value} request {'needs a' if kind is RequestKind.CLEAR else 'names no'} "
                             "component")
        if (instance is None) != (kind is not RequestKind.RELOAD):
            raise ValueError(f"a {kind.value} request {'needs an' if kind is RequestKind.RELOAD else 'names no'} "
                             "instance")
        if not reason.strip():
            raise ValueError("a request needs a reason (it is kept in the audit trail)")
        values = {"fabric": self.fabric, "kind": kind.value, "component": None if component is None else str(component),
                  "reason": reason.strip(), "requested_by": requested_by, "requested_at": self._now(),
                  "handled_at": None, "outcome": None, "instance": instance}
        with self._conn() as conn:
            row = conn.execute(sa.insert(operator_requests).values(**values).returning(*operator_requests.c))
            return _request(row.mappings().one())

    def pending_requests(self, kind: RequestKind | None = None) -> list[OperatorRequest]:
        """The engine's requests (a clear, a resume) not yet carried out, oldest first."""
        kinds = ENGINE_REQUESTS if kind is None else {RequestKind(kind)}
        return self._pending(operator_requests.c.kind.in_(sorted(k.value for k in kinds)))

    def pending_reloads(self, instance: str) -> list[OperatorRequest]:
        """The reloads asked of ``instance`` not yet answered, oldest first."""
        return self._pending(operator_requests.c.kind == RequestKind.RELOAD.value,
                             operator_requests.c.instance == instance)

    def get_request(self, request_id: int) -> OperatorRequest | None:
        query = sa.select(operator_requests).where(operator_requests.c.fabric == self.fabric,
                                                   operator_requests.c.id == request_id)
        with self._read() as conn:
            row = conn.execute(query).mappings().first()
        return None if row is None else _request(row)

    def _pending(self, *where: sa.ColumnElement[bool]) -> list[OperatorRequest]:
        query = (sa.select(operator_requests)
                 .where(operator_requests.c.fabric == self.fabric, operator_requests.c.handled_at.is_(None), *where)
                 .order_by(operator_requests.c.id))
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
