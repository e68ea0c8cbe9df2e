from __future__ import annotations

from collections import Counter
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from fabric.remediation.domain import (
    ActionKind,
    ComponentId,
    ComponentKind,
    ComponentRecord,
    Finding,
    Lifecycle,
)
from fabric.remediation.escalation import ResetLadder
from fabric.remediation.observe import Observed, Restart, observe
from fabric.remediation.policy import (
    LINK_CHECK,
    CycleInput,
    Decision,
    FabricContext,
    FailedRepair,
    PolicyConfig,
    PolicyState,
    decide,
)
from fabric.remediation.rules import SWITCH_FAULT
from fabric.remediation.signals import link_id
from topology.generate import PRESETS, fat_tree
from topology.guard import RATE_WINDOW, CapacityGuard, GuardSettings
from topology.model import Tier
from topology.ports import Kind

H100 = fat_tree(PRESETS["h100-4k"])
TIERS = {d.key: d.tier for d in H100.devices.values()}
CONTEXT = FabricContext(
    cables={link_id(c.key): c.key for c in H100.cables},
    host_links=frozenset(link_id(c.key) for c in H100.cables
                         if Kind.ADAPTER in (H100.devices[c.a.device].kind, H100.devices[c.b.device].kind)),
)
SWITCH_LINKS = sorted(c for c in CONTEXT.cables if c not in CONTEXT.host_links)
HOST_LINKS = sorted(CONTEXT.host_links)
T0 = datetime(2026, 3, 1, tzinfo=UTC)
NO_RESETS = ResetLadder(max_resets=0)
LIVE = PolicyConfig(dry_run=False, resets=NO_RESETS)
"""A finding takes its link out at once: the reset ladder before it is ``test_policy_resets``'s (the properties below
run with it)."""


def uplinks(leaf: str) -> list[ComponentId]:
    return [link_id(c.key) for c in H100.cables if c.a.device == leaf and TIERS[c.b.device] is Tier.SPINE]


def finding(component: ComponentId, at: datetime, rule: str = "ber_critical", event: int = 1) -> Finding:
    return Finding(component, rule, at, f"{rule} on the cable", (event,))


def kinds(actions: tuple[object, ...]) -> list[str]:
    return [a.kind.value for a in actions]  # type: ignore[attr-defined]


def test_disable_and_ticket_a_faulty_spine_link() -> None:
    guard = CapacityGuard(H100)
    link = SWITCH_LINKS[0]
    decision = decide(PolicyState(), CycleInput(T0, (finding(link, T0),)), guard, CONTEXT, LIVE)
    assert kinds(decision.actions) == ["disable", "ticket"]
    disable = decision.actions[0]
    assert disable.guard["affected_leaves"] >= 1 and not disable.dry_run
    assert decision.state.components[link].lifecycle is Lifecycle.DISABLED
    assert CONTEXT.cables[link] in guard.disabled


def test_host_links_are_ticket_only() -> None:
    decision = decide(PolicyState(), CycleInput(T0, (finding(HOST_LINKS[0], T0),)), CapacityGuard(H100), CONTEXT,
                      LIVE)
    assert kinds(decision.actions) == ["ticket"]
    assert decision.state.components[HOST_LINKS[0]].lifecycle is Lifecycle.TICKETED
    assert "host links are ticket-only" in decision.actions[0].reason


