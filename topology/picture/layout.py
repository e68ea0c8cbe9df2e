"""Where every planned switch stands in the picture: core groups on top, then each pod's spines and leaves, and the
hosts of each leaf counted.

Built once from the plan (``layout_of``) and small: device keys and names of the switches, a count of hosts per leaf,
no cable (h100-32k: 2,304 switches, held by the daemon's API process in its ``PlanIndex``). Pods are the groups of
leaves and spines joined by leaf-spine cables; core groups are the cores cabled to the same spines (in a
rail-optimised fat tree, spine ``s`` of every pod reaches core group ``s``). Every group is in the order of its
names, numbers compared as numbers, so ``pod9`` comes before ``pod10`` whether or not the plan pads them.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from topology.model import Fabric, Tier, switch_components
from topology.ports import Kind

_DIGITS = re.compile(r"(\d+)")


class Place(StrEnum):
    """Where a device is drawn."""

    CORE = "core"
    SPINE = "spine"
    LEAF = "leaf"
    OTHER = "other"
    """A planned switch whose tier the plan does not tell."""


@dataclass(frozen=True, slots=True)
class Pod:
    number: int
    """1-based, in the order of the pods' first leaf names: what ``/ui/fabric?pod=N`` names."""
    spines: tuple[str, ...]
    """Device keys (case-folded names), in name order."""
    leaves: tuple[str, ...]
    hosts: tuple[int, ...]
    """Hosts (adapters) cabled to each leaf, in the order of ``leaves``."""


@dataclass(frozen=True, slots=True)
class Layout:
    core_groups: tuple[tuple[str, ...], ...]
    pods: tuple[Pod, ...]
    others: tuple[str, ...]
    """Planned switches of no known tier: drawn in a row of their own."""
    names: Mapping[str, str]
    """Every switch above, by key, to its name as planned."""

    def places(self) -> dict[str, tuple[Place, int]]:
        """Every switch's place and pod number (0 for cores and others)."""
        where: dict[str, tuple[Place, int]] = {}
        for group in self.core_groups:
            where.update((key, (Place.CORE, 0)) for key in group)
        for pod in self.pods:
            where.update((key, (Place.SPINE, pod.number)) for key in pod.spines)
            where.update((key, (Place.LEAF, pod.number)) for key in pod.leaves)
        where.update((key, (Place.OTHER, 0)) for key in self.others)
        return where

    def pod(self, number: int) -> Pod | None:
        return self.pods[number - 1] if 1 <= number <= len(self.pods) else None

    @property
    def switch_count(self) -> int:
        return len(self.names)


def name_order(name: str) -> tuple[tuple[int, int | str], ...]:
    """A sort key comparing runs of digits as numbers: ``pod9`` before ``pod10``."""
    return tuple((1, int(part)) if part.isdigit() else (0, part) for part in _DIGITS.split(name.casefold()) if part)


def layout_of(fabric: Fabric) -> Layout:
    """The picture's layout of ``fabric``'s switches, by the tiers its devices carry (a plan reader infers them)."""
    tiers: dict[Tier, list[str]] = defaultdict(list)
    for device in fabric.switches():
        tiers[device.tier].append(device.key)
    names = {key: fabric.devices[key].name for keys in tiers.values() for key in keys}

    def ordered(keys: list[str] | tuple[str, ...] | set[str]) -> tuple[str, ...]:
        return tuple(sorted(keys, key=lambda key: name_order(names[key])))

    leaves, spines, cores = set(tiers[Tier.LEAF]), set(tiers[Tier.SPINE]), set(tiers[Tier.CORE])
    adapters = {key for key, device in fabric.devices.items() if device.kind is Kind.ADAPTER}
    hosts: Counter[str] = Counter()
    core_spines: dict[str, set[str]] = defaultdict(set)
    in_pods = []
    for cable in fabric.cables:  # one pass, set lookups only: h100-32k has 98,304 cables
        a, b = cable.a.device, cable.b.device
        if a in leaves or b in leaves:
            leaf, other = (a, b) if a in leaves else (b, a)
            if other in adapters:
                hosts[leaf] += 1
            elif other in spines:
                in_pods.append(cable)
        elif a in cores and b in spines:
            core_spines[a].add(b)
        elif b in cores and a in spines:
            core_spines[b].add(a)
    pods: list[Pod] = []
    groups = switch_components(leaves | spines, in_pods)
    for members in sorted((ordered(group) for group in groups), key=lambda group: name_order(names[group[0]])):
        pod_leaves = tuple(key for key in members if key in leaves)
        pod_spines = tuple(key for key in members if key in spines)
        pods.append(Pod(len(pods) + 1, pod_spines, pod_leaves, tuple(hosts[key] for key in pod_leaves)))
    by_spines: dict[frozenset[str], list[str]] = defaultdict(list)
    for core in cores:
        by_spines[frozenset(core_spines[core])].append(core)
    core_groups = sorted((ordered(group) for group in by_spines.values()),
                         key=lambda group: name_order(names[group[0]]))
    others = ordered([key for tier, keys in tiers.items() if tier not in (Tier.LEAF, Tier.SPINE, Tier.CORE)
                      for key in keys])
    return Layout(tuple(core_groups), tuple(pods), others, names)
