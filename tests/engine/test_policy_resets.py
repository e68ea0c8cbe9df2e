"""The reset ladder (``fabric.remediation.escalation``): a faulty link is reset before it is taken out, as NVIDIA's PDR
plugin does, at most ``max_resets`` times within ``window``, watched for ``settle`` after each reset."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from datetime import datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_policy import CONTEXT, H100, HOST_LINKS, LIVE, SWITCH_LINKS, T0, finding, kinds, uplinks

from fabric.remediation.domain import ActionKind, ComponentId, Lifecycle
from fabric.remediation.escalation import ResetLadder
from fabric.remediation.observe import Observed, Restart, observe
from fabric.remediation.policy import (
    RESET_WATCH,
    CycleInput,
    Decision,
    PolicyConfig,
    PolicyState,
    UndoneReset,
    decide,
)
from topology.guard import CapacityGuard, GuardSettings

LADDER = ResetLadder()
RESETTING = replace(LIVE, resets=LADDER)
SETTLE = LADDER.settle
LINK = SWITCH_LINKS[11]


def reset_once(guard: CapacityGuard, link: ComponentId = LINK, at: datetime = T0,
               state: PolicyState | None = None, config: PolicyConfig = RESETTING) -> Decision:
    decision = decide(state or PolicyState(), CycleInput(at, (finding(link, at),)), guard, CONTEXT, config)
    assert kinds(decision.actions) == ["reset"], decision.actions
    return decision


def test_a_resettable_finding_resets_its_link_first_watches_it_and_opens_no_ticket() -> None:
    guard = CapacityGuard(H100)
    decision = reset_once(guard)
    reset = decision.actions[0]
    assert reset.rule == "ber_critical" and "reset 1 of 2 within 7d" in reset.reason and reset.guard
    record = decision.state.components[LINK]
    assert (record.lifecycle, record.since, record.strikes) == (Lifecycle.RESET, T0, 0)
    # Back up by the next cycle: the guard neither holds it out nor counts it against the rate.
    cable = CONTEXT.cables[LINK]
    assert cable not in guard.out and cable not in guard.disabled and not guard.recent
    assert decision.state.resets[LINK] == (T0,)


def test_a_fault_found_during_the_watch_takes_the_link_out_and_tickets_it() -> None:
    guard = CapacityGuard(H100)
    state = reset_once(guard).state
    later = T0 + timedelta(minutes=4)
    persisted = decide(state, CycleInput(later, (finding(LINK, later, event=2),)), guard, CONTEXT, RESETTING)
    assert kinds(persisted.actions) == ["disable", "ticket"]
    assert "the fault persisted after its reset at" in persisted.actions[0].reason
    record = persisted.state.components[LINK]
    assert (record.lifecycle, record.strikes) == (Lifecycle.DISABLED, 1)
    assert CONTEXT.cables[LINK] in guard.disabled


def test_evidence_from_before_the_reset_is_what_the_reset_answered() -> None:
    """A second rule on the same fault, or an event UFM delivered late: recorded, the link stays watched."""
    guard = CapacityGuard(H100)
    both = (finding(LINK, T0), finding(LINK, T0 - timedelta(seconds=30), "flap", event=2))
    decision = decide(PolicyState(), CycleInput(T0, both), guard, CONTEXT, RESETTING)
    assert kinds(decision.actions) == ["reset", "record"]
    late = decide(decision.state, CycleInput(T0 + timedelta(minutes=1), (finding(LINK, T0, event=3),)), guard,
                  CONTEXT, RESETTING)
    assert kinds(late.actions) == ["record"] and "found before its reset" in late.actions[0].reason
    assert late.state.components[LINK].lifecycle is Lifecycle.RESET


def test_a_clean_watch_makes_the_link_healthy_again_the_reset_cured_it() -> None:
    guard = CapacityGuard(H100)
    state = reset_once(guard).state
    assert decide(state, CycleInput(T0 + SETTLE - timedelta(seconds=1)), guard, CONTEXT, RESETTING).actions == ()
    cured = decide(state, CycleInput(T0 + SETTLE), guard, CONTEXT, RESETTING)
    assert [(a.kind, a.rule) for a in cured.actions] == [(ActionKind.RECORD, RESET_WATCH)]
    assert "the reset cured it" in cured.actions[0].reason
    assert cured.state.components[LINK].lifecycle is Lifecycle.HEALTHY


def test_a_link_ufm_still_shows_down_when_its_watch_ends_is_taken_out() -> None:
    """A link that stays down raises no new event: the guard's reading of UFM says the reset did not bring it back."""
    guard = CapacityGuard(H100)
    state = reset_once(guard).state
    state = observe(state, Observed(down=frozenset({CONTEXT.cables[LINK]})), guard, CONTEXT, RESETTING,
                    T0 + timedelta(minutes=1)).state
    ended = decide(state, CycleInput(T0 + SETTLE), guard, CONTEXT, RESETTING)
    assert kinds(ended.actions) == ["disable", "ticket"]
    assert "UFM still shows the link down 10m after its reset" in ended.actions[0].reason


