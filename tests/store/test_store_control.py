"""Event cursor, silences, webhook deliveries, storm breaker."""

from __future__ import annotations

from datetime import timedelta

import pytest
from store_helpers import T0, Db, FakeClock
from support import run_together

from fabric.remediation.domain import ComponentId, ComponentKind
from fabric.store import NewDelivery, Store, silence_matches

LINK = ComponentId(ComponentKind.LINK, "pod01-leaf03/33|pod01-spine02/5")
OTHER_LINK = ComponentId(ComponentKind.LINK, "pod02-leaf01/1|pod02-spine01/1")
PORT = ComponentId(ComponentKind.PORT, "pod01-leaf03/7")


# -- event cursor -------------------------------------------------------------------------------------------


def test_cursor_round_trip_per_fabric(db: Db, clock: FakeClock) -> None:
    store_a = db.open(fabric="fabric-a", clock=clock)
    store_b = db.open(fabric="fabric-b", clock=clock)
    assert store_a.load_cursor() is None
    saved = store_a.save_cursor(high_water_id=4711, last_event_time=T0 - timedelta(seconds=3), restart_count=0)
    assert store_a.load_cursor() == saved
    assert store_b.load_cursor() is None

    clock.advance(minutes=1)
    updated = store_a.save_cursor(high_water_id=12, last_event_time=T0, restart_count=1)
    loaded = store_a.load_cursor()
    assert loaded == updated
    assert loaded is not None
    assert (loaded.high_water_id, loaded.last_event_time, loaded.restart_count) == (12, T0, 1)
    assert loaded.updated_at == clock.now


def test_empty_cursor_round_trip(store: Store) -> None:
    store.save_cursor(high_water_id=None, last_event_time=None, restart_count=0)
    loaded = store.load_cursor()
    assert loaded is not None
    assert (loaded.high_water_id, loaded.last_event_time) == (None, None)


# -- silences -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("matcher", "component", "expected"),
    [
        ("link:pod01-*", LINK, True),
        ("link:pod01-*", OTHER_LINK, False),
        ("link:pod01-*", PORT, False),  # a link glob does not cover ports
        ("*:pod01-leaf03*", PORT, True),
        (str(LINK), LINK, True),
        (str(LINK).upper(), LINK, True),  # names are case-insensitive
        ("link:*pod01-spine02/5", LINK, True),
        ("port:pod01-leaf03/?", PORT, True),
        ("port:pod01-leaf03/[0-6]", PORT, False),
    ],
)
def test_silence_matching(matcher: str, component: ComponentId, expected: bool) -> None:
    assert silence_matches(matcher, component) is expected


def test_silences_with_globs_and_windows(store: Store, clock: FakeClock) -> None:
    pod = store.add_silence("link:pod01-*", reason="pod01 recabling", created_by="alice", duration=timedelta(hours=2))
    later = store.add_silence(
        str(OTHER_LINK),
        reason="planned swap",
        created_by="bob",
        starts_at=T0 + timedelta(hours=1),
        ends_at=T0 + timedelta(hours=3),
    )
    assert (pod.starts_at, pod.ends_at, pod.created_by) == (T0, T0 + timedelta(hours=2), "alice")

    assert [s.id for s in store.active_silences(T0)] == [pod.id]
    assert store.is_silenced(LINK, T0)
    assert not store.is_silenced(OTHER_LINK, T0)
    assert not store.is_silenced(PORT, T0)

    at_90_min = T0 + timedelta(minutes=90)
    assert [s.id for s in store.active_silences(at_90_min)] == [pod.id, later.id]
    assert store.matching_silence(OTHER_LINK, at_90_min) == later

    # ends_at is exclusive, starts_at inclusive
    assert not store.is_silenced(LINK, T0 + timedelta(hours=2))
    assert store.is_silenced(OTHER_LINK, T0 + timedelta(hours=1))
    assert not store.is_silenced(OTHER_LINK, T0 - timedelta(seconds=1))
    assert store.active_silences(T0 + timedelta(hours=3)) == []

    assert [s.id for s in store.silences()] == [pod.id, later.id]
    assert str(LINK) == "link:pod01-leaf03/33|pod01-spine02/5"
    assert store.is_silenced(str(LINK), T0)


