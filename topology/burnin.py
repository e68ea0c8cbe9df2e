"""A burn-in workload for a planned fabric: stages of host pairs that, between them, put traffic on every cable.

Each pair runs one bidirectional RDMA write stream per rail both hosts have: a host's adapters (each cabled port)
in the order of their names are its rails 0, 1, ..., and rail ``r`` of one host only ever talks to rail ``r`` of
the other, as collective libraries do on a rail-optimised fabric. A stream loads both adapters' own cables in full
and spreads between their leaves over the shortest paths (``topology.pathload``); a cable's expected load in a
stage is the sum of its shares of the stage's streams, in units of one stream per direction (one adapter's line
rate when the fabric is non-blocking).

The pairs: the hosts ordered by the switches their rails reach (on a fat tree, their pod), host ``i`` with host
``i + n/2``, so that while no such group holds more than half the hosts every pair crosses groups and its streams
climb through the spines (and cores) of both. Stages take these pairs in order, ``stage_size`` at a time. Cables
that still carry nothing (a plan that is no clean fat tree, an odd host out) are then taken greedily: the pair of
host groups whose streams load most of them, again and again, packed into stages where no host is in two pairs.
What no pair of hosts can load (a cable on no shortest path between two hosts' switches) is reported, not hidden.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations

from topology.model import Fabric
from topology.pathload import PathLoads
from topology.ports import Kind


@dataclass(frozen=True, slots=True)
class Rail:
    """One cabled adapter port of a host."""

    adapter: str
    """The adapter's node description (``pod01-node01 mlx5_3``)."""
    interface: str
    """The adapter's name on its host, for ``ib_write_bw -d`` (``mlx5_3``)."""
    port: str
    cable: int
    """Its cable's index in ``fabric.cables``."""
    switch: str
    """The switch (key) at the cable's far end: where its streams enter the fabric."""


@dataclass(frozen=True, slots=True)
class Host:
    name: str
    rails: tuple[Rail, ...]

    @property
    def reach(self) -> tuple[str, ...]:
        """The switch of each rail: hosts alike in it load the same switch cables."""
        return tuple(rail.switch for rail in self.rails)


@dataclass(frozen=True, slots=True)
class Pair:
    first: Host
    second: Host

    @property
    def rails(self) -> range:
        """The rails both hosts have: one stream each."""
        return range(min(len(self.first.rails), len(self.second.rails)))


@dataclass(slots=True)
class Stage:
    pairs: list[Pair]
    load: dict[int, float] = field(default_factory=dict)
    """Expected load per cable index (streams per direction); cables that carry nothing are absent."""


@dataclass(slots=True)
class BurninPlan:
    fabric: Fabric
    hosts: list[Host]
    stage_size: int
    stages: list[Stage]
    uncovered: list[int]
    """Cables (indices) no stage loads."""


def _natural(text: str) -> tuple[tuple[int, str], ...]:
    """Sort key that puts ``mlx5_2`` before ``mlx5_10``."""
    return tuple((int(part), "") if part.isdigit() else (-1, part) for part in re.split(r"(\d+)", text.casefold()))


def plan_hosts(fabric: Fabric) -> list[Host]:
    """Every host with a cabled adapter, its rails in the order of its adapters' names and ports."""
    rails: dict[str, list[Rail]] = defaultdict(list)
    for index, cable in enumerate(fabric.cables):
        for near, far in ((cable.a, cable.b), (cable.b, cable.a)):
            adapter, switch = fabric.devices[near.device], fabric.devices[far.device]
            if adapter.kind is Kind.ADAPTER and switch.kind is Kind.SWITCH:
                interface = adapter.name.split(maxsplit=1)[-1]
                rails[adapter.host_name].append(Rail(adapter.name, interface, near.port, index, switch.key))
    return [Host(name, tuple(sorted(found, key=lambda r: (_natural(r.adapter), _natural(r.port)))))
            for name, found in sorted(rails.items(), key=lambda item: _natural(item[0]))]


