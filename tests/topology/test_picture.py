"""The fat-tree picture: the layout of a plan, the cables it marks (exactly those given), names escaped, the pod-level
view of a large fabric. The SVG is read back with ``xml.etree``, as a browser would parse it."""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from topology.generate import PRESETS, fat_tree, preset
from topology.guard import CapacityGuard
from topology.model import Fabric
from topology.picture import (
    OVERVIEW_PODS,
    CableMark,
    CableState,
    Layout,
    LeafFigures,
    fabric_svg,
    guard_figures,
    layout_of,
    legend_svg,
    pod_svg,
)
from topology.printable import visible

SVG = "{http://www.w3.org/2000/svg}"


@cache
def _plan(name: str) -> Fabric:
    return fat_tree(PRESETS[name])


@cache
def _layout(name: str) -> Layout:
    return layout_of(_plan(name))


def _marked(svg: str) -> set[tuple[str, str]]:
    return {(element.attrib["data-cable"], element.attrib["data-state"])
            for element in ET.fromstring(svg).iter() if "data-cable" in element.attrib}


def _marks(plan: Fabric, indices: list[int], states: list[CableState]) -> list[CableMark]:
    cables = [plan.cables[i % len(plan.cables)] for i in indices]
    return [CableMark(c.a.device, c.b.device, state, plan.describe_cable(c)) for c, state in zip(cables, states,
                                                                                                  strict=False)]


def test_the_layout_of_the_reference_fabric_is_its_tiers_pods_and_core_groups() -> None:
    layout = layout_of(_plan("h100-4k"))
    assert len(layout.pods) == 16 and len(layout.core_groups) == 8 and not layout.others
    assert all(len(pod.spines) == 8 and len(pod.leaves) == 8 and pod.hosts == (32,) * 8 for pod in layout.pods)
    assert all(len(group) == 8 for group in layout.core_groups)
    assert layout.pods[0].leaves[0] == "pod01-leaf01" and layout.pods[15].spines[7] == "pod16-spine08"
    # a core group is the cores one spine index reaches
    assert layout.core_groups[2] == tuple(f"core03-{k:02d}" for k in range(1, 9))


def test_pods_are_numbered_in_the_order_of_their_names_numbers_as_numbers() -> None:
    plan = fat_tree(preset("tiny", pods=11, radix=32))
    renamed = Fabric("unpadded", plan=True)
    for device in plan.devices.values():  # pod09 -> pod9: "pod10" sorts before "pod9" as text
        renamed.add_device(device.name.replace("pod0", "pod"), device.kind, tier=device.tier, host=device.host)
    for cable in plan.cables:
        renamed.add_cable(dataclasses.replace(cable, a=cable.a._replace(device=cable.a.device.replace("pod0", "pod")),
                                              b=cable.b._replace(device=cable.b.device.replace("pod0", "pod"))))
    pods = layout_of(renamed).pods
    assert [pod.leaves[0] for pod in pods] == [f"pod{n}-leaf01" for n in range(1, 12)]
    assert [pod.number for pod in pods] == list(range(1, 12))


@settings(max_examples=40, deadline=None)
@given(indices=st.lists(st.integers(0, 10**6), max_size=12, unique=True),
       states=st.lists(st.sampled_from(list(CableState)), min_size=12, max_size=12))
def test_the_picture_marks_exactly_the_cables_given_in_their_states(indices: list[int],
                                                                    states: list[CableState]) -> None:
    plan = _plan("tiny")
    marks = _marks(plan, indices, states)
    svg = fabric_svg(_layout("tiny"), marks, {})
    assert _marked(svg) == {(mark.cable, mark.state.value) for mark in marks}


