"""Many cables of one switch failing together are one switch fault (``fabric.remediation.correlate``)."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from hypothesis import example, given, settings
from hypothesis import strategies as st

from fabric.remediation.correlate import Correlator, faulty_switches, hosts_behind
from fabric.remediation.domain import ActionKind, ComponentId, ComponentKind, ComponentRecord, Finding, Lifecycle
from fabric.remediation.pipeline import Pipeline
from fabric.remediation.policy import Breaker, PolicyConfig, PolicyState
from fabric.remediation.rules import SWITCH_FAULT, RuleSettings
from fabric.remediation.signals import link_id
from fabric.remediation.view import build_view, fabric_context
from fabric.ufm.models import Event
from topology.formats.ufm_render import UfmView, named_as_ufm
from topology.generate import PRESETS, fat_tree
from topology.guard import GuardSettings
from topology.model import Cable, Fabric

T0 = datetime(2026, 4, 1, 10, 0, tzinfo=UTC)
TINY = fat_tree(PRESETS["tiny"])
H100 = fat_tree(PRESETS["h100-4k"])


def cables_of(plan: Fabric, device: str, towards: str = "") -> list[Cable]:
    return sorted((c for c in plan.cables if device in (c.a.device, c.b.device)
                   and towards in f"{c.a.device} {c.b.device}".replace(device, "")), key=lambda c: c.key)


def ber(cable: Cable, at: datetime, event: int) -> Finding:
    return Finding(link_id(cable.key), "ber_critical", at, "symbol BER critical", (event,))


def correlator(plan: Fabric, **rules: object) -> Correlator:
    return Correlator(plan, fabric_context(plan).cables, RuleSettings(**rules))  # type: ignore[arg-type]


def test_three_cables_of_a_switch_are_three_cable_findings() -> None:
    found = [ber(c, T0, n) for n, c in enumerate(cables_of(TINY, "pod01-spine01")[:3])]
    result = correlator(TINY).correlate(found, PolicyState())
    assert result.decide == tuple(found) and result.folded == () and result.switch_faults == ()


def test_the_fourth_cable_within_the_window_makes_it_the_switch() -> None:
    """The first three were decided on (they may be out already); from the fourth on, it is the switch."""
    cables = cables_of(TINY, "pod01-spine01")
    stage = correlator(TINY)
    first = [ber(c, T0 + timedelta(minutes=n), n) for n, c in enumerate(cables[:3])]
    assert stage.correlate(first, PolicyState()).decide == tuple(first)
    fourth = ber(cables[3], T0 + timedelta(minutes=4), 9)
    result = stage.correlate([fourth], PolicyState())
    [switch] = result.switch_faults
    assert (switch.component, switch.rule, switch.ticket_only) == (
        ComponentId(ComponentKind.SWITCH, "pod01-spine01"), SWITCH_FAULT, True)
    assert switch.evidence == (0, 1, 2, 9) and switch.at == fourth.at
    assert all(link_id(c.key).name in switch.reason for c in cables[:4])
    assert result.decide == (switch,) and [f.finding for f in result.folded] == [fourth]
    assert result.findings == (fourth, switch), "the cable finding is recorded, folded"


def test_cables_further_apart_than_the_window_stay_cable_findings() -> None:
    cables = cables_of(TINY, "pod01-spine01")
    stage = correlator(TINY, switch_fault_window=timedelta(minutes=5))
    for n, cable in enumerate(cables[:4]):
        result = stage.correlate([ber(cable, T0 + timedelta(minutes=2 * n), n)], PolicyState())
        assert result.switch_faults == () and len(result.decide) == 1


def test_the_window_slides_over_the_findings_times_not_the_cycles() -> None:
    """One cycle seeing a long stretch (a long interval, or the first after a restart): the spine's burst at T0
    is its fault though a later, unrelated finding is newer than the window; uplinks failing two minutes apart
    (never four within five minutes) stay cable findings."""
    spine = cables_of(TINY, "pod01-spine01")[:4]
    other = cables_of(TINY, "pod02-leaf01", "node")[0]
    burst = [ber(c, T0, n) for n, c in enumerate(spine)] + [ber(other, T0 + timedelta(minutes=6), 9)]
    result = correlator(TINY).correlate(burst, PolicyState())
    assert [f.component.name for f in result.switch_faults] == ["pod01-spine01"]
    assert result.decide[-1] == burst[-1]
    spread = [ber(c, T0 + timedelta(minutes=2 * n), n) for n, c in enumerate(cables_of(H100, "pod03-leaf05",
                                                                                          "spine")[:10])]
    assert correlator(H100).correlate(spread, PolicyState()).switch_faults == ()


def test_a_spine_with_failing_core_uplinks_is_the_spine_not_its_cores() -> None:
    """h100-4k: a spine has 4 cables to each of 8 cores; all 32 failing is the spine, not 8 cores each seeing 4."""
    uplinks = cables_of(H100, "pod01-spine01", "core")
    assert len(uplinks) == 32
    result = correlator(H100).correlate([ber(c, T0, n) for n, c in enumerate(uplinks)], PolicyState())
    assert [f.component.name for f in result.switch_faults] == ["pod01-spine01"]
    assert len(result.folded) == 32 and result.decide == result.switch_faults


def test_a_leaf_with_failing_uplinks_is_the_leaf_not_the_spines_they_reach() -> None:
    """Ten uplinks of a leaf reach its spines 4, 4 and 2 at a time: the leaf, whose 10 outnumber each spine's 4."""
    uplinks = cables_of(H100, "pod03-leaf05", "spine")[:10]
    result = correlator(H100).correlate([ber(c, T0, n) for n, c in enumerate(uplinks)], PolicyState())
    assert [f.component.name for f in result.switch_faults] == ["pod03-leaf05"]