def test_ten_bad_uplinks_of_one_leaf_disable_eight_and_defer_two() -> None:
    guard = CapacityGuard(H100)
    bad = uplinks("pod04-leaf03")[:10]
    decision = decide(PolicyState(), CycleInput(T0, tuple(finding(c, T0) for c in bad)), guard, CONTEXT, LIVE)
    counts = Counter(kinds(decision.actions))
    assert (counts["disable"], counts["defer"], counts["ticket"]) == (8, 2, 10)
    deferred = [a for a in decision.actions if a.kind is ActionKind.DEFER]
    assert all(a.guard["worst_leaf"] == "pod04-leaf03" and a.guard["worst_leaf_minimum"] == 768 for a in deferred)
    # A repair brings capacity back: one deferred link is disabled in the same cycle, worst first.
    repaired = next(c for c in bad if decision.state.components[c].lifecycle is Lifecycle.DISABLED)
    later = decide(decision.state, CycleInput(T0 + timedelta(hours=1), repaired=(repaired,)), guard, CONTEXT, LIVE)
    assert kinds(later.actions) == ["enable", "disable", "comment"]
    assert later.state.components[repaired].lifecycle is Lifecycle.PROBATION


def test_probation_strikes_then_quarantine() -> None:
    guard = CapacityGuard(H100)
    link = SWITCH_LINKS[5]
    state = decide(PolicyState(), CycleInput(T0, (finding(link, T0, event=1),)), guard, CONTEXT, LIVE).state
    now = T0
    for strike in (1, 2):
        now += timedelta(hours=1)
        state = decide(state, CycleInput(now, repaired=(link,)), guard, CONTEXT, LIVE).state
        assert state.components[link].lifecycle is Lifecycle.PROBATION
        now += timedelta(minutes=5)
        decision = decide(state, CycleInput(now, (finding(link, now, event=10 + strike),)), guard, CONTEXT, LIVE)
        state = decision.state
        if strike == 1:
            assert kinds(decision.actions) == ["disable", "reopen"]
            assert state.components[link].strikes == 2  # the first fault was strike 1
    assert state.components[link].lifecycle is Lifecycle.QUARANTINED
    assert kinds(decision.actions) == ["disable", "quarantine", "reopen"]
    # A resolved ticket does not release a quarantined link; an operator does.
    now += timedelta(hours=1)
    stays = decide(state, CycleInput(now, repaired=(link,)), guard, CONTEXT, LIVE)
    assert stays.state.components[link].lifecycle is Lifecycle.QUARANTINED
    cleared = decide(stays.state, CycleInput(now, cleared=(link,)), guard, CONTEXT, LIVE)
    assert kinds(cleared.actions) == ["enable"]
    assert cleared.state.components[link].lifecycle is Lifecycle.PROBATION


def test_probation_ends_healthy_after_a_clean_soak() -> None:
    guard = CapacityGuard(H100)
    link = SWITCH_LINKS[7]
    state = decide(PolicyState(), CycleInput(T0, (finding(link, T0),)), guard, CONTEXT, LIVE).state
    state = decide(state, CycleInput(T0, repaired=(link,)), guard, CONTEXT, LIVE).state
    soak = decide(state, CycleInput(T0 + LIVE.probation), guard, CONTEXT, LIVE)
    assert soak.state.components[link].lifecycle is Lifecycle.HEALTHY


def test_the_clean_soak_comments_on_the_ticket() -> None:
    guard = CapacityGuard(H100)
    link = SWITCH_LINKS[7]
    state = decide(PolicyState(), CycleInput(T0, (finding(link, T0),)), guard, CONTEXT, LIVE).state
    state = decide(state, CycleInput(T0, repaired=(link,)), guard, CONTEXT, LIVE).state
    assert LIVE.probation == timedelta(hours=2)
    soak = decide(state, CycleInput(T0 + timedelta(hours=2)), guard, CONTEXT, LIVE)
    assert [(a.kind, a.reason) for a in soak.actions] == [(ActionKind.COMMENT, "clean soak of 2h: healthy")]