def test_a_reset_ufm_did_not_carry_out_takes_the_link_out_and_one_not_carried_out_yet_keeps_it_watched() -> None:
    guard = CapacityGuard(H100)
    state = reset_once(guard).state
    later = T0 + SETTLE + timedelta(minutes=5)
    waiting = decide(state, CycleInput(later, resets_unsettled=frozenset({LINK})), guard, CONTEXT, RESETTING)
    assert waiting.actions == () and waiting.state.components[LINK].lifecycle is Lifecycle.RESET
    undone = decide(state, CycleInput(T0 + timedelta(minutes=1),
                                      undone_resets=(UndoneReset(LINK, "UFM job 7 ended 'Aborted'"),)),
                    guard, CONTEXT, RESETTING)
    assert kinds(undone.actions) == ["disable", "ticket"]
    assert "was not carried out: UFM job 7 ended 'Aborted'" in undone.actions[0].reason


def _cured_resets(guard: CapacityGuard, count: int, config: PolicyConfig = RESETTING,
                  state: PolicyState | None = None) -> tuple[PolicyState, datetime]:
    """``count`` resets of LINK a day apart, each cured; returns the state and the time of the last watch's end."""
    state = state or PolicyState()
    now = T0
    for day in range(count):
        now = T0 + timedelta(days=day)
        state = reset_once(guard, at=now, state=state, config=config).state
        now += config.resets.settle
        state = decide(state, CycleInput(now), guard, CONTEXT, config).state
        assert state.components[LINK].lifecycle is Lifecycle.HEALTHY
    return state, now


def test_after_max_resets_within_the_window_a_finding_takes_the_link_out() -> None:
    guard = CapacityGuard(H100)
    state, now = _cured_resets(guard, LADDER.max_resets)
    third = now + timedelta(hours=1)
    out = decide(state, CycleInput(third, (finding(LINK, third, event=9),)), guard, CONTEXT, RESETTING)
    assert kinds(out.actions) == ["disable", "ticket"]
    # Once the first reset has left the window, the link has a reset again.
    other = SWITCH_LINKS[12]
    state, _ = _cured_resets(CapacityGuard(H100), LADDER.max_resets)
    week = T0 + LADDER.window
    again = decide(state, CycleInput(week, (finding(LINK, week, event=9), finding(other, week, event=10))),
                   CapacityGuard(H100), CONTEXT, RESETTING)
    assert kinds(again.actions) == ["reset", "reset"] and "reset 2 of 2" in again.actions[0].reason