def test_two_faulty_switches_each_get_their_own_cables() -> None:
    spine, leaf = cables_of(H100, "pod01-spine01", "core")[:5], cables_of(H100, "pod02-leaf03", "spine")[:6]
    found = [ber(c, T0, n) for n, c in enumerate(spine + leaf)]
    result = correlator(H100).correlate(found, PolicyState())
    assert sorted(f.component.name for f in result.switch_faults) == ["pod01-spine01", "pod02-leaf03"]
    assert {f.switch.name for f in result.folded} == {"pod01-spine01", "pod02-leaf03"}


def test_a_finding_on_a_cable_of_a_switch_whose_fault_is_open_is_folded() -> None:
    cable = cables_of(TINY, "pod02-leaf01")[0]
    switch = ComponentId(ComponentKind.SWITCH, "pod02-leaf01")
    state = PolicyState({switch: ComponentRecord(Lifecycle.TICKETED, T0, SWITCH_FAULT, "5 cables ...")})
    result = correlator(TINY).correlate([ber(cable, T0, 1)], state)
    assert result.decide == () and result.switch_faults == ()
    assert [f.reason for f in result.folded] == ["folded into the open switch_fault of pod02-leaf01: symbol BER "
                                                "critical"]
    assert faulty_switches(state) == [switch]
    repaired = PolicyState({switch: ComponentRecord(Lifecycle.PROBATION, T0, "repair", "ticket resolved")})
    assert correlator(TINY).correlate([ber(cable, T0, 1)], repaired).decide == (ber(cable, T0, 1),)
    assert faulty_switches(repaired) == []


def held_out(cables: list[Cable], since: datetime) -> PolicyState:
    return PolicyState({link_id(c.key): ComponentRecord(Lifecycle.AWAITING_REPAIR, since, "ber_critical", "BER")
                        for c in cables})