def test_a_failed_repair_is_backed_out_within_the_guard_without_a_strike() -> None:
    guard = CapacityGuard(H100)
    link = SWITCH_LINKS[7]
    state = decide(PolicyState(), CycleInput(T0, (finding(link, T0),)), guard, CONTEXT, LIVE).state
    state = decide(state, CycleInput(T0, repaired=(link,)), guard, CONTEXT, LIVE).state
    assert CONTEXT.cables[link] not in guard.disabled
    failed = FailedRepair(link, "re-enabled, but the link came up at 2x/HDR instead of 4x/NDR: backed out")
    later = T0 + timedelta(minutes=2)
    backed = decide(state, CycleInput(later, failed_repairs=(failed,)), guard, CONTEXT, LIVE)
    assert [(a.kind, a.rule) for a in backed.actions] == [(ActionKind.DISABLE, LINK_CHECK),
                                                           (ActionKind.REOPEN, LINK_CHECK)]
    assert backed.actions[1].reason == failed.reason
    assert backed.actions[0].guard, "the disable carries the guard's figures"
    record = backed.state.components[link]
    assert (record.lifecycle, record.strikes) == (Lifecycle.DISABLED, 1)
    assert CONTEXT.cables[link] in guard.disabled
    # Reported again while no longer on probation (already out): nothing more.
    again = decide(backed.state, CycleInput(later, failed_repairs=(failed,)), guard, CONTEXT, LIVE)
    assert again.actions == ()


def test_storm_halts_with_one_ticket_and_holds_the_rest() -> None:
    guard = CapacityGuard(H100)
    config = replace(LIVE, storm_components=25)
    early = SWITCH_LINKS[1]
    state = decide(PolicyState(), CycleInput(T0, (finding(early, T0),)), guard, CONTEXT, config).state
    storm = tuple(finding(c, T0 + timedelta(seconds=i), event=i) for i, c in enumerate(SWITCH_LINKS[::40][:200]))
    decision = decide(state, CycleInput(T0 + timedelta(minutes=4), storm), guard, CONTEXT, config)
    counts = Counter(kinds(decision.actions))
    # The breaker looks before it leaps: the cycle's 200 components count toward the storm before any of them is
    # acted on, so the cycle that trips it disables and defers nothing (it used to spend the hourly limit first).
    assert (counts["halt"], counts["disable"], counts["defer"]) == (1, 0, 0)
    assert kinds(decision.actions)[:2] == ["halt", "ticket"]
    storm_tickets = [a for a in decision.actions if a.kind is ActionKind.TICKET and a.component is None]
    assert len(storm_tickets) == 1 and counts["ticket"] == 1
    assert decision.state.breaker.halted and decision.state.held_count == len(storm)
    # One record per held component, not per finding.
    assert counts["record"] == len(set(storm_components := [f.component for f in storm]))
    assert early not in storm_components
    # While halted, a repair does not re-enable anything.
    halted = decide(decision.state, CycleInput(T0 + timedelta(hours=1), repaired=(early,)), guard, CONTEXT, config)
    assert not {"enable", "disable"} & set(kinds(halted.actions))
    assert [a.reason for a in halted.actions] == ["ticket resolved; re-enable waits for the breaker"]
    # The repair is reported again every cycle of the halt: the wait is said once, not once a cycle.
    again = decide(halted.state, CycleInput(T0 + timedelta(hours=1, minutes=1), repaired=(early,)), guard, CONTEXT,
                   config)
    assert again.actions == () and again.state.components[early].since == halted.state.components[early].since
    halted = again
    resumed = decide(halted.state, CycleInput(T0 + timedelta(hours=2), resume=True), guard, CONTEXT, config)
    assert not resumed.state.breaker.halted and resumed.state.held == ()


