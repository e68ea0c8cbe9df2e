"""The ticket outbox's rows (``fabric.store._outbox``) and its sender (``fabric.controller.outbox``) on SQLite and
PostgreSQL, with the local ticket backend behind a switch that makes it fail as a ticket system does."""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import pytest
from store_helpers import FakeClock

from fabric.controller.outbox import OutboxSettings, TicketOutbox
from fabric.controller.ticketing import Ticketing
from fabric.remediation.domain import ComponentId, ComponentKind
from fabric.store import Fence, StaleEpochError, Store, TicketWriteKind
from fabric.store.records import TicketState
from tickets.base import BackendUnavailableError, OutcomeUnknownError, Ticket, TicketError
from tickets.local import LocalTicketBackend

LINK = ComponentId(ComponentKind.LINK, "pod01-leaf03/33|pod01-spine02/5")
OTHER = ComponentId(ComponentKind.LINK, "pod02-leaf01/1|pod02-spine01/1")


class Flaky:
    """The local backend, failing every call with ``error`` while it is set (``after``: once the call was made)."""

    def __init__(self, inner: LocalTicketBackend) -> None:
        self.inner = inner
        self.error: TicketError | None = None
        self.after = False
        self.calls = 0

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            if self.error is not None and not self.after:
                raise self.error
            result = attr(*args, **kwargs)
            if self.error is not None:
                raise self.error
            return result
        return call

    def open(self, dedup_key: str, summary: str, description: str, labels: Sequence[str] = (), *,
             severity: int | None = None) -> Ticket:
        return self.__getattr__("open")(dedup_key, summary, description, labels,  # type: ignore[no-any-return]
                                        severity=severity)


def _outbox(store: Store, clock: FakeClock) -> tuple[TicketOutbox, Flaky]:
    backend = Flaky(LocalTicketBackend(store.engine, clock=clock))
    ticketing = Ticketing(store, backend, store.fabric)  # type: ignore[arg-type]
    return TicketOutbox(store, ticketing, OutboxSettings(rng=random.Random(1))), backend


def test_an_open_asked_for_twice_waits_once_and_the_others_keep_their_order(store: Store) -> None:
    assert store.enqueue_ticket_write(TicketWriteKind.OPEN, "ibdedup-1", component=LINK, summary="s", body="b")[1]
    assert not store.enqueue_ticket_write(TicketWriteKind.OPEN, "ibdedup-1", component=LINK, summary="s",
                                          body="again")[1]
    store.enqueue_ticket_write(TicketWriteKind.COMMENT, "ibdedup-1", component=LINK, summary="", body="c1")
    store.enqueue_ticket_write(TicketWriteKind.COMMENT, "ibdedup-1", component=LINK, summary="", body="c2")
    store.enqueue_ticket_write(TicketWriteKind.OPEN, "ibdedup-2", component=None, summary="storm", body="b")
    assert [(e.kind.value, e.body) for e in store.pending_ticket_writes()] == [
        ("open", "b"), ("comment", "c1"), ("comment", "c2"), ("open", "b")]
    assert store.pending_ticket_writes()[-1].component is None


def test_figures_count_what_waits_and_the_age_of_the_oldest(store: Store, clock: FakeClock) -> None:
    assert (store.outbox_figures().pending, store.outbox_figures().oldest_seconds) == (0, 0.0)
    first, _ = store.enqueue_ticket_write(TicketWriteKind.OPEN, "ibdedup-1", component=LINK, summary="s", body="b")
    clock.advance(seconds=40)
    store.enqueue_ticket_write(TicketWriteKind.OPEN, "ibdedup-2", component=OTHER, summary="s", body="b")
    clock.advance(seconds=20)
    assert (store.outbox_figures().pending, store.outbox_figures().oldest_seconds) == (2, 60.0)
    store.ticket_write_sent(first.id)
    assert (store.outbox_figures().pending, store.outbox_figures().oldest_seconds) == (1, 20.0)


