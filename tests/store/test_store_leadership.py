"""Leader epochs: each acquisition takes a new one, and a writer of any other epoch is refused in its transaction."""

from __future__ import annotations

import threading
import time

import pytest
import sqlalchemy as sa
from hypothesis import given, settings
from hypothesis import strategies as st
from store_helpers import Db

from fabric.remediation.domain import Action, ActionKind, ComponentId
from fabric.store import Fence, StaleEpochError, Store

LINK = ComponentId.parse("link:leaf01/1|spine01/1")


def _fenced(store: Store, epoch: int, leading: bool = True) -> Store:
    return store.fenced(Fence(store.fabric, epoch, lambda: leading))


def test_each_acquisition_takes_a_new_epoch_and_names_its_holder(store: Store) -> None:
    assert store.leader() is None
    assert store.take_epoch("a", lease=15).epoch == 1
    assert store.take_epoch("b", lease=15).epoch == 2
    leader = store.leader()
    assert leader is not None and (leader.epoch, leader.holder) == (2, "b")


def test_the_first_epoch_follows_those_the_intents_log_carries(store: Store) -> None:
    store.begin_intent(7, ActionKind.DISABLE, LINK)  # written before leadership existed (version 6)
    assert store.take_epoch("a", lease=15).epoch == 8


def test_a_new_epoch_refuses_the_old_ones_intents_even_when_it_wrote_none(store: Store) -> None:
    old = store.take_epoch("a", lease=15).epoch
    store.begin_intent(old, ActionKind.DISABLE, LINK)
    new = store.take_epoch("b", lease=15).epoch
    with pytest.raises(StaleEpochError, match=f"epoch {old} is stale: the fabric's leader epoch is {new}"):
        store.begin_intent(old, ActionKind.ENABLE, LINK)
    assert [i.epoch for i in store.intents()] == [old]
    store.begin_intent(new, ActionKind.ENABLE, LINK)


def test_a_deposed_leaders_store_refuses_every_write(store: Store) -> None:
    old = store.take_epoch("a", lease=15).epoch
    deposed = _fenced(store, old)
    deposed.claim_ticket("ibdedup-1", backend="local", summary="bad link")
    store.take_epoch("b", lease=15)
    for write in (lambda: deposed.claim_ticket("ibdedup-2", backend="local", summary="bad link"),
                  lambda: deposed.begin_intent(old, ActionKind.DISABLE, LINK),
                  lambda: deposed.save_cursor(high_water_id=9, last_event_time=None, restart_count=0),
                  lambda: deposed.dry_run_scope().halt("storm"),
                  lambda: deposed.transaction().__enter__()):
        with pytest.raises(StaleEpochError, match=f"epoch {old} is stale"):
            write()
    assert [t.dedup_key for t in store.tickets()] == ["ibdedup-1"]
    assert store.load_cursor() is None and not store.dry_run_scope().breaker_state().halted


def test_a_leaders_decisions_carry_its_epoch(store: Store) -> None:
    epoch = store.take_epoch("a", lease=15).epoch
    decided = Action(ActionKind.RECORD, store.now(), "flap", "5 cycles", LINK)
    fenced = _fenced(store, epoch)
    fenced.record_decision(decided)
    with fenced.transaction() as tx:
        tx.record_decisions([decided])
    store.record_decision(decided)  # outside leadership (a tool, a test)
    assert [d.epoch for d in store.decisions()] == [epoch, epoch, None]


def test_a_leader_whose_lease_ran_out_writes_nothing_even_before_anyone_took_over(store: Store) -> None:
    epoch = store.take_epoch("a", lease=15).epoch
    with pytest.raises(StaleEpochError, match="lease ran out") as info:
        _fenced(store, epoch, leading=False).claim_ticket("ibdedup-1", backend="local", summary="bad link")
    assert info.value.newest is None and store.tickets() == []


def test_the_successor_waits_for_the_previous_holders_lease_unless_it_let_go(store: Store) -> None:
    first = store.take_epoch("a", lease=15)
    assert first.wait == 0.0  # nobody held it before
    second = store.take_epoch("b", lease=15)
    assert 14.0 < second.wait <= 15.0  # "a" beat (took its epoch) just now: it may act for 15 s more
    store.let_go(second.epoch)
    assert store.take_epoch("c", lease=15).wait == 0.0


@settings(max_examples=30, deadline=None)
@given(steps=st.lists(st.one_of(st.none(), st.integers(0, 5)), max_size=12))
def test_a_write_is_accepted_exactly_when_its_epoch_is_the_newest_taken(tmp_path_factory: pytest.TempPathFactory,
                                                                        steps: list[int | None]) -> None:
    """None: an instance takes leadership; n: the holder of the n-th epoch taken (from the newest) writes."""
    with Store.open(f"sqlite:///{tmp_path_factory.mktemp('fence') / 'state.db'}") as store:
        taken: list[int] = []
        for step in steps:
            if step is None:
                taken.append(store.take_epoch(f"i{len(taken)}", lease=15).epoch)
                continue
            if not taken:
                continue
            epoch = taken[-1 - min(step, len(taken) - 1)]
            try:
                _fenced(store, epoch).begin_intent(epoch, ActionKind.DISABLE, LINK)
            except StaleEpochError:
                assert epoch != taken[-1]
            else:
                assert epoch == taken[-1]


@pytest.mark.postgres
def test_taking_an_epoch_waits_for_every_transaction_that_checked_the_old_one(db: Db) -> None:
    if db.backend != "postgresql":
        pytest.skip("SQLite serialises every writer with BEGIN IMMEDIATE")
    store = db.open()
    old = store.take_epoch("a", lease=15).epoch
    taken: list[int] = []
    with _fenced(store, old).transaction() as tx:
        tx.begin_intent(old, ActionKind.DISABLE, LINK)
        taker = threading.Thread(target=lambda: taken.append(store.take_epoch("b", lease=15).epoch))
        taker.start()
        waiting = sa.text("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                          "AND query LIKE '%leadership%FOR UPDATE%'")
        deadline = time.monotonic() + 10
        # Autocommit: PostgreSQL shows pg_stat_activity as it was at a transaction's first read until the
        # transaction ends, so polling inside one transaction would never see the taker start waiting.
        with db.raw_engine().connect().execution_options(isolation_level="AUTOCOMMIT") as watcher:
            while not watcher.scalar(waiting) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert watcher.scalar(waiting) == 1, "take_epoch did not wait for the open fenced transaction"
        assert not taken
    taker.join(10)
    assert taken == [old + 1]
    assert [i.epoch for i in store.intents()] == [old]  # committed under the old epoch, before the new one