def test_every_cable_of_the_reference_fabric_can_be_marked_host_cables_on_their_leafs_hosts() -> None:
    plan = _plan("h100-4k")
    marks = _marks(plan, list(range(0, len(plan.cables), 97)), [CableState.DISABLED] * len(plan.cables))
    root = ET.fromstring(fabric_svg(layout_of(plan), marks, {}))
    lines = [element for element in root.iter(f"{SVG}line") if "data-cable" in element.attrib]
    assert len(lines) == len(marks)
    assert not any(element.attrib.get("data-place") == "other" for element in root.iter())  # every end was placed


def test_a_cable_to_a_switch_off_the_plan_draws_that_switch_in_a_row_of_its_own() -> None:
    plan = _plan("tiny")
    mark = CableMark("pod01-spine01", "unplanned-sw1", CableState.UNEXPECTED, "pod01-spine01/9 - unplanned-sw1/1")
    root = ET.fromstring(fabric_svg(layout_of(plan), [mark], {}))
    others = [element.attrib["data-device"] for element in root.iter() if element.attrib.get("data-place") == "other"]
    assert others == ["unplanned-sw1"]
    assert _marked(ET.tostring(root, encoding="unicode")) == {(mark.cable, "unexpected")}


names = st.text(st.characters(codec="utf-8"), min_size=1, max_size=40) | st.sampled_from(
    ["<img src=x onerror=alert(1)>", "<script>alert(1)</script>", "a\"b'c&d", "]]><x/>", "\x00\x1b[2J", "\u202eevil"])


@settings(max_examples=40, deadline=None)
@given(name=names, cable=names)
def test_hostile_names_are_text_in_the_svg(name: str, cable: str) -> None:
    layout = _layout("tiny")
    hostile = dataclasses.replace(layout, names={**layout.names, "pod01-leaf01": name})
    figures = {"pod01-leaf01": LeafFigures(3, 4, 8)}
    mark = CableMark("pod01-leaf01", "pod01-spine01", CableState.MISSING, cable)
    for svg in (fabric_svg(hostile, [mark], figures), pod_svg(hostile, 1, [mark], figures)):
        root = ET.fromstring(svg)  # well-formed whatever the names
        assert {element.tag for element in root.iter()} <= {f"{SVG}{tag}" for tag in
                                                            ("svg", "g", "rect", "line", "text", "title", "a")}
        devices = [element for element in root.iter() if element.attrib.get("data-device") == visible(name)]
        assert len(devices) == 1
        assert devices[0].findtext(f"{SVG}title") == f"leaf {visible(name)}"
        assert _marked(svg) == {(visible(cable), "missing")}


def test_leaf_bars_show_paths_against_the_guard_minimum() -> None:
    plan = _plan("tiny")
    guard = CapacityGuard(plan)
    figures = guard_figures(guard) | {"pod02-leaf01": LeafFigures(paths=2, minimum=6, planned=8)}
    root = ET.fromstring(fabric_svg(layout_of(plan), [], figures))
    bars = {element.attrib["data-leaf"]: element.attrib for element in root.iter() if "data-paths" in element.attrib}
    assert set(bars) == set(guard.planned)
    assert bars["pod02-leaf01"]["data-health"] == "below" and bars["pod02-leaf01"]["data-minimum"] == "6"
    assert bars["pod01-leaf01"]["data-health"] == "planned"
    assert bars["pod01-leaf01"]["data-paths"] == str(guard.planned["pod01-leaf01"])


@pytest.fixture(scope="module")
def large() -> Layout:
    """h100-32k's layout (2,304 switches): its plan takes a few seconds to generate, once for the module."""
    return _layout("h100-32k")