def test_quiet_period_runs_from_the_last_held_finding_not_the_first() -> None:
    guard = CapacityGuard(H100)
    config = PolicyConfig(dry_run=False, storm_components=5, storm_window=timedelta(minutes=15),
                          storm_quiet_period=timedelta(minutes=5))
    bad = SWITCH_LINKS[::400][:8]
    state = decide(PolicyState(), CycleInput(T0, tuple(finding(c, T0, event=i) for i, c in enumerate(bad))),
                   guard, CONTEXT, config).state
    assert state.breaker.halted
    held = bad[4:]  # still healthy, so their findings are held
    for minute in range(1, 21):  # the storm goes on: a held component has a new finding every minute
        now = T0 + timedelta(minutes=minute)
        new = finding(held[minute % len(held)], now, event=100 + minute)
        state = decide(state, CycleInput(now, (new,)), guard, CONTEXT, config).state
        assert state.breaker.halted, f"resumed in the middle of the storm, at minute {minute}"
    quiet = T0 + timedelta(minutes=20) + timedelta(minutes=5)
    early = decide(state, CycleInput(quiet - timedelta(seconds=1)), guard, CONTEXT, config)
    assert early.state.breaker.halted
    assert not decide(state, CycleInput(quiet), guard, CONTEXT, config).state.breaker.halted


def test_dry_run_marks_every_action() -> None:
    decision = decide(PolicyState(), CycleInput(T0, (finding(SWITCH_LINKS[0], T0),)), CapacityGuard(H100), CONTEXT,
                      PolicyConfig())
    assert decision.actions and all(a.dry_run for a in decision.actions)


def test_switch_findings_are_ticketed() -> None:
    switch = ComponentId(ComponentKind.SWITCH, "pod01-spine01")
    decision = decide(PolicyState(), CycleInput(T0, (finding(switch, T0, "switch_down"),)), CapacityGuard(H100),
                      CONTEXT, LIVE)
    assert kinds(decision.actions) == ["ticket"]


# --- properties over random event sequences ---------------------------------------------------------------

# A small pool, so that findings pile up on the same leaves and spines and the guard has to say no.
HOT = [*uplinks("pod01-leaf01"), *(c for c in SWITCH_LINKS if "pod01-spine01/" in c.name and "core" in c.name),
       *HOST_LINKS[:4], *SWITCH_LINKS[::2000]]
# Findings come in bursts of several links per cycle, as they do when a line card or a bundle goes bad.
find = st.tuples(st.just("find"), st.lists(st.sampled_from(HOT), min_size=1, max_size=12, unique=True),
                 st.sampled_from(["ber_critical", "flap", "temperature"]))
step = st.one_of(
    find, find, find,
    st.tuples(st.just("repair"), st.integers(0, 10_000), st.just("")),
    st.tuples(st.just("resume"), st.just(0), st.just("")),
    # Short waits too: a link reset is watched for 10 minutes, and a finding within them takes it out.
    st.tuples(st.just("wait"), st.one_of(st.integers(1, 9), st.integers(1, 600)), st.just("")),
)


WAITING = (Lifecycle.DISABLED, Lifecycle.AWAITING_REPAIR, Lifecycle.DEFERRED, Lifecycle.TICKETED)
UNTICKETED = (Lifecycle.HEALTHY, Lifecycle.PROBATION, Lifecycle.RESET)
"""In service with no ticket open: healthy, on probation after a repair (its ticket resolved), or watched after a
reset (a reset opens none)."""
UFM_WRITES = (ActionKind.DISABLE, ActionKind.ENABLE, ActionKind.RESET)


def restart(state: PolicyState, before: CapacityGuard, log: list[tuple[str, ...]], config: PolicyConfig,
            limits: GuardSettings, now: datetime) -> tuple[PolicyState, CapacityGuard, list[tuple[str, ...]]]:
    """A restart as the engine makes it: the state as the store keeps it, a new guard, and what it observes of a UFM
    that shows disabled what the guard before it held out; returns what the policy decided of it."""
    kept = PolicyState(state.components, state.breaker, state.recent, held_count=state.held_count)
    guard = CapacityGuard(H100, limits)
    disables = tuple((at, ComponentId.parse(component)) for kind, component, _, _, at in log
                     if kind == "disable" and at >= now - RATE_WINDOW)
    resets = tuple((at, ComponentId.parse(component)) for kind, component, _, _, at in log
                   if kind == "reset" and at >= now - config.resets.window)
    shown = frozenset(c for c in state.components if CONTEXT.cables.get(c) in before.disabled)
    decision = observe(kept, Observed(restart=Restart(disables, shown, converge=not config.dry_run, resets=resets)),
                       guard, CONTEXT, config, now)
    return decision.state, guard, [(a.kind.value, str(a.component), a.rule, a.reason) for a in decision.actions]


