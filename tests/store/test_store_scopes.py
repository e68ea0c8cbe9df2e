"""A dry run's scope (SQLite and PostgreSQL): begun as a copy of the fabric's desired state, kept apart from it,
dropped whole; no fabric name can reach its rows."""

from __future__ import annotations

from datetime import timedelta

import pytest
from store_helpers import T0, Db, FakeClock

from fabric.remediation.domain import Action, ActionKind, ComponentId, ComponentKind, ComponentRecord, Lifecycle
from fabric.store import Store

LINK = ComponentId(ComponentKind.LINK, "pod01-leaf03/33|pod01-spine02/5")
OTHER = ComponentId(ComponentKind.LINK, "pod02-leaf01/1|pod02-spine01/1")


def test_a_dry_run_scope_begins_as_a_copy_of_the_fabrics_state_and_stays_apart(db: Db, clock: FakeClock) -> None:
    store = db.open(fabric="east", clock=clock)
    store.put_component(LINK, ComponentRecord(Lifecycle.AWAITING_REPAIR, T0, "flap", "real"), ticket_dedup_key="k")
    store.halt("storm")
    store.save_storm({LINK: T0}, last_held=T0, held_count=3)
    assert not store.dry_run_kept() and store.state_scope() is store
    store.begin_dry_run()
    scope = store.dry_run_scope()
    assert store.dry_run_kept() and store.state_scope().would_be and not store.would_be
    assert scope.components() == store.components() and scope.storm_window() == {LINK: T0}
    copied = scope.breaker_state()
    assert (copied.halted, copied.reason, copied.held_count, copied.last_held) == (True, "storm", 3, T0)
    # Would-be writes stay in the scope; the fabric's state is untouched, and so is another fabric's.
    clock.advance(minutes=1)
    with store.transaction() as tx:
        held = tx.dry_run_scope()
        held.put_component(OTHER, ComponentRecord(Lifecycle.DISABLED, clock.now, "ber", "would be"))
        held.resume("operator")
    assert set(scope.components()) == {LINK, OTHER} and set(store.components()) == {LINK}
    assert not scope.breaker_state().halted and store.breaker_state().halted
    assert scope.lifecycle_counts()[Lifecycle.DISABLED] == 1 and store.lifecycle_counts()[Lifecycle.DISABLED] == 0
    assert db.open(fabric="west").components() == {} and not db.open(fabric="west").dry_run_kept()
    # Dropped whole (live mode starting); a second drop finds nothing.
    assert store.drop_dry_run() and not store.drop_dry_run()
    assert not store.dry_run_kept() and scope.components() == {} and scope.storm_window() == {}


def test_beginning_a_dry_run_again_replaces_what_it_kept(store: Store) -> None:
    store.begin_dry_run()
    store.dry_run_scope().put_component(LINK, ComponentRecord(Lifecycle.DISABLED, T0, "ber", "would be"))
    store.dry_run_scope().halt("a would-be storm")
    store.begin_dry_run()
    assert store.dry_run_scope().components() == {} and not store.dry_run_scope().breaker_state().halted


def test_a_dry_runs_disables_count_only_since_its_scope_began(store: Store) -> None:
    def disable(minutes: int, *, dry_run: bool) -> Action:
        return Action(ActionKind.DISABLE, T0 + timedelta(minutes=minutes), "ber", "why", LINK, {}, dry_run)

    store.record_decisions([disable(0, dry_run=True), disable(10, dry_run=False), disable(20, dry_run=True)])
    store.record_decision(Action(ActionKind.RECORD, T0 + timedelta(minutes=15), "dry_run", "began", dry_run=True))
    assert store.last_decided(ActionKind.RECORD, "dry_run") == T0 + timedelta(minutes=15)
    assert store.last_decided(ActionKind.RECORD, "other") is None
    assert [at for at, _ in store.decided_since(ActionKind.DISABLE, T0)] == [T0 + timedelta(minutes=10)]
    began = T0 + timedelta(minutes=15)
    assert [at for at, _ in store.decided_since(ActionKind.DISABLE, T0, dry_run_since=began)] == [
        T0 + timedelta(minutes=10), T0 + timedelta(minutes=20)]


@pytest.mark.parametrize("name", ["east\x1fdry-run", "a\nb", "\x00"])
def test_a_fabric_name_cannot_hold_the_control_character_of_a_dry_runs_key(db: Db, name: str) -> None:
    with pytest.raises(ValueError, match="control characters"):
        db.open(fabric=name)
