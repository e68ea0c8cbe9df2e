"""Tickets as the engine keeps them: one active ticket per component, claimed in the store before the backend.

The store's row is the source of truth for "is there a ticket for this component?". A claim is written first
(``creating``); the backend is then asked to open a ticket carrying the dedup key, and adopts one that already
carries it. A crash between the two leaves a ``creating`` row, which the next attempt completes by adoption,
so no path creates a second ticket.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import datetime

from fabric.remediation.domain import ComponentId
from fabric.remediation.rules import ticket_severity
from fabric.store import Store
from fabric.store.records import TicketRecord, TicketState
from tickets.base import Ticket, TicketBackend, TicketStatus, dedup_key

log = logging.getLogger(__name__)
STORM = "storm"


class Ticketing:
    def __init__(self, store: Store, backend: TicketBackend, fabric: str) -> None:
        self.store, self.backend, self.fabric = store, backend, fabric

    def key(self, component: ComponentId | None) -> str:
        return dedup_key(self.fabric, str(component) if component else f"{STORM}:{self.fabric}")

    def ensure_open(self, component: ComponentId | None, summary: str, description: str,
                    rule: str | None = None) -> Ticket:
        """The open ticket for ``component``: the active one, a resolved one reopened, or a new one (``rule``: what
        found the fault, whose severity a new ticket's priority follows)."""
        key = self.key(component)
        row, _ = self.store.claim_ticket(key, backend=self.backend.name, summary=summary, component=component)
        if row.state is TicketState.OPEN and row.external_key:
            ticket = self.backend.status(row.external_key)
            if ticket.status is TicketStatus.OPEN:
                return ticket
        ticket = self.backend.open(key, summary, description, labels=(key, "fabric-remediation"),
                                   severity=ticket_severity(rule))
        self._record_open(row, ticket)
        return ticket

    def _record_open(self, row: TicketRecord, ticket: Ticket) -> None:
        if row.state is TicketState.CREATING:
            self.store.ticket_opened(row.id, ticket.key)

    def reopen(self, component: ComponentId, comment: str, summary: str, rule: str | None = None) -> Ticket:
        """Reopen the component's last ticket (it broke again on probation), or open one if it has none."""
        key = self.key(component)
        if self.store.active_ticket(key) is None:
            previous = [t for t in self.store.tickets(dedup_key=key) if t.external_key]
            if previous:
                last = previous[-1]
                ticket = self.backend.reopen(last.external_key or "", comment)
                if ticket.key == last.external_key:
                    self.store.ticket_reopened(last.id)
                else:  # the workflow could not reopen it: a new ticket, linked to it, is the open one now
                    row, _ = self.store.claim_ticket(key, backend=self.backend.name, summary=summary,
                                                     component=component)
                    self._record_open(row, ticket)
                return ticket
        return self.ensure_open(component, summary, comment, rule)

    def comment(self, component: ComponentId | None, text: str) -> None:
        """Comment on the component's open ticket, else on its last one (a repair's closing word goes on the
        ticket that was resolved)."""
        key = self.key(component)
        row = self.store.active_ticket(key) or next(
            (t for t in reversed(self.store.tickets(dedup_key=key)) if t.external_key), None)
        if row is not None and row.external_key:
            self.backend.comment(row.external_key, text)

    def repaired(self, waiting: Mapping[ComponentId, datetime]) -> list[ComponentId]:
        """Components among ``waiting`` (each with the time it started waiting) whose ticket the store holds as
        resolved since (by a webhook delivery's ``refresh`` or by ``poll``): the store only, no backend call.

        Level-triggered: a component stays "repaired" every cycle until the policy moved it on, so a repair that
        could not be acted on (automation halted) is not lost.
        """
        repaired: list[ComponentId] = []
        for row in self.store.tickets(state=TicketState.RESOLVED):
            component = row.component
            if component is None or component not in waiting or component in repaired:
                continue
            if row.resolved_at is not None and row.resolved_at >= waiting[component] \
                    and self.store.active_ticket(row.dedup_key) is None:
                repaired.append(component)
        return repaired

    def poll(self) -> int:
        """The fallback poll: every open ticket the store holds brought in line with the backend, whatever its
        component's state (a ticket resolved while its component was quarantined must not stay "open" here
        forever). One query for the backend's open tickets, and a ``status`` read to confirm each one missing from
        it (a search may lag behind a ticket just created). A ticket closed without a repair is recorded as closed
        and is no repair: its component stays out, and reconciliation opens it a new ticket. This is what makes a
        lost webhook delivery harmless. Returns how many tickets it found resolved or closed."""
        rows = [row for row in self.store.tickets(state=TicketState.OPEN) if row.external_key]
        if not rows:
            return 0
        still_open = {ticket.key for ticket in self.backend.list(TicketStatus.OPEN)}
        moved = 0
        for row in rows:
            if row.external_key in still_open or row.external_key is None:
                continue
            moved += self._record_status(row, self.backend.status(row.external_key).status)
        return moved

    def refresh(self, external_key: str) -> None:
        """Read the backend's ticket ``external_key`` (what a webhook named) and bring the store's open row of it
        in line with the backend, the truth whatever the webhook said; ``repaired`` then acts on it. A ticket not
        of this fabric, or a row no longer open, is left alone (as ``repaired``'s poll leaves it)."""
        row = self.store.ticket_by_external_key(self.backend.name, external_key)
        if row is not None and row.state is TicketState.OPEN:
            self._record_status(row, self.backend.status(external_key).status)

    def _record_status(self, row: TicketRecord, status: TicketStatus) -> bool:
        """The open row ``row`` moved to what the backend says; False while the ticket is still open."""
        if status is TicketStatus.RESOLVED:
            self.store.ticket_resolved(row.id)
        elif status is TicketStatus.CLOSED:
            log.warning("ticket %s of %s was closed without a repair: it stays out of service, with a new "
                        "ticket", row.external_key, row.component)
            self.store.ticket_closed(row.id)
        else:
            return False
        return True