def run(steps: list[tuple[str, object, str]], config: PolicyConfig, limits: GuardSettings, *,
        reconsider_every_cycle: bool = False, derive_every_cycle: bool = False, restart_at: int | None = None,
        ) -> tuple[list[tuple[str, ...]], CapacityGuard, list[PolicyState]]:
    """Drive ``decide`` as the engine does, with a model of the ticket system, checking safety every cycle.
    ``reconsider_every_cycle``: the deferred links are asked of the guard again at every cycle, as before ``decide``
    learnt to skip it while nothing they depend on changed (the reference). ``derive_every_cycle``: the components
    to revisit and when they are due are derived from the records at every cycle, not carried (the reference).
    ``restart_at``: the service restarts before that step (``restart``); what the restart decided is logged."""
    guard = CapacityGuard(H100, limits)
    state, now, log, states, event = PolicyState(), T0, [], [], 0
    timed: list[tuple[str, str, str, str, datetime]] = []
    open_tickets: set[ComponentId] = set()
    reset_log: dict[ComponentId | None, list[datetime]] = {}
    resolved: set[ComponentId] = set()
    """Tickets a technician resolved; the engine reports them every cycle until the component moves on."""
    for index, (kind, arg, rule) in enumerate(steps):
        if index == restart_at:
            state, guard, decided = restart(state, guard, timed, config, limits, now)
            log.extend(("restart", *entry) for entry in decided)
        findings, resume = (), False
        if kind == "find":
            findings = tuple(finding(link, now, rule, event := event + 1) for link in arg)  # type: ignore[attr-defined]
        elif kind == "repair":
            waiting = sorted(c for c in open_tickets if c in state.components
                             and state.components[c].lifecycle in WAITING)
            if waiting:
                fixed = waiting[arg % len(waiting)]  # type: ignore[operator]
                open_tickets.discard(fixed)
                resolved.add(fixed)
        elif kind == "resume":
            resume = True
        else:
            now += timedelta(minutes=arg)  # type: ignore[operator]
        repaired = tuple(sorted(c for c in resolved if state.components[c].lifecycle in WAITING))
        if reconsider_every_cycle:
            state = replace(state, deferred_seen=None)
        if derive_every_cycle:
            state = replace(state, waiting=None, revisit_due=None)
        decision = decide(state, CycleInput(now, findings, repaired, resume), guard, CONTEXT, config)
        log.extend((a.kind.value, str(a.component), a.rule, a.reason) for a in decision.actions)
        timed.extend((a.kind.value, str(a.component), a.rule, a.reason, a.at) for a in decision.actions)
        state = decision.state
        # What is carried from cycle to cycle is what the records say.
        derived = replace(state, waiting=None, revisit_due=None)
        assert state.revisit() == derived.revisit() and state.due() == derived.due()
        resolved = {c for c in resolved if state.components[c].lifecycle in WAITING}
        for action in decision.actions:
            if action.component is None:
                continue
            if action.kind is ActionKind.TICKET:
                assert action.component not in open_tickets, f"second open ticket for {action.component}"
                open_tickets.add(action.component)
            elif action.kind is ActionKind.REOPEN:
                open_tickets.add(action.component)
                resolved.discard(action.component)
        needing = {c for c, r in state.components.items() if r.lifecycle not in UNTICKETED}
        assert needing <= open_tickets | resolved, f"no ticket for {needing - open_tickets - resolved}"
        states.append(state)
        _safe(guard, decision, reset_log, config)
    return log, guard, states


