"""``Store.history_after``: what the golden set's index reads, the rows added or changed since its mark, on SQLite and
PostgreSQL; a mark read again returns nothing new, and the rows changed in place come again when they change."""

from __future__ import annotations

from datetime import timedelta

from store_helpers import T0, FakeClock

from fabric.remediation.domain import (
    Action,
    ActionKind,
    ComponentId,
    ComponentKind,
    ComponentRecord,
    Finding,
    Lifecycle,
)
from fabric.store import HistoryMark, Store

LINK = ComponentId(ComponentKind.LINK, "leaf01/1|node01 mlx5_0/1")
OTHER = ComponentId(ComponentKind.LINK, "leaf01/2|node02 mlx5_0/1")


def test_the_history_read_a_piece_at_a_time(store: Store, clock: FakeClock) -> None:
    assert store.watched_since() == T0
    store.add_findings([Finding(LINK, "ber", T0, "BER", (1,)), Finding(OTHER, "flap", T0, "flaps", (2,))])
    store.record_decisions([Action(ActionKind.QUARANTINE, T0, "ber", "3 strikes", LINK, dry_run=False),
                            Action(ActionKind.DISABLE, T0, "flap", "flaps", OTHER, dry_run=False)])
    ticket, _ = store.claim_ticket("k1", backend="local", summary="BER", component=LINK)
    store.put_component(LINK, ComponentRecord(Lifecycle.QUARANTINED, T0, "ber", "BER", strikes=3))
    store.put_component(OTHER, ComponentRecord(Lifecycle.DISABLED, T0, "flap", "flaps"))  # no strike: not read
    first = store.history_after(HistoryMark())
    assert first.findings == [(LINK, T0), (OTHER, T0)]
    assert first.quarantines == [LINK]
    assert first.tickets == [(ticket.id, LINK, False)]
    assert first.strikes == [(LINK, 3)]

    again = store.history_after(first.mark)  # the rows of the newest instant come again: folding twice is harmless
    assert (again.findings, again.quarantines, again.mark) == ([], [], first.mark)

    clock.advance(minutes=5)
    store.ticket_opened(ticket.id, "LOCAL-1")
    store.ticket_resolved(ticket.id)
    store.add_finding(Finding(OTHER, "flap", T0 + timedelta(minutes=5), "flaps", (3,)))
    counts_later = store.history_after(first.mark, changed=False)
    assert counts_later.findings == [(OTHER, T0 + timedelta(minutes=5))]
    assert (counts_later.tickets, counts_later.mark.changed) == ([], first.mark.changed)
    changed = store.history_after(counts_later.mark)
    assert (changed.findings, changed.tickets) == ([], [(ticket.id, LINK, True)])
    assert changed.mark.changed == T0 + timedelta(minutes=5)