def stream_load(paths: PathLoads, pairs: Iterable[Pair]) -> dict[int, float]:
    """Each cable's expected load under ``pairs`` (see the module docstring)."""
    load: dict[int, float] = defaultdict(float)
    between: Counter[tuple[str, str]] = Counter()
    for pair in pairs:
        for r in pair.rails:
            one, other = pair.first.rails[r], pair.second.rails[r]
            load[one.cable] += 1.0
            load[other.cable] += 1.0
            between[(one.switch, other.switch)] += 1
    for (one_switch, other_switch), streams in between.items():
        for cable, share in paths.shares(one_switch, other_switch).items():
            load[cable] += share * streams
    return dict(load)


def _halves(hosts: list[Host]) -> tuple[list[Pair], list[Host]]:
    """Host ``i`` with host ``i + n/2`` of the hosts grouped by reach, largest group first; and the odd one out."""
    groups: dict[tuple[str, ...], list[Host]] = defaultdict(list)
    for host in hosts:
        groups[host.reach].append(host)
    ordered = [host for group in sorted(groups.values(), key=len, reverse=True) for host in group]
    half = len(ordered) // 2
    pairs = [Pair(ordered[i], ordered[i + half]) for i in range(half)]
    return pairs, ordered[2 * half:]


def _chunks(pairs: Sequence[Pair], size: int) -> list[list[Pair]]:
    return [list(pairs[start:start + size]) for start in range(0, len(pairs), size)]


def _mending_pairs(paths: PathLoads, hosts: list[Host], missing: set[int]) -> list[Pair]:
    """Pairs that load the cables in ``missing``: greedily, the pair of host groups (by reach) whose streams load
    the most of those still missing, until none loads any more. A group paired with itself needs two hosts."""
    groups: dict[tuple[str, ...], list[Host]] = defaultdict(list)
    for host in hosts:
        groups[host.reach].append(host)
    members = list(groups.values())
    candidates = [Pair(group[0], group[1]) for group in members if len(group) > 1]
    candidates += [Pair(one[0], other[0]) for one, other in combinations(members, 2)]
    loaded = [(pair, set(stream_load(paths, [pair])) & missing) for pair in candidates]
    chosen: list[Pair] = []
    while missing:
        best, gained = max(((pair, len(cables & missing)) for pair, cables in loaded), key=lambda c: c[1],
                           default=(None, 0))
        if best is None or gained == 0:
            break
        chosen.append(best)
        missing -= next(cables for pair, cables in loaded if pair is best)
    return chosen


def _packed(pairs: list[Pair], size: int) -> list[list[Pair]]:
    """``pairs`` in stages of at most ``size``, no host in two pairs of a stage: each into the first that takes it."""
    stages: list[tuple[list[Pair], set[str]]] = []
    for pair in pairs:
        names = {pair.first.name, pair.second.name}
        home = next((s for s in stages if len(s[0]) < size and not names & s[1]), None)
        if home is None:
            home = ([], set())
            stages.append(home)
        home[0].append(pair)
        home[1].update(names)
    return [stage for stage, _ in stages]


def plan_burnin(fabric: Fabric, stage_size: int) -> BurninPlan:
    """The staged workload for ``fabric`` (see the module docstring); ``stage_size``: most pairs in a stage."""
    if stage_size < 1:
        raise ValueError(f"a stage needs room for at least one pair, not {stage_size}")
    hosts = plan_hosts(fabric)
    paths = PathLoads(fabric)
    halves, odd = _halves(hosts)
    stages = [Stage(pairs, stream_load(paths, pairs)) for pairs in _chunks(halves, stage_size)]
    missing = set(range(len(fabric.cables))).difference(*(stage.load for stage in stages))
    if missing or odd:
        mending = _mending_pairs(paths, hosts, missing)
        if odd and not any(odd[0] in (pair.first, pair.second) for pair in mending):
            partner = next((host for host in hosts if host is not odd[0]), None)
            if partner is not None:
                mending.append(Pair(odd[0], partner))
        stages += [Stage(pairs, stream_load(paths, pairs)) for pairs in _packed(mending, stage_size)]
    uncovered = sorted(set(range(len(fabric.cables))).difference(*(stage.load for stage in stages)))
    return BurninPlan(fabric, hosts, stage_size, stages, uncovered)
