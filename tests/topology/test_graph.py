"""The networkx view of a fabric: one node per device, one edge per cable, scalar attributes only."""

from __future__ import annotations

import io
from collections import Counter

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from topology.formats.ndt import parse_ndt
from topology.generate import PRESETS, FatTreeSpec, fat_tree, preset
from topology.graph import cable_key, fabric_graph
from topology.ports import Kind

SCALARS = (str, int, float, bool)


def assert_scalar_attributes(graph: nx.MultiGraph) -> None:
    for _, data in graph.nodes(data=True):
        assert all(isinstance(v, SCALARS) for v in data.values()), data
    for _, _, data in graph.edges(data=True):
        assert all(isinstance(v, SCALARS) for v in data.values()), data


def test_tiny_fat_tree_as_a_multigraph() -> None:
    plan = fat_tree(PRESETS["tiny"])
    graph = fabric_graph(plan)
    assert graph.is_multigraph() and not graph.is_directed()
    assert graph.number_of_nodes() == len(plan.devices) == 28
    assert graph.number_of_edges() == len(plan.cables) == 48
    assert graph.nodes["pod01-leaf01"] == {"name": "pod01-leaf01", "kind": "switch", "tier": "leaf"}
    assert graph.nodes["pod01-node01 mlx5_0"] == {
        "name": "pod01-node01 mlx5_0", "kind": "adapter", "tier": "host", "host": "pod01-node01"}
    # The tiny preset has two cables between each leaf and spine: two edges, told apart by their ports.
    between = graph["pod01-leaf01"]["pod01-spine01"]
    assert sorted(between) == ["pod01-leaf01/Port 5 - pod01-spine01/Port 1",
                               "pod01-leaf01/Port 6 - pod01-spine01/Port 2"]
    assert between["pod01-leaf01/Port 5 - pod01-spine01/Port 1"] == {"width": 4, "speed_gbps": 400.0}
    assert graph.graph["source"] == plan.source


def test_unknown_attributes_are_left_out_not_written_as_none() -> None:
    plan = parse_ndt(io.StringIO("StartDevice,StartPort,EndDevice,EndPort\nsw1,Port 1,sw2,Port 1\n"), "plan.csv")
    graph = fabric_graph(plan)
    assert graph.nodes["sw1"] == {"name": "sw1", "kind": "switch", "tier": "unknown"}
    [(_, _, data)] = graph.edges(data=True)
    assert data == {"origin": "plan.csv:2"}


def test_guid_and_case_of_names_are_kept() -> None:
    fabric = parse_ndt(io.StringIO("StartDevice,StartPort,EndDevice,EndPort\nLeaf-A,Port 1,Spine-B,Port 7\n"), "p")
    fabric.add_device("Leaf-A", Kind.SWITCH, guid="0xB8599F0000000001")
    graph = fabric_graph(fabric)
    assert graph.nodes["leaf-a"]["name"] == "Leaf-A" and graph.nodes["leaf-a"]["guid"] == "b8599f0000000001"
    assert list(graph.edges(keys=True)) == [("leaf-a", "spine-b", "Leaf-A/Port 1 - Spine-B/Port 7")]


small_specs = st.builds(
    lambda pods, rails, spines, cores, ls, sc, speed: preset(
        "tiny", pods=pods, rails=rails, spines_per_pod=spines, cores_per_group=cores, leaf_spine_cables=ls,
        spine_core_cables=sc, radix=64, speed=speed),
    st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.integers(1, 3),
    st.integers(1, 3), st.sampled_from(["HDR", "NDR", "EDR"]),
)


@settings(max_examples=40, deadline=None)
@given(small_specs)
def test_every_cable_is_one_edge_between_its_devices(spec: FatTreeSpec) -> None:
    plan = fat_tree(spec)
    graph = fabric_graph(plan)
    assert_scalar_attributes(graph)
    assert set(graph.nodes) == set(plan.devices)
    keys = [key for _, _, key in graph.edges(keys=True)]
    assert len(keys) == len(set(keys)) == len(plan.cables)
    assert set(keys) == {cable_key(plan, c) for c in plan.cables}
    pairs = Counter(frozenset((c.a.device, c.b.device)) for c in plan.cables)
    assert all(graph.number_of_edges(*sorted(pair)) == count for pair, count in pairs.items())