def test_a_finding_on_a_cable_out_since_before_it_counts_toward_no_switch_fault() -> None:
    """UFM Telemetry judges a BER over a window a cable went out in, so a cable taken out goes on being found for a
    while: three such with one new cable are not the switch's fault; a finding from before its cable went out is."""
    cables = cables_of(TINY, "pod01-spine01")[:4]
    found = [ber(c, T0 + timedelta(minutes=2), n) for n, c in enumerate(cables)]
    out_before = correlator(TINY).correlate(found, held_out(cables[:3], T0))
    assert out_before.switch_faults == () and out_before.decide == tuple(found)
    out_after = correlator(TINY).correlate(found, held_out(cables[:3], T0 + timedelta(minutes=3)))
    assert [f.component.name for f in out_after.switch_faults] == ["pod01-spine01"]


def test_after_a_restart_a_recorded_finding_on_a_cable_out_since_before_it_counts_toward_no_switch_fault() -> None:
    cables = cables_of(TINY, "pod01-spine01")[:4]
    recorded = [ber(c, T0 + timedelta(minutes=2), n) for n, c in enumerate(cables[:3])]
    fourth = ber(cables[3], T0 + timedelta(minutes=3), 9)
    for since, faults in ((T0, 0), (T0 + timedelta(minutes=3), 1)):
        state = held_out(cables[:3], since)
        restored = correlator(TINY)
        restored.restore(recorded, state)
        assert len(restored.correlate([fourth], state).switch_faults) == faults, since


def test_a_switch_fault_is_raised_once_a_window() -> None:
    """Not yet ticketed (a dry run, a held finding): the next cable within the window joins the fault raised."""
    cables = cables_of(TINY, "pod01-spine01")
    stage = correlator(TINY)
    [first] = stage.correlate([ber(c, T0, n) for n, c in enumerate(cables[:4])], PolicyState()).switch_faults
    fifth = stage.correlate([ber(cables[4], T0 + timedelta(minutes=1), 5)], PolicyState())
    assert fifth.switch_faults == () and fifth.decide == ()
    assert [f.reason.partition(":")[0] for f in fifth.folded] == ["folded into the switch_fault of pod01-spine01"]
    later = [ber(c, T0 + timedelta(minutes=10), 10 + n) for n, c in enumerate(cables[:4])]
    [again] = stage.correlate(later, PolicyState()).switch_faults
    assert again.at > first.at


def test_a_late_finding_counts_with_the_findings_a_window_before_it_though_a_cycle_since_looked_past_them() -> None:
    """Link-down evidence is counted once it settled: its finding comes after newer ones, and reaches back a window
    from its own time, to findings the cycles in between had no use for."""
    cables = cables_of(TINY, "pod01-leaf02", "node")
    stage = correlator(TINY)
    assert stage.correlate([ber(c, T0, n) for n, c in enumerate(cables[:3])], PolicyState()).switch_faults == ()
    assert stage.correlate([ber(cables[0], T0 + timedelta(minutes=6), 5)], PolicyState()).switch_faults == ()
    [fault] = stage.correlate([ber(cables[3], T0 + timedelta(minutes=2), 9)], PolicyState()).switch_faults
    assert (fault.component.name, fault.evidence) == ("pod01-leaf02", (0, 1, 2, 9))


def test_a_finding_older_than_the_horizon_counts_toward_no_switch_fault_restored_or_not() -> None:
    """The horizon (the detectors' history and a window before the newest cable finding) bounds what is kept: a
    finding later than that (an old event UFM reports only now) is not correlated, by a correlator that pruned what
    lies before the horizon nor by one restored with it all."""
    cables = cables_of(TINY, "pod01-leaf02", "node")
    cycles = [[ber(c, T0, n) for n, c in enumerate(cables[:3])],
              [ber(cables_of(TINY, "pod02-leaf01", "node")[0], T0 + timedelta(hours=13), 5)]]
    late = [ber(cables[3], T0 + timedelta(minutes=1), 9)]
    throughout, before, restored = correlator(TINY), correlator(TINY), correlator(TINY)
    recorded = [f for cycle in cycles for f in before.correlate(cycle, PolicyState()).findings]
    for cycle in cycles:
        throughout.correlate(cycle, PolicyState())
    restored.restore(recorded, PolicyState())
    for stage in (throughout, restored):
        result = stage.correlate(late, PolicyState())
        assert (result.switch_faults, result.decide) == ((), tuple(late))


