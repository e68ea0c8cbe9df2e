"""``observe``: what the controller saw between cycles, made state by the policy (``fabric.remediation.observe``)."""

from __future__ import annotations

from test_policy import CONTEXT, H100, LIVE, SWITCH_LINKS, T0, uplinks

from fabric.remediation.domain import ActionKind, ComponentRecord, Lifecycle
from fabric.remediation.observe import Observed, Restart, observe
from fabric.remediation.policy import PolicyState
from topology.guard import CapacityGuard, GuardSettings


def record(lifecycle: Lifecycle) -> ComponentRecord:
    return ComponentRecord(lifecycle, T0, "ber_critical", "ber_critical on the cable")


def test_cables_down_count_against_capacity_until_ufm_shows_them_up_unless_held_out() -> None:
    guard = CapacityGuard(H100)
    down, held = CONTEXT.cables[SWITCH_LINKS[0]], CONTEXT.cables[SWITCH_LINKS[1]]
    observe(PolicyState(), Observed(down=frozenset({down, held})), guard, CONTEXT, LIVE, T0)
    assert {down, held} <= guard.out
    guard.take_out(held, T0)  # as ``decide`` does
    decision = observe(PolicyState(), Observed(down=frozenset()), guard, CONTEXT, LIVE, T0)
    assert guard.out == {held} and not decision.actions and not decision.changed


def test_a_disable_confirmed_by_ufm_awaits_repair_and_nothing_else_moves() -> None:
    disabled, deferred = SWITCH_LINKS[0], SWITCH_LINKS[1]
    state = PolicyState({disabled: record(Lifecycle.DISABLED), deferred: record(Lifecycle.DEFERRED)})
    decision = observe(state, Observed(confirmed_out=(disabled, deferred)), CapacityGuard(H100), CONTEXT, LIVE, T0)
    assert decision.state.components[disabled].lifecycle is Lifecycle.AWAITING_REPAIR
    assert decision.state.components[disabled].since == T0  # waiting since it was disabled
    assert decision.state.components[deferred].lifecycle is Lifecycle.DEFERRED
    assert decision.changed == {disabled} and not decision.actions


def test_our_own_disable_is_adopted_within_the_guard_and_left_alone_beyond_it() -> None:
    bad = uplinks("pod04-leaf03")[:10]
    guard = CapacityGuard(H100, GuardSettings(hourly_limit=100))
    state = PolicyState({c: record(Lifecycle.TICKETED) for c in bad})
    decision = observe(state, Observed(adopt=tuple((c, f"port-{i}") for i, c in enumerate(bad))), guard, CONTEXT,
                       LIVE, T0)
    adopted = sorted(decision.changed)
    assert len(adopted) == 8  # the leaf keeps its minimum: two are not adopted (the controller reports them)
    assert all(decision.state.components[c].lifecycle is Lifecycle.DISABLED for c in adopted)
    assert [a.kind for a in decision.actions] == [ActionKind.DISABLE] * 8
    assert all(a.rule == "reconcile" and "adopted, held out" in a.reason for a in decision.actions)
    assert len(guard.disabled) == 8 and not guard.recent  # the hourly rate counted them when they were decided


def test_a_given_up_disable_stops_counting_against_capacity_but_not_against_the_blast_radius() -> None:
    guard = CapacityGuard(H100)
    cable = CONTEXT.cables[SWITCH_LINKS[0]]
    guard.take_out(cable, T0)
    observe(PolicyState(), Observed(shown_up=(cable,)), guard, CONTEXT, LIVE, T0)
    assert cable not in guard.out and cable in guard.disabled


def test_a_restart_takes_out_again_what_ufm_shows_up_within_the_guard_and_defers_the_rest() -> None:
    bad = uplinks("pod04-leaf03")[:10]
    state = PolicyState({c: record(Lifecycle.DISABLED) for c in bad})
    guard = CapacityGuard(H100, GuardSettings(hourly_limit=100))
    decision = observe(state, Observed(restart=Restart((), shown_out=frozenset(bad[:3]))), guard, CONTEXT, LIVE, T0)
    kinds = [a.kind for a in decision.actions]
    assert kinds.count(ActionKind.DISABLE) == 5 and kinds.count(ActionKind.DEFER) == 2
    assert len(guard.disabled) == 8
    deferred = [c for c in bad if decision.state.components[c].lifecycle is Lifecycle.DEFERRED]
    assert len(deferred) == 2 and set(deferred) <= decision.changed
    assert decision.state.revisit() == frozenset(deferred)  # the policy revisits them every cycle
