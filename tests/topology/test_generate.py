from __future__ import annotations

from collections import Counter

import pytest

from topology.generate import PRESETS, FatTreeSpec, fat_tree, preset
from topology.model import Tier
from topology.ports import Kind


def test_h100_4k_is_the_published_fabric() -> None:
    fabric = fat_tree(PRESETS["h100-4k"])
    tiers = Counter(d.tier for d in fabric.devices.values())
    assert (tiers[Tier.LEAF], tiers[Tier.SPINE], tiers[Tier.CORE]) == (128, 128, 64)
    assert tiers[Tier.HOST] == 16 * 32 * 8
    assert len(fabric.cables) == 12288
    ports = Counter(end.device for cable in fabric.cables for end in (cable.a, cable.b))
    # Every switch port is used, every adapter has one cable.
    assert {ports[d.key] for d in fabric.switches()} == {64}
    assert {ports[d.key] for d in fabric.devices.values() if d.kind is Kind.ADAPTER} == {1}
    pairs = Counter(frozenset((c.a.device, c.b.device)) for c in fabric.cables)
    assert pairs[frozenset(("pod01-leaf01", "pod01-spine01"))] == 4
    assert pairs[frozenset(("pod01-spine03", "core03-01"))] == 4
    assert pairs[frozenset(("pod01-spine03", "core01-01"))] == 0


def test_rails_go_to_their_leaf() -> None:
    fabric = fat_tree(PRESETS["tiny"])
    for cable in fabric.cables:
        adapter = next((e for e in (cable.a, cable.b) if fabric.devices[e.device].kind is Kind.ADAPTER), None)
        if adapter is not None:
            rail = int(adapter.device.rsplit("mlx5_", 1)[1])
            leaf = cable.other(adapter).device
            assert leaf.endswith(f"leaf{rail + 1:02d}")


def test_8x_preset() -> None:
    spec = PRESETS["h100-32k"]
    assert spec.cables == 8 * PRESETS["h100-4k"].cables
    assert not spec.problems()


def test_spec_counts_match_the_built_fabric() -> None:
    spec = FatTreeSpec(pods=3, hosts_per_pod=5, rails=2, spines_per_pod=3, cores_per_group=2,
                       leaf_spine_cables=2, spine_core_cables=1, radix=16)
    fabric = fat_tree(spec)
    assert len(fabric.cables) == spec.cables
    assert sum(1 for _ in fabric.switches()) == spec.switches


def test_unbuildable_specs_say_why() -> None:
    with pytest.raises(ValueError, match="a leaf needs 96 ports but the radix is 64"):
        fat_tree(preset("h100-4k", hosts_per_pod=64))
    with pytest.raises(ValueError, match="unknown speed 'FAST'"):
        fat_tree(preset("tiny", speed="FAST"))
    with pytest.raises(ValueError, match="pods must be at least 1"):
        fat_tree(preset("tiny", pods=0))
    with pytest.raises(KeyError, match="unknown preset"):
        preset("h200")


def test_a_radix_past_what_plans_may_say_is_refused() -> None:
    """The plan readers refuse port numbers above MAX_PORT_NUMBER, so the generator must not write them."""
    from topology.generate import FatTreeSpec
    from topology.ports import MAX_PORT_NUMBER

    assert any("at most" in p for p in FatTreeSpec(radix=MAX_PORT_NUMBER + 1).problems())
    assert not any("at most" in p for p in FatTreeSpec(radix=MAX_PORT_NUMBER).problems())
