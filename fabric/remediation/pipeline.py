"""Events to decisions with no I/O: signals -> detectors -> correlation -> decide. The engine and ``replay`` both
run this.

A ``Pipeline`` is built complete, from the fabric as UFM shows it (a ``FabricView``) and the state to start
from, and owns the capacity guard. The engine tells it when UFM's topology changed (``rebase``) and hands it what
it observed between cycles (``observe``: a restart, cables down, a disable UFM confirmed); every change of a record
or of what the guard counts is the policy's (``decide``, ``fabric.remediation.observe``), never the engine's.

Every event counts once (``fabric.remediation.identity``): ``warm`` and ``step`` drop the events the pipeline
has already counted, whoever hands them over again, so the engine's cursor, its start-up and ``replay`` share
one de-duplication.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from fabric.remediation.correlate import Correlator
from fabric.remediation.detectors import Detectors, Explained
from fabric.remediation.domain import Action, ActionKind, ComponentId, Finding
from fabric.remediation.identity import SeenEvents
from fabric.remediation.muting import Muter
from fabric.remediation.observe import Observed, observe
from fabric.remediation.policy import (
    CycleInput,
    Decision,
    FailedRepair,
    PolicyConfig,
    PolicyState,
    UndoneReset,
    decide,
)
from fabric.remediation.rules import RuleSettings
from fabric.remediation.sampled import TelemetrySignals
from fabric.remediation.settling import Settling
from fabric.remediation.sightings import Sightings
from fabric.remediation.signals import EventLike, Signal, SignalMapper
from fabric.remediation.view import FabricView
from fabric.telemetry.records import SampleVerdict, Verdict
from topology.guard import CapacityGuard, GuardReading, GuardSettings

_AFRESH = frozenset({ActionKind.ENABLE, ActionKind.RESET})
"""Port writes after which a component's history starts again: a repaired link's, a reset link's."""


@dataclass(slots=True)
class Step:
    findings: list[Finding]
    decision: Decision
    repeated: int
    """Events of this step dropped as counted already."""
    switch_faults: int = 0
    """Switch faults found this step (``fabric.remediation.correlate``), each one finding and one ticket."""
    folded: int = 0
    """Cable findings folded into a switch fault: recorded, not decided on."""
    explained: list[Explained] = field(default_factory=list)
    """Link-downs not counted this step, and why (a reboot, our own port action...)."""
    settling: int = 0
    """Cable findings held back this step for ``immediate_settle`` (``fabric.remediation.settling``)."""


