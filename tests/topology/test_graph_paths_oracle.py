"""An independent oracle for paths to core: networkx counts them on the graph view, the guard keeps them in counters.

The guard's definition (``topology.capacity``): ``paths(top) = 1`` and ``paths(s)`` sums ``paths(u)`` over every
live cable from ``s`` up to a switch ``u`` one tier higher, parallel cables each counting. So a leaf's paths
are the edge paths that climb one tier per cable from the leaf to a top switch: networkx counts them with
``all_simple_edge_paths`` on a directed multigraph of the live uplinks, each cable an arc of its own.
"""

from __future__ import annotations

from datetime import UTC, datetime

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from topology.capacity import leaf_paths
from topology.generate import FatTreeSpec, fat_tree, preset
from topology.graph import cable_key, fabric_graph
from topology.guard import CapacityGuard
from topology.model import TIER_RANK, Fabric, Tier

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def uplinks(graph: nx.MultiGraph) -> nx.MultiDiGraph:
    """Each live switch-switch cable as an arc from its lower end to its upper end, one tier apart."""
    rank = {n: TIER_RANK[Tier(t)] for n, t in graph.nodes(data="tier") if Tier(t) in TIER_RANK}
    climbing = nx.MultiDiGraph()
    climbing.add_nodes_from(n for n, r in rank.items() if r > TIER_RANK[Tier.HOST])
    for a, b, key in graph.edges(keys=True):
        if a in climbing and b in climbing and abs(rank[a] - rank[b]) == 1:
            lower, upper = (a, b) if rank[a] < rank[b] else (b, a)
            climbing.add_edge(lower, upper, key=key)
    return climbing


def oracle(plan: Fabric, out: set[str]) -> dict[str, tuple[int, int]]:
    """Per leaf: (edge paths up to the top tier, top switches reached), over the cables not in ``out``."""
    graph = fabric_graph(plan)
    graph.remove_edges_from([(a, b, key) for a, b, key in graph.edges(keys=True) if key in out])
    climbing = uplinks(graph)
    tier = nx.get_node_attributes(graph, "tier")
    top = max(TIER_RANK[Tier(tier[n])] for n in climbing)
    tops = [n for n in climbing if TIER_RANK[Tier(tier[n])] == top]
    result = {}
    for leaf in (n for n in climbing if tier[n] == Tier.LEAF):
        paths = sum(1 for _ in nx.all_simple_edge_paths(climbing, leaf, tops, cutoff=top - TIER_RANK[Tier.LEAF]))
        reached = len(set(tops) & nx.descendants(climbing, leaf))
        result[leaf] = (paths, reached)
    return result


small_specs = st.builds(
    lambda pods, rails, spines, cores, ls, sc: preset(
        "tiny", pods=pods, hosts_per_pod=1, rails=rails, spines_per_pod=spines, cores_per_group=cores,
        leaf_spine_cables=ls, spine_core_cables=sc, radix=64),
    st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.integers(1, 3),
)
OPERATIONS = ("mark_down", "mark_up", "take_out", "put_back")


@settings(max_examples=60, deadline=None)
@given(small_specs, st.data())
def test_guard_paths_to_core_equal_networkx_count(spec: FatTreeSpec, data: st.DataObject) -> None:
    plan = fat_tree(spec)
    guard = CapacityGuard(plan)
    guarded = [c for c in plan.cables if guard.guards(c.key)]
    assert guard.planned == {leaf: paths for leaf, (paths, _) in oracle(plan, set()).items()}
    # Cables go down and come back in any order, as UFM events and the engine's own actions would have them.
    steps = data.draw(st.lists(st.tuples(st.sampled_from(OPERATIONS), st.sampled_from(guarded)), max_size=30))
    down: set[str] = set()  # which cables are out, kept here rather than read back from the guard
    for operation, cable in steps:
        if operation == "take_out":
            guard.take_out(cable.key, T0)
        else:
            getattr(guard, operation)(cable.key)
        (down.add if operation in ("mark_down", "take_out") else down.discard)(cable_key(plan, cable))
    expected = oracle(plan, down)
    assert {leaf: guard.paths[leaf] for leaf in guard.planned} == {leaf: p for leaf, (p, _) in expected.items()}
    live = [c for c in plan.cables if cable_key(plan, c) not in down]
    tiers = {d.key: d.tier for d in plan.devices.values()}
    assert {leaf: (lp.paths, lp.tops_reached) for leaf, lp in leaf_paths(tiers, live).items()} == expected
