"""With UFM Telemetry read, a repaired cable's probation ends healthy only once a sample has judged its BER over a
window of its own (none of it from before the repair); a BER over it puts the cable back out with a strike."""

from __future__ import annotations

from datetime import datetime, timedelta

from test_telemetry_signals import INTERVAL, SPINE_CORE, T0, condition, port, sample

from fabric.remediation.domain import ActionKind, Lifecycle
from fabric.remediation.escalation import ResetLadder
from fabric.remediation.pipeline import Pipeline
from fabric.remediation.policy import PolicyConfig
from fabric.remediation.rules import RuleSettings
from fabric.remediation.signals import link_id
from fabric.remediation.view import build_view
from fabric.telemetry.records import ConditionKind
from fabric.telemetry.settings import TelemetrySettings
from topology.formats.ufm_render import UfmView, named_as_ufm
from topology.generate import PRESETS, fat_tree
from topology.guard import GuardSettings

PROBATION = timedelta(hours=2)
CLEAN = TelemetrySettings().clean_after
CABLE = link_id(SPINE_CORE.key)


def on_probation(clean_window: timedelta | None) -> tuple[Pipeline, UfmView, datetime]:
    """A pipeline reading telemetry whose spine-core cable was taken out for BER and is now back on probation; the
    time it went on probation."""
    plan = fat_tree(PRESETS["tiny"])
    ufm = named_as_ufm(plan)
    # Taken out at once (no reset first): what is under test is the probation after the repair.
    policy = PolicyConfig(dry_run=False, probation=PROBATION, clean_window=clean_window,
                          resets=ResetLadder(max_resets=0))
    # Nor held to settle: the spine-core cable's finding is acted on in the step that finds it.
    steps = Pipeline(build_view(plan, plan), policy, RuleSettings(immediate_settle=timedelta(0)),
                     GuardSettings(cap_floor=20), telemetry=True)
    name = port(ufm, SPINE_CORE.a)
    at = T0
    for _ in range(2):
        at += INTERVAL
        steps.step([], at, samples=[sample(at, condition(ConditionKind.BER, [name], at))])
    assert steps.state.components[CABLE].lifecycle is Lifecycle.DISABLED
    at += INTERVAL
    steps.step([], at, repaired=[CABLE], samples=[sample(at)])
    assert steps.state.components[CABLE].lifecycle is Lifecycle.PROBATION
    return steps, ufm, at


def soak(steps: Pipeline, start: datetime, until: datetime, *, sampled: bool = True) -> list[tuple[ActionKind, str]]:
    """Steps every sample interval from ``start`` to ``until``, each with a clean sample (or none); their
    decisions on the cable."""
    made: list[tuple[ActionKind, str]] = []
    at = start
    while at < until:
        at += INTERVAL
        step = steps.step([], at, samples=[sample(at)] if sampled else [])
        made += [(a.kind, a.reason) for a in step.decision.actions if a.component == CABLE]
    return made


def test_probation_waits_for_a_sample_that_judged_a_window_of_its_own() -> None:
    steps, _, since = on_probation(CLEAN)
    assert since + PROBATION < since + CLEAN  # the probation alone would end first
    made = soak(steps, since, since + PROBATION)
    assert [kind for kind, _ in made] == [ActionKind.RECORD]  # said once, however many cycles it waits
    assert "healthy once a UFM Telemetry sample" in made[0][1]
    assert steps.state.components[CABLE].lifecycle is Lifecycle.PROBATION
    made = soak(steps, since + PROBATION, since + CLEAN)
    assert steps.state.components[CABLE].lifecycle is Lifecycle.HEALTHY
    assert made[-1][0] is ActionKind.COMMENT and "a clean BER window" in made[-1][1]


def test_without_samples_probation_does_not_end() -> None:
    steps, _, since = on_probation(CLEAN)
    soak(steps, since, since + 2 * CLEAN, sampled=False)
    assert steps.state.components[CABLE].lifecycle is Lifecycle.PROBATION


def test_a_ber_over_the_window_puts_it_back_out_with_a_strike() -> None:
    steps, ufm, since = on_probation(CLEAN)
    strikes = steps.state.components[CABLE].strikes
    name = port(ufm, SPINE_CORE.a)
    at = since
    for _ in range(2):
        at += INTERVAL
        steps.step([], at, samples=[sample(at, condition(ConditionKind.BER, [name], at))])
    record = steps.state.components[CABLE]
    assert record.lifecycle is Lifecycle.DISABLED and record.strikes == strikes + 1


def test_without_telemetry_the_probation_alone_decides() -> None:
    steps, _, since = on_probation(None)
    soak(steps, since, since + PROBATION)
    assert steps.state.components[CABLE].lifecycle is Lifecycle.HEALTHY