def test_the_hosts_behind_a_leaf() -> None:
    behind = hosts_behind(TINY)
    assert behind["pod01-leaf01"] == ["pod01-node01", "pod01-node02", "pod01-node03", "pod01-node04"]
    assert sorted(behind) == ["pod01-leaf01", "pod01-leaf02", "pod02-leaf01", "pod02-leaf02"]  # no spine, no core


@settings(max_examples=80, deadline=None)
@given(picks=st.lists(st.tuples(st.integers(0, len(TINY.cables) - 1), st.integers(0, 600)), max_size=24),
       threshold=st.integers(2, 6), seed=st.integers(0, 2**16))
def test_every_cable_finding_is_decided_on_or_folded_whatever_their_order(
        picks: list[tuple[int, int]], threshold: int, seed: int) -> None:
    """Each cable finding goes to the policy or into exactly one switch fault of at least ``threshold`` cables of
    that switch; the order of the findings within a cycle changes none of it."""
    found = [ber(TINY.cables[index], T0 + timedelta(seconds=second), n) for n, (index, second) in enumerate(picks)]
    result = correlator(TINY, switch_fault_cables=threshold).correlate(found, PolicyState())
    folded = [f.finding for f in result.folded]
    assert sorted(folded + [f for f in result.decide if f.rule != SWITCH_FAULT]) == sorted(found)
    for fault in result.switch_faults:
        mine = {f.finding.component for f in result.folded if f.switch == fault.component}
        assert len(mine) >= threshold
        assert all(fault.component.name in (c.a.device, c.b.device) for c in TINY.cables if link_id(c.key) in mine)
    shuffled = found[:]
    random.Random(seed).shuffle(shuffled)
    again = correlator(TINY, switch_fault_cables=threshold).correlate(shuffled, PolicyState())
    assert sorted(again.switch_faults) == sorted(result.switch_faults)
    assert sorted((f.finding, f.switch) for f in again.folded) == sorted((f.finding, f.switch) for f in result.folded)


# Found by random runs. A sweep forgot when a switch's fault was raised (its time older than the cycle's window
# start) while a later cycle still folds into it: cables 1, 3, 5, 12 are pod01-leaf02's, raised at minute 2.
@example(cycles=[[(1, 0)], [(12, 0)], [(3, 0), (5, 0)], [(3, 0), (12, 0)], [], [], [], [(14, 60), (13, 60)], [],
                 [(2, 60), (14, 0)]], restart=3)
@example(cycles=[[(1, 0), (3, 0), (5, 0), (12, 0)], [(1, 0), (5, 0), (12, 0)], [], [], [], [(3, 0)], [],
                 [(0, 60), (1, 0)]], restart=1)
# A cycle dropped a finding (minute 0, pod01-leaf02's) older than its window that a later cycle's late finding (cable
# 2, 61 s old) reaches back to: the restored correlator, which had kept it, gave pod01-leaf02 a cable the other
# gave pod01-spine01.
@example(cycles=[[(1, 1), (5, 0)], [], [(8, 0)], [], [(13, 0), (12, 0)], [(9, 0)], [(13, 0), (2, 61)]], restart=6)
@settings(max_examples=80, deadline=None)
@given(cycles=st.lists(st.lists(st.tuples(st.integers(0, len(TINY.cables) - 1), st.integers(0, 90)), max_size=6),
                       min_size=1, max_size=12),
       restart=st.integers(0, 12))
