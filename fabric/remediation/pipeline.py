"""Events to decisions with no I/O: signals -> detectors -> decide. The engine and ``replay`` both run this."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from fabric.remediation.detectors import Detectors, RuleSettings, Silenced
from fabric.remediation.domain import ComponentId, Finding
from fabric.remediation.policy import CycleInput, Decision, FabricContext, PolicyConfig, PolicyState, decide
from fabric.remediation.signals import EventLike, SignalMapper
from topology.guard import CapacityGuard, GuardSettings
from topology.model import Fabric


@dataclass(slots=True)
class Step:
    findings: list[Finding]
    decision: Decision


class Pipeline:
    def __init__(self, plan: Fabric, context: FabricContext, policy: PolicyConfig, rules: RuleSettings,
                 guard: GuardSettings, silenced: Silenced | None = None) -> None:
        self.plan, self.context, self.policy = plan, context, policy
        self.guard = CapacityGuard(plan, guard)
        self.detectors = Detectors(plan, rules, silenced) if silenced else Detectors(plan, rules)
        self.state = PolicyState()
        self.mapper: SignalMapper | None = None

    def warm(self, history: Sequence[EventLike], now: datetime) -> None:
        """Fill the detectors' windows with past events without deciding anything on them."""
        assert self.mapper is not None
        self.detectors.observe(self.mapper.map(history))
        self.detectors.evaluate(now)

    def step(self, events: Sequence[EventLike], now: datetime, *, repaired: Sequence[ComponentId] = (),
             resume: bool = False, cleared: Sequence[ComponentId] = ()) -> Step:
        assert self.mapper is not None, "set the pipeline's mapper (UFM's view of the fabric) first"
        findings = self.detectors.observe(self.mapper.map(events)) + self.detectors.evaluate(now)
        decision = decide(self.state, CycleInput(now, tuple(findings), tuple(repaired), resume, tuple(cleared)),
                          self.guard, self.context, self.policy)
        self.state = decision.state
        return Step(findings, decision)