def _safe(guard: CapacityGuard, decision: Decision, reset_log: dict[ComponentId | None, list[datetime]],
          config: PolicyConfig) -> None:
    """Safety after every cycle. ``reset_log``: the resets so far, by component."""
    assert all(guard.paths[leaf] >= guard.minimum[leaf] for leaf in guard.planned)
    assert len(guard.disabled) <= guard.cap
    if decision.state.breaker.halted:
        # A cycle that trips the breaker, or runs while it is tripped, writes nothing to UFM at all.
        assert all(a.kind not in UFM_WRITES for a in decision.actions)
    # No link is reset more often than the ladder allows within its window.
    for action in decision.actions:
        if action.kind is ActionKind.RESET:
            log = reset_log.setdefault(action.component, [])
            log.append(action.at)
            counted = [t for t in log if action.at - t < config.resets.window]
            assert len(counted) <= config.resets.max_resets, f"{action.component} reset {len(counted)} times"


@settings(max_examples=40, deadline=None)
@given(st.lists(step, min_size=20, max_size=150), st.sampled_from([5, 25, 100_000]), st.sampled_from([20, 100_000]))
def test_safety_invariants_and_determinism(steps: list[tuple[str, object, str]], storm: int, hourly: int) -> None:
    # Huge storm and rate limits switch those safeguards off, so that the capacity guard alone is tested.
    config = PolicyConfig(dry_run=False, storm_components=storm)
    limits = GuardSettings(hourly_limit=hourly)
    first, guard, states = run(steps, config, limits)
    again, _, _ = run(steps, config, limits)
    assert first == again  # the same input always gives the same decisions
    final = states[-1] if states else PolicyState()
    # Every component automation holds out of service is one the guard counts, and vice versa.
    out = {CONTEXT.cables[c] for c, r in final.components.items()
           if r.lifecycle is Lifecycle.DISABLED and c in CONTEXT.cables}
    assert out <= guard.disabled


@settings(max_examples=200, deadline=None)
@given(st.lists(step, min_size=20, max_size=150), st.sampled_from([5, 25, 100_000]), st.sampled_from([3, 20, 100_000]),
       st.integers(0, 150), st.booleans())
def test_a_restart_where_ufm_shows_what_the_state_holds_decides_nothing_and_changes_nothing_after_it(
        steps: list[tuple[str, object, str]], storm: int, hourly: int, restart_at: int, dry_run: bool) -> None:
    """What the policy observes at a restart (``fabric.remediation.observe``) rebuilds the guard as it was: the
    decisions after it are those of the run that never stopped. (A quarantined link the guard kept up is checked
    again at a restart, and may then be taken out: never quarantined here.)"""
    config = PolicyConfig(dry_run=dry_run, storm_components=storm, max_strikes=1_000)
    limits = GuardSettings(hourly_limit=hourly)
    uninterrupted, _, states = run(steps, config, limits)
    restarted, _, reference = run(steps, config, limits, restart_at=restart_at)
    assert restarted == uninterrupted
    if states:
        assert [s.components for s in states] == [s.components for s in reference]


@settings(max_examples=60, deadline=None)
@given(st.lists(step, min_size=20, max_size=150), st.sampled_from([5, 25, 100_000]), st.sampled_from([3, 20, 100_000]))
def test_deferred_links_asked_again_only_when_something_changed_give_the_decisions_of_asking_every_cycle(
        steps: list[tuple[str, object, str]], storm: int, hourly: int) -> None:
    config = PolicyConfig(dry_run=False, storm_components=storm)
    limits = GuardSettings(hourly_limit=hourly)
    skipping, _, states = run(steps, config, limits)
    every_cycle, _, reference = run(steps, config, limits, reconsider_every_cycle=True)
    assert skipping == every_cycle
    assert [replace(s, deferred_seen=None) for s in states] == [replace(s, deferred_seen=None) for s in reference]


