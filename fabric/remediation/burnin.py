"""A burn-in window: the same rules, stricter, and at its end which ports and switches survived.

A burn-in loads every port at once for a while (``fabricctl burnin plan``) and keeps what survived. What fails is
judged by the rules the service always runs (``fabric.remediation.rules``), with the thresholds of ``[burnin]``
where they are stricter (``BurninSettings.strict``): one error event of a counted rule is a finding, one down/up a
flap, a link down for a minute a fault; and no reset first (``strict_policy``). No rule of its own: the findings
go to the same policy, guard, cap and breaker as any other (``decide``), which takes out what the fabric can spare
and defers the rest.

The survivors report (``survivors``) is per planned switch port, then per switch: ``failed`` when the window found
its cable faulty (the command: the policy acted on it, taking it out, deferring or ticketing it; the daemon: a
finding, which its policy then decides on), ``down`` when its cable was not up when the window began (it cannot
have been loaded), ``idle`` when UFM Telemetry's receive-packet counter of the port grew by
less than ``min_packets`` over the window (it carried no traffic: untested, neither kept nor failed), else
``survived``. A port that crossed UFM's utilisation alert during the window is flagged (loaded as asked: not a fault).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import timedelta
from enum import StrEnum
from typing import Any

from fabric.remediation.domain import ActionKind, ComponentId, Finding
from fabric.remediation.policy import FabricContext, PolicyConfig
from fabric.remediation.rules import RuleSettings, Threshold
from topology.guard import CableKey
from topology.model import End, Fabric
from topology.ports import Kind, display_port

UTILISATION_EVENTS = (123,)
"""UFM's utilisation alert: 123, "Port Bandwidth (%) Threshold Reached" in UFM's event policy table (a port's
normalised transmit bandwidth past its threshold, 95 % by default). ``[burnin] utilisation_events`` takes others (a
release's are listed by ``GET /app/events_policy``)."""

FAILING = frozenset({ActionKind.DISABLE, ActionKind.DEFER, ActionKind.RESET, ActionKind.TICKET, ActionKind.REOPEN,
                     ActionKind.QUARANTINE})
"""What the policy does to a component it found faulty: a port whose cable had one of these failed the burn-in."""


@dataclass(frozen=True, slots=True)
class BurninSettings:
    duration: timedelta = timedelta(hours=1)
    """How long a window lasts unless the request says."""
    counted_count: int = 1
    """Each counted rule (errors, high BER) finds a fault at this many events within its window, if fewer than its
    own count."""
    flap_cycles: int = 1
    """Down/up cycles within the flap window that make a flap, if fewer than ``[rules] flap_cycles``."""
    down_ticket_after: timedelta = timedelta(minutes=1)
    """A link down this long is a fault, if shorter than ``[rules] down_ticket_after``."""
    min_packets: int = 1
    """A port whose received packets grew by fewer than this over the window carried no traffic."""
    utilisation_events: tuple[int, ...] = UTILISATION_EVENTS

    def strict(self, rules: RuleSettings) -> RuleSettings:
        """``rules`` with the window's thresholds wherever they are stricter: never looser than the service's own."""
        counted = {name: Threshold(min(threshold.count, self.counted_count), threshold.window)
                   for name, threshold in rules.counted.items()}
        return replace(rules, counted=counted, flap_cycles=min(rules.flap_cycles, self.flap_cycles),
                       down_ticket_after=min(rules.down_ticket_after, self.down_ticket_after))

    @staticmethod
    def strict_policy(policy: PolicyConfig) -> PolicyConfig:
        """``policy`` without the reset ladder: a burn-in's point is to find what fails under load and take it out
        (guard permitting), not to reset it and watch it pass again once the load is gone."""
        return replace(policy, resets=replace(policy.resets, max_resets=0))


class PortVerdict(StrEnum):
    SURVIVED = "survived"
    FAILED = "failed"
    DOWN = "down"
    IDLE = "idle"


@dataclass(frozen=True, slots=True)
class PortReport:
    port: str
    """``switch/Port n`` as the plan names it."""
    switch: str
    verdict: PortVerdict
    why: str
    """The decisions on its cable (``disable: port_errors ...``), or why it is not a survivor; empty for one."""
    utilisation_alert: bool = False


@dataclass(frozen=True, slots=True)
class SwitchReport:
    switch: str
    counts: Mapping[PortVerdict, int]
    utilisation_alerts: int

    @property
    def survived(self) -> bool:
        return all(self.counts.get(verdict, 0) == 0 for verdict in (PortVerdict.FAILED, PortVerdict.DOWN))


@dataclass(frozen=True, slots=True)
class Decided:
    """One decision of the window on a component: what the policy did, by which rule, and why."""

    component: ComponentId
    action: ActionKind
    rule: str
    reason: str


@dataclass(frozen=True, slots=True)
class WindowFacts:
    """What a window saw besides its decisions, each by planned end (``topology.model.End``)."""

    down_at_start: frozenset[CableKey] = frozenset()
    idle: frozenset[End] = frozenset()
    """Ends whose received packets grew by less than ``min_packets``."""
    alerted: frozenset[End] = frozenset()
    """Ends UFM raised a utilisation alert on."""


def idle_ends(ports: Mapping[str, End], first: Mapping[str, int], last: Mapping[str, int],
              least: int) -> frozenset[End]:
    """The planned ends (``ports``: UFM's port names resolved to them) whose received packets grew by less than
    ``least`` between two samples of UFM Telemetry (a counter that went back was reset: what it counts since is the
    growth); an end in only one of the samples is not judged."""
    idle: set[End] = set()
    for name, end in ports.items():
        before, after = first.get(name), last.get(name)
        if before is not None and after is not None:
            grown = after - before if after >= before else after
            if grown < least:
                idle.add(end)
    return frozenset(idle)


def failures_decided(decided: Iterable[Decided]) -> dict[ComponentId, list[str]]:
    """The components the policy acted on as faulty (``FAILING``), each with what it did and by which rule."""
    failures: dict[ComponentId, list[str]] = defaultdict(list)
    for decision in decided:
        if decision.action in FAILING:
            failures[decision.component].append(f"{decision.action.value}: {decision.rule}")
    return dict(failures)


def failures_found(findings: Iterable[Finding]) -> dict[ComponentId, list[str]]:
    """The components of ``findings``, each with its rules (the daemon's window: its findings go on to the policy)."""
    failures: dict[ComponentId, list[str]] = defaultdict(list)
    for finding in findings:
        failures[finding.component].append(finding.rule)
    return dict(failures)


def survivors(plan: Fabric, context: FabricContext, failures: Mapping[ComponentId, Collection[str]],
              facts: WindowFacts) -> tuple[list[PortReport], list[SwitchReport]]:
    """Each planned switch port's verdict (see the module docstring), then each switch's counts, by name.
    ``failures``: the components that failed the window, with why (``failures_decided``, ``failures_found``)."""
    failing: dict[CableKey, list[str]] = defaultdict(list)
    for component, why in failures.items():
        failed = context.cables.get(component)
        if failed is not None:
            failing[failed].extend(why)
    ports: list[PortReport] = []
    for cable in plan.cables:
        for end in cable.key:
            device = plan.devices[end.device]
            if device.kind is not Kind.SWITCH:
                continue
            verdict, why = _verdict(cable.key, end, failing, facts)
            ports.append(PortReport(f"{device.name}/{display_port(end.port)}", device.name, verdict, why,
                                    end in facts.alerted))
    ports.sort(key=lambda report: report.port)
    return ports, _by_switch(ports)


def _verdict(cable: CableKey, end: End, failing: Mapping[CableKey, Collection[str]],
             facts: WindowFacts) -> tuple[PortVerdict, str]:
    if cable in failing:
        return PortVerdict.FAILED, "; ".join(sorted(set(failing[cable])))
    if cable in facts.down_at_start:
        return PortVerdict.DOWN, "its cable was not up when the window began"
    if end in facts.idle:
        return PortVerdict.IDLE, "carried no traffic (UFM Telemetry's receive packets did not grow)"
    return PortVerdict.SURVIVED, ""


def _by_switch(ports: Iterable[PortReport]) -> list[SwitchReport]:
    counts: dict[str, dict[PortVerdict, int]] = defaultdict(lambda: dict.fromkeys(PortVerdict, 0))
    alerts: dict[str, int] = defaultdict(int)
    for port in ports:
        counts[port.switch][port.verdict] += 1
        alerts[port.switch] += port.utilisation_alert
    return [SwitchReport(switch, counts[switch], alerts[switch]) for switch in sorted(counts)]


def report_dict(ports: Iterable[PortReport], switches: Iterable[SwitchReport]) -> dict[str, Any]:
    """The survivors report as JSON: totals, each switch, each port that did not survive or was alerted."""
    port_list = list(ports)
    switch_list = list(switches)
    totals = dict.fromkeys((verdict.value for verdict in PortVerdict), 0)
    for port in port_list:
        totals[port.verdict.value] += 1
    return {
        "ports": totals,
        "switches": {"survived": sum(s.survived for s in switch_list),
                     "failed": sum(not s.survived for s in switch_list)},
        "by_switch": [{"switch": s.switch, "survived": s.survived, "utilisation_alerts": s.utilisation_alerts,
                       "ports": {verdict.value: count for verdict, count in s.counts.items()}} for s in switch_list],
        "not_survived": [{"port": p.port, "verdict": p.verdict.value, "why": p.why} for p in port_list
                         if p.verdict is not PortVerdict.SURVIVED],
        "utilisation_alerts": [p.port for p in port_list if p.utilisation_alert],
    }