def test_expire_silence(store: Store, clock: FakeClock) -> None:
    silence = store.add_silence("link:pod01-*", reason="r", created_by="alice", duration=timedelta(hours=2))
    future = store.add_silence(
        "port:*", reason="r", created_by="alice", starts_at=T0 + timedelta(hours=5), duration=timedelta(hours=1)
    )
    clock.advance(minutes=30)
    assert store.expire_silence(silence.id)
    assert not store.expire_silence(silence.id)
    assert not store.expire_silence(424242)
    assert not store.is_silenced(LINK, clock.now)
    assert store.expire_silence(future.id)  # a future silence ends before it starts
    assert store.active_silences(T0 + timedelta(hours=5, minutes=30)) == []
    assert store.silences() == []
    assert len(store.silences(include_ended_since=T0)) == 2


def test_silence_validation(store: Store) -> None:
    with pytest.raises(ValueError, match="not a component matcher"):
        store.add_silence("pod01-*", reason="r", created_by="a", duration=timedelta(hours=1))
    with pytest.raises(ValueError, match="either ends_at or duration"):
        store.add_silence("link:*", reason="r", created_by="a")
    with pytest.raises(ValueError, match="either ends_at or duration"):
        store.add_silence("link:*", reason="r", created_by="a", ends_at=T0, duration=timedelta(hours=1))
    with pytest.raises(ValueError, match="end after it starts"):
        store.add_silence("link:*", reason="r", created_by="a", ends_at=T0)


# -- webhook deliveries -------------------------------------------------------------------------------------


def test_webhook_deliveries_are_deduplicated(store: Store, clock: FakeClock) -> None:
    payload = {"webhookEvent": "jira:issue_updated", "issue": {"key": "OPS-17"}}
    assert store.record_delivery("d-1", source="jira", payload=payload)
    clock.advance(minutes=5)
    assert not store.record_delivery("d-1", source="jira", payload={"retry": 1})  # Jira's retry
    assert store.record_delivery("d-2", source="generic")
    delivery = store.get_delivery("d-1")
    assert delivery is not None
    assert (delivery.payload, delivery.received_at, delivery.processed_at) == (payload, T0, None)

    assert [d.id for d in store.unprocessed_deliveries()] == ["d-1", "d-2"]
    assert store.mark_delivery_processed("d-1")
    assert not store.mark_delivery_processed("d-1")
    assert not store.mark_delivery_processed("unknown")
    assert [d.id for d in store.unprocessed_deliveries()] == ["d-2"]
    assert store.get_delivery("nope") is None
    with pytest.raises(ValueError, match="needs an id"):
        store.record_delivery("", source="jira")


def test_a_batch_of_deliveries_stores_those_naming_a_known_ticket_once_each(store: Store) -> None:
    row, _ = store.claim_ticket("fabric:link-1", backend="local", summary="a link", component=None)
    store.ticket_opened(row.id, "OPS-1")
    assert store.record_delivery("d-0", source="jira")
    batch = [NewDelivery("d-0", "jira", "OPS-1"),  # stored before: a retry
             NewDelivery("d-1", "jira", "OPS-1", {"n": 1}),
             NewDelivery("d-2", "jira", "OPS-404"),  # not a ticket of this fabric
             NewDelivery("d-1", "jira", "OPS-1", {"n": 2}),  # a repeat in the same batch
             NewDelivery("d-3", "generic", "OPS-1")]
    assert store.record_ticket_deliveries("local", batch) == [False, True, None, False, True]
    assert store.record_ticket_deliveries("jira", batch[1:2]) == [None]  # another backend's ticket
    assert store.record_ticket_deliveries("local", []) == []
    assert [d.id for d in store.unprocessed_deliveries()] == ["d-0", "d-1", "d-3"]
    stored = store.get_delivery("d-1")
    assert stored is not None and stored.payload == {"n": 1}


def test_racing_deliveries_are_recorded_once(db: Db) -> None:
    stores = [db.open(), db.open()]
    outcomes = run_together(4, lambda n: stores[n % 2].record_delivery("same-id", source="jira", payload={"n": n}))
    assert sorted(outcomes) == [False, False, False, True]


def test_prune_deliveries(store: Store, clock: FakeClock) -> None:
    store.record_delivery("old-done", source="jira")
    store.record_delivery("old-pending", source="jira")
    store.mark_delivery_processed("old-done")
    clock.advance(days=2)
    store.record_delivery("new-done", source="jira")
    store.mark_delivery_processed("new-done")
    assert store.prune_deliveries(T0 + timedelta(days=1)) == 1
    assert store.get_delivery("old-done") is None
    assert store.get_delivery("old-pending") is not None  # never dropped before it was processed
    assert store.get_delivery("new-done") is not None