@settings(max_examples=60, deadline=None)
@given(st.lists(step, min_size=20, max_size=150), st.sampled_from([5, 25, 100_000]), st.sampled_from([3, 20, 100_000]))
def test_what_is_due_carried_from_cycle_to_cycle_gives_the_decisions_of_deriving_it_every_cycle(
        steps: list[tuple[str, object, str]], storm: int, hourly: int) -> None:
    config = PolicyConfig(dry_run=False, storm_components=storm, probation=timedelta(minutes=90))
    limits = GuardSettings(hourly_limit=hourly)
    carried, _, states = run(steps, config, limits)
    derived, _, reference = run(steps, config, limits, derive_every_cycle=True)
    assert carried == derived
    assert [s.components for s in states] == [s.components for s in reference]


def test_a_link_deferred_by_the_hourly_rate_is_disabled_once_the_hour_lets_a_disable_go() -> None:
    """Nothing changes in the guard but time: the sliding hour alone reopens the way."""
    guard = CapacityGuard(H100, GuardSettings(hourly_limit=2))
    links = SWITCH_LINKS[::2000][:3]
    first = decide(PolicyState(), CycleInput(T0, tuple(finding(link, T0, event=n) for n, link in enumerate(links))),
                   guard, CONTEXT, LIVE)
    assert kinds(first.actions).count("defer") == 1
    within = decide(first.state, CycleInput(T0 + timedelta(minutes=59)), guard, CONTEXT, LIVE)
    assert within.actions == ()
    after = decide(within.state, CycleInput(T0 + timedelta(minutes=61)), guard, CONTEXT, LIVE)
    assert kinds(after.actions) == ["disable", "comment"]


def _deferred_behind_a_switch_fault() -> tuple[ComponentId, ComponentId, ComponentRecord, ComponentRecord]:
    """A link deferred for capacity, its switch's record, and the switch's open switch fault."""
    link = SWITCH_LINKS[3]
    switch = ComponentId(ComponentKind.SWITCH, CONTEXT.cables[link][1].device)
    since = T0 - timedelta(minutes=10)
    deferred = ComponentRecord(Lifecycle.DEFERRED, since, "ber_critical", "kept up: capacity", strikes=1)
    faulty = ComponentRecord(Lifecycle.TICKETED, since, SWITCH_FAULT, "4 cables of it failed", strikes=1)
    return link, switch, deferred, faulty


def test_a_link_deferred_behind_a_switch_fault_is_disabled_once_the_switch_is_repaired() -> None:
    """The switch's record changes and the guard does not: the deferred link is asked about again."""
    guard = CapacityGuard(H100)
    link, switch, deferred, faulty = _deferred_behind_a_switch_fault()
    behind = decide(PolicyState({link: deferred, switch: faulty}), CycleInput(T0), guard, CONTEXT, LIVE)
    assert behind.actions == ()
    repaired = decide(behind.state, CycleInput(T0 + timedelta(minutes=1), repaired=(switch,)), guard, CONTEXT, LIVE)
    assert ("disable", link) in [(a.kind.value, a.component) for a in repaired.actions]


def test_a_deferred_cable_of_a_switch_with_an_open_switch_fault_is_not_disabled_when_capacity_returns() -> None:
    guard = CapacityGuard(H100)
    link, switch, deferred, faulty = _deferred_behind_a_switch_fault()
    # The guard allows it now: without the switch's fault, the deferred link would be taken out this cycle.
    alone = decide(PolicyState({link: deferred}), CycleInput(T0), CapacityGuard(H100), CONTEXT, LIVE)
    assert kinds(alone.actions) == ["disable", "comment"]
    decision = decide(PolicyState({link: deferred, switch: faulty}), CycleInput(T0), guard, CONTEXT, LIVE)
    assert decision.actions == () and decision.state.components[link].lifecycle is Lifecycle.DEFERRED
