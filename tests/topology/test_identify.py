"""``topology.identify``: switches under factory names named after the plan from the hosts they serve."""

from __future__ import annotations

import random
from functools import cache

from hypothesis import given, settings
from hypothesis import strategies as st
from support import ibnetdiscover_text

from topology.factory import factory_named
from topology.faults import copy_fabric
from topology.formats.ibnetdiscover import parse_ibnetdiscover
from topology.formats.nodenamemap import parse_node_name_map, render_node_name_map
from topology.identify import MIN_EXACT, Confidence, Identification, identify
from topology.model import Cable, End, Fabric, Tier
from topology.ports import Kind
from topology.verify import verify


@cache
def _plan(name: str) -> Fabric:
    from topology.generate import PRESETS, fat_tree

    return fat_tree(PRESETS[name])


def _miswired(plan: Fabric, swapped: list[int], missing: list[int]) -> Fabric:
    """``plan`` with the far ends of cables ``swapped`` (indexes, two by two) exchanged, host cables included, and
    cables ``missing`` left out: the as-built fabric of careless hands."""
    cables = list(plan.cables)
    for i, j in zip(swapped[::2], swapped[1::2], strict=False):
        first, second = cables[i], cables[j]
        cables[i], cables[j] = Cable(first.a, second.b), Cable(second.a, first.b)
    gone = set(missing)
    kept = [c for n, c in enumerate(cables) if n not in gone and c.a.device != c.b.device]
    return copy_fabric(plan, kept, "miswired")


