"""The service's own record of tickets: claimed before the backend is called, so a ticket is never lost.

The flow the engine follows (claim, create, adopt by dedup key; docs/design.md):

1. ``claim_ticket(dedup_key, ...)`` -> ``(row, created)``.  An ``INSERT ... ON CONFLICT DO NOTHING`` against
   the partial unique index "one active (creating/open) row per dedup key": of two racing callers exactly one
   gets ``created=True``, the other gets the same row.
2. A row in ``creating`` (just claimed, or left by a crash): ``backend.open(dedup_key, ...)``, which adopts an
   open ticket carrying the dedup key before creating one; then ``ticket_opened(row.id, ticket.key)``.
3. ``ticket_resolved`` / ``ticket_closed`` / ``ticket_reopened`` as the backend reports.  Resolved and closed rows
   stay as history; a later claim for the same key creates a new row.

Every transition is a compare-and-set on the current state; repeating one that already happened is a no-op, so a
webhook delivered twice or a recovery racing the original writer is harmless.
"""

from __future__ import annotations

from collections.abc import Iterable

import sqlalchemy as sa
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Connection, RowMapping

from fabric.remediation.domain import ComponentId
from fabric.store._base import OpsBase, dialect_insert, enum_values
from fabric.store.records import ACTIVE_TICKET_STATES, InvalidTransitionError, TicketRecord, TicketState
from fabric.store.schema import ACTIVE_TICKET_PREDICATE, tickets

_OPEN_FROM = frozenset({TicketState.CREATING})
_REOPEN_FROM = frozenset({TicketState.RESOLVED, TicketState.CLOSED})
_RESOLVE_FROM = frozenset({TicketState.OPEN})
_CLOSE_FROM = frozenset({TicketState.CREATING, TicketState.OPEN, TicketState.RESOLVED})
_ACTIVE = enum_values(TicketState, ACTIVE_TICKET_STATES)


