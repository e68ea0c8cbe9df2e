"""Host health: the single yes/no a training scheduler consumes, from what automation has recorded.

A host is unhealthy while a component of it (a cable of one of its adapters, an adapter port, the host itself) is
recorded in any state but healthy, probation or reset (disabled, awaiting repair, deferred: faulty but kept up,
ticketed: a finding with a ticket open, quarantined), or while a switch its adapters are cabled to has an open
``switch_fault``. A link on probation, or watched after its reset, is in service, so its host is usable. What UFM
shows live (a port down this second) counts once a finding about it is recorded: the store is what the API reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime

from fabric.api.models import HostHealth
from fabric.api.plan_index import PlanIndex
from fabric.remediation.correlate import CABLES, faulty_switches, hosts_behind
from fabric.remediation.domain import ComponentId, ComponentRecord, Lifecycle
from fabric.remediation.policy import PolicyState

USABLE = frozenset({Lifecycle.HEALTHY, Lifecycle.PROBATION, Lifecycle.RESET})


def hosts_health(index: PlanIndex, components: Mapping[ComponentId, ComponentRecord],
                 hosts: Iterable[str] | None = None) -> list[HostHealth]:
    """The health of ``hosts`` (case-folded planned names; default every planned host), by host name;
    ``components``: the store's records."""
    found: dict[str, list[tuple[datetime, str]]] = {host: [] for host in (index.hosts if hosts is None else hosts)}
    for component, record in sorted(components.items()):
        if record.lifecycle in USABLE:
            continue
        for host in index.hosts_of(component):
            if host in found:
                found[host].append((record.since, f"{component} {record.lifecycle.value} since "
                                                  f"{record.since.isoformat()} ({record.rule}: {_first_line(record)})"))
    for switch in faulty_switches(PolicyState(components=components)):
        record = components[switch]
        behind = (f"behind {switch}, which has an open {record.rule} since {record.since.isoformat()} "
                  f"({_first_line(record)})")
        for host in hosts_behind(index.plan, switch.name):
            if host.casefold() in found:
                found[host.casefold()].append((record.since, behind))
    return [HostHealth(host=index.hosts[host], healthy=not reasons, reasons=[text for _, text in reasons],
                       since=min(at for at, _ in reasons) if reasons else None)
            for host, reasons in sorted(found.items(), key=lambda item: index.hosts[item[0]])]


def _first_line(record: ComponentRecord) -> str:
    """The record's reason up to its list of cables (a switch fault names every one) and its first line."""
    return record.reason.split(CABLES, 1)[0].splitlines()[0] if record.reason else ""
