"""Many cables of one switch failing together are the switch's fault: one switch finding, not one per cable.

When ``switch_fault_cables`` (4) distinct cables of one switch have findings within ``switch_fault_window`` (5 min),
the fault is the switch (its optics cage, its ASIC, its firmware) or UFM misreporting it: disabling its cables one
by one fixes neither and spends the blast-radius budget on one box. Between the detectors and ``policy.decide``,
this stage turns those cable findings into one ticket-only ``switch_fault`` finding on the switch, listing its
cables and their evidence; the cable findings are kept from the policy and recorded as folded into it.

A cable has two ends: each switch counts its own cables, and a cable counts toward one switch fault only, the
switches with the most failing cables first (the spine whose 32 uplinks fail is faulty, not the 8 cores that each
see 4 of them, nor the leaf whose 4 uplinks to a faulty spine fail with it). While a switch's ``switch_fault``
is open (its record is ticketed or quarantined by that rule), every new finding on its cables is folded into it
too. Cables taken out before their switch reached the threshold stay out, and a finding on a cable already held
out of service when it was found (UFM Telemetry judging a BER over a window the cable went out in, say) counts
toward no switch fault: it says nothing new about the switch, and would make one of cables taken out one by one.

The window slides over the findings' times (not the cycles'): UFM raises a port's threshold events once per
alarm period (300 s), so a failing switch shows on its cables within one period; and four unrelated cable faults
on one switch within five minutes are vanishingly rare (the simulated reference week of h100-4k has 770 cable
faults, about five per switch: four of a switch's five within five minutes by chance is a 1e-9 event). A late
finding (link-down evidence counted once it settled) counts with the findings within a window before it, as far
back as the detectors' history reaches: how the findings were cut into cycles, and a restart between two of them,
change nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from operator import attrgetter

from fabric.remediation.domain import (
    OUT_OF_SERVICE,
    Action,
    ActionKind,
    ComponentId,
    ComponentKind,
    ComponentRecord,
    Finding,
)
from fabric.remediation.policy import OPEN_TICKET, PolicyState
from fabric.remediation.rules import SWITCH_FAULT, RuleSettings
from topology.guard import CableKey
from topology.model import Fabric
from topology.ports import Kind

_AT = attrgetter("at")
CABLES = ". Cables: "
"""Where a switch fault's reason starts listing its cables (a log line stops there)."""


@dataclass(frozen=True, slots=True)
class Folded:
    """A cable finding the policy did not see: it is part of ``switch``'s fault."""

    finding: Finding
    switch: ComponentId
    reason: str

    def record(self, now: datetime, dry_run: bool) -> Action:
        """The ``record`` decision saying into which switch fault the finding went."""
        return Action(ActionKind.RECORD, now, self.finding.rule, self.reason, self.finding.component, dry_run=dry_run)


@dataclass(frozen=True, slots=True)
class Correlated:
    findings: tuple[Finding, ...]
    """Every finding of the cycle, the switch faults included: what is recorded."""
    decide: tuple[Finding, ...]
    """What the policy decides on: the folded cable findings left out."""
    folded: tuple[Folded, ...]
    switch_faults: tuple[Finding, ...]


