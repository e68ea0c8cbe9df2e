"""Per-leaf max flow to the top tier: what a path count misses (a cable running below its width)."""

from __future__ import annotations

import io
from collections import defaultdict
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from topology.bandwidth import leaf_bandwidth
from topology.faults import copy_fabric
from topology.formats.ndt import parse_ndt
from topology.generate import PRESETS, FatTreeSpec, fat_tree, preset
from topology.model import Cable, Fabric, Tier
from topology.verify import verify

TINY = fat_tree(PRESETS["tiny"])


def tiers_of(fabric: Fabric) -> dict[str, Tier]:
    return {d.key: d.tier for d in fabric.devices.values()}


def narrowed(cable: Cable) -> Cable:
    """The cable trained at 1x: a quarter of a 4x cable's rate."""
    return replace(cable, width=1, speed_gbps=(cable.speed_gbps or 0) / (cable.width or 4))


def closed_form(cables: list[Cable], tiers: dict[str, Tier]) -> dict[str, float]:
    """A three-tier leaf alone: each spine passes on at most what it can send up, so the flow is the sum over
    its spines of min(leaf -> spine, spine -> every core). No max-flow algorithm involved."""
    up: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for c in cables:
        pair = {tiers.get(c.a.device): c.a.device, tiers.get(c.b.device): c.b.device}
        for lower, upper in ((Tier.LEAF, Tier.SPINE), (Tier.SPINE, Tier.CORE)):
            if lower in pair and upper in pair:
                up[pair[lower]][pair[upper]] += c.speed_gbps or 0.0
    return {leaf: sum(min(rate, sum(up[spine].values())) for spine, rate in up[leaf].items())
            for leaf, tier in tiers.items() if tier is Tier.LEAF}


def test_a_1x_uplink_costs_bandwidth_but_no_path() -> None:
    uplink = next(c for c in TINY.cables if c.a.device == "pod01-leaf01" and "spine" in c.b.device)
    built = copy_fabric(TINY, [narrowed(c) if c.key == uplink.key else c for c in TINY.cables], "built")
    report = verify(TINY, built, bandwidth=True)
    [paths] = [leaf for leaf in report.leaves if leaf.leaf == "pod01-leaf01"]
    assert paths.actual.paths == paths.planned.paths == 16  # the path count sees nothing
    assert report.bandwidth is not None and report.bandwidth.rates_known
    worst = report.bandwidth.leaves[0]
    # Two spines, two 400 Gb/s cables to each: 1600 planned; one cable at 100 leaves 1300.
    assert (worst.leaf, worst.planned_gbps, worst.gbps) == ("pod01-leaf01", 1600.0, 1300.0)
    assert all(leaf.gbps == leaf.planned_gbps == 1600.0 for leaf in report.bandwidth.leaves[1:])
    section = report.to_dict(worst=2)["bandwidth"]
    assert section["seconds"] >= 0 and section["rates_known"] is True
    assert {k: section[k] for k in ("leaves", "below_plan", "below_guard", "guard")} == {
        "leaves": 4, "below_plan": 1, "below_guard": 0, "guard": 0.75}
    assert section["worst"][0] == {"leaf": "pod01-leaf01", "planned_gbps": 1600.0, "gbps": 1300.0,
                                   "ratio": 0.8125, "planned_paths": 16, "paths": 16}
    assert len(section["worst"]) == 2


def test_not_computed_unless_asked_for() -> None:
    report = verify(TINY, TINY)
    assert report.bandwidth is None and "bandwidth" not in report.to_dict()


def test_below_the_guard_and_a_leaf_cut_off() -> None:
    cut, tiers = "pod02-leaf02", tiers_of(TINY)
    # Its hosts stay cabled (it is still a leaf); all its uplinks are gone.
    cables = [c for c in TINY.cables if cut not in (c.a.device, c.b.device) or Tier.HOST in (
        tiers[c.a.device], tiers[c.b.device])]
    report = verify(TINY, copy_fabric(TINY, cables, "built"), bandwidth=True)
    assert report.bandwidth is not None
    assert [(leaf.leaf, leaf.gbps) for leaf in report.leaves_below_bandwidth_guard] == [(cut, 0.0)]


def plan_of(text: str, source: str) -> Fabric:
    return parse_ndt(io.StringIO("StartDevice,StartPort,EndDevice,EndPort" + text), source)


TWO_TIER = "\nnode1 mlx5_0,1,leaf1,Port 1\nleaf1,Port 2,spine1,Port 1\nleaf1,Port 3,spine1,Port 2\n"


def test_rates_unknown_on_both_sides() -> None:
    plan = plan_of(TWO_TIER, "plan.csv")
    report = verify(plan, plan_of(TWO_TIER, "built.csv"), bandwidth=True)
    assert report.bandwidth is not None and not report.bandwidth.rates_known and report.bandwidth.leaves == []
    assert report.to_dict()["bandwidth"]["rates_known"] is False


def test_a_plan_without_rates_is_held_to_the_as_built_usual_rate() -> None:
    plan = plan_of(TWO_TIER, "plan.csv")
    built = parse_ndt(io.StringIO(
        "StartDevice,StartPort,EndDevice,EndPort,Speed,Width\nnode1 mlx5_0,1,leaf1,Port 1,200000,4x\n"
        "leaf1,Port 2,spine1,Port 1,200000,4x\nleaf1,Port 3,spine1,Port 2,200000,4x\n"), "built.csv")
    report = verify(plan, built, bandwidth=True)
    assert report.bandwidth is not None
    # Two tiers: the spine is the top; two 200 Gb/s cables from the only leaf.
    assert [(leaf.leaf, leaf.planned_gbps, leaf.gbps) for leaf in report.bandwidth.leaves] == [
        ("leaf1", 400.0, 400.0)]


small_specs = st.builds(
    lambda pods, rails, spines, cores, ls, sc: preset(
        "tiny", pods=pods, hosts_per_pod=1, rails=rails, spines_per_pod=spines, cores_per_group=cores,
        leaf_spine_cables=ls, spine_core_cables=sc, radix=64),
    st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.integers(1, 3), st.integers(1, 3),
)


@settings(max_examples=50, deadline=None)
@given(small_specs, st.data())
def test_max_flow_equals_the_closed_form_of_a_three_tier_tree(spec: FatTreeSpec, data: st.DataObject) -> None:
    plan = fat_tree(spec)
    tiers = tiers_of(plan)
    fate = st.sampled_from(["up", "up", "down", "1x"])
    cables = []
    for cable in plan.cables:
        kind = data.draw(fate) if tiers[cable.a.device] is not Tier.HOST else "up"
        if kind != "down":
            cables.append(narrowed(cable) if kind == "1x" else cable)
    built = copy_fabric(plan, cables, "built")
    assert leaf_bandwidth(built, tiers) == closed_form(cables, tiers)
    assert leaf_bandwidth(plan, tiers) == closed_form(plan.cables, tiers)
