"""The node-name-map file: written as OpenSM and infiniband-diags read it, read back, bad lines refused."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from topology.errors import InputError
from topology.formats.nodenamemap import parse_node_name_map, render_node_name_map

GUIDS = st.integers(1, 2**64 - 1).map(lambda n: f"{n:016x}")
NAMES = st.text(st.characters(codec="utf-8", exclude_characters='"'), min_size=1, max_size=30).filter(
    lambda name: name.isprintable() and name == name.strip())


@given(st.dictionaries(GUIDS, NAMES, max_size=20))
def test_what_is_written_reads_back_the_same(names: dict[str, str]) -> None:
    text = render_node_name_map(sorted(names.items()), ["a header"])
    assert parse_node_name_map(text, "map") == names


def test_the_format_is_guid_then_quoted_name() -> None:
    assert render_node_name_map([("B8599F0000000001", "pod01-leaf01")]) == '0xb8599f0000000001 "pod01-leaf01"\n'
    assert parse_node_name_map('# c\n\n  0x1 "core 1"  # a comment\n', "map") == {"0000000000000001": "core 1"}


@pytest.mark.parametrize(("text", "message"), [
    ("0x1 core1\n", 'map:1: not a node-name-map entry (0x<guid> "<name>")'),
    ('0x1 "a"\n0x01 "b"\n', "map:2: GUID 0x0000000000000001 is named twice"),
])
def test_a_bad_line_is_refused_naming_it(text: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_node_name_map(text, "map")
    assert str(caught.value).startswith(message)


def test_a_name_the_format_cannot_hold_is_refused() -> None:
    with pytest.raises(InputError, match="cannot go in a node-name-map"):
        render_node_name_map([("1", 'say "hi"')])