class Pipeline:
    def __init__(self, view: FabricView, policy: PolicyConfig, rules: RuleSettings, guard: GuardSettings, *,
                 state: PolicyState | None = None, muter: Muter | None = None,
                 succeeding: Pipeline | None = None, telemetry: bool = False) -> None:
        """``succeeding``: the pipeline this one replaces while the service runs (new settings): its guard counts what
        that one's counted. ``telemetry``: UFM Telemetry's samples are read too (``step``'s ``samples``): a fault
        both sources see counts once (``fabric.remediation.sightings``)."""
        self.view, self.policy = view, policy
        self._guard = CapacityGuard(view.plan, guard)
        if succeeding is not None:
            self._guard.carry_over(succeeding._guard)
        self.detectors = Detectors(view.plan, rules, muter)
        self.correlator = Correlator(view.plan, view.context.cables, rules)
        self.settling = Settling(rules.immediate_settle, self.correlator)
        self._mapper = SignalMapper(view.resolver)
        self._seen = SeenEvents(rules.history, self._mapper.kinds)
        self._state = state or PolicyState()
        self._most_episodes = rules.burst_cycles
        self._sampled = TelemetrySignals(self._mapper, self.detectors.muter, most_episodes=rules.burst_cycles)
        self._sightings = Sightings(rules.history) if telemetry else None
        self._judged: datetime | None = None
        """The newest UFM Telemetry sample accepted (for the policy's clean BER window)."""
        self._afresh_after_resets(self._state)

    @property
    def state(self) -> PolicyState:
        return self._state

    @property
    def guard(self) -> GuardReading:
        """The capacity view of the state, for reading: only the policy changes it."""
        return self._guard

    @property
    def mapper(self) -> SignalMapper:
        return self._mapper

    def rebase(self, view: FabricView) -> None:
        """UFM's view of the fabric changed (GUIDs, port names): place events with the new one from now on."""
        skipped = self._mapper.skipped
        self.view, self._mapper = view, SignalMapper(view.resolver)
        self._mapper.skipped.update(skipped)
        unplaced = self._sampled.unplaced
        self._sampled = TelemetrySignals(self._mapper, self.detectors.muter, most_episodes=self._most_episodes)
        self._sampled.unplaced = unplaced

    def observe(self, observed: Observed, now: datetime) -> Decision:
        """What the engine observed between cycles, made state by the policy; the decision is the caller's to
        record (it is never carried out by itself: see ``fabric.remediation.observe``)."""
        decision = observe(self._state, observed, self._guard, self.view.context, self.policy, now)
        self._state = decision.state
        if observed.restart is not None:
            self._afresh_after_resets(decision.state)
        return decision

    def own_action(self, component: ComponentId, at: datetime, kind: ActionKind) -> None:
        """The controller wrote ``kind`` to ``component``'s port at ``at`` (or is about to): its link events in the
        own-action window are not faults, and an enable or a reset gives the component a fresh history."""
        self.detectors.own_action(component, at, f"our {kind.value}", afresh=kind in _AFRESH)

    def _afresh_after_resets(self, state: PolicyState) -> None:
        """The detectors count no evidence of a component from before its newest reset the policy decided: the
        reset answered it, so it must not fire again and add up with what comes after (the watch). Done as the
        reset is decided, not as it is carried out, so that replay and a dry run decide as production does."""
        for component, resets in state.resets.items():
            if resets:
                self.own_action(component, resets[-1], ActionKind.RESET)

    def remember(self, findings: Sequence[Finding], decided: Sequence[Action]) -> None:
        """After a restart (and for a reload's new pipeline): the findings recorded before it, in the order
        recorded, for the stages that look back over findings (the switch-fault correlation, the findings held to
        settle), as ``warm`` gives the detectors their events; ``decided``: the decisions recorded over the same
        time, in time order. While automation is halted the correlation sees nothing (``step``), so the findings of
        a halt still on are left out."""
        halted = self._state.breaker.since if self._state.breaker.halted else None
        self.correlator.restore((f for f in findings if halted is None or f.at < halted), self._state)
        self.settling.restore(findings, decided, self._state)

    def warm(self, history: Sequence[EventLike], now: datetime) -> None:
        """Fill the detectors' windows with past events without deciding anything on them."""
        self.detectors.observe(self._mapper.map(self._seen.first_time(history)[0]))
        self.detectors.evaluate(now)
        self.detectors.take_explained()  # explained before this run: nothing to report now

    @property
    def sampled(self) -> TelemetrySignals:
        return self._sampled

    def step(self, events: Sequence[EventLike], now: datetime, *, repaired: Sequence[ComponentId] = (),
             resume: bool = False, cleared: Sequence[ComponentId] = (),
             failed_repairs: Sequence[FailedRepair] = (), samples: Sequence[SampleVerdict] = (),
             undone_resets: Sequence[UndoneReset] = (), resets_unsettled: frozenset[ComponentId] = frozenset(),
             found: Sequence[Finding] = ()) -> Step:
        """``samples``: UFM Telemetry's samples judged since the last step, in time order, those without conditions
        too (the newest accepted tells the policy how far telemetry has judged); a pipeline made without
        ``telemetry`` takes none. ``found``: findings made elsewhere (a burn-in window's, by the same detectors
        with stricter thresholds), correlated, settled and decided with this step's own."""
        fresh, repeated = self._seen.first_time(events)
        signals, explained = self._signals(fresh, samples)
        findings = self.detectors.observe(signals) + self.detectors.evaluate(now) + list(found)
        if self._sightings is not None:
            findings = self._sightings.name_sources(findings)
        if self._state.breaker.halted and not resume:
            # While automation is halted nothing is decided (findings are held as they come), so nothing needs
            # folding or settling: the correlation sees what comes once it resumes.
            correlated = Correlator.unchanged(findings)
            settled = self.settling.halted(correlated.decide)
        else:
            correlated = self.correlator.correlate(findings, self._state)
            settled = self.settling.step(correlated, self._state, now, dry_run=self.policy.dry_run)
        decision = decide(self._state, CycleInput(now, settled.decide, tuple(repaired), resume, tuple(cleared),
                                                  tuple(failed_repairs), self._judged, tuple(undone_resets),
                                                  resets_unsettled, settled.held),
                          self._guard, self.view.context, self.policy)
        for action in decision.actions:
            if action.kind is ActionKind.RESET and action.component is not None:
                self.own_action(action.component, action.at, ActionKind.RESET)
        records = [*(f.record(now, self.policy.dry_run) for f in correlated.folded), *settled.records]
        if records:
            decision = replace(decision, actions=(*decision.actions, *records))
        self._state = decision.state
        return Step(list(correlated.findings), decision, repeated, len(correlated.switch_faults),
                    len(correlated.folded) + len(settled.folded), [*explained, *self.detectors.take_explained()],
                    settling=len(settled.held))

    def _signals(self, events: Sequence[EventLike], samples: Sequence[SampleVerdict]) -> tuple[list[Signal],
                                                                                                list[Explained]]:
        """The events' signals and the samples', a fault both sources saw counted once; the samples' link-downs
        explained."""
        signals = self._mapper.map(events)
        sightings = self._sightings
        if sightings is None:
            if samples:
                raise ValueError("telemetry samples handed to a pipeline made without telemetry")
            return signals, []
        signals = sightings.reported(signals)
        explained: list[Explained] = []
        for sample in samples:
            if sample.verdict is Verdict.ACCEPTED and (self._judged is None or sample.time > self._judged):
                self._judged = sample.time
            found, muted = self._sampled.signals(sample)
            explained += muted
            if found and sample.since is not None:
                signals += sightings.sampled(found, sample.since)
        return signals, explained
