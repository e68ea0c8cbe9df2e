"""The managed fabric as the engine sees it: the plan's names, UFM's addresses, and what the policy needs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from fabric.remediation.domain import ComponentId
from fabric.remediation.policy import FabricContext
from fabric.remediation.signals import Resolver, link_id
from topology.guard import CableKey
from topology.model import TIER_RANK, End, Fabric
from topology.ports import Kind


class Watched(NamedTuple):
    """What UFM Telemetry's samples are judged for (``fabric.telemetry.TelemetryWindow``'s arguments)."""

    ports: tuple[str, ...]
    """UFM port names of the planned cables' ends UFM lists."""
    rates: dict[str, float]
    """Bits per second of each: its cable's planned rate (width x lane speed), 0 where the plan gives none."""
    cables: tuple[tuple[str, str], ...]
    """The planned cables both of whose ends UFM lists, as pairs of port names."""


@dataclass(frozen=True, slots=True)
class FabricView:
    plan: Fabric
    context: FabricContext
    resolver: Resolver
    ufm_ports: dict[End, str]
    """End -> UFM port name (``<guid>_<n>``), for the ports UFM shows cabled."""
    plan_keys: frozenset[CableKey]

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
            if self.plan.devices[end.device].kind is Kind.SWITCH and end in self.ufm_ports:
                return self.ufm_ports[end]
        return None

    def watched(self) -> Watched:
        """The ports telemetry is read for: every planned cable's ends as UFM names them, at the cable's planned
        rate (the BER windows are judged against the rate the port should carry)."""
        rates: dict[str, float] = {}
        cables: list[tuple[str, str]] = []
        for cable in self.plan.cables:
            names = [self.ufm_ports.get(end) for end in (cable.a, cable.b)]
            for name in names:
                if name is not None:
                    rates[name] = (cable.speed_gbps or 0.0) * 1e9
            if names[0] is not None and names[1] is not None:
                cables.append((names[0], names[1]))
        return Watched(tuple(rates), rates, tuple(cables))

    def live_cables(self, actual: Fabric) -> set[CableKey]:
        """Planned cables UFM shows up, cabled as planned."""
        return {cable.key for cable in actual.cables if cable.key in self.plan_keys}


def fabric_context(plan: Fabric) -> FabricContext:
    cables = {link_id(c.key): c.key for c in plan.cables}
    hosts = frozenset(link_id(c.key) for c in plan.cables
                      if Kind.ADAPTER in (plan.devices[c.a.device].kind, plan.devices[c.b.device].kind))
    return FabricContext(cables, hosts)


def build_view(plan: Fabric, actual: Fabric, context: FabricContext | None = None) -> FabricView:
    """Join the plan (names, tiers) with what UFM reports (GUIDs, port names)."""
    guids = {device.guid: key for key, device in actual.devices.items() if device.guid and key in plan.devices}
    resolver = Resolver(plan, guids, actual.port_names)
    ufm_ports = {end: name for name, end in actual.port_names.items()}
    context = context or fabric_context(plan)
    return FabricView(plan, context, resolver, ufm_ports, frozenset(context.cables.values()))
