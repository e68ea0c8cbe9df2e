"""Findings on cables between two switches wait ``immediate_settle`` before the policy acts on them, so that a failing
switch's other cables reach the correlation first (``fabric.remediation.settling``)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

from engine_support import disabled_ports, restart, rig
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric.remediation.domain import ActionKind, ComponentId, ComponentKind, Lifecycle
from fabric.remediation.escalation import ResetLadder
from fabric.remediation.pipeline import Pipeline, Step
from fabric.remediation.policy import PolicyConfig
from fabric.remediation.rules import SWITCH_FAULT, RuleSettings
from fabric.remediation.settling import SETTLING
from fabric.remediation.signals import link_id
from fabric.remediation.view import build_view
from fabric.ufm.models import Event
from topology.formats.ufm_render import UfmView, named_as_ufm
from topology.generate import PRESETS, fat_tree
from topology.guard import GuardSettings
from topology.model import Cable, Fabric

T0 = datetime(2026, 4, 1, 10, 0, tzinfo=UTC)
TINY = fat_tree(PRESETS["tiny"])
SETTLE = RuleSettings().immediate_settle
TAKEN_OUT = frozenset({ActionKind.DISABLE, ActionKind.DEFER, ActionKind.RESET})
"""What acting on a cable's finding writes (or would, the guard refusing)."""


def cables_of(plan: Fabric, device: str, towards: str) -> list[Cable]:
    return sorted((c for c in plan.cables if device in (c.a.device, c.b.device)
                   and towards in f"{c.a.device} {c.b.device}".replace(device, "")), key=lambda c: c.key)


def pipeline(plan: Fabric, *, settle: timedelta = SETTLE, resets: int = 0, storm: int = 25) -> tuple[Pipeline, UfmView]:
    policy = PolicyConfig(dry_run=False, resets=ResetLadder(max_resets=resets), storm_components=storm)
    ufm = named_as_ufm(plan)  # before the view: it places events by the names UFM gives
    return Pipeline(build_view(plan, plan), policy, RuleSettings(immediate_settle=settle),
                    GuardSettings(cap_floor=100), telemetry=False), ufm


def critical(ufm: UfmView, cable: Cable, at: datetime, event_id: int) -> Event:
    """UFM's 917 (symbol BER over the critical threshold) on ``cable``'s first end at ``at``."""
    return Event.model_validate({"id": event_id, "timestamp": at.strftime("%Y-%m-%d %H:%M:%S"),
                                 "severity": "Critical", "name": "x", "description": "BER", "event_type": "917",
                                 "type": "IBPort", "object_type": "IBPort", "object_name": ufm.ports[cable.a].name})


def run(steps: Pipeline, events: Sequence[Event], until: timedelta, every: timedelta = timedelta(seconds=10)
        ) -> list[Step]:
    """Steps every ``every`` from ``T0`` to ``T0 + until``, each handed the events that came since the last one."""
    done: list[Step] = []
    at = T0
    while at <= T0 + until:
        batch = [e for e in events if at - every < e.timestamp <= at]
        done.append(steps.step(batch, at))
        at += every
    return done


def acted(done: Sequence[Step], kinds: frozenset[ActionKind] = TAKEN_OUT) -> list[tuple[datetime, ComponentId]]:
    return [(a.at, a.component) for s in done for a in s.decision.actions if a.kind in kinds and a.component]


def test_a_spine_whose_core_uplinks_go_critical_within_half_a_minute_is_one_switch_ticket_with_no_cable_out() -> None:
    """The issue's measurement: critical BER on all 32 core uplinks of one h100-4k spine within 30 s. Acted on at
    once, the first cable went out (or was reset) before the switch fault formed; settled, none does."""
    plan = fat_tree(PRESETS["h100-4k"])
    uplinks = cables_of(plan, "pod01-spine01", "core")
    assert len(uplinks) == 32
    for settle, resets in ((SETTLE, 0), (SETTLE, 2), (timedelta(0), 0)):
        steps, ufm = pipeline(plan, settle=settle, resets=resets)
        events = [critical(ufm, c, T0 + timedelta(seconds=n), n + 1) for n, c in enumerate(uplinks)]
        done = run(steps, events, until=timedelta(minutes=3))
        tickets = [a.component for s in done for a in s.decision.actions if a.kind is ActionKind.TICKET]
        if settle:
            assert acted(done) == [] and tickets == [ComponentId(ComponentKind.SWITCH, "pod01-spine01")]
            assert sum(s.folded for s in done) == 32
        else:  # the rule this file is about, off: the first uplink goes out before the switch fault forms
            assert len(acted(done)) >= 1 and ComponentId(ComponentKind.SWITCH, "pod01-spine01") in tickets


