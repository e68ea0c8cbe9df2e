"""What the engine keeps of a read of UFM's topology, made again from plain values (``fabric.controller.reading``).

The engine takes the view's UFM names, the cables up below plan and the ports UFM shows disabled out of a reading as
plain values, drops the reading and makes them again, so that nothing it keeps holds the reading's memory. These
check that what is made again answers as the view made from the reading does, holds the plan's own ends, and that
nothing kept refers to the reading.
"""

from __future__ import annotations

import weakref

from fabric.controller.reading import kept_of
from fabric.remediation.view import build_view, fabric_context
from fabric.ufm.snapshot import UfmTopology
from topology.formats.ufm_render import named_as_ufm
from topology.generate import PRESETS, fat_tree
from topology.model import Cable, End, Fabric, Tier
from topology.ports import Kind


def _as_built() -> tuple[Fabric, Fabric, Cable]:
    """The tiny plan, and UFM's reading of it as another set of objects: named as UFM names them, with a switch
    port the plan does not cable, a name not of UFM's form, a host UFM shows no GUID of, and one cable up at 1x."""
    plan = fat_tree(PRESETS["tiny"])
    actual = fat_tree(PRESETS["tiny"])
    named_as_ufm(actual)
    switch = next(device for device in actual.devices.values() if device.kind is Kind.SWITCH)
    actual.port_names[f"{switch.guid}_99"] = End(switch.key, "99")
    actual.port_names["gateway-port"] = End(switch.key, "98")
    host = next(device for device in actual.devices.values() if device.tier is Tier.HOST)
    host.guid = None
    slow = actual.cables[0]
    narrow = Cable(slow.a, slow.b, 1, slow.speed_gbps, "link 0")
    actual.cables[0] = actual.by_end[slow.a] = actual.by_end[slow.b] = narrow
    return plan, actual, narrow


def test_made_again_it_answers_as_the_view_of_the_reading_and_holds_the_plan_s_ends() -> None:
    plan, actual, narrow = _as_built()
    context = fabric_context(plan)
    direct = build_view(plan, actual, context)
    reading = UfmTopology(actual, len(actual.devices), len(actual.port_names), 0, frozenset({"gateway-port"}))
    kept = kept_of(plan, context, reading)
    view, below, disabled = kept.restored(plan, context)

    assert view.resolver.guids == direct.resolver.guids and len(view.resolver.guids) == len(plan.devices) - 1
    assert dict(view.resolver.ports.items()) == dict(direct.resolver.ports.items()) == actual.port_names
    assert view.resolver.hosts == direct.resolver.hosts
    assert view.plan_keys == direct.plan_keys
    planned = {id(end) for cable in plan.cables for end in cable.key}
    for name, end in view.resolver.ports.items():
        assert view.resolver.ports.name_of(end) == direct.resolver.ports.name_of(end) == name
        assert (id(end) in planned) == (end in plan.by_end), (name, end)  # the plan's own object where it cables it
    assert kept.live == direct.live_cables(actual) and len(kept.live) == len(plan.cables)
    assert below == {narrow.key: narrow} and below[narrow.key].origin == "link 0"
    assert disabled == {"gateway-port"}
    assert kept.figures.cables == len(plan.cables) and kept.figures.systems == len(actual.devices)


def test_nothing_kept_refers_to_the_reading() -> None:
    plan, actual, _ = _as_built()
    context = fabric_context(plan)
    as_built = weakref.ref(actual)
    kept = kept_of(plan, context, UfmTopology(actual, 0, 0, 0, frozenset()))
    del actual
    assert as_built() is None
    view, _, _ = kept.restored(plan, context)
    plan_devices = set(map(id, plan.devices))
    assert all(id(key) in plan_devices for key in view.resolver.guids.values())
