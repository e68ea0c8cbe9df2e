"""Ticket webhook deliveries, stored by the receiver (``fabric.api.webhooks``), acted on by the engine's cycle.

The receiver only stores a delivery and answers; each cycle the engine takes the deliveries not processed yet,
reads every ticket they name from the backend (``Ticketing.refresh``: a delivery is a hint, the backend is the
truth), and marks them processed. ``Ticketing.repaired`` then acts on the tickets found resolved, in the same
cycle. Because only the backend's state is acted on, a repeated, replayed or out-of-order delivery changes nothing
twice, and a lost one is healed by the fallback poll of the backend (``Ticketing.poll``).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from fabric.controller.effects import CycleReport
from fabric.controller.ticketing import Ticketing
from fabric.errors import ErrorKind
from fabric.store import Store
from tickets.base import TicketError, TicketNotFoundError
from tickets.events import TicketEvent

__all__ = ["BATCH", "RETENTION", "delivery_payload", "process_deliveries"]

log = logging.getLogger(__name__)

BATCH = 100
"""Deliveries processed in one cycle at most (the rest wait for the next: a webhook storm cannot stall a cycle)."""
RETENTION = timedelta(days=1)
"""How long a processed delivery is remembered, to recognise its repeats: well past the senders' retry windows
(Jira Cloud retries for about half an hour)."""


def delivery_payload(event: TicketEvent) -> dict[str, Any]:
    """What is stored of a delivery: the ticket it names and what it said (the body itself is not kept)."""
    return {"ticket": event.key, "status": event.status.value,
            "at": None if event.at is None else event.at.isoformat()}


def _ticket(payload: Any) -> str | None:
    ticket = payload.get("ticket") if isinstance(payload, dict) else None
    return ticket if isinstance(ticket, str) and ticket else None


def process_deliveries(store: Store, ticketing: Ticketing, now: datetime, report: CycleReport) -> None:
    """Refresh from the backend each ticket the unprocessed deliveries name (once each), mark them processed, and
    forget processed ones older than ``RETENTION``. Blocking: call it in a worker thread.

    A backend that does not answer stops the batch: the deliveries left wait for the next cycle."""
    refreshed: set[str] = set()
    for delivery in store.unprocessed_deliveries(BATCH):
        ticket = _ticket(delivery.payload)
        if ticket is not None and ticket not in refreshed:
            try:
                ticketing.refresh(ticket)
            except TicketNotFoundError:
                log.warning("webhook delivery %s names ticket %s, which the %s backend does not have: ignored",
                            delivery.id, ticket, ticketing.backend.name)
            except TicketError as exc:
                report.fail(ErrorKind.TICKET, "delivery", None, exc)
                log.warning("webhook delivery %s: cannot read ticket %s (%s): tried again next cycle",
                            delivery.id, ticket, exc)
                break
            refreshed.add(ticket)
        store.mark_delivery_processed(delivery.id)
        report.deliveries += 1
    store.prune_deliveries(now - RETENTION)
