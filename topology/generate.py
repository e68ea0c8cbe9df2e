"""Wiring plans of rail-optimised three-tier fat trees.

Each pod has ``rails`` leaves and ``spines_per_pod`` spines; adapter ``r`` of every host in the pod goes to
leaf ``r`` (its rail); every leaf has ``leaf_spine_cables`` cables to every spine of its pod; spine ``s`` of
every pod goes to core group ``s`` with ``spine_core_cables`` cables to each of the group's cores.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from topology.model import Cable, End, Fabric, Tier
from topology.ports import MAX_PORT_NUMBER, Kind
from topology.rates import lane_gbps


@dataclass(frozen=True, slots=True)
class FatTreeSpec:
    pods: int = 16
    hosts_per_pod: int = 32
    rails: int = 8
    spines_per_pod: int = 8
    cores_per_group: int = 8
    leaf_spine_cables: int = 4
    spine_core_cables: int = 4
    radix: int = 64
    speed: str = "NDR"
    width: int = 4

    @property
    def leaf_ports(self) -> int:
        return self.hosts_per_pod + self.spines_per_pod * self.leaf_spine_cables

    @property
    def spine_ports(self) -> int:
        return self.rails * self.leaf_spine_cables + self.cores_per_group * self.spine_core_cables

    @property
    def core_ports(self) -> int:
        return self.pods * self.spine_core_cables

    @property
    def switches(self) -> int:
        return self.pods * (self.rails + self.spines_per_pod) + self.spines_per_pod * self.cores_per_group

    @property
    def cables(self) -> int:
        per_pod = self.hosts_per_pod * self.rails + self.rails * self.spines_per_pod * self.leaf_spine_cables
        return self.pods * per_pod + self.pods * self.spines_per_pod * self.cores_per_group * self.spine_core_cables

    def problems(self) -> list[str]:
        """Why this spec cannot be built; empty when it can."""
        found = [f"{f.name} must be at least 1" for f in fields(self)
                 if isinstance(getattr(self, f.name), int) and getattr(self, f.name) < 1]
        if lane_gbps(self.speed) is None:
            found.append(f"unknown speed {self.speed!r} (one of SDR, DDR, QDR, FDR, EDR, HDR, NDR, XDR)")
        for tier, used in (("leaf", self.leaf_ports), ("spine", self.spine_ports), ("core", self.core_ports)):
            if used > self.radix:
                found.append(f"a {tier} needs {used} ports but the radix is {self.radix}")
        if self.radix > MAX_PORT_NUMBER:  # the plan readers refuse port numbers past it: so must the generator
            found.append(f"radix {self.radix} is more ports than a switch has (at most {MAX_PORT_NUMBER})")
        return found


PRESETS: dict[str, FatTreeSpec] = {
    # The published 4,088-GPU H100 build: 128 leaf + 128 spine + 64 core switches of 64 ports, 12,288 cables.
    "h100-4k": FatTreeSpec(),
    # Eight times the cables (98,304) and 7.2x the switches: 128 pods; cores need 128 ports (one cable to
    # every spine of their group), leaves and spines still use 64.
    "h100-32k": FatTreeSpec(pods=128, cores_per_group=32, spine_core_cables=1, radix=128),
    # Small enough to read in a test failure or a demo screen.
    "tiny": FatTreeSpec(pods=2, hosts_per_pod=4, rails=2, spines_per_pod=2, cores_per_group=2,
                        leaf_spine_cables=2, spine_core_cables=2, radix=16),
}


def _width(count: int) -> int:
    return max(2, len(str(count)))


def leaf_name(spec: FatTreeSpec, pod: int, rail: int) -> str:
    return f"pod{pod:0{_width(spec.pods)}d}-leaf{rail:0{_width(spec.rails)}d}"


def spine_name(spec: FatTreeSpec, pod: int, spine: int) -> str:
    return f"pod{pod:0{_width(spec.pods)}d}-spine{spine:0{_width(spec.spines_per_pod)}d}"


def core_name(spec: FatTreeSpec, group: int, index: int) -> str:
    return f"core{group:0{_width(spec.spines_per_pod)}d}-{index:0{_width(spec.cores_per_group)}d}"


def host_name(spec: FatTreeSpec, pod: int, host: int) -> str:
    return f"pod{pod:0{_width(spec.pods)}d}-node{host:0{_width(spec.hosts_per_pod)}d}"


def fat_tree(spec: FatTreeSpec, *, disjoint_top: bool = False) -> Fabric:
    """The planned fabric of ``spec``; raises ValueError listing what makes it unbuildable.

    ``disjoint_top`` builds instead the miswiring the published 4,088-GPU build found: every spine of pod
    ``p`` cabled to core group ``p mod groups`` rather than to the group of its own index. Port counts and
    per-leaf path counts stay as planned, but the fabric falls apart into ``groups`` separate networks
    (when there are at least as many pods as groups).
    """
    if problems := spec.problems():
        raise ValueError("; ".join(problems))
    fabric = Fabric(f"generated fat tree ({spec.switches} switches, {spec.cables} cables)", plan=True)
    rate = (lane_gbps(spec.speed) or 0.0) * spec.width

    def switch(name: str, tier: Tier) -> str:
        return fabric.add_device(name, Kind.SWITCH, tier=tier).key

    def cable(a: str, a_port: int | str, b: str, b_port: int) -> None:
        fabric.add_cable(Cable(End(a, str(a_port)), End(b, str(b_port)), spec.width, rate))

    cores = [[switch(core_name(spec, g + 1, k + 1), Tier.CORE) for k in range(spec.cores_per_group)]
             for g in range(spec.spines_per_pod)]
    for p in range(spec.pods):
        leaves = [switch(leaf_name(spec, p + 1, r + 1), Tier.LEAF) for r in range(spec.rails)]
        spines = [switch(spine_name(spec, p + 1, s + 1), Tier.SPINE) for s in range(spec.spines_per_pod)]
        for h in range(spec.hosts_per_pod):
            host = host_name(spec, p + 1, h + 1)
            for r, leaf in enumerate(leaves):
                adapter = fabric.add_device(f"{host} mlx5_{r}", Kind.ADAPTER, tier=Tier.HOST, host=host)
                cable(adapter.key, 1, leaf, h + 1)
        for r, leaf in enumerate(leaves):
            for s, spine in enumerate(spines):
                for c in range(spec.leaf_spine_cables):
                    leaf_port = spec.hosts_per_pod + s * spec.leaf_spine_cables + c + 1
                    cable(leaf, leaf_port, spine, r * spec.leaf_spine_cables + c + 1)
        down = spec.rails * spec.leaf_spine_cables
        groups = spec.spines_per_pod
        for s, spine in enumerate(spines):
            group, slot = (p % groups, (p // groups) * groups + s) if disjoint_top else (s, p)
            for k, core in enumerate(cores[group]):
                for c in range(spec.spine_core_cables):
                    spine_port = down + k * spec.spine_core_cables + c + 1
                    cable(spine, spine_port, core, slot * spec.spine_core_cables + c + 1)
    return fabric


def preset(name: str, **overrides: int | str) -> FatTreeSpec:
    if name not in PRESETS:
        raise KeyError(f"unknown preset {name!r} (one of {', '.join(PRESETS)})")
    return replace(PRESETS[name], **overrides)  # type: ignore[arg-type]
