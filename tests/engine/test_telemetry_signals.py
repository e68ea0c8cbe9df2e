"""UFM Telemetry's conditions through the same pipeline as UFM's events: one rule table, one fault counted once.

Samples are handed to the pipeline judged (``SampleVerdict``), their conditions written here as the telemetry core
reports them: how counters become conditions is ``tests/telemetry``'s; this is what the remediation makes of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from fabric.remediation.domain import ActionKind, Lifecycle
from fabric.remediation.escalation import ResetLadder
from fabric.remediation.pipeline import Pipeline, Step
from fabric.remediation.policy import PolicyConfig
from fabric.remediation.rules import RuleSettings
from fabric.remediation.signals import link_id
from fabric.remediation.view import build_view
from fabric.telemetry.records import ConditionKind, SampleVerdict, TelemetryCondition, Verdict
from fabric.ufm.models import Event
from topology.formats.ufm_render import UfmView, named_as_ufm
from topology.generate import PRESETS, fat_tree
from topology.guard import GuardSettings
from topology.model import Cable, End

T0 = datetime(2026, 4, 1, 10, 0, tzinfo=UTC)
INTERVAL = timedelta(minutes=5)
DECIDED_AFTER = timedelta(seconds=90)
"""Each step runs this long after its sample: link-down evidence has settled by then."""


def pipeline(*, telemetry: bool = True) -> tuple[Pipeline, UfmView]:
    plan = fat_tree(PRESETS["tiny"])
    ufm = named_as_ufm(plan)
    # A finding takes its link out at once: what is under test is how telemetry's conditions become findings (the
    # reset ladder before a take-out is test_policy_resets's).
    policy = PolicyConfig(dry_run=False, resets=ResetLadder(max_resets=0))
    return Pipeline(build_view(plan, plan), policy, RuleSettings(), GuardSettings(cap_floor=20),
                    telemetry=telemetry), ufm


PLAN = fat_tree(PRESETS["tiny"])
SWITCH_CABLES = sorted((c for c in PLAN.cables if "node" not in f"{c.a.device} {c.b.device}"), key=lambda c: c.key)
SPINE_CORE = next(c for c in SWITCH_CABLES if "spine" in c.a.device and "core" in c.b.device)


def port(ufm: UfmView, end: End) -> str:
    return ufm.ports[end].name


def condition(kind: ConditionKind, ports: Sequence[str], at: datetime, **figures: float) -> TelemetryCondition:
    return TelemetryCondition(kind, tuple(ports), at, figures, f"{kind.value} on {', '.join(ports)}")


def sample(at: datetime, *conditions: TelemetryCondition, since: datetime | None = None) -> SampleVerdict:
    return SampleVerdict(Verdict.ACCEPTED, at, conditions, "test", 96, 96, 0, len(conditions),
                         since=since if since is not None else at - INTERVAL)


def event(ident: int, event_id: int, at: datetime, **fields: Any) -> Event:
    return Event.model_validate({"id": ident, "timestamp": at.strftime("%Y-%m-%d %H:%M:%S"), "severity": "Warning",
                                 "name": "x", "description": "", "event_type": str(event_id),
                                 "type": fields.get("object_type", "IBPort"), **fields})


def port_event(ident: int, event_id: int, at: datetime, name: str) -> Event:
    return event(ident, event_id, at, object_type="IBPort", object_name=name)


def link_event(ident: int, event_id: int, at: datetime, ufm: UfmView, cable: Cable) -> Event:
    a, b = port(ufm, cable.a), port(ufm, cable.b)
    return event(ident, event_id, at, object_type="Link", object_name=f"{a}:{b}",
                 object_path=f"Source {a}  TO Dest: {b}")


def decided(step: Step) -> list[tuple[ActionKind, str, str]]:
    return [(a.kind, a.rule, str(a.component)) for a in step.decision.actions if a.kind is not ActionKind.RECORD]


# --- each condition onto its rule ------------------------------------------------------------------------


def test_a_ber_no_event_reported_is_counted_by_the_ber_rule_and_says_telemetry_saw_it() -> None:
    steps, ufm = pipeline()
    name = port(ufm, SPINE_CORE.a)
    first = T0 + INTERVAL
    both_windows = [condition(ConditionKind.BER, [name], first, ber=1e-12, window_s=720),
                    condition(ConditionKind.BER, [name], first, ber=1e-13, window_s=7500)]
    step = steps.step([], first + DECIDED_AFTER, samples=[sample(first, *both_windows)])
    assert step.findings == []  # both windows of one sample are one sighting: ber_high needs two
    second = first + INTERVAL
    step = steps.step([], second + DECIDED_AFTER,
                      samples=[sample(second, condition(ConditionKind.BER, [name], second, ber=1e-12))])
    [finding] = step.findings
    assert finding.rule == "ber_high" and finding.component == link_id(SPINE_CORE.key)
    assert finding.reason.endswith("(seen by UFM Telemetry)") and finding.evidence == ()
    assert (ActionKind.DISABLE, "ber_high", str(link_id(SPINE_CORE.key))) in decided(step)


def test_drops_and_a_hot_module_are_immediate_faults() -> None:
    steps, ufm = pipeline()
    at = T0 + INTERVAL
    cable = SWITCH_CABLES[-1]
    step = steps.step([], at + DECIDED_AFTER, samples=[sample(
        at, condition(ConditionKind.PACKET_DROPS, [port(ufm, SPINE_CORE.b)], at, drop_rate=1e-9),
        condition(ConditionKind.MODULE_TEMPERATURE, [port(ufm, cable.a)], at, temperature=80))])
    rules = {(f.rule, f.component) for f in step.findings}
    assert rules == {("packet_drops", link_id(SPINE_CORE.key)), ("temperature", link_id(cable.key))}
    hot = next(f for f in step.findings if f.rule == "temperature")
    assert hot.never_auto_restore


def link_down(ufm: UfmView, cable: Cable, at: datetime, a: int = 1, b: int = 1) -> TelemetryCondition:
    return condition(ConditionKind.LINK_DOWN_BOTH_ENDS, [port(ufm, cable.a), port(ufm, cable.b)], at,
                     link_downed_a=a, link_downed_b=b)


def test_link_downs_on_both_ends_are_episodes_of_the_flap_rule() -> None:
    steps, ufm = pipeline()
    at = T0
    for n in range(3):
        at += INTERVAL
        step = steps.step([], at + DECIDED_AFTER, samples=[sample(at, link_down(ufm, SPINE_CORE, at))])
        assert [f.rule for f in step.findings] == ([] if n < 2 else ["flap"])
    assert "3 down/up cycles" in step.findings[0].reason


def test_a_counter_that_jumped_makes_at_most_a_burst_of_episodes() -> None:
    steps, ufm = pipeline()
    at = T0 + INTERVAL
    step = steps.step([], at + DECIDED_AFTER, samples=[sample(at, link_down(ufm, SPINE_CORE, at, 4000, 3000))])
    [finding] = step.findings
    assert finding.rule == "flap" and finding.reason.startswith(f"{RuleSettings().burst_cycles} down/up cycles")


def test_our_own_write_between_two_samples_explains_their_link_down() -> None:
    steps, ufm = pipeline()
    component = link_id(SPINE_CORE.key)
    at = T0
    for _ in range(3):
        at += INTERVAL
        # Our write 3 minutes before the sample: outside the own-action window of the sample's time, inside its
        # interval, which is when the counters moved.
        steps.own_action(component, at - timedelta(minutes=3), ActionKind.ENABLE)
        step = steps.step([], at + DECIDED_AFTER, samples=[sample(at, link_down(ufm, SPINE_CORE, at))])
        assert step.findings == []
        assert [e.component for e in step.explained] == [component]
        assert "own action" in step.explained[0].reason


def test_a_condition_on_a_port_ufm_does_not_list_is_counted_not_placed() -> None:
    steps, _ = pipeline()
    at = T0 + INTERVAL
    step = steps.step([], at + DECIDED_AFTER,
                      samples=[sample(at, condition(ConditionKind.PACKET_DROPS, ["00000000deadbeef_3"], at))])
    assert step.findings == [] and steps.sampled.unplaced == 1


def test_a_sample_the_gate_refused_gives_nothing() -> None:
    steps, _ = pipeline()
    at = T0 + INTERVAL
    refused = SampleVerdict(Verdict.IMPLAUSIBLE, at, (), "implausible", 96, 96, 0, 60, since=T0)
    assert steps.step([], at + DECIDED_AFTER, samples=[refused]).findings == []


def test_a_pipeline_without_telemetry_takes_no_sample() -> None:
    steps, _ = pipeline(telemetry=False)
    at = T0 + INTERVAL
    try:
        steps.step([], at, samples=[sample(at)])
    except ValueError as exc:
        assert "without telemetry" in str(exc)
    else:
        raise AssertionError("a sample handed to a pipeline made without telemetry was taken")


# --- one fault, whichever source saw it ----------------------------------------------------------------------

KINDS = ("ber", "flap", "hot")
FAULT = st.tuples(st.integers(0, 5), st.sampled_from(KINDS))
SOURCES = ("events", "telemetry", "both")


def feed(steps: Pipeline, ufm: UfmView, faults: list[list[tuple[int, str]]], source: str) -> list[list[Any]]:
    """Each sample interval's faults, fed as UFM's events (within the interval), as the sample's conditions, or
    both; the decisions of each step."""
    decisions: list[list[Any]] = []
    ident = 0
    at = T0
    for interval in faults:
        at += INTERVAL
        events: list[Event] = []
        conditions: list[TelemetryCondition] = []
        for index, kind in sorted(set(interval)):
            cable = SWITCH_CABLES[index]
            name = port(ufm, cable.a)
            if source != "telemetry":
                # Within the sample's interval, each finding of the events 2 minutes before the sample's: the
                # correlation's window holds the same findings together whichever source saw them.
                seen = at - timedelta(minutes=2)
                if kind == "flap":
                    events += [link_event(ident + 1, 329, seen - timedelta(seconds=1), ufm, cable),
                               link_event(ident + 2, 328, seen, ufm, cable)]
                else:
                    events.append(port_event(ident + 1, 918 if kind == "ber" else 919, seen, name))
                ident += 2
            if source != "events":
                if kind == "flap":
                    conditions.append(link_down(ufm, cable, at))
                else:
                    conditions.append(condition(ConditionKind.BER if kind == "ber"
                                                else ConditionKind.MODULE_TEMPERATURE, [name], at))
        step = steps.step(events, at + DECIDED_AFTER, samples=[sample(at, *conditions)])
        decisions.append(decided(step))
    return decisions


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(FAULT, max_size=4), min_size=1, max_size=10))
def test_the_same_faults_as_events_as_telemetry_or_both_give_the_same_decisions(
        faults: list[list[tuple[int, str]]]) -> None:
    made = {source: feed(*pipeline(), faults, source) for source in SOURCES}
    assert made["telemetry"] == made["events"]
    assert made["both"] == made["events"]


def test_one_fault_seen_by_both_sources_is_counted_once_and_named_so() -> None:
    steps, ufm = pipeline()
    name = port(ufm, SPINE_CORE.a)
    at = T0 + INTERVAL
    step = steps.step([port_event(1, 918, at - timedelta(minutes=1), name)], at + DECIDED_AFTER,
                      samples=[sample(at, condition(ConditionKind.BER, [name], at))])
    assert step.findings == []  # one sighting each: counted once, below ber_high's two
    at += INTERVAL
    step = steps.step([], at + DECIDED_AFTER, samples=[sample(at, condition(ConditionKind.BER, [name], at))])
    [finding] = step.findings
    assert finding.reason.endswith("(seen by UFM events and UFM Telemetry)")
    assert finding.evidence == (1,)
    assert steps.state.components[link_id(SPINE_CORE.key)].lifecycle is Lifecycle.DISABLED


def test_an_event_late_for_its_interval_is_not_counted_again() -> None:
    steps, ufm = pipeline()
    name = port(ufm, SPINE_CORE.a)
    at = T0 + INTERVAL
    steps.step([], at + DECIDED_AFTER, samples=[sample(at, condition(ConditionKind.BER, [name], at))])
    # UFM's event of the same interval arrives after the sample was counted.
    step = steps.step([port_event(1, 918, at - timedelta(minutes=1), name)], at + 2 * DECIDED_AFTER)
    assert step.findings == []