def test_the_resets_of_the_window_are_counted_again_after_a_restart() -> None:
    """The store keeps no count: the decision log's resets of the window, observed at the restart, are the count."""
    guard = CapacityGuard(H100)
    state, now = _cured_resets(guard, LADDER.max_resets)
    kept = PolicyState(state.components, state.breaker, state.recent)  # what the store gives back
    logged = tuple((T0 + timedelta(days=day), LINK) for day in range(LADDER.max_resets))
    fresh = CapacityGuard(H100)
    restarted = observe(kept, Observed(restart=Restart((), frozenset(), resets=logged)), fresh, CONTEXT, RESETTING,
                        now).state
    third = now + timedelta(hours=1)
    out = decide(restarted, CycleInput(third, (finding(LINK, third, event=9),)), fresh, CONTEXT, RESETTING)
    assert kinds(out.actions) == ["disable", "ticket"]
    # Without them the restarted service would reset the link a third time within the week.
    forgot = decide(kept, CycleInput(third, (finding(LINK, third, event=9),)), CapacityGuard(H100), CONTEXT,
                    RESETTING)
    assert kinds(forgot.actions) == ["reset"]


@pytest.mark.parametrize("rule", ["temperature", "module_fault", "degraded_width", "degraded_speed"])
def test_what_a_reset_cannot_cure_is_taken_out_at_once(rule: str) -> None:
    decision = decide(PolicyState(), CycleInput(T0, (finding(LINK, T0, rule),)), CapacityGuard(H100), CONTEXT,
                      RESETTING)
    assert kinds(decision.actions) == ["disable", "ticket"]


def test_the_configuration_may_narrow_the_rules_and_the_count() -> None:
    only_flaps = replace(LIVE, resets=ResetLadder(rules=frozenset({"flap"})))
    assert kinds(decide(PolicyState(), CycleInput(T0, (finding(LINK, T0),)), CapacityGuard(H100), CONTEXT,
                        only_flaps).actions) == ["disable", "ticket"]
    assert kinds(decide(PolicyState(), CycleInput(T0, (finding(LINK, T0, "flap"),)), CapacityGuard(H100), CONTEXT,
                        only_flaps).actions) == ["reset"]
    with pytest.raises(ValueError, match="cannot cure what temperature"):
        ResetLadder(rules=frozenset({"flap", "temperature"}))


def test_a_reset_the_guard_refuses_is_deferred_as_a_disable_would_be() -> None:
    """A reset takes the link down while it retrains: the guard is asked as for a disable."""
    refused = decide(PolicyState(), CycleInput(T0, (finding(LINK, T0),)), CapacityGuard(H100,
                     GuardSettings(hourly_limit=0)), CONTEXT, RESETTING)
    assert kinds(refused.actions) == ["defer", "ticket"]
    assert refused.state.components[LINK].lifecycle is Lifecycle.DEFERRED


def test_links_reset_together_must_fit_together() -> None:
    """Ten uplinks of one leaf fail at once: eight fit in its guard, and resetting ten at once would take all ten
    down together. The eight reset, the two that do not fit are deferred; the next cycle, the eight back up, the
    two deferred (faulty, with a ticket) are taken out."""
    guard = CapacityGuard(H100)
    bad = uplinks("pod04-leaf03")[:10]
    decision = decide(PolicyState(), CycleInput(T0, tuple(finding(c, T0, event=n) for n, c in enumerate(bad))),
                      guard, CONTEXT, RESETTING)
    counts = Counter(kinds(decision.actions))
    assert (counts["reset"], counts["defer"], counts["ticket"]) == (8, 2, 2)
    assert not guard.out
    later = decide(decision.state, CycleInput(T0 + timedelta(minutes=1)), guard, CONTEXT, RESETTING)
    assert Counter(kinds(later.actions)) == {"disable": 2, "comment": 2}


def test_host_links_are_never_reset() -> None:
    """Ticket-only by default; when automation may disable them, taken out at once: no path to core depends on one, so
    the guard does not watch it, and a watch could not tell that it stayed down."""
    host = HOST_LINKS[0]
    ticketed = decide(PolicyState(), CycleInput(T0, (finding(host, T0),)), CapacityGuard(H100), CONTEXT, RESETTING)
    assert kinds(ticketed.actions) == ["ticket"]
    disabling = replace(RESETTING, host_links_ticket_only=False)
    out = decide(PolicyState(), CycleInput(T0, (finding(host, T0),)), CapacityGuard(H100), CONTEXT, disabling)
    assert kinds(out.actions) == ["disable", "ticket"]


