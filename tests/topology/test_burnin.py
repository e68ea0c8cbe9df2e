"""The burn-in planner: every cable loaded, no host twice in a stage, rails matched; loads against networkx."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from itertools import pairwise

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from topology.burnin import plan_burnin
from topology.generate import FatTreeSpec, fat_tree
from topology.graph import fabric_graph
from topology.model import Fabric
from topology.pathload import PathLoads
from topology.ports import Kind

specs = st.builds(
    FatTreeSpec, pods=st.integers(1, 4), hosts_per_pod=st.integers(1, 5), rails=st.integers(1, 3),
    spines_per_pod=st.integers(1, 3), cores_per_group=st.integers(1, 3), leaf_spine_cables=st.integers(1, 2),
    spine_core_cables=st.integers(1, 2), radix=st.just(64))


def _without(fabric: Fabric, dropped: set[int]) -> Fabric:
    """``fabric`` less the cables at ``dropped``: no longer a clean fat tree."""
    thinner = Fabric(fabric.source, plan=True)
    for device in fabric.devices.values():
        thinner.add_device(device.name, device.kind, tier=device.tier, host=device.host)
    for index, cable in enumerate(fabric.cables):
        if index not in dropped:
            thinner.add_cable(cable)
    return thinner


@settings(max_examples=60, deadline=None)
@given(spec=specs, stage_size=st.integers(1, 12), data=st.data())
def test_every_reachable_cable_is_loaded_and_stages_keep_their_rules(spec: FatTreeSpec, stage_size: int,
                                                                     data: st.DataObject) -> None:
    fabric = fat_tree(spec)
    switch_cables = [i for i, c in enumerate(fabric.cables)
                     if fabric.devices[c.a.device].kind is fabric.devices[c.b.device].kind is Kind.SWITCH]
    dropped = set(data.draw(st.lists(st.sampled_from(switch_cables), max_size=3))) if switch_cables else set()
    fabric = _without(fabric, dropped)
    plan = plan_burnin(fabric, stage_size)

    for stage in plan.stages:
        assert 1 <= len(stage.pairs) <= stage_size
        hosts = Counter(name for pair in stage.pairs for name in (pair.first.name, pair.second.name))
        assert max(hosts.values()) == 1, "a host in two pairs of one stage"
        for pair in stage.pairs:
            assert pair.first.name != pair.second.name
            for r in pair.rails:  # rails matched: the same adapter of each host (mlx5_r in a generated plan)
                assert pair.first.rails[r].interface == pair.second.rails[r].interface == f"mlx5_{r}"
    loaded = set().union(*(stage.load for stage in plan.stages))
    assert loaded.isdisjoint(plan.uncovered) and loaded | set(plan.uncovered) == set(range(len(fabric.cables)))
    for index in plan.uncovered:
        assert not _loadable(fabric, index), f"{fabric.describe_cable(fabric.cables[index])} could be loaded"


def _loadable(fabric: Fabric, index: int) -> bool:
    """Whether any two adapters of different hosts on one rail (the same mlx5_r) would load the cable at
    ``index`` in an even spread over shortest paths: decided by networkx over every such pair."""
    cable = fabric.cables[index]
    ends = {cable.a.device, cable.b.device}
    graph = fabric_graph(fabric)
    adapters = [key for key, device in fabric.devices.items() if device.kind is Kind.ADAPTER]
    for one in adapters:
        for other in adapters:
            a, b = fabric.devices[one], fabric.devices[other]
            if a.host_name == b.host_name or a.name.split()[-1] != b.name.split()[-1]:
                continue
            if one in ends or other in ends:
                return True
            try:
                paths = list(nx.all_shortest_paths(graph, one, other))
            except nx.NetworkXNoPath:
                continue
            if any(ends <= set(path) and abs(path.index(cable.a.device) - path.index(cable.b.device)) == 1
                   for path in paths):
                return True
    return False


@settings(max_examples=40, deadline=None)
@given(spec=specs, data=st.data())
def test_shares_are_the_even_spread_over_shortest_edge_paths(spec: FatTreeSpec, data: st.DataObject) -> None:
    """Each cable's share of a flow between two switches: the shortest paths through it (parallel cables each a
    path of their own) over all of them, counted by networkx from the node paths and the cables between."""
    fabric = fat_tree(spec)
    switches = sorted(key for key, device in fabric.devices.items() if device.kind is Kind.SWITCH)
    source, target = data.draw(st.sampled_from(switches)), data.draw(st.sampled_from(switches))
    shares = PathLoads(fabric).shares(source, target)

    graph = nx.MultiGraph()
    graph.add_nodes_from(switches)
    between: dict[frozenset[str], list[int]] = {}
    for index, cable in enumerate(fabric.cables):
        if cable.a.device in graph and cable.b.device in graph:
            graph.add_edge(cable.a.device, cable.b.device)
            between.setdefault(frozenset((cable.a.device, cable.b.device)), []).append(index)
    expected: defaultdict[int, float] = defaultdict(float)
    if source != target and nx.has_path(graph, source, target):
        node_paths = list(nx.all_shortest_paths(graph, source, target))
        weights = [math.prod(len(between[frozenset(hop)]) for hop in pairwise(path))
                   for path in node_paths]
        for path, weight in zip(node_paths, weights, strict=True):
            for hop in pairwise(path):
                cables = between[frozenset(hop)]
                for index in cables:
                    expected[index] += weight / len(cables) / sum(weights)
    assert shares.keys() == expected.keys()
    for index, share in shares.items():
        assert share == pytest.approx(expected[index])
    if shares:  # a flow crosses each layer whole: what leaves the source sums to one stream
        first_hop = [i for i in shares if source in (fabric.cables[i].a.device, fabric.cables[i].b.device)]
        assert sum(shares[i] for i in first_hop) == pytest.approx(1.0)


def test_a_clean_fat_tree_is_loaded_evenly() -> None:
    """h100-4k with room for every host: one stage, each pair across pods, every cable at one stream per direction
    (the fabric is non-blocking)."""
    plan = plan_burnin(fat_tree(FatTreeSpec()), 256)
    assert len(plan.stages) == 1 and not plan.uncovered
    loads = plan.stages[0].load
    assert len(loads) == 12288 and min(loads.values()) == pytest.approx(1.0) == max(loads.values())


def test_a_stage_size_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one pair"):
        plan_burnin(fat_tree(FatTreeSpec(pods=1, hosts_per_pod=2, rails=1)), 0)
