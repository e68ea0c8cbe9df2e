"""Host health: the single yes/no a training scheduler consumes, from what automation has recorded.

A host is unhealthy while a component of it (a cable of one of its adapters, an adapter port, the host itself) is
recorded in any state but healthy, probation or reset (disabled, awaiting repair, deferred: faulty but kept up,
ticketed: a finding with a ticket open, quarantined), or while a switch its adapters are cabled to has an open
``switch_fault``. A link on probation, or watched after its reset, is in service, so its host is usable. What UFM
shows live (a port down this second) counts once a finding about it is recorded: the store is what the API reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from fabric.api.models import HostHealth
from fabric.api.plan_index import PlanIndex
from fabric.remediation.correlate import CABLES, faulty_switches
from fabric.remediation.domain import ComponentId, ComponentRecord, Lifecycle
from fabric.remediation.policy import PolicyState

USABLE = frozenset({Lifecycle.HEALTHY, Lifecycle.PROBATION, Lifecycle.RESET})
UNUSABLE = frozenset(Lifecycle) - USABLE
"""The states that make a component's hosts unhealthy: the only records host health needs to read (few, where the
whole table can hold a record for most of a fabric's cables after a storm). An open ``switch_fault`` is one of them
(``OPEN_TICKET``)."""

Reasons = dict[str, list[tuple[datetime, str]]]
"""Why each host is unhealthy (case-folded name: since when, and the line saying why), for the unhealthy ones."""


def unhealthy(index: PlanIndex, components: Mapping[ComponentId, ComponentRecord]) -> Reasons:
    """The unhealthy hosts with their reasons, each host's in component order then its faulty switches'.
    ``components``: the store's records (those in ``USABLE`` are passed over: the store may leave them out)."""
    found: Reasons = {}
    for component, record in sorted(components.items()):
        if record.lifecycle in USABLE:
            continue
        for host in index.hosts_of(component):
            found.setdefault(host, []).append(
                (record.since, f"{component} {record.lifecycle.value} since {record.since.isoformat()} "
                               f"({record.rule}: {_first_line(record)})"))
    for switch in faulty_switches(PolicyState(components=components)):
        record = components[switch]
        behind = (f"behind {switch}, which has an open {record.rule} since {record.since.isoformat()} "
                  f"({_first_line(record)})")
        for host in index.behind.get(switch.name, ()):
            found.setdefault(host, []).append((record.since, behind))
    return found


def hosts_health(index: PlanIndex, components: Mapping[ComponentId, ComponentRecord],
                 healthy: bool | None = None) -> list[HostHealth]:
    """Every planned host's health, or only the healthy (``True``) or unhealthy (``False``) ones, by host name.
    The unhealthy ones cost what their components do: the plan's other hosts are not looked at."""
    found = unhealthy(index, components)
    if healthy is False:
        return [host_health(index, host, found) for host in sorted(found, key=index.hosts.__getitem__)]
    return [host_health(index, host, found) for host in index.by_name if not (healthy and host in found)]


def host_health(index: PlanIndex, host: str, found: Reasons) -> HostHealth:
    """``host``'s health (a case-folded planned name), from ``unhealthy``'s answer."""
    reasons = found.get(host, ())
    return HostHealth(host=index.hosts[host], healthy=not reasons, reasons=[text for _, text in reasons],
                      since=min(at for at, _ in reasons) if reasons else None)


def _first_line(record: ComponentRecord) -> str:
    """The record's reason up to its list of cables (a switch fault names every one) and its first line."""
    return record.reason.split(CABLES, 1)[0].splitlines()[0] if record.reason else ""
