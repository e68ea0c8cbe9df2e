"""UFM's port names held by node GUID and port number (``fabric.remediation.signals.PortNames``).

The view held two maps of every port name (name -> end, end -> name: 196,608 names on h100-32k); ``PortNames``
holds them by GUID and number and renders a name when asked. These check that it answers exactly what the two
maps answered, for names of UFM's form and of any other, an end named twice (the last name is its name, as a map
made of all of them kept it) and a device under two GUIDs (a director's ASICs).
"""

from __future__ import annotations

import marshal

from hypothesis import given, settings
from hypothesis import strategies as st

from fabric.remediation.signals import PortNames
from fabric.remediation.view import build_view
from topology.formats.ufm_render import named_as_ufm
from topology.generate import PRESETS, fat_tree
from topology.model import End

GUIDS = ("b8599f0000000001", "b8599f0000000002", "b8599f00000000aa")
DEVICES = ("leaf01", "spine01", "node01 mlx5_0")
PORTS = ("0", "1", "2", "7", "64", "01", "1/2", "9999", "10000")

numbered = st.builds(lambda guid, port: f"{guid}_{port}", st.sampled_from(GUIDS), st.sampled_from(PORTS))
# Not of UFM's form: upper case, 0x, no port, no GUID, a space, 15 digits, an Arabic-Indic digit one.
other = st.sampled_from(("B8599F0000000001_1", "0xb8599f0000000001_1", "b8599f0000000001", "_1", "", "x_1",
                         "b8599f0000000001_1 ", "b8599f000000001_1", "b8599f0000000001_\u0661"))
ends = st.builds(End, st.sampled_from(DEVICES), st.sampled_from(PORTS))
names = st.dictionaries(st.one_of(numbered, other), ends, max_size=24)
asked = st.one_of(numbered, other)


@settings(max_examples=400, deadline=None)
@given(names, st.lists(asked, max_size=8), st.lists(ends, max_size=8))
def test_answers_what_the_two_maps_answered(given_names: dict[str, End], more_names: list[str],
                                            more_ends: list[End]) -> None:
    ports = PortNames(given_names.items())
    inverse = {end: name for name, end in given_names.items()}
    assert len(ports) == len(given_names)
    assert sorted(ports) == sorted(given_names)
    assert dict(ports.items()) == given_names
    for name in [*given_names, *more_names]:
        assert ports.get(name) == given_names.get(name)
        assert ports.get(name, End("none", "0")) == given_names.get(name, End("none", "0"))
        assert (name in ports) == (name in given_names)
    for end in [*given_names.values(), *more_ends]:
        assert ports.name_of(end) == inverse.get(end)


def test_the_view_of_a_fabric_as_ufm_names_it() -> None:
    plan = fat_tree(PRESETS["tiny"])
    named_as_ufm(plan)
    view = build_view(plan, plan)
    ports = view.resolver.ports
    assert dict(ports.items()) == plan.port_names
    assert {end: ports.name_of(end) for end in plan.by_end} == {end: name for name, end in plan.port_names.items()}


def test_a_device_under_two_guids_and_an_end_named_twice() -> None:
    director = {"b8599f0000000001_1": End("director", "1"), "b8599f0000000002_2": End("director", "2"),
                "b8599f0000000002_3": End("director", "3/1"), "b8599f00000000aa_5": End("leaf", "5"),
                "b8599f00000000aa_6": End("leaf", "5")}
    ports = PortNames(director.items())
    assert [ports.name_of(End("director", port)) for port in ("1", "2", "3/1", "3")] == [
        "b8599f0000000001_1", "b8599f0000000002_2", "b8599f0000000002_3", None]
    assert ports.name_of(End("leaf", "5")) == "b8599f00000000aa_6"


@settings(max_examples=300, deadline=None)
@given(names, st.lists(asked, max_size=8), st.lists(ends, max_size=8))
def test_made_again_from_plain_values_it_answers_the_same(given_names: dict[str, End], more_names: list[str],
                                                         more_ends: list[End]) -> None:
    """``as_values`` then ``from_values`` (the engine keeps its reading so, ``fabric.controller.reading``): the same
    answers to every question, each end given back as the object the numbers name."""
    ports = PortNames(given_names.items())
    numbered_ends: list[End] = []
    numbers: dict[End, int] = {}

    def number_of(end: End) -> int:
        if end not in numbers:
            numbers[end] = len(numbered_ends)
            numbered_ends.append(End(*end))  # an equal end, another object: the one that must come back
        return numbers[end]

    values = ports.as_values(number_of)
    again = PortNames.from_values(marshal.loads(marshal.dumps(values)), numbered_ends)
    assert len(again) == len(ports) and sorted(again) == sorted(ports)
    for name in [*given_names, *more_names]:
        found = again.get(name)
        assert found == ports.get(name)
        assert found is None or found is numbered_ends[numbers[found]]
    for end in [*given_names.values(), *more_ends]:
        assert again.name_of(end) == ports.name_of(end)