def _one_percent_wrong(plan: Fabric, seed: int) -> Fabric:
    rng = random.Random(seed)
    wrong = rng.sample(range(len(plan.cables)), len(plan.cables) // 100)
    half = len(wrong) // 2
    return _miswired(plan, wrong[:half], wrong[half:])


def test_one_percent_of_cables_wrong_still_names_99_percent_right_and_none_wrongly() -> None:
    plan = _plan("h100-4k")
    for seed in (1, 2):
        hidden = factory_named(_one_percent_wrong(plan, seed), seed)
        found = identify(plan, hidden.fabric)
        right = [m for m in found.switches if m.planned == hidden.planned[m.key]]
        wrong = [m for m in found.switches if m.planned is not None and m.planned != hidden.planned[m.key]]
        assert wrong == []
        assert len(right) >= 0.99 * len(found.switches)
        assert all(m.confidence is Confidence.UNIQUE for m in right)


def test_a_fabric_cabled_as_planned_is_named_whole_guid_only_switches_too() -> None:
    plan = _plan("tiny")
    hidden = factory_named(plan, 3, guid_only=0.5)
    found = identify(plan, hidden.fabric)
    assert {m.key: m.planned for m in found.switches} == hidden.planned
    assert any(m.name == m.guid for m in found.switches) and found.not_found == []
    assert verify(plan, _through(found, hidden.fabric)).matches


def _through(found: Identification, fabric: Fabric) -> Fabric:
    from topology.relabel import relabelled

    return relabelled(fabric, found.names(), "named")


def _brute_force_fits(plan: Fabric, actual: Fabric, named: dict[str, str], switch: str) -> dict[str, tuple[int, int]]:
    """Every planned switch's (exact, near) for ``switch``, counted cable by cable, candidate by candidate."""
    fits = {}
    for candidate in (d.key for d in plan.switches()):
        exact = near = 0
        for cable in actual.cables:
            for mine, far in ((cable.a, cable.b), (cable.b, cable.a)):
                if mine.device != switch or far.device not in named:
                    continue
                neighbour = named[far.device]
                planned = plan.by_end.get(End(neighbour, far.port))
                if planned is not None and planned.other(End(neighbour, far.port)) == End(candidate, mine.port):
                    exact += 1
                if any({c.a.device, c.b.device} == {neighbour, candidate} for c in plan.cables):
                    near += 1
        fits[plan.devices[candidate].name] = (exact, near)
    return fits


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_never_unique_when_another_candidate_fits_as_well(data: st.DataObject) -> None:
    """Cables swapped and removed at random on the tiny preset: each switch named ``unique`` fits its name strictly
    better than any other planned switch, by an independent count over all of them, and no name is given twice."""
    plan = _plan("tiny")
    indexes = st.lists(st.integers(0, len(plan.cables) - 1), max_size=24, unique=True)
    actual = _miswired(plan, data.draw(indexes), data.draw(indexes))
    found = identify(plan, actual)
    named = {key: key for key, d in actual.devices.items() if d.kind is Kind.ADAPTER and key in plan.devices}
    named |= {key: name.casefold() for key, name in found.names().items()}
    for match in found.switches:
        if match.confidence is not Confidence.UNIQUE:
            continue
        assert match.planned is not None
        fits = _brute_force_fits(plan, actual, named, match.key)
        best = fits.pop(match.planned)
        assert best[0] >= MIN_EXACT and all(other < best for other in fits.values()), (match, best, fits)
    names = [m.planned for m in found.switches if m.planned]
    assert len(names) == len(set(names))


def test_candidates_that_tie_are_ambiguous_with_the_ports_that_would_separate_them() -> None:
    """A switch cabled to one host of rail 0 on its port 1 and one of rail 1 on its port 2 fits leaf 1 and leaf 2
    of the pod alike."""
    plan = _plan("tiny")
    stray = Fabric("as-built")
    for device in plan.devices.values():
        if device.kind is Kind.ADAPTER:
            stray.add_device(device.name, device.kind, host=device.host)
    stray.add_device("MQM9790 MT2301X00001", Kind.SWITCH, guid="b8599f0000000001")
    stray.add_device("MQM9790 MT2301X00002", Kind.SWITCH, guid="b8599f0000000002")
    stray.add_cable(Cable(End("pod01-node01 mlx5_0", "1"), End("mqm9790 mt2301x00001", "1")))
    stray.add_cable(Cable(End("pod01-node02 mlx5_1", "1"), End("mqm9790 mt2301x00001", "2")))
    found = identify(plan, stray)
    tied, alone = found.switches
    assert (tied.confidence, tied.planned) == (Confidence.AMBIGUOUS, None)
    assert {c.name for c in tied.candidates[:2]} == {"pod01-leaf01", "pod01-leaf02"}
    assert "fit alike" in tied.why and "would separate them" in tied.why and "pod01-node01 mlx5_1" in tied.why
    assert (alone.confidence, alone.planned) == (Confidence.UNMATCHED, None)
    assert "no cable reaches" in alone.why
    assert len(found.not_found) == len(list(plan.switches()))


def test_the_node_name_map_read_back_by_the_ibnetdiscover_reader_gives_the_planned_names() -> None:
    plan = _plan("tiny")
    hidden = factory_named(plan, 7)
    dump = ibnetdiscover_text(hidden.fabric).splitlines()
    as_read = parse_ibnetdiscover(dump, "fresh.ibnet")
    found = identify(plan, as_read)
    text = render_node_name_map(((m.guid or "", m.planned or "") for m in found.switches), ["from the test"])
    assert text.startswith("# from the test\n0x") and text.count('"') == 2 * len(found.switches)
    renamed = parse_ibnetdiscover(dump, "fresh.ibnet", parse_node_name_map(text, "names.map"))
    assert {d.name for d in renamed.switches()} == {d.name for d in plan.switches()}
    summary = verify(plan, renamed).summary()  # the dump says HDR where the plan says NDR: degraded, not miscabled
    assert (summary["missing"], summary["miswired"], summary["unexpected"]) == (0, 0, 0)


@settings(max_examples=25, deadline=None)
@given(pods=st.integers(1, 3), hosts=st.integers(1, 4), rails=st.integers(1, 3), spines=st.integers(1, 3),
       cores=st.integers(1, 3), up=st.integers(1, 2), top=st.integers(1, 2), seed=st.integers(0, 99))
def test_a_fabric_cabled_as_planned_is_named_right_whatever_its_shape(pods: int, hosts: int, rails: int, spines: int,
                                                                      cores: int, up: int, top: int, seed: int) -> None:
    """No name is wrong; and a tier is named whole when the tier below is and each of its switches has at least
    ``MIN_EXACT`` cables down to it (the evidence a name needs)."""
    from topology.generate import FatTreeSpec, fat_tree

    plan = fat_tree(FatTreeSpec(pods=pods, hosts_per_pod=hosts, rails=rails, spines_per_pod=spines,
                                cores_per_group=cores, leaf_spine_cables=up, spine_core_cables=top, radix=64))
    hidden = factory_named(plan, seed)
    found = identify(plan, hidden.fabric)
    leaves = hosts >= MIN_EXACT
    spines_named = leaves and rails * up >= MIN_EXACT
    named_tiers = {Tier.LEAF: leaves, Tier.SPINE: spines_named, Tier.CORE: spines_named and pods * top >= MIN_EXACT}
    for match in found.switches:
        truth = hidden.planned[match.key]
        assert match.planned in (None, truth)
        if named_tiers[plan.devices[truth.casefold()].tier]:
            assert match.planned == truth, match