def test_a_failed_write_backs_off_and_the_outbox_waits_with_it(store: Store, clock: FakeClock) -> None:
    outbox, backend = _outbox(store, clock)
    outbox.queue_open(LINK, "s", "b")
    outbox.queue_open(OTHER, "s", "b")
    backend.error = BackendUnavailableError("down", retry_after=300)
    sent = outbox.send_due(clock())
    assert sent.sent == 0 and len(sent.failed) == 1 and backend.calls == 1, "down: the rest is not tried"
    head, other = store.pending_ticket_writes()
    assert head.attempts == 1 and head.next_attempt_at >= clock() + timedelta(seconds=300), "Retry-After kept"
    assert other.attempts == 0 and other.next_attempt_at == head.next_attempt_at, "held with it"
    assert outbox.send_due(clock.advance(seconds=299)).failed == [] and backend.calls == 1
    backend.error = None
    assert outbox.send_due(clock.advance(seconds=2)).sent == 2
    assert [t.state for t in store.tickets()] == [TicketState.OPEN, TicketState.OPEN]
    assert store.pending_ticket_writes() == []


def test_a_refused_write_waits_alone_and_the_writes_of_its_ticket_wait_behind_it(store: Store,
                                                                                   clock: FakeClock) -> None:
    outbox, backend = _outbox(store, clock)
    outbox.queue_open(LINK, "s", "b")
    outbox.queue_comment(LINK, "after the open")
    outbox.queue_open(OTHER, "s", "b")
    backend.error = TicketError("Jira refused a field")
    first = outbox.send_due(clock())
    backend.error = None
    assert len(first.failed) == 2, "the open of LINK refused, OTHER's tried anyway (and refused: same switch)"
    assert [e.kind for e in store.pending_ticket_writes()] == [TicketWriteKind.OPEN, TicketWriteKind.COMMENT,
                                                                TicketWriteKind.OPEN]
    assert store.pending_ticket_writes()[1].attempts == 0, "the comment was not tried before its ticket exists"
    assert outbox.send_due(clock.advance(minutes=1)).sent == 3
    (ticket, _) = sorted(backend.inner.list(), key=lambda t: t.dedup_key != outbox.ticketing.key(LINK))
    assert ticket.comments == 1


@pytest.mark.parametrize("settle", [120, 0])
def test_a_create_without_an_answer_is_not_tried_before_the_search_settles(store: Store, clock: FakeClock,
                                                                            settle: int) -> None:
    outbox, backend = _outbox(store, clock)
    outbox.settings = OutboxSettings(rng=random.Random(1), search_settle=timedelta(seconds=settle))
    outbox.queue_open(LINK, "s", "b")
    backend.error, backend.after = OutcomeUnknownError("read timed out"), True
    outbox.send_due(clock())
    backend.error = None
    (entry,) = store.pending_ticket_writes()
    assert entry.uncertain_at == clock()
    assert entry.next_attempt_at >= clock() + timedelta(seconds=settle)
    outbox.send_due(clock.advance(seconds=119))
    assert len(store.pending_ticket_writes()) == (1 if settle else 0)
    outbox.send_due(clock.advance(seconds=2))
    assert store.pending_ticket_writes() == []
    assert len(backend.inner.list()) == 1, "the local backend's adoption finds what the lost create made"


def test_a_comment_on_a_ticket_that_no_longer_exists_is_dropped(store: Store, clock: FakeClock) -> None:
    outbox, _ = _outbox(store, clock)
    outbox.queue_open(LINK, "s", "b")
    outbox.send_due(clock())
    (row,) = store.tickets()
    store.ticket_closed(row.id)
    store.ticket_reopened(row.id)
    with store.engine.begin() as conn:  # the ticket deleted behind the service's back
        conn.exec_driver_sql("DELETE FROM local_tickets")
    outbox.queue_comment(LINK, "anyone there?")
    report = outbox.send_due(clock())
    assert (report.sent, report.dropped) == (0, 1) and store.pending_ticket_writes() == []


def test_a_deposed_leader_sends_nothing_from_the_outbox(store: Store, clock: FakeClock) -> None:
    old = store.take_epoch("a", lease=15).epoch
    leading, backend = _outbox(store.fenced(Fence(store.fabric, old, lambda: True)), clock)
    store.enqueue_ticket_write(TicketWriteKind.OPEN, "ibdedup-1", component=LINK, summary="s", body="b")
    assert leading.send_due(clock()).sent == 1
    store.enqueue_ticket_write(TicketWriteKind.COMMENT, "ibdedup-1", component=LINK, summary="", body="c1")
    store.take_epoch("b", lease=15)
    before = backend.calls
    with pytest.raises(StaleEpochError):
        leading.send_due(clock())  # its read of what is due is a fenced transaction, as each write's record is
    assert backend.calls == before and len(store.pending_ticket_writes()) == 1
