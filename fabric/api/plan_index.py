"""Which components of the plan sit on which devices and hosts: what the components' filters and host health read.

Built once from the plan (``plan_index``) when the daemon starts: the plan does not change while the service runs,
and a request must not walk every cable of a 4,000-host fabric to answer one host. With it host health costs what
the components out of service cost (each maps to its hosts in a lookup or two), not what the plan's hosts and cables
do. It keeps no reference to the plan, and holds names rather than objects: the API's process holds the index
alone, not the model. A cable's devices are read from its component's name (``a/p|b/q``) when asked, not kept.
"""

from __future__ import annotations

import marshal
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fabric.remediation.correlate import hosts_behind
from fabric.remediation.domain import ComponentId, ComponentKind
from fabric.remediation.signals import link_name
from topology.guard import CapacityGuard
from topology.model import Fabric
from topology.picture.layout import Layout, Pod, layout_of
from topology.ports import Kind


@dataclass(frozen=True, slots=True)
class PlanIndex:
    switches: frozenset[str]
    """Every switch of the plan (device keys)."""
    hosts: Mapping[str, str]
    """Every host of the plan, by its case-folded name (as host components are named), to its name as planned."""
    links: frozenset[str]
    """Every planned cable's component name."""
    adapter_hosts: Mapping[str, str]
    """Every adapter (device key) to its host (case-folded)."""
    by_name: tuple[str, ...]
    """Every host (case-folded), in the order of its planned name: the order of the host list."""
    behind: Mapping[str, tuple[str, ...]]
    """Every switch cabled to an adapter, to the hosts (case-folded) behind it, by planned name: the hosts a
    ``switch_fault`` of it makes unhealthy."""
    layout: Layout
    """Where the console's fabric picture draws each switch (``topology.picture``): tiers, pods, hosts per leaf."""
    planned_paths: Mapping[str, int]
    """Every leaf (device key) to its planned paths to core: the console's guard bars of the leaves the engine's
    guard reports whole (``GuardFigures.reduced_leaves`` names the others)."""

    def device_of_port(self, name: str) -> str | None:
        """The device of a port component ``device/label`` (a label may hold '/' too: ``1/3/1``)."""
        at = name.find("/")
        while at > 0:
            if name[:at] in self.adapter_hosts or name[:at] in self.switches:
                return name[:at]
            at = name.find("/", at + 1)
        return None

    def link_devices(self, name: str) -> tuple[str, str] | None:
        """A planned cable's two devices, from its component's name; None for a cable the plan does not have.
        The first '|' that splits the name into two ports of planned devices divides it (a device's name may
        hold a '|' of its own)."""
        if name not in self.links:
            return None
        at = name.find("|", 1)  # (a device's name is never empty, and may start with a '|')
        while at > 0:
            a, b = self.device_of_port(name[:at]), self.device_of_port(name[at + 1:])
            if a is not None and b is not None:
                return a, b
            at = name.find("|", at + 1)
        return None

    def devices_of(self, component: ComponentId) -> tuple[str, ...]:
        """The devices (keys) ``component`` sits on: a cable's two ends, a port's device, the switch itself."""
        if component.kind is ComponentKind.LINK:
            return self.link_devices(component.name) or ()
        if component.kind is ComponentKind.PORT:
            device = self.device_of_port(component.name)
            return () if device is None else (device,)
        if component.kind is ComponentKind.SWITCH:
            return (component.name,)
        return ()

    def hosts_of(self, component: ComponentId) -> tuple[str, ...]:
        """The hosts (case-folded) ``component`` belongs to: its adapters' hosts, or the host itself."""
        if component.kind is ComponentKind.HOST:
            return (component.name,) if component.name in self.hosts else ()
        return tuple(sorted({self.adapter_hosts[d] for d in self.devices_of(component) if d in self.adapter_hosts}))

    def known_switch(self, key: str) -> bool:
        return key in self.switches

    def known(self, component: ComponentId) -> bool:
        """Whether ``component`` is part of the plan."""
        if component.kind is ComponentKind.HOST:
            return component.name in self.hosts
        if component.kind is ComponentKind.SWITCH:
            return self.known_switch(component.name)
        return bool(self.devices_of(component))


IndexValues = tuple[Any, ...]
"""A plan's index as plain values (strings, numbers, tuples, lists, dicts): what ``marshal`` writes and reads."""


def plan_index(plan: Fabric) -> PlanIndex:
    """The index of ``plan``, its names copied out of the model into memory of their own: built among the
    model's objects, they would keep the model's memory from the system once it is dropped (``marshal`` of plain
    values, a copy made in one go and in order)."""
    return index_of_values(marshal.loads(marshal.dumps(index_values(plan))))


def index_values(plan: Fabric) -> IndexValues:
    """What ``plan``'s index holds, as plain values (``index_of_values`` makes the index of them)."""
    adapters = {key: device.host_name.casefold() for key, device in plan.devices.items()
                if device.kind is Kind.ADAPTER}
    hosts: dict[str, str] = {}
    for key in sorted(adapters):
        hosts.setdefault(adapters[key], plan.devices[key].host_name)
    links = [link_name(cable.key) for cable in plan.cables]
    by_name = sorted(hosts, key=hosts.__getitem__)
    # (a host planned under two spellings of its name is one host, behind a switch once)
    behind = {switch: tuple(dict.fromkeys(name.casefold() for name in names))
              for switch, names in hosts_behind(plan).items()}
    switches = [key for key, device in plan.devices.items() if device.kind is Kind.SWITCH]
    drawn = layout_of(plan)
    layout = (drawn.core_groups, [(pod.number, pod.spines, pod.leaves, pod.hosts) for pod in drawn.pods],
              drawn.others, dict(drawn.names))
    planned = dict(CapacityGuard(plan).planned)
    return switches, hosts, links, adapters, by_name, behind, layout, planned


def index_of_values(values: IndexValues) -> PlanIndex:
    """The index of what ``index_values`` gave (or ``marshal`` read back of it: it keeps tuples tuples)."""
    switches, hosts, links, adapters, by_name, behind, (core_groups, pods, others, names), planned = values
    return PlanIndex(frozenset(switches), hosts, frozenset(links), adapters, tuple(by_name), behind,
                     Layout(core_groups, tuple(Pod(*pod) for pod in pods), others, names), planned)