class Correlator:
    """Recent cable findings, by switch, and the switch faults they make."""

    def __init__(self, plan: Fabric, cables: Mapping[ComponentId, CableKey], settings: RuleSettings) -> None:
        self.plan, self.cables = plan, cables
        self.threshold, self.window = settings.switch_fault_cables, settings.switch_fault_window
        self.reach = settings.history + self.window
        """The horizon lies this far before the newest cable finding: no cycle looks at a finding older than it. A
        finding comes from signals the detectors still hold (``history``) and looks back a window from its time, so
        the horizon cuts off none the detectors could still find, however late."""
        self.newest: datetime | None = None
        """The newest cable finding's time. The horizon follows it, not the cycles: it only moves forward, and
        ``restore`` rebuilds it from the recorded findings alone, so that a restored correlator looks at exactly
        the findings one that ran throughout does."""
        self.recent: dict[str, list[Finding]] = {}
        """Per switch, its cables' findings, in arrival order: every one from the horizon on, and older ones until
        the next sweep (``_forget``), which no cycle looks at."""
        self._switches: dict[ComponentId, tuple[str, ...]] = {}
        self._swept: datetime | None = None
        self.raised: dict[str, datetime] = {}
        """When each switch's fault was last raised (its newest finding then). Never pruned: one entry per switch of
        the plan at most, and a switch raised long ago must count as such whenever a late finding reaches back."""

    def restore(self, recorded: Iterable[Finding], state: PolicyState) -> None:
        """After a restart: the findings recorded before it (in the order recorded) back in the window, as
        ``correlate`` had them: each cable finding under its switches (but those on a cable ``state`` holds out
        since before them), the newest of them as the horizon's, each switch fault as raised. Without them a switch
        whose cables failed across a restart (a deploy) got a disable per cable instead of one switch ticket."""
        for finding in recorded:
            if finding.rule == SWITCH_FAULT and finding.component.kind is ComponentKind.SWITCH:
                self.raised[finding.component.name] = finding.at
                continue
            if _held_out_before(state, finding):
                continue
            switches = self.switches_of(finding.component)
            for switch in switches:
                self.recent.setdefault(switch, []).append(finding)
            if switches and (self.newest is None or finding.at > self.newest):
                self.newest = finding.at

    def switches_of(self, component: ComponentId) -> tuple[str, ...]:
        """The switch ends of a planned cable (none for anything else)."""
        found = self._switches.get(component)
        if found is None:
            cable = self.cables.get(component) if component.kind is ComponentKind.LINK else None
            devices = self.plan.devices
            found = () if cable is None else tuple(
                sorted({end.device for end in cable if devices[end.device].kind is Kind.SWITCH}))
            self._switches[component] = found
        return found

    @staticmethod
    def unchanged(findings: Sequence[Finding]) -> Correlated:
        """``findings`` as they are, nothing folded."""
        return Correlated(tuple(findings), tuple(findings), (), ())

    def correlate(self, findings: Sequence[Finding], state: PolicyState) -> Correlated:
        switches_of = self._switches.get
        arriving = {i: (f, switches) for i, f in enumerate(findings)
                    if (switches := switches_of(f.component) or self.switches_of(f.component))
                    and not _held_out_before(state, f)}
        if not arriving:
            return self.unchanged(findings)
        newest = max(f.at for f, _ in arriving.values())
        if self.newest is None or newest > self.newest:
            self.newest = newest
        horizon = self.newest - self.reach
        # A late finding looks back a window from its time (the findings before that are kept for it), but
        # never before the horizon.
        oldest = max(min(f.at for f, _ in arriving.values()) - self.window, horizon)
        touched: dict[str, None] = {}
        for finding, switches in arriving.values():
            for switch in switches:
                self.recent.setdefault(switch, []).append(finding)
                touched[switch] = None
        faults = self._faults(list(touched), {f.component for f, _ in arriving.values()}, oldest)
        self._forget(horizon)
        open_faults = {s for s in touched if open_switch_fault(state, s)}
        if not faults and not open_faults:
            return self.unchanged(findings)
        # A switch with an open ticket is not raised again (the policy could only record it): the folded
        # findings say what came since.
        ticketed = {s: record.rule for s in faults if (record := _ticketed(state, s)) is not None}
        owner = {cable: switch for switch, cables in faults.items() for cable in cables}
        folded: dict[int, Folded] = {}
        for index, (finding, switches) in arriving.items():
            into = owner.get(finding.component)
            if into is not None:
                why = f"the open {ticketed[into]}" if into in ticketed else f"the {SWITCH_FAULT}"
            elif (into := next((s for s in switches if s in open_faults), None)) is not None:
                why = f"the open {SWITCH_FAULT}"
            else:
                continue
            folded[index] = Folded(finding, ComponentId(ComponentKind.SWITCH, into),
                                   f"folded into {why} of {into}: {finding.reason}")
        raised = {s: self._switch_finding(s, cables) for s, cables in faults.items()
                  if s not in ticketed and not self._raised_lately(s, cables)}
        for switch, finding in raised.items():
            self.raised[switch] = finding.at
        return _merge(findings, folded, raised)

    def _raised_lately(self, switch: str, cables: dict[ComponentId, list[Finding]]) -> bool:
        """Whether this fault was raised within a window before its newest finding (held by a halted breaker, say):
        once a window is enough, its cables' findings meanwhile are folded into it."""
        last = self.raised.get(switch)
        return last is not None and max(f.at for fs in cables.values() for f in fs) - last <= self.window

    def _faults(self, touched: Sequence[str], arriving: set[ComponentId], oldest: datetime
                ) -> dict[str, dict[ComponentId, list[Finding]]]:
        """The switches at fault, each with its cables (and their findings), among those this cycle's findings
        touch. They compete for their cables with the switches at the cables' other ends, most failing cables
        first."""
        threshold = self.threshold
        candidates: dict[str, Sequence[Finding]] = {}
        competitors: dict[str, None] = {}
        for switch in touched:
            found = self._recent(switch, oldest)
            distinct = {f.component for f in found}
            if len(distinct) >= threshold:
                candidates[switch] = found
                # (in any order: the candidates are ranked below)
                competitors.update((other, None) for cable in distinct for other in self.switches_of(cable))
        for switch in competitors:
            if switch not in candidates:
                found = self._recent(switch, oldest)
                if len({f.component for f in found}) >= threshold:
                    candidates[switch] = found
        failing = {s: cables for s, found in candidates.items() if len(cables := self._together(found)) >= threshold}
        taken: set[ComponentId] = set()
        faults: dict[str, dict[ComponentId, list[Finding]]] = {}
        for switch in sorted(failing, key=lambda s: (-len(failing[s]), s)):
            own = {c: found for c, found in failing[switch].items() if c not in taken}
            if len(own) >= threshold:
                taken.update(own)
                if not arriving.isdisjoint(own):
                    faults[switch] = own
        return faults

    def _recent(self, switch: str, oldest: datetime) -> Sequence[Finding]:
        """``switch``'s cable findings from ``oldest`` on. Those before it stay: a later cycle may look further
        back (a late finding's window starts earlier)."""
        return [f for f in self.recent.get(switch, ()) if f.at >= oldest]

    def _forget(self, horizon: datetime) -> None:
        """Drops the cable findings before ``horizon`` (no cycle looks at them again), a switch's list with its
        last finding; swept once the horizon moved a window. Which ones are left between sweeps changes nothing,
        since no cycle looks before the horizon: a correlator that swept at other times decides the same."""
        if self._swept is not None and horizon - self._swept < self.window:
            return
        self._swept = horizon
        for switch, found in list(self.recent.items()):
            if any(f.at < horizon for f in found):
                kept = [f for f in found if f.at >= horizon]
                if kept:
                    self.recent[switch] = kept
                else:
                    del self.recent[switch]

    def _together(self, found: Iterable[Finding]) -> dict[ComponentId, list[Finding]]:
        """The cables of one switch whose findings fall in some ``window`` with ``threshold`` distinct cables
        (a sliding window over the findings in time order), each with those findings."""
        # In time order (ties in any order: a window holds all the findings of one time or none of them).
        ordered = sorted(found, key=_AT)
        if ordered[-1].at - ordered[0].at <= self.window:  # all in one window (a burst, as a switch fails)
            together: dict[ComponentId, list[Finding]] = {}
            for finding in ordered:
                together.setdefault(finding.component, []).append(finding)
            return together if len(together) >= self.threshold else {}
        in_window: dict[ComponentId, int] = {}
        together = {}
        window, threshold = self.window, self.threshold
        marked = left = 0
        for right, finding in enumerate(ordered):
            cable = finding.component
            in_window[cable] = in_window.get(cable, 0) + 1
            start = finding.at - window
            while ordered[left].at < start:
                gone = ordered[left].component
                if in_window[gone] == 1:
                    del in_window[gone]
                else:
                    in_window[gone] -= 1
                left += 1
            if len(in_window) >= threshold:
                for member in ordered[max(left, marked):right + 1]:
                    together.setdefault(member.component, []).append(member)
                marked = right + 1
        return together

    def _switch_finding(self, switch: str, cables: dict[ComponentId, list[Finding]]) -> Finding:
        found = sorted((f for fs in cables.values() for f in fs), key=lambda f: (f.at, f.component, f.evidence))
        evidence = tuple(dict.fromkeys(event for f in found for event in f.evidence))
        listed = ", ".join(f"{cable.name} ({'/'.join(sorted({f.rule for f in fs}))})"
                           for cable, fs in sorted(cables.items()))
        reason = (f"{len(cables)} cables of {switch} had findings within {self.window} (threshold {self.threshold}): "
                  f"the switch (optics cage, ASIC, firmware) or UFM, not each cable; none is disabled for it"
                  f"{CABLES}{listed}")
        return Finding(ComponentId(ComponentKind.SWITCH, switch), SWITCH_FAULT, found[-1].at, reason, evidence,
                       ticket_only=True)


