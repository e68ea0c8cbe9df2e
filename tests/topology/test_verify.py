from __future__ import annotations

import io

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from topology.faults import FaultCounts, copy_fabric, plant
from topology.formats.ndt import parse_ndt
from topology.generate import PRESETS, FatTreeSpec, fat_tree
from topology.model import Cable, End, Fabric
from topology.verify import MiswireKind, verify

TINY = fat_tree(PRESETS["tiny"])
H100 = fat_tree(PRESETS["h100-4k"])


def plan_of(text: str) -> Fabric:
    return parse_ndt(io.StringIO("StartDevice,StartPort,EndDevice,EndPort\n" + text), "plan.csv")


def test_plan_against_itself_matches() -> None:
    report = verify(H100, copy_fabric(H100, H100.cables, "copy"))
    assert report.matches
    assert report.summary() | {} == {
        "planned": 12288, "actual": 12288, "ok": 12288, "missing": 0, "miswired": 0, "unexpected": 0,
        "degraded": 0, "partitions": 1, "planned_partitions": 1, "unknown_devices": 0, "absent_devices": 0,
        "odd_names": 0, "leaves_below_guard": 0, "plan_conflicts": 0,
    }
    assert all(leaf.actual.paths == leaf.planned.paths == 1024 for leaf in report.leaves)
    assert len(report.leaves) == 128


def test_each_planted_category_is_found_exactly() -> None:
    planted = plant(H100, FaultCounts(missing=3, swapped=2, wrong_device=2, degraded=2, unexpected=1), seed=3)
    report = verify(H100, planted.fabric)
    assert {c.key for c in report.missing} == {c.key for c in planted.missing}
    swaps = [m for m in report.miswired if m.kind is MiswireKind.SWAPPED]
    assert {m.expected.key for m in swaps} == {c.key for pair in planted.swapped for c in pair}
    for m in swaps:
        assert m.swapped_with is not None and len(m.actual) == 2
    moved = [m for m in report.miswired if m.kind is MiswireKind.WRONG_DEVICE]
    assert {m.expected.key for m in moved} == {c.key for c in planted.wrong_device}
    assert {d.planned.key for d in report.degraded} == {c.key for c in planted.degraded}
    assert all(d.actual.width == 1 and d.expected_width == 4 for d in report.degraded)
    assert [c.key for c in report.unexpected] == [c.key for c in planted.unexpected]
    assert report.unknown_devices == sorted(["lab-node1 mlx5_0", "unplanned-lab-sw1", "unplanned-sw1"])
    assert not report.matches
    s = report.summary()
    assert (s["missing"], s["miswired"], s["degraded"], s["unexpected"]) == (3, 6, 2, 1)
    assert s["ok"] == 12288 - 3 - 6 - 2


def test_cable_on_a_different_device_is_one_miswire_not_missing_plus_extra() -> None:
    plan = plan_of("leaf1,Port 1,spine1,Port 1\nleaf1,Port 2,spine2,Port 1\n")
    actual = plan_of("leaf1,Port 1,spine9,Port 5\nleaf1,Port 2,spine2,Port 1\n")
    report = verify(plan, actual)
    assert (len(report.missing), len(report.unexpected), len(report.ok)) == (0, 0, 1)
    [miswire] = report.miswired
    assert miswire.kind is MiswireKind.WRONG_DEVICE
    assert report.to_dict()["miswired"][0] == {
        "kind": "wrong_device", "expected": "leaf1/Port 1 - spine1/Port 1", "actual": ["leaf1/Port 1 - spine9/Port 5"],
        "origin": "plan.csv:2",
    }


def test_wrong_port_on_the_right_device() -> None:
    plan = plan_of("leaf1,Port 1,spine1,Port 1\n")
    actual = plan_of("leaf1,Port 1,spine1,Port 2\n")
    [miswire] = verify(plan, actual).miswired
    assert miswire.kind is MiswireKind.WRONG_PORT


def test_swapped_pair_is_recognised() -> None:
    plan = plan_of("leaf1,Port 1,spine1,Port 1\nleaf1,Port 2,spine2,Port 1\n")
    actual = plan_of("leaf1,Port 1,spine2,Port 1\nleaf1,Port 2,spine1,Port 1\n")
    report = verify(plan, actual)
    assert [m.kind for m in report.miswired] == [MiswireKind.SWAPPED, MiswireKind.SWAPPED]
    assert report.to_dict()["miswired"][0]["swapped_with"] == "leaf1/Port 2 - spine2/Port 1"