def _ticket(row: RowMapping) -> TicketRecord:
    component = row["component"]
    return TicketRecord(
        id=int(row["id"]),
        dedup_key=row["dedup_key"],
        backend=row["backend"],
        external_key=row["external_key"],
        state=TicketState(row["state"]),
        component=None if component is None else ComponentId.parse(component),
        summary=row["summary"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        resolved_at=row["resolved_at"],
    )


def _load(conn: Connection, fabric: str, ticket_id: int) -> TicketRecord:
    query = sa.select(tickets).where(tickets.c.fabric == fabric, tickets.c.id == ticket_id)
    row = conn.execute(query).mappings().first()
    if row is None:
        raise InvalidTransitionError(f"no ticket {ticket_id}")
    return _ticket(row)


def _active(conn: Connection, fabric: str, dedup_key: str) -> TicketRecord | None:
    query = sa.select(tickets).where(tickets.c.fabric == fabric, tickets.c.dedup_key == dedup_key,
                                     tickets.c.state.in_(_ACTIVE))
    row = conn.execute(query).mappings().first()
    return None if row is None else _ticket(row)


class TicketOps(OpsBase):
    def claim_ticket(
        self,
        dedup_key: str,
        *,
        backend: str,
        summary: str,
        component: ComponentId | None = None,
    ) -> tuple[TicketRecord, bool]:
        """The active ticket row for ``dedup_key``, creating it (state ``creating``) if there is none.

        Returns ``(row, created)``; of any number of concurrent callers exactly one sees ``created=True``.  The
        returned row may belong to another backend or be ``open`` already: callers look at it.
        """
        if not dedup_key or any(ch.isspace() for ch in dedup_key):
            raise ValueError(f"invalid dedup key {dedup_key!r}")
        now = self._now()
        with self._conn() as conn:
            stmt = (
                dialect_insert(conn, tickets)
                .values(
                    fabric=self.fabric,
                    dedup_key=dedup_key,
                    backend=backend,
                    external_key=None,
                    state=TicketState.CREATING.value,
                    component=None if component is None else str(component),
                    summary=summary,
                    created_at=now,
                    updated_at=now,
                    resolved_at=None,
                )
                .on_conflict_do_nothing(index_elements=["fabric", "dedup_key"], index_where=ACTIVE_TICKET_PREDICATE)
                .returning(*tickets.c)
            )
            row = conn.execute(stmt).mappings().first()
            if row is not None:
                return _ticket(row), True
            # The conflicting row was committed before our insert gave up (PostgreSQL waits for the other
            # transaction; SQLite's writers are serialised), and READ COMMITTED shows it to this statement.
            existing = _active(conn, self.fabric, dedup_key)
        if existing is None:  # pragma: no cover - resolved between our two statements; the caller may retry
            raise InvalidTransitionError(f"ticket for {dedup_key} changed while being claimed; retry")
        return existing, False

    def active_ticket(self, dedup_key: str) -> TicketRecord | None:
        """The ``creating`` or ``open`` row for ``dedup_key``, if any."""
        with self._read() as conn:
            return _active(conn, self.fabric, dedup_key)

    def get_ticket(self, ticket_id: int) -> TicketRecord | None:
        with self._read() as conn:
            query = sa.select(tickets).where(tickets.c.fabric == self.fabric, tickets.c.id == ticket_id)
            row = conn.execute(query).mappings().first()
        return None if row is None else _ticket(row)

    def ticket_by_external_key(self, backend: str, external_key: str) -> TicketRecord | None:
        """The newest row for a backend's ticket key (what a webhook names)."""
        query = (
            sa.select(tickets)
            .where(tickets.c.fabric == self.fabric, tickets.c.backend == backend,
                   tickets.c.external_key == external_key)
            .order_by(tickets.c.id.desc())
            .limit(1)
        )
        with self._read() as conn:
            row = conn.execute(query).mappings().first()
        return None if row is None else _ticket(row)

    def tickets(
        self,
        *,
        state: TicketState | Iterable[TicketState] | None = None,
        dedup_key: str | None = None,
        component: ComponentId | None = None,
    ) -> list[TicketRecord]:
        """Ticket rows, oldest first, filtered by state (one or several), dedup key and component."""
        query = sa.select(tickets).where(tickets.c.fabric == self.fabric).order_by(tickets.c.id)
        if state is not None:
            query = query.where(tickets.c.state.in_(enum_values(TicketState, state)))
        if dedup_key is not None:
            query = query.where(tickets.c.dedup_key == dedup_key)
        if component is not None:
            query = query.where(tickets.c.component == str(component))
        with self._read() as conn:
            return [_ticket(row) for row in conn.execute(query).mappings()]

    def ticket_opened(self, ticket_id: int, external_key: str) -> TicketRecord:
        """``creating`` -> ``open``: the backend ticket exists and has ``external_key``."""
        if not external_key:
            raise ValueError("an open ticket needs the backend's key")
        return self._transition(ticket_id, TicketState.OPEN, _OPEN_FROM, external_key=external_key)

    def ticket_resolved(self, ticket_id: int) -> TicketRecord:
        """``open`` -> ``resolved`` (repaired)."""
        return self._transition(ticket_id, TicketState.RESOLVED, _RESOLVE_FROM)

    def ticket_closed(self, ticket_id: int) -> TicketRecord:
        """-> ``closed``: done without a repair, or a claim abandoned before the backend ticket existed."""
        return self._transition(ticket_id, TicketState.CLOSED, _CLOSE_FROM)

    def ticket_reopened(self, ticket_id: int) -> TicketRecord:
        """``resolved``/``closed`` -> ``open`` (the component broke again on probation).  Refused while another row
        for the same dedup key is active."""
        return self._transition(ticket_id, TicketState.OPEN, _REOPEN_FROM)

    def _transition(
        self,
        ticket_id: int,
        to: TicketState,
        allowed_from: frozenset[TicketState],
        *,
        external_key: str | None = None,
    ) -> TicketRecord:
        """Compare-and-set ``ticket_id`` from one of ``allowed_from`` to ``to``; already ``to``: no-op."""
        now = self._now()
        with self._conn() as conn:
            current = _load(conn, self.fabric, ticket_id)
            if current.state is to:
                if external_key is not None and current.external_key != external_key:
                    raise InvalidTransitionError(
                        f"ticket {ticket_id} is already open as {current.external_key}, not {external_key}"
                    )
                return current
            if current.state not in allowed_from:
                raise InvalidTransitionError(f"ticket {ticket_id} is {current.state.value}, cannot make it {to.value}")
            finished = to in (TicketState.RESOLVED, TicketState.CLOSED)
            values: dict[str, object] = {"state": to.value, "updated_at": now, "resolved_at": now if finished else None}
            if external_key is not None:
                values["external_key"] = external_key
            update = (
                sa.update(tickets)
                .where(tickets.c.fabric == self.fabric, tickets.c.id == ticket_id,
                       tickets.c.state == current.state.value)
                .values(**values)
            )
            if current.state in _REOPEN_FROM:  # the row becomes active again: mind the one-active-row rule
                other = _active(conn, self.fabric, current.dedup_key)
                if other is not None:
                    raise InvalidTransitionError(
                        f"cannot reopen ticket {ticket_id}: ticket {other.id} is {other.state.value} "
                        f"for the same dedup key {current.dedup_key}"
                    )
                try:
                    with conn.begin_nested():  # a savepoint keeps the caller's transaction usable on PostgreSQL
                        result = conn.execute(update)
                except sa_exc.IntegrityError as err:  # a concurrent claim made another row active first
                    raise InvalidTransitionError(
                        f"cannot reopen ticket {ticket_id}: another ticket for {current.dedup_key} became active"
                    ) from err
            else:
                result = conn.execute(update)
            after = _load(conn, self.fabric, ticket_id)
            if result.rowcount != 1:
                # Someone else changed it first (two daemons recording the same outcome): fine if it is ours.
                same_key = external_key is None or after.external_key == external_key
                if after.state is not to or not same_key:
                    raise InvalidTransitionError(
                        f"ticket {ticket_id} changed concurrently to {after.state.value}; read it again"
                    )
            return after