def _merge(findings: Sequence[Finding], folded: dict[int, Folded], raised: dict[str, Finding]) -> Correlated:
    """Each switch finding in the place of the first cable finding folded into it, the rest in their order."""
    recorded: list[Finding] = []
    decide: list[Finding] = []
    placed: list[Finding] = []
    for index, finding in enumerate(findings):
        recorded.append(finding)
        fold = folded.get(index)
        if fold is None:
            decide.append(finding)
        elif (switch := raised.pop(fold.switch.name, None)) is not None:
            recorded.append(switch)
            decide.append(switch)
            placed.append(switch)
    return Correlated(tuple(recorded), tuple(decide), tuple(folded.values()), tuple(placed))


def _held_out_before(state: PolicyState, finding: Finding) -> bool:
    """Whether ``finding``'s component was out of service (disabled, awaiting repair, quarantined) already before
    it was found."""
    record = state.components.get(finding.component)
    return record is not None and record.lifecycle in OUT_OF_SERVICE and record.since < finding.at


def _ticketed(state: PolicyState, switch: str) -> ComponentRecord | None:
    """The switch's record when it has an open ticket (by any rule: a switch down, a partial ASIC failure...)."""
    record = state.components.get(ComponentId(ComponentKind.SWITCH, switch))
    return record if record is not None and record.lifecycle in OPEN_TICKET else None


