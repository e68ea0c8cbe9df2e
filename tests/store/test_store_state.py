"""Components (desired state), findings and decisions; ``transaction()``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_helpers import T0, Db, FakeClock

from fabric.remediation.domain import (
    Action,
    ActionKind,
    ComponentId,
    ComponentKind,
    ComponentRecord,
    Finding,
    Lifecycle,
)
from fabric.store import Store

LINK = ComponentId(ComponentKind.LINK, "leaf01/33|spine02/5")
PORT = ComponentId(ComponentKind.PORT, "leaf01/7")
SWITCH = ComponentId(ComponentKind.SWITCH, "spine02")


def test_put_and_get_component(store: Store) -> None:
    assert store.get_component(LINK) is None
    record = ComponentRecord(Lifecycle.DISABLED, T0, "flap", "flapping: 3 cycles in 12 h", strikes=1)
    assert store.put_component(LINK, record, ticket_dedup_key="ibdedup-00ff") == record
    assert store.get_component(LINK) == record
    with store.engine.connect() as conn:
        kept = conn.execute(sa.text("SELECT ticket_dedup_key, updated_at FROM components")).one()
    assert kept[0] == "ibdedup-00ff"  # beside the record, for people reading the table


def test_component_keeps_its_rule_and_restore_flag(store: Store) -> None:
    store.put_component(LINK,
                        ComponentRecord(Lifecycle.AWAITING_REPAIR, T0, "temperature", "", never_auto_restore=True))
    record = store.get_component(LINK)
    assert record is not None and (record.rule, record.never_auto_restore) == ("temperature", True)
    store.put_component(LINK, ComponentRecord(Lifecycle.PROBATION, T0, "repair", ""))
    record = store.get_component(LINK)
    assert record is not None and (record.rule, record.never_auto_restore) == ("repair", False)


def test_put_component_replaces_every_field(store: Store, clock: FakeClock) -> None:
    store.put_component(LINK, ComponentRecord(Lifecycle.DISABLED, T0, "flap", "3 cycles", never_auto_restore=True),
                        ticket_dedup_key="ibdedup-1")
    later = clock.advance(hours=3)
    replacement = ComponentRecord(Lifecycle.PROBATION, later, "repair", "", strikes=2,
                                  probation_until=later + timedelta(days=2))
    assert store.put_component(LINK, replacement) == replacement
    assert store.get_component(LINK) == replacement
    assert len(store.components()) == 1


def _at(lifecycle: Lifecycle) -> ComponentRecord:
    return ComponentRecord(lifecycle, T0, "rule", "reason")


def test_components_by_lifecycle_and_counts(store: Store) -> None:
    store.put_component(LINK, _at(Lifecycle.DISABLED))
    store.put_component(PORT, _at(Lifecycle.DEFERRED))
    store.put_component(SWITCH, _at(Lifecycle.TICKETED))
    assert list(store.components()) == sorted([LINK, PORT, SWITCH], key=str)
    assert list(store.components(Lifecycle.DEFERRED)) == [PORT]
    both = store.components([Lifecycle.DISABLED, Lifecycle.TICKETED])
    assert set(both) == {LINK, SWITCH}
    counts = store.lifecycle_counts()
    assert counts[Lifecycle.DISABLED] == 1
    assert counts[Lifecycle.HEALTHY] == 0
    assert sum(counts.values()) == 3
    assert set(counts) == set(Lifecycle)


def test_components_of_some_states_come_in_id_order(store: Store) -> None:
    """Read through the lifecycle index (a few rows of many: host health's read), not the id's: sorted after."""
    states = [Lifecycle.HEALTHY, Lifecycle.DISABLED, Lifecycle.QUARANTINED, Lifecycle.TICKETED, Lifecycle.PROBATION]
    made = [ComponentId(ComponentKind.LINK, f"leaf01/{n}|spine02/{n}") for n in range(20, 0, -1)]
    for n, component in enumerate(made):
        store.put_component(component, _at(states[n % len(states)]))
    wanted = [c for n, c in enumerate(made) if states[n % len(states)] in states[1:4]]
    assert list(store.components(states[1:4])) == sorted(wanted, key=str)


def test_forget_component(store: Store) -> None:
    store.put_component(LINK, _at(Lifecycle.HEALTHY))
    assert store.forget_component(LINK)
    assert not store.forget_component(LINK)
    assert store.get_component(LINK) is None


def test_put_component_validates(store: Store) -> None:
    with pytest.raises(ValueError, match="negative"):
        store.put_component(LINK, ComponentRecord(Lifecycle.DISABLED, T0, "", "", strikes=-1))


def test_findings_history(store: Store) -> None:
    first = Finding(LINK, "flap", T0, "3 cycles", (329, 330))
    second = Finding(LINK, "ber", T0 + timedelta(minutes=5), "critical", (917,), never_auto_restore=True)
    other = Finding(PORT, "unhealthy", T0 + timedelta(minutes=1), "702", (702,), ticket_only=True)
    ids = [store.add_finding(first), store.add_finding(second), store.add_finding(other)]
    assert ids == sorted(ids)
    assert store.findings(component=LINK) == [first, second]
    assert store.findings() == [first, other, second]
    assert store.findings(since=T0 + timedelta(minutes=1)) == [other, second]
    assert store.findings(until=T0 + timedelta(minutes=1)) == [first]
    assert store.findings(component=LINK, limit=1) == [second]
    assert store.findings(limit=2) == [other, second]
    # As recorded: the order the correlation saw them arrive in (restored after a restart).
    assert store.findings(as_recorded=True) == [first, second, other]
    assert store.findings(since=T0 + timedelta(minutes=1), as_recorded=True) == [second, other]
    assert store.findings(limit=2, as_recorded=True) == [second, other]


findings_of_every_kind = st.lists(st.builds(
    Finding,
    component=st.sampled_from([LINK, PORT, SWITCH]),
    rule=st.sampled_from(["flap", "ber_critical", "switch_fault"]),
    at=st.datetimes(datetime(2000, 1, 1), datetime(2100, 1, 1),
                    timezones=st.sampled_from([UTC, timezone(timedelta(hours=-7))])),
    reason=st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=40),
    evidence=st.lists(st.integers(0, 2**53), max_size=5).map(tuple),
    ticket_only=st.booleans(), never_auto_restore=st.booleans(), no_reset=st.booleans()), min_size=1, max_size=8)
"""Findings as any stage makes them: each flag set or not (PostgreSQL's text holds no NUL, nor does UFM's)."""


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batch=findings_of_every_kind)
def test_a_finding_comes_back_from_the_store_as_it_went_in(store: Store, batch: list[Finding]) -> None:
    """Every field, the flags too: a burn-in window's finding restored after a restart (held to settle) that lost
    ``no_reset`` would be reset first."""
    half = len(batch) // 2
    store.add_finding(batch[0])
    store.add_findings(batch[1:half + 1])
    for finding in batch[half + 1:]:
        store.add_finding(finding)
    assert store.findings(as_recorded=True)[-len(batch):] == batch  # after the earlier examples' findings


def test_add_findings_in_bulk(store: Store) -> None:
    batch = [Finding(LINK, "flap", T0 + timedelta(seconds=i), f"#{i}", (i,)) for i in range(50)]
    assert store.add_findings(batch) == 50
    assert store.add_findings([]) == 0
    assert store.findings(component=LINK) == batch


def test_decisions_keep_the_whole_action(store: Store) -> None:
    disable = Action(
        ActionKind.DISABLE,
        T0,
        "flap",
        "3 cycles in 12 h; guard ok",
        LINK,
        guard={"leaf": "leaf01", "paths_to_core": 30, "planned": 32, "min": 24},
        dry_run=False,
    )
    halt = Action(ActionKind.HALT, T0 + timedelta(seconds=1), "storm", "40 components in 5 min")
    record = Action(ActionKind.RECORD, T0 + timedelta(seconds=2), "silenced", "silence #3", PORT)
    first_id = store.record_decision(disable)
    assert store.record_decisions([halt, record]) == 2
    assert store.record_decisions([]) == 0
    stored = store.decisions()
    assert [d.action for d in stored] == [disable, halt, record]
    assert stored[0].id == first_id
    assert stored[0].action.guard["paths_to_core"] == 30
    assert stored[1].action.component is None
    assert [d.action for d in store.decisions(component=LINK)] == [disable]
    assert [d.action for d in store.decisions(since=T0 + timedelta(seconds=1))] == [halt, record]
    assert [d.action for d in store.decisions(until=T0 + timedelta(seconds=1))] == [disable]
    assert [d.action for d in store.decisions(limit=2)] == [halt, record]


def test_transaction_commits_together(store: Store) -> None:
    with store.transaction() as tx:
        tx.put_component(LINK, ComponentRecord(Lifecycle.DISABLED, T0, "", ""))
        tx.add_finding(Finding(LINK, "flap", T0, "x"))
        # Inside the transaction its own writes are visible.
        assert tx.get_component(LINK) is not None
    assert store.get_component(LINK) is not None
    assert len(store.findings()) == 1


def test_transaction_rolls_back_together(store: Store) -> None:
    with pytest.raises(RuntimeError, match="boom"), store.transaction() as tx:
        tx.put_component(LINK, ComponentRecord(Lifecycle.DISABLED, T0, "", ""))
        tx.add_finding(Finding(LINK, "flap", T0, "x"))
        tx.claim_ticket("ibdedup-1", backend="local", summary="x")
        raise RuntimeError("boom")
    assert store.get_component(LINK) is None
    assert store.findings() == []
    assert store.active_ticket("ibdedup-1") is None


def test_another_store_sees_committed_state(db: Db, store: Store) -> None:
    store.put_component(LINK, ComponentRecord(Lifecycle.AWAITING_REPAIR, T0, "", ""))
    other = db.open()
    record = other.get_component(LINK)
    assert record is not None
    assert record.lifecycle is Lifecycle.AWAITING_REPAIR