# -- storm breaker ------------------------------------------------------------------------------------------


def test_breaker_halt_and_resume(store: Store, clock: FakeClock) -> None:
    state = store.breaker_state()
    assert not state.halted
    assert state.fabric == "default"

    halted = store.halt("37 components down in 4 min")
    assert halted.halted
    assert (halted.since, halted.reason, halted.storm_dedup_key) == (T0, "37 components down in 4 min", None)

    clock.advance(minutes=1)
    again = store.halt("another burst", storm_dedup_key="ibdedup-storm")
    assert (again.since, again.reason) == (T0, "37 components down in 4 min")  # the first halt stands
    assert again.storm_dedup_key == "ibdedup-storm"  # but the storm ticket key is filled in
    assert store.breaker_state() == again

    clock.advance(hours=1)
    resumed = store.resume("operator: UFM back to normal")
    assert not resumed.halted
    assert (resumed.since, resumed.reason, resumed.storm_dedup_key) == (clock.now, "operator: UFM back to normal", None)
    assert store.resume("again") == resumed  # resuming a running breaker changes nothing


def test_breakers_are_per_fabric_and_survive_restarts(db: Db) -> None:
    a = db.open(fabric="a")
    b = db.open(fabric="b")
    a.halt("storm", storm_dedup_key="ibdedup-a")
    assert not b.breaker_state().halted
    a.close()
    assert db.open(fabric="a").breaker_state().halted


def test_breaker_in_a_transaction(store: Store) -> None:
    with store.transaction() as tx:
        state = tx.halt("storm")
        assert state.halted
        tx.claim_ticket("ibdedup-storm", backend="local", summary="storm")
    assert store.breaker_state().halted


def test_storm_window_and_held_figures_are_per_fabric_and_replaced_whole(db: Db, clock: FakeClock) -> None:
    a = db.open(fabric="a", clock=clock)
    b = db.open(fabric="b", clock=clock)
    assert a.storm_window() == {} and a.breaker_state().held_count == 0
    with a.transaction() as tx:
        tx.save_storm({LINK: T0, PORT: T0 + timedelta(seconds=5)}, last_held=None, held_count=0)
    a.halt("storm")
    a.save_storm({LINK: T0, OTHER_LINK: T0 + timedelta(minutes=2)}, last_held=T0 + timedelta(minutes=3), held_count=7)
    assert a.storm_window() == {LINK: T0, OTHER_LINK: T0 + timedelta(minutes=2)}  # PORT left the window
    assert b.storm_window() == {}
    a.close()
    reopened = db.open(fabric="a", clock=clock).breaker_state()
    assert (reopened.halted, reopened.last_held, reopened.held_count) == (True, T0 + timedelta(minutes=3), 7)
    resumed = db.open(fabric="a", clock=clock).resume("quiet")
    assert (resumed.last_held, resumed.held_count) == (None, 0)


def test_disables_decided_since_leave_out_dry_runs_and_convergence_writes(store: Store) -> None:
    from fabric.remediation.domain import CONVERGE_RULE, Action, ActionKind

    def decision(kind: ActionKind, minutes: int, rule: str = "flap", dry_run: bool = False) -> Action:
        return Action(kind, T0 + timedelta(minutes=minutes), rule, "why", LINK, {}, dry_run)

    store.record_decisions([decision(ActionKind.DISABLE, 0), decision(ActionKind.DISABLE, 10, dry_run=True),
                            decision(ActionKind.DISABLE, 20, CONVERGE_RULE), decision(ActionKind.ENABLE, 30),
                            decision(ActionKind.DISABLE, 40), decision(ActionKind.DEFER, 50),
                            decision(ActionKind.RESET, 55), decision(ActionKind.RESET, 56, dry_run=True)])
    later = T0 + timedelta(minutes=40)
    assert store.decided_since(ActionKind.DISABLE, T0) == [(T0, LINK), (later, LINK)]
    assert store.decided_since(ActionKind.DISABLE, T0 + timedelta(minutes=1)) == [(later, LINK)]
    # The resets the reset ladder counts, chosen the same way.
    assert store.decided_since(ActionKind.RESET, T0) == [(T0 + timedelta(minutes=55), LINK)]