def open_switch_fault(state: PolicyState, switch: str) -> bool:
    """Whether ``switch`` has an open ``switch_fault`` (its cables' new findings are folded into it)."""
    record = _ticketed(state, switch)
    return record is not None and record.rule == SWITCH_FAULT


def faulty_switches(state: PolicyState) -> list[ComponentId]:
    """Switches with an open ``switch_fault``, sorted: what host health reads (with ``hosts_behind``)."""
    return sorted(c for c in state.components if c.kind is ComponentKind.SWITCH and open_switch_fault(state, c.name))


def hosts_behind(plan: Fabric) -> dict[str, list[str]]:
    """Every switch cabled to a host adapter (a leaf), to the hosts cabled to it by host name, sorted: the ones a
    faulty leaf degrades. All switches in one pass over the cables: the API builds it once per plan."""
    devices = plan.devices
    found: dict[str, set[str]] = {}
    for cable in plan.cables:
        for switch, other in ((cable.a.device, cable.b.device), (cable.b.device, cable.a.device)):
            adapter = devices[other]
            if adapter.kind is Kind.ADAPTER and devices[switch].kind is Kind.SWITCH:
                found.setdefault(switch, set()).add(adapter.host_name)
    return {switch: sorted(hosts) for switch, hosts in found.items()}
