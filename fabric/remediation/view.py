"""The managed fabric as the engine sees it: the plan's names, UFM's addresses, and what the policy needs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import NamedTuple

from fabric.remediation.domain import ComponentId
from fabric.remediation.policy import FabricContext
from fabric.remediation.signals import PortNames, PortNameValues, Resolver, link_id
from topology.guard import CableKey
from topology.model import TIER_RANK, End, Fabric
from topology.ports import Kind


class Watched(NamedTuple):
    """What UFM Telemetry's samples are judged for (``fabric.telemetry.TelemetryWindow``'s arguments)."""

    ports: tuple[str, ...]
    """UFM port names of the planned cables' ends UFM lists."""
    rates: Mapping[str, float]
    """Bits per second of each: its cable's planned rate (width x lane speed), 0 where the plan gives none (read
    only: the view keeps this for every caller)."""
    cables: tuple[tuple[str, str], ...]
    """The planned cables both of whose ends UFM lists, as pairs of port names."""


@dataclass(frozen=True, slots=True)
class FabricView:
    plan: Fabric
    context: FabricContext
    resolver: Resolver
    """Its ``ports``: UFM's port names (``<guid>_<n>``) of the ports UFM shows cabled (and of switch ports it lists
    uncabled), both ways."""
    plan_keys: frozenset[CableKey]
    _watched: Watched | None = field(default=None, init=False, repr=False, compare=False)
    """``watched()``, once asked for."""

    def cable(self, component: ComponentId) -> CableKey | None:
        return self.context.cables.get(component)

    def port_to_act_on(self, component: ComponentId) -> str | None:
        """The UFM port to disable for a cable: the end on the lower tier (the leaf side of a leaf-spine cable,
        the spine side of a spine-core cable), where an operator would look for it first."""
        cable = self.cable(component)
        if cable is None:
            return None
        ranked = sorted(cable, key=lambda end: (TIER_RANK.get(self.plan.devices[end.device].tier, 9), end))
        for end in ranked:
            if self.plan.devices[end.device].kind is Kind.SWITCH and (name := self.resolver.ports.name_of(end)):
                return name
        return None

    def watched(self) -> Watched:
        """The ports telemetry is read for: every planned cable's ends as UFM names them, at the cable's planned
        rate (the BER windows are judged against the rate the port should carry).

        Worked out once a view: the feed asks at every poll, a view lives until UFM's topology changes, and on
        h100-32k (98,304 cables) it took 0.3 to 1 s each time, the largest part of a poll, and then more to compare
        with the last poll's (``benchmarks/bench_telemetry.py``); the same object compares by identity."""
        found = self._watched
        if found is None:
            found = self._ports_watched()
            object.__setattr__(self, "_watched", found)  # frozen: this cache is the one field set after building
        return found

    def _ports_watched(self) -> Watched:
        rates: dict[str, float] = {}
        cables: list[tuple[str, str]] = []
        named = self.resolver.ports.name_of
        for cable in self.plan.cables:  # 98,304 on h100-32k, walked in the first poll: no list made per cable
            a, b = named(cable.a), named(cable.b)
            rate = (cable.speed_gbps or 0.0) * 1e9
            if a is not None:
                rates[a] = rate
            if b is not None:
                rates[b] = rate
                if a is not None:
                    cables.append((a, b))
        return Watched(tuple(rates), MappingProxyType(rates), tuple(cables))

    def cable_at_port(self, port: str) -> CableKey | None:
        """The planned cable a UFM port (``<guid>_<n>``) is an end of."""
        end = self.resolver.ports.get(port)
        return None if end is None else self.resolver.cable_at(end)

    def live_cables(self, actual: Fabric) -> set[CableKey]:
        """Planned cables UFM shows up, cabled as planned: the plan's keys, so that the set holds nothing of
        ``actual`` once it is dropped."""
        by_end = self.plan.by_end
        return {planned.key for cable in actual.cables
                if (planned := by_end.get(cable.a)) is not None and planned.key == cable.key}


def fabric_context(plan: Fabric) -> FabricContext:
    cables = {link_id(c.key): c.key for c in plan.cables}
    hosts = frozenset(link_id(c.key) for c in plan.cables
                      if Kind.ADAPTER in (plan.devices[c.a.device].kind, plan.devices[c.b.device].kind))
    return FabricContext(cables, hosts)


def _as_planned(plan: Fabric, end: End) -> End:
    """``end`` as the plan's own object where the plan cables it (equal, not a copy): the view's maps then hold
    nothing of the as-built fabric, which the engine drops once it is read (196,608 ends on h100-32k)."""
    cable = plan.by_end.get(end)
    if cable is None:
        return end
    return cable.a if cable.a == end else cable.b


def build_view(plan: Fabric, actual: Fabric, context: FabricContext | None = None) -> FabricView:
    """Join the plan (names, tiers) with what UFM reports (GUIDs, port names)."""
    guids = {device.guid: key for key, device in actual.devices.items() if device.guid and key in plan.devices}
    ports = PortNames((name, _as_planned(plan, end)) for name, end in actual.port_names.items())
    context = context or fabric_context(plan)
    return FabricView(plan, context, Resolver(plan, guids, ports), frozenset(context.cables.values()))


ViewValues = tuple[list[tuple[str, int]], PortNameValues, list[tuple[str, str]]]
"""What a view holds of UFM as plain values (``view_values``)."""


def _planned_ends(plan: Fabric) -> list[End]:
    """The plan's cabled ends numbered: cable ``n``'s two ends (in the order of its key) are ``2n`` and ``2n + 1``."""
    return [end for cable in plan.cables for end in cable.key]


def view_values(view: FabricView) -> ViewValues:
    """What ``view`` holds of UFM as plain values (``marshal``), ``view_from_values`` makes it again: each GUID with
    the position of its device among the plan's devices, and UFM's port names, each end numbered
    as the plan's (``_planned_ends``), an end the plan does not cable numbered after them (and given as its device
    and port)."""
    plan = view.plan
    planned = _planned_ends(plan)
    numbers = {end: number for number, end in enumerate(planned)}
    others: list[tuple[str, str]] = []

    def number_of(end: End) -> int:
        number = numbers.get(end)
        if number is None:
            number = numbers[end] = len(planned) + len(others)
            others.append((end.device, end.port))
        return number

    position = {key: n for n, key in enumerate(plan.devices)}
    guids = [(guid, position[key]) for guid, key in view.resolver.guids.items()]
    return guids, view.resolver.ports.as_values(number_of), others


def view_from_values(plan: Fabric, context: FabricContext, values: ViewValues) -> FabricView:
    """The view ``view_values`` gave ``values`` of, on ``plan`` (the same plan) and its ``context``."""
    guids, ports, others = values
    ends: Sequence[End] = [*_planned_ends(plan), *(End(device, port) for device, port in others)]
    keys = list(plan.devices)  # the plan's own key objects: nothing kept is a copy of one
    placed = {guid: keys[position] for guid, position in guids}
    resolver = Resolver(plan, placed, PortNames.from_values(ports, ends), canonical=True)
    return FabricView(plan, context, resolver, frozenset(context.cables.values()))