def test_while_automation_is_halted_no_link_is_reset_and_no_watch_ends() -> None:
    guard = CapacityGuard(H100)
    config = replace(RESETTING, storm_components=3)
    state = reset_once(guard, config=config).state
    storm = tuple(finding(c, T0 + timedelta(minutes=1), event=n) for n, c in enumerate(SWITCH_LINKS[100:104]))
    halted = decide(state, CycleInput(T0 + timedelta(minutes=1), storm), guard, CONTEXT, config)
    assert halted.state.breaker.halted and "reset" not in kinds(halted.actions)
    later = decide(halted.state, CycleInput(T0 + SETTLE + timedelta(minutes=1)), guard, CONTEXT, config)
    assert later.actions == () and later.state.components[LINK].lifecycle is Lifecycle.RESET


def test_a_dry_run_decides_the_same_resets_marked_dry() -> None:
    dry = replace(RESETTING, dry_run=True)
    decision = reset_once(CapacityGuard(H100), config=dry)
    live = reset_once(CapacityGuard(H100))
    assert decision.actions[0].dry_run and decision.state.components == live.state.components


# --- a property: the ladder's bound holds over any sequence, restarts included -------------------------------------

LINKS = SWITCH_LINKS[::500][:4]
event_step = st.one_of(
    st.tuples(st.just("find"), st.sampled_from(LINKS), st.sampled_from(["ber_critical", "flap", "port_errors"])),
    st.tuples(st.just("wait"), st.sampled_from([1, 5, 9, 11, 60, 600, 3000]), st.just("")),
    st.tuples(st.just("restart"), st.just(0), st.just("")),
    st.tuples(st.just("repair"), st.sampled_from(LINKS), st.just("")),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(event_step, min_size=5, max_size=80), st.integers(0, 3),
       st.sampled_from([timedelta(hours=3), timedelta(days=1), timedelta(days=7)]))
def test_no_link_is_reset_more_than_max_resets_times_within_any_window(
        steps: list[tuple[str, object, str]], max_resets: int, window: timedelta) -> None:
    ladder = ResetLadder(max_resets=max_resets, window=window)
    config = replace(LIVE, resets=ladder, storm_components=100)
    guard, state, now, event = CapacityGuard(H100), PolicyState(), T0, 0
    resets: list[tuple[datetime, ComponentId]] = []
    for kind, arg, rule in steps:
        repaired: tuple[ComponentId, ...] = ()
        findings = ()
        if kind == "find":
            event += 1
            findings = (finding(arg, now, rule, event),)  # type: ignore[arg-type]
        elif kind == "wait":
            now += timedelta(minutes=arg)  # type: ignore[operator]
        elif kind == "repair":
            record = state.components.get(arg)  # type: ignore[call-overload]
            if record is not None and record.lifecycle in (Lifecycle.DISABLED, Lifecycle.DEFERRED):
                repaired = (arg,)  # type: ignore[assignment]
        else:  # a restart: the store's records, a new guard, the decision log's resets of the window
            kept = PolicyState(state.components, state.breaker, state.recent)
            guard = CapacityGuard(H100)
            shown = frozenset(c for c, r in kept.components.items() if r.lifecycle is Lifecycle.DISABLED)
            logged = tuple((at, c) for at, c in resets if now - at < window)
            state = observe(kept, Observed(restart=Restart((), shown, resets=logged)), guard, CONTEXT, config,
                            now).state
            continue
        decision = decide(state, CycleInput(now, findings, repaired), guard, CONTEXT, config)
        state = decision.state
        resets += [(a.at, a.component) for a in decision.actions
                   if a.kind is ActionKind.RESET and a.component is not None]
    for at, component in resets:
        within = [t for t, c in resets if c == component and at - window < t <= at]
        assert len(within) <= max_resets, f"{component}: {len(within)} resets within {window} up to {at}"