def test_a_fabric_past_the_overview_threshold_starts_one_block_per_pod(large: Layout) -> None:
    assert len(large.pods) > OVERVIEW_PODS
    leaf = large.pods[41].leaves[3]
    spine = large.pods[6].spines[2]
    core = large.core_groups[2][5]
    marks = [CableMark(leaf, large.pods[41].spines[0], CableState.DEFERRED, "a"),
             CableMark(leaf, "pod042-node001 mlx5_3", CableState.DOWN, "b"),
             CableMark(spine, core, CableState.DISABLED, "c")]
    figures = {leaf: LeafFigures(paths=100, minimum=192, planned=256)}
    root = ET.fromstring(fabric_svg(large, marks, figures, pod_href=lambda n: f"/ui/fabric?pod={n}"))
    blocks = {int(element.attrib["data-pod"]): element.attrib
              for element in root.iter() if "data-pod" in element.attrib}
    assert sorted(blocks) == list(range(1, 129))
    assert not [element for element in root.iter() if element.attrib.get("data-place") in ("leaf", "spine")]
    assert blocks[42]["data-health"] == "below" and blocks[42]["data-marks"] == "2"
    assert blocks[42]["data-state"] == "deferred"  # the more severe of deferred and down
    assert blocks[7]["data-state"] == "disabled" and blocks[1]["data-marks"] == "0"
    assert {element.attrib["href"] for element in root.iter(f"{SVG}a")} == {f"/ui/fabric?pod={n}" for n in blocks}
    assert _marked(ET.tostring(root, encoding="unicode")) == {("c", "disabled")}  # the spine-core cable, to its core


def test_one_pod_opens_on_its_own_with_its_switches_and_marks(large: Layout) -> None:
    pod = large.pods[41]
    marks = [CableMark(pod.leaves[0], pod.spines[0], CableState.QUARANTINED, "in"),
             CableMark(large.pods[0].leaves[0], large.pods[0].spines[0], CableState.DISABLED, "elsewhere")]
    root = ET.fromstring(pod_svg(large, 42, marks, {}))
    drawn = {element.attrib["data-device"] for element in root.iter() if element.attrib.get("data-place") in
             ("leaf", "spine")}
    assert drawn == {*pod.leaves, *pod.spines}
    assert _marked(ET.tostring(root, encoding="unicode")) == {("in", "quarantined")}
    with pytest.raises(KeyError):
        pod_svg(large, 129, [], {})


def test_the_legend_names_each_state_asked_for() -> None:
    states = [CableState.MISSING, CableState.MISWIRED]
    root = ET.fromstring(legend_svg(states))
    assert [element.attrib["data-legend"] for element in root.iter() if "data-legend" in element.attrib] == [
        "missing", "miswired"]
    assert "pod: filled" in legend_svg(states, pods=True) and "pod: filled" not in legend_svg(states)


def test_the_daemons_plan_index_draws_a_link_component_from_what_it_holds() -> None:
    """The console's path: the API process has the plan's index, not the plan; a link component's two devices and
    its name are a mark."""
    from fabric.api.plan_index import plan_index

    plan = _plan("tiny")
    index = plan_index(plan)
    assert index.layout == _layout("tiny")
    links = sorted(index.links)[::7]
    marks = []
    for link in links:
        ends = index.link_devices(link)
        assert ends is not None
        marks.append(CableMark(*ends, CableState.DISABLED, link))
    assert _marked(fabric_svg(index.layout, marks, guard_figures(CapacityGuard(plan)))) == {
        (link, "disabled") for link in links}


def test_switches_of_no_known_tier_and_many_ends_off_the_plan_wrap_within_the_pictures_width() -> None:
    layout = dataclasses.replace(_layout("tiny"), others=tuple(f"lab{n}" for n in range(40)),
                                 names={**_layout("tiny").names, **{f"lab{n}": f"lab{n}" for n in range(40)}})
    marks = [CableMark("pod01-spine01", f"stray{n}", CableState.UNEXPECTED, f"s{n}") for n in range(60)]
    root = ET.fromstring(fabric_svg(layout, marks, {}))
    width = float(root.attrib["width"])
    others = [element for element in root.iter() if element.attrib.get("data-place") == "other"]
    assert len(others) == 100
    assert all(float(element.attrib["x"]) + float(element.attrib["width"]) <= width for element in others)
    assert _marked(ET.tostring(root, encoding="unicode")) == {(f"s{n}", "unexpected") for n in range(60)}
