"""What a ticket says: what failed and where, the evidence, what the service did with the guard's figures, the strike
count, and the repair that usually fixes this kind of fault, for the technician who reads it at the rack.

Plain text (Jira renders it as is, in its v2 API and in wiki markup alike), one fact a line. The plan names no rack
or location (``topology.model``): the switch and port are where to go, and the peer says which other end to check.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

from fabric.durations import format_duration
from fabric.remediation.domain import Action, ActionKind, ComponentId, ComponentKind, ComponentRecord, Finding
from fabric.remediation.policy import PolicyConfig
from fabric.remediation.rules import RULES

__all__ = ["REPAIRS", "TicketContext", "ticket_body"]

REPAIRS: Mapping[str, str] = MappingProxyType({rule.name: rule.repair for rule in RULES})
"""The usual repair of each rule, as declared with the rule (``fabric.remediation.rules.RULES``)."""
_DEFAULT_REPAIR = "reseat both ends; replace the transceiver, then the cable"
"""For a ticket reopened by what is no rule of the table: a repaired link that did not come back (``link_check``)."""
_DONE = {ActionKind.DISABLE: "disabled it in UFM", ActionKind.DEFER: "kept it up: the capacity guard refused to "
         "disable it (it is disabled once capacity allows)", ActionKind.QUARANTINE: "quarantined it"}


class TicketContext:
    """What a cycle knows that its tickets tell: the fabric, the policy's settings, this cycle's findings and
    decisions, and the ports the actions are on."""

    def __init__(self, fabric: str, policy: PolicyConfig, findings: Sequence[Finding], actions: Sequence[Action],
                 ports: Mapping[ComponentId, str]) -> None:
        self.fabric, self.policy, self.ports = fabric, policy, ports
        self.findings = {f.component: f for f in findings}
        self.actions = actions


def _where(component: ComponentId, port: str | None) -> list[str]:
    if component.kind is ComponentKind.LINK and "|" in component.name:
        a, b = component.name.split("|", 1)
        lines = [f"Where: {_end(a)}, its peer {_end(b)}"]
    else:
        lines = [f"Where: {component.name} ({component.kind.value})"]
    if port is not None:
        lines.append(f"Port the service acts on: {port}")
    return lines


def _end(end: str) -> str:
    device, _, port = end.rpartition("/")
    return f"{device} port {port}" if device else end


def _figures(figures: Mapping[str, Any]) -> str:
    return ", ".join(f"{name} {value}" for name, value in sorted(figures.items()))


def ticket_body(action: Action, context: TicketContext, record: ComponentRecord | None) -> str:
    """The ticket's description for ``action`` (a ``ticket`` or ``reopen`` decision)."""
    component = action.component
    lines = [f"fabric-remediation opened this ticket for fabric {context.fabric}."]
    if component is None:
        lines.append(f"What happened: {action.reason}")
    else:
        lines += [f"What failed: {component} (rule {action.rule})", *_where(component, context.ports.get(component)),
                  f"Why: {action.reason}"]
        finding = context.findings.get(component)
        if finding is not None and finding.evidence:
            shown = ", ".join(str(event) for event in finding.evidence[:20])
            more = f" and {len(finding.evidence) - 20} more" if len(finding.evidence) > 20 else ""
            lines.append(f"Evidence: {len(finding.evidence)} UFM event(s), ids {shown}{more}, up to "
                         f"{finding.at.isoformat()}")
        taken = next((a for a in context.actions if a.component == component and a.kind in _DONE), None)
        if taken is not None:
            lines.append(f"What the service did: {_DONE[taken.kind]} at {taken.at.isoformat()}")
            if taken.guard:
                lines.append(f"Capacity guard: {_figures(taken.guard)}")
        elif record is not None:
            lines.append(f"What the service did: the component is {record.lifecycle.value}, nothing disabled")
        if record is not None:
            lines.append(f"Strikes: {record.strikes} of {context.policy.max_strikes} (at the last one it is "
                         "quarantined until an operator clears it)")
    lines.append(f"Usual repair: {REPAIRS.get(action.rule, _DEFAULT_REPAIR)}")
    lines.append(f"When repaired, resolve this ticket: the service brings the link back on probation for "
                 f"{format_duration(context.policy.probation)} and reopens the ticket if it fails again.")
    return "\n".join(lines)
