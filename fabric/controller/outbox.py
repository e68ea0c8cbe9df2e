"""Ticket writes through the store's outbox: queued by the engine at once, sent when the ticket system answers.

Why: a ticket system that is down, rate-limiting or slow must delay tickets, never lose one, never duplicate one,
and never hold up a UFM write. So the engine only records a write (``queue_*``: one row in the store, no network)
and the sender (``send_due``: at the end of the demo's and the tests' cycles, a job of its own in the daemon) carries
the due ones out, oldest first:

- a write the ticket system took is deleted from the outbox;
- the ticket system down (``BackendUnavailableError``: no answer, 429, 5xx): the write is tried again after an
  exponential backoff with jitter, bounded by ``OutboxSettings.cap``, and every other waiting write waits with it
  (one request per backoff while it is down, not one per write), a ``Retry-After`` respected;
- a write it refused (``TicketError``: a transition the workflow lacks, a field it rejects) waits with the same
  backoff, the others go on; a comment on a ticket that no longer exists is dropped;
- the writes of one ticket keep their order: one waits while an earlier one for the same dedup key does.

Never a second ticket: the ``open`` write goes through the claim in the store and the backend's search for an
open ticket carrying the dedup key, which adopts what a lost answer created. Jira Cloud's search lags behind a
create, so a create that got no answer (``OutcomeUnknownError``) is not tried again before ``search_settle``: the
search then shows the issue if it was made. If the search lags longer than that, a duplicate can still be made;
the oldest is adopted and the other named in a warning (``JiraTicketBackend.find_open``). A comment whose answer
was lost may be posted twice: comments are not deduplicated.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from fabric.controller.ticketing import Ticketing
from fabric.remediation.domain import ComponentId
from fabric.store import OutboxEntry, OutboxFigures, Store, TicketWriteKind
from tickets.base import BackendUnavailableError, OutcomeUnknownError, TicketError, TicketNotFoundError

__all__ = ["OutboxReport", "OutboxSettings", "TicketOutbox"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class OutboxSettings:
    base: timedelta = timedelta(seconds=10)
    """The backoff after a first failure; it doubles with each one after."""
    cap: timedelta = timedelta(minutes=10)
    """The longest backoff: a ticket system back up is used within this."""
    search_settle: timedelta = timedelta(minutes=2)
    """After a create that got no answer, how long the ticket system's search may take to show what it created."""
    batch: int = 50
    """Writes tried in one ``send_due`` at most (the rest wait for the next)."""
    rng: random.Random = field(default_factory=random.Random, compare=False)
    """The jitter's source (a seeded one in tests)."""

    def backoff(self, failures: int) -> timedelta:
        """The wait after ``failures`` failed attempts: ``base * 2**(failures-1)`` capped, times a random factor
        in [0.5, 1], so that several services (or writes) that failed together do not all come back together."""
        exponent = min(max(failures - 1, 0), 30)
        full = min(self.cap, self.base * (1 << exponent))
        return full * self.rng.uniform(0.5, 1.0)


@dataclass(slots=True)
class OutboxReport:
    sent: int = 0
    failed: list[tuple[OutboxEntry, str]] = field(default_factory=list)
    dropped: int = 0
    """Comments on a ticket that no longer exists."""
    figures: OutboxFigures = field(default_factory=lambda: OutboxFigures(0, 0.0))
    """What waits once the writes were tried."""


class TicketOutbox:
    def __init__(self, store: Store, ticketing: Ticketing, settings: OutboxSettings | None = None) -> None:
        self.store, self.ticketing = store, ticketing
        self.settings = settings or OutboxSettings()

    # --- queueing (the engine: no network) -------------------------------------------------------------

    def queue_open(self, component: ComponentId | None, summary: str, body: str, rule: str | None = None) -> bool:
        """Ask for the component's open ticket (``rule``: what found the fault); False when that ask waits
        already."""
        return self._queue(TicketWriteKind.OPEN, component, summary, body, rule)

    def queue_reopen(self, component: ComponentId, summary: str, body: str, rule: str | None = None) -> bool:
        return self._queue(TicketWriteKind.REOPEN, component, summary, body, rule)

    def queue_comment(self, component: ComponentId | None, body: str) -> bool:
        return self._queue(TicketWriteKind.COMMENT, component, "", body, None)

    def _queue(self, kind: TicketWriteKind, component: ComponentId | None, summary: str, body: str,
               rule: str | None) -> bool:
        _, queued = self.store.enqueue_ticket_write(kind, self.ticketing.key(component), component=component,
                                                    summary=summary, body=body, rule=rule)
        return queued

    # --- sending (blocking: a worker thread) -----------------------------------------------------------

    def send_due(self, now: datetime) -> OutboxReport:
        """Carry out the writes due at ``now``, oldest first (see the module docstring)."""
        report = OutboxReport()
        waiting: set[str] = set()
        """Dedup keys with an earlier write still waiting: their later writes wait too."""
        tried = 0
        for entry in self.store.pending_ticket_writes():
            if entry.dedup_key in waiting or entry.next_attempt_at > now or not self._settled(entry, now):
                waiting.add(entry.dedup_key)
                continue
            if tried >= self.settings.batch:
                break
            tried += 1
            try:
                self._carry_out(entry)
            except TicketNotFoundError as exc:
                if entry.kind is not TicketWriteKind.COMMENT:
                    self._failed(entry, exc, now, report)
                    waiting.add(entry.dedup_key)
                    continue
                log.warning("dropped a comment for %s: %s", entry.component or "the fabric", exc)
                self.store.ticket_write_sent(entry.id)
                report.dropped += 1
            except BackendUnavailableError as exc:
                retry_at = self._failed(entry, exc, now, report)
                self.store.hold_ticket_writes(retry_at)  # it is down: everything waits with this one
                break
            except TicketError as exc:
                self._failed(entry, exc, now, report)
                waiting.add(entry.dedup_key)
            else:
                self.store.ticket_write_sent(entry.id)
                report.sent += 1
        report.figures = self.store.outbox_figures()
        return report

    def _settled(self, entry: OutboxEntry, now: datetime) -> bool:
        """A create that got no answer is tried again only once the search can show what it may have made."""
        return entry.uncertain_at is None or now >= entry.uncertain_at + self.settings.search_settle

    def _failed(self, entry: OutboxEntry, exc: TicketError, now: datetime, report: OutboxReport) -> datetime:
        retry_at = now + self.settings.backoff(entry.attempts + 1)
        retry_after = getattr(exc, "retry_after", None)
        if retry_after is not None:
            retry_at = max(retry_at, now + timedelta(seconds=retry_after))
        uncertain = isinstance(exc, OutcomeUnknownError) and entry.kind is not TicketWriteKind.COMMENT
        if uncertain:
            retry_at = max(retry_at, now + self.settings.search_settle)
        self.store.ticket_write_failed(entry.id, str(exc), retry_at, uncertain=uncertain)
        report.failed.append((entry, str(exc)))
        log.warning("ticket write %s for %s not done (attempt %d): %s; tried again at %s", entry.kind.value,
                    entry.component or "the fabric", entry.attempts + 1, exc, retry_at.isoformat())
        return retry_at

    def _carry_out(self, entry: OutboxEntry) -> None:
        if entry.kind is TicketWriteKind.OPEN:
            self.ticketing.ensure_open(entry.component, entry.summary, entry.body, rule=entry.rule)
        elif entry.kind is TicketWriteKind.REOPEN:
            assert entry.component is not None
            self.ticketing.reopen(entry.component, entry.body, entry.summary, rule=entry.rule)
        else:
            self.ticketing.comment(entry.component, entry.body)