def test_direction_and_case_do_not_matter() -> None:
    plan = plan_of("Leaf1,Port 1,SPINE1,Port 1\n")
    actual = plan_of("spine1,1,leaf1,port 1\n")
    assert verify(plan, actual).matches


def test_unexpected_cable_on_unused_ports() -> None:
    plan = plan_of("leaf1,Port 1,spine1,Port 1\n")
    actual = plan_of("leaf1,Port 1,spine1,Port 1\nleaf1,Port 9,spine1,Port 9\n")
    report = verify(plan, actual)
    assert [actual.describe_cable(c) for c in report.unexpected] == ["leaf1/Port 9 - spine1/Port 9"]
    assert not report.miswired and not report.missing


def test_degraded_against_plan_rate_and_against_the_fabric_norm() -> None:
    plan = parse_ndt(io.StringIO("StartDevice,StartPort,EndDevice,EndPort,Speed,Width\n"
                                 "a,Port 1,b,Port 1,NDR,4x\na,Port 2,b,Port 2,,\na,Port 3,b,Port 3,,\n"), "p.csv")
    actual = Fabric("actual")
    for name in ("a", "b"):
        actual.add_device(name, plan.devices[name].kind)
    for port, width, speed in (("1", 4, 200.0), ("2", 4, 400.0), ("3", 1, 100.0)):
        actual.add_cable(Cable(End("a", port), End("b", port), width, speed))
    report = verify(plan, actual)
    assert sorted(d.planned.a.port for d in report.degraded) == ["1", "3"]  # HDR below planned NDR; 1x straggler


def test_eight_disjoint_networks_are_found() -> None:
    report = verify(H100, fat_tree(PRESETS["h100-4k"], disjoint_top=True))
    assert len(report.components) == 8
    assert [len(c) for c in report.components] == [40] * 8  # 2 pods x 16 switches + one core group of 8
    assert report.planned_components == 1
    assert not report.matches
    # Every leaf keeps its 1,024 paths, but reaches only the 8 cores of one group instead of all 64.
    assert {(leaf.actual.paths, leaf.actual.tops_reached) for leaf in report.leaves} == {(1024, 8)}
    assert report.leaves[0].ratio == pytest.approx(1 / 8)


def test_missing_uplinks_show_in_paths_to_core() -> None:
    spec = PRESETS["tiny"]
    leaf = "pod01-leaf01"
    uplinks = [c for c in TINY.cables if leaf in (c.a.device, c.b.device) and "spine" in c.b.device]
    actual = copy_fabric(TINY, [c for c in TINY.cables if c not in uplinks[:3]], "cut")
    report = verify(TINY, actual)
    worst = report.leaves[0]
    per_uplink = spec.cores_per_group * spec.spine_core_cables
    assert worst.leaf == leaf
    assert (worst.planned.paths, worst.actual.paths) == (4 * per_uplink, 1 * per_uplink)
    assert [leaf.leaf for leaf in report.leaves_below_guard] == [leaf]


def test_plan_without_hosts_has_no_tiers() -> None:
    plan = plan_of("sw1,Port 1,sw2,Port 1\n")
    report = verify(plan, plan)
    assert not report.tiers_known and report.leaves == [] and report.matches


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    counts=st.builds(FaultCounts, missing=st.integers(0, 6), swapped=st.integers(0, 4),
                     wrong_device=st.integers(0, 4), degraded=st.integers(0, 4), unexpected=st.integers(0, 3)),
    seed=st.integers(0, 2**16),
    spec=st.sampled_from([PRESETS["tiny"], FatTreeSpec(pods=3, hosts_per_pod=3, rails=3, spines_per_pod=2,
                                                       cores_per_group=3, leaf_spine_cables=2,
                                                       spine_core_cables=1, radix=12)]),
)
def test_every_planned_cable_lands_in_exactly_one_category(
    counts: FaultCounts, seed: int, spec: FatTreeSpec
) -> None:
    plan = fat_tree(spec)
    planted = plant(plan, counts, seed)
    report = verify(plan, planted.fabric)
    buckets = [
        [c.key for c in report.ok], [c.key for c in report.missing],
        [m.expected.key for m in report.miswired], [d.planned.key for d in report.degraded],
    ]
    flat = [k for bucket in buckets for k in bucket]
    assert sorted(flat) == sorted(c.key for c in plan.cables)
    assert len(report.missing) == counts.missing
    assert len(report.miswired) == 2 * counts.swapped + counts.wrong_device
    assert len(report.degraded) == counts.degraded
    assert len(report.unexpected) == counts.unexpected
    assert report.matches == (counts == FaultCounts())