def test_a_restart_restoring_the_recorded_findings_correlates_as_an_uninterrupted_run(
        cycles: list[list[tuple[int, int]]], restart: int) -> None:
    """Cycles a minute apart, each with findings up to 90 s old: a correlator rebuilt after any cycle from the
    findings recorded so far (in the order recorded) folds and raises exactly what one that ran throughout does."""
    found = [[ber(TINY.cables[index], T0 + timedelta(minutes=n, seconds=-age), n * 10 + k)
              for k, (index, age) in enumerate(cycle)] for n, cycle in enumerate(cycles)]
    throughout = correlator(TINY)
    expected = [throughout.correlate(cycle, PolicyState()) for cycle in found]
    before = correlator(TINY)
    recorded = [f for cycle in found[:restart] for f in before.correlate(cycle, PolicyState()).findings]
    after = correlator(TINY)
    after.restore(recorded, PolicyState())
    for cycle, wanted in zip(found[restart:], expected[restart:], strict=True):
        got = after.correlate(cycle, PolicyState())
        assert (got.switch_faults, got.folded) == (wanted.switch_faults, wanted.folded)


# --- through the pipeline ------------------------------------------------------------------------------


def pipeline(state: PolicyState | None = None, **policy: object) -> tuple[Pipeline, UfmView]:
    plan = fat_tree(PRESETS["tiny"])
    ufm = named_as_ufm(plan)
    return Pipeline(build_view(plan, plan), PolicyConfig(**policy), RuleSettings(),  # type: ignore[arg-type]
                    GuardSettings(cap_floor=20), state=state), ufm


def critical_ber(ufm: UfmView, cables: list[Cable]) -> list[Event]:
    return [Event.model_validate({"id": n, "timestamp": T0.strftime("%Y-%m-%d %H:%M:%S"), "severity": "Critical",
                                  "name": "x", "description": "BER", "event_type": "917", "type": "IBPort",
                                  "object_type": "IBPort", "object_name": ufm.ports[cable.a].name})
            for n, cable in enumerate(cables, start=1)]


def test_critical_ber_on_four_cables_of_a_switch_disables_none_of_them() -> None:
    steps, ufm = pipeline(dry_run=False)
    uplinks = cables_of(TINY, "pod01-spine01", "core") + cables_of(TINY, "pod01-spine01", "leaf")[:1]
    step = steps.step(critical_ber(ufm, uplinks), T0 + timedelta(seconds=30))
    kinds = [(a.kind, a.rule, str(a.component)) for a in step.decision.actions]
    assert kinds[0] == (ActionKind.TICKET, SWITCH_FAULT, "switch:pod01-spine01")
    assert kinds[1:] == [(ActionKind.RECORD, "ber_critical", str(link_id(c.key))) for c in uplinks]
    assert (step.switch_faults, step.folded) == (1, 5)
    assert [f.rule for f in step.findings].count(SWITCH_FAULT) == 1 and len(step.findings) == 6
    record = steps.state.components[ComponentId(ComponentKind.SWITCH, "pod01-spine01")]
    assert (record.lifecycle, record.rule) == (Lifecycle.TICKETED, SWITCH_FAULT)
    assert not steps.guard.disabled and not steps.state.breaker.halted


def test_while_halted_findings_are_held_as_they_come_and_correlated_again_on_resume() -> None:
    """Nothing is decided while automation is halted, so nothing is folded; a resume in the same cycle decides,
    so it correlates."""
    uplinks = cables_of(TINY, "pod01-spine01")[:5]
    halted = PolicyState(breaker=Breaker(True, T0, "storm"))
    for resume in (False, True):
        steps, ufm = pipeline(halted, dry_run=False)
        step = steps.step(critical_ber(ufm, uplinks), T0 + timedelta(seconds=30), resume=resume)
        rules = [a.rule for a in step.decision.actions if a.kind is ActionKind.TICKET]
        assert (step.switch_faults, rules) == ((1, [SWITCH_FAULT]) if resume else (0, []))
        assert not steps.guard.disabled
