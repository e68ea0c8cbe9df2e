"""A finding on a cable between two switches waits ``immediate_settle`` (60 s) before the policy acts on it, so that
the switch-fault correlation sees the other cables of a failing switch first.

UFM raises a failing spine's critical BER on its 32 core uplinks within half a minute, not at once: without a
wait the first cable's finding reaches the policy alone, the cable is taken out (or reset), and the switch fault
forms a cycle later around a cable already spent. Held for a minute, the findings reach the correlation together
and the switch gets one ticket with none of its cables touched; a single bad cable is still acted on within that
minute. Only what the policy would act on waits: an immediate or counted rule's finding (UFM's 918 and 916 come as
a pair and make ``ber_high`` at once, so counted rules are no slower than immediate ones there), on a planned cable
with a switch at both ends (a host's link has one switch: a switch fault never folds it), whose record lets
automation take it out (``policy.may_take_out``). Flaps and link-downs are not held: they wait for their own
evidence already (``RuleSettings.settle``, ``boot_time``).

Every finding held is recorded at once with a ``record`` decision saying until when and why (an operator sees why
nothing happened yet); a cable's later findings wait with its first. When one of the cable's switches has a switch
fault raised meanwhile, or open, the held findings are folded into it, as the correlation folds those that arrive
with the fault. A restart (a deploy in the middle of the minute), like a reload's new pipeline, takes the holds
back from the decision log: the findings of a cable whose newest decisions are holds wait again, or are acted on at
once if the minute is over (``restore``), as the correlation takes back its window. While the storm breaker is
halted nothing is held: the policy holds every finding itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from fabric.remediation.correlate import Correlated, Correlator, Folded, open_switch_fault
from fabric.remediation.domain import Action, ActionKind, ComponentId, ComponentKind, Finding
from fabric.remediation.policy import PolicyState, may_take_out
from fabric.remediation.rules import RULE_BY_NAME, SWITCH_FAULT, RuleKind

SETTLED_KINDS = frozenset({RuleKind.COUNTED, RuleKind.IMMEDIATE})
"""The kinds of rule whose findings on switch-to-switch cables wait: one event (or a pair) is enough to act on."""
SETTLING = "settling until "
"""How a hold's ``record`` decision starts: what ``restore`` looks for in the decision log."""
_HELD = "; held: "
"""Where a hold's reason gives the held finding's (``restore`` matches it with the finding recorded)."""


@dataclass(frozen=True, slots=True)
class Settled:
    decide: tuple[Finding, ...]
    """What the policy decides on this cycle: the findings whose minute is over, then those that do not wait."""
    held: tuple[Finding, ...]
    """Findings held this cycle for the first time: the storm breaker counts them as they come."""
    folded: tuple[Folded, ...]
    """Held findings folded into a switch fault raised since, or open."""
    records: tuple[Action, ...]
    """A ``record`` decision per hold begun, then one per held finding folded."""


class Settling:
    """The findings waiting, per cable, in the order found."""

    def __init__(self, settle: timedelta, correlator: Correlator) -> None:
        self.settle = settle
        self._switches_of = correlator.switches_of
        self.waiting: dict[ComponentId, list[Finding]] = {}

    def waits(self, finding: Finding, state: PolicyState) -> bool:
        rule = RULE_BY_NAME.get(finding.rule)
        return (bool(self.settle) and not finding.ticket_only and rule is not None and rule.kind in SETTLED_KINDS
                and finding.component.kind is ComponentKind.LINK and len(self._switches_of(finding.component)) == 2
                and may_take_out(state.components.get(finding.component)))

    def due(self) -> datetime | None:
        """When the first held finding's minute is over (``None``: nothing waits), for a replay's idle steps."""
        first = min((found[0].at for found in self.waiting.values()), default=None)
        return None if first is None else first + self.settle

    def step(self, correlated: Correlated, state: PolicyState, now: datetime, *, dry_run: bool) -> Settled:
        held: list[Finding] = []
        records: list[Action] = []
        passing: list[Finding] = []
        for finding in correlated.decide:
            waiting = self.waiting.get(finding.component)
            if waiting is not None:  # it waits with the cable's first
                waiting.append(finding)
            elif finding.at + self.settle > now and self.waits(finding, state):  # (one found late has waited)
                self.waiting[finding.component] = waiting = [finding]
                held.append(finding)
            else:
                passing.append(finding)
                continue
            if (until := waiting[0].at + self.settle) > now:  # else it is decided on with the first, now
                records.append(self._hold(finding, until, now, dry_run))
        raised = {f.component.name for f in correlated.switch_faults}
        folded: list[Folded] = []
        released: list[Finding] = []
        for cable, found in list(self.waiting.items()):
            switches = self._switches_of(cable)
            into = next((s for s in switches if s in raised), None)
            why = f"the {SWITCH_FAULT}"
            if into is None and (into := next((s for s in switches if open_switch_fault(state, s)), None)):
                why = f"the open {SWITCH_FAULT}"
            if into is not None:
                folded += [Folded(f, ComponentId(ComponentKind.SWITCH, into), f"folded into {why} of {into} after "
                                  f"settling: {f.reason}") for f in found]
            elif found[0].at + self.settle <= now:
                released += found
            else:
                continue
            del self.waiting[cable]
        records += (fold.record(now, dry_run) for fold in folded)
        return Settled((*released, *passing), tuple(held), tuple(folded), tuple(records))

    def halted(self, findings: Sequence[Finding]) -> Settled:
        """The breaker is halted: ``findings`` and every held finding go to the policy, which holds them all."""
        released = tuple(f for found in self.waiting.values() for f in found)
        self.waiting.clear()
        return Settled((*released, *findings), (), (), ())

    def restore(self, findings: Iterable[Finding], decided: Sequence[Action], state: PolicyState) -> None:
        """After a restart: the cables whose newest decisions (of ``decided``, in time order) are holds wait again,
        each with the findings those holds name (of ``findings``, in the order recorded)."""
        holds: dict[ComponentId, list[Action]] = {}
        for action in decided:
            if action.component is None:
                continue
            if action.kind is ActionKind.RECORD and action.reason.startswith(SETTLING):
                holds.setdefault(action.component, []).append(action)
            else:  # decided on (or folded): what was held before it waits no more
                holds.pop(action.component, None)
        recorded: dict[tuple[ComponentId, str, str], list[Finding]] = {}
        for finding in findings:
            if finding.component in holds:
                recorded.setdefault((finding.component, finding.rule, finding.reason), []).append(finding)
        for cable, actions in holds.items():
            if not may_take_out(state.components.get(cable)):
                continue
            for hold in actions:
                # The newest finding it names from before it (an older one alike was decided on before it).
                alike = recorded.get((cable, hold.rule, hold.reason.partition(_HELD)[2]), [])
                found = [f for f in alike if f.at <= hold.at]
                if found:
                    self.waiting.setdefault(cable, []).append(found[-1])
                    alike.remove(found[-1])

    def _hold(self, finding: Finding, until: datetime, now: datetime, dry_run: bool) -> Action:
        a, b = self._switches_of(finding.component)
        return Action(ActionKind.RECORD, now, finding.rule,
                      f"{SETTLING}{until:%H:%M:%S}: a switch fault of {a} or {b} would show on their other cables "
                      f"meanwhile{_HELD}{finding.reason}", finding.component, dry_run=dry_run)