def test_a_lone_bad_spine_core_cable_is_taken_out_once_its_minute_is_over_and_a_host_link_at_once() -> None:
    steps, ufm = pipeline(TINY)
    spine_core = cables_of(TINY, "pod01-spine01", "core")[0]
    leaf_host = next(c for c in TINY.cables if (c.a.device.startswith("pod01-leaf") and "node" in c.b.device)
                     or (c.b.device.startswith("pod01-leaf") and "node" in c.a.device))
    done = run(steps, [critical(ufm, spine_core, T0, 1), critical(ufm, leaf_host, T0, 2)], until=timedelta(minutes=2))
    cable = link_id(spine_core.key)
    [hold] = [a for s in done for a in s.decision.actions if a.component == cable and a.kind is ActionKind.RECORD]
    assert hold.at == T0 and hold.reason.startswith(f"{SETTLING}10:01:00") and "pod01-spine01" in hold.reason
    # A host's link has one switch: no switch fault would fold it, it is ticketed (host links are) at once.
    assert acted(done, frozenset({ActionKind.TICKET, ActionKind.DISABLE})) == [
        (T0, link_id(leaf_host.key)), (T0 + SETTLE, cable), (T0 + SETTLE, cable)]
    assert steps.state.components[cable].lifecycle is Lifecycle.DISABLED


def test_findings_held_to_settle_count_toward_a_storm_as_they_come() -> None:
    """Three cables of three spines: no switch fault, but a storm of three components trips in the step that finds
    them, before anything is written, as it would with no settling."""
    steps, ufm = pipeline(TINY, storm=3)
    cables = [cables_of(TINY, f"pod0{p}-spine0{s}", "core")[0] for p, s in ((1, 1), (1, 2), (2, 1))]
    [first, *_] = run(steps, [critical(ufm, c, T0, n) for n, c in enumerate(cables, start=1)],
                      until=timedelta(minutes=2))
    assert ActionKind.HALT in [a.kind for a in first.decision.actions] and first.settling == 3
    assert steps.state.breaker.halted and not steps.guard.disabled


def test_a_reload_within_the_minute_keeps_the_hold_and_decides_each_finding_once(tmp_path: Path) -> None:
    """New rules applied mid-minute (``Engine.reconfigure``, SIGHUP): the new pipeline takes the holds back as a
    restart does, and each held finding reaches the policy once."""
    with rig(TINY, tmp_path) as r:
        r.inject(fault="ber", port="pod01-spine01/1", escalate_after=0)
        r.advance(30)
        held = r.cycle()
        assert held.settling == 1
        r.runner.run(r.engine.reconfigure(r.engine.settings))
        r.advance(SETTLE.total_seconds())
        report = r.cycle()
        [(kind, component)] = [(a.kind, a.component) for a in report.actions if a.kind in TAKEN_OUT]
        assert kind is ActionKind.DISABLE and component is not None and "pod01-spine01/1" in component.name
        decided = [a.reason for a in report.actions if a.component == component and a.kind is ActionKind.RECORD]
        assert len(decided) == len(held.findings) - 1, decided  # the others of the cable's findings, once each


def test_a_restart_within_the_minute_takes_the_hold_back_from_the_decision_log(tmp_path: Path) -> None:
    """A deploy between the finding and its minute's end: the restarted engine acts on it when the minute is over,
    though the event that raised it is behind the saved cursor and never handed over again."""
    with rig(TINY, tmp_path) as r:
        r.inject(fault="ber", port="pod01-spine01/1", escalate_after=0)
        r.advance(30)
        assert r.cycle().settling == 1 and disabled_ports(r) == []
        restart(r)
        r.advance(SETTLE.total_seconds())
        report = r.cycle()
        [(kind, component)] = [(a.kind, a.component) for a in report.actions if a.kind in TAKEN_OUT]
        assert kind is ActionKind.DISABLE and component is not None and "pod01-spine01/1" in component.name
        assert len(disabled_ports(r)) == 1


uplink_picks = st.lists(st.tuples(st.integers(0, len(TINY.cables) - 1), st.integers(0, 150)), min_size=1, max_size=10)


@settings(max_examples=60, deadline=None)
@given(picks=uplink_picks, every=st.sampled_from([10, 30, 60]))
def test_a_held_finding_is_acted_on_or_folded_by_the_first_step_after_its_minute_and_never_before(
        picks: list[tuple[int, int]], every: int) -> None:
    steps, ufm = pipeline(TINY)
    events = [critical(ufm, TINY.cables[index], T0 + timedelta(seconds=second), n)
              for n, (index, second) in enumerate(picks, start=1)]
    done = run(steps, events, until=timedelta(minutes=5), every=timedelta(seconds=every))
    held = {a.component: a.at for s in done for a in s.decision.actions
            if a.kind is ActionKind.RECORD and a.reason.startswith(SETTLING) and a.component is not None}
    first_found = {}
    for step in done:
        for finding in step.findings:
            first_found.setdefault(finding.component, finding.at)
    for cable, since in held.items():
        due = first_found[cable] + SETTLE
        after = [a for s in done for a in s.decision.actions if (a.component == cable and a.at > since)
                 or (a.component == cable and a.kind is not ActionKind.RECORD)]
        assert after, f"{cable}: held at {since} and never decided on"
        # Folded into a switch fault at any time; taken out (or reset, or deferred) not before its minute is over.
        assert all(a.at >= due for a in after if a.kind in TAKEN_OUT), f"{cable}: acted on before {due}: {after}"
        assert after[0].at < due + timedelta(seconds=every), f"{cable}: held past its minute: {after}"
        assert after[0].kind in TAKEN_OUT or after[0].reason.startswith("folded into"), after[0]
    faults = [a.component for s in done for a in s.decision.actions if a.rule == SWITCH_FAULT]
    assert len(faults) == len(set(faults)), "a switch fault raised twice"
