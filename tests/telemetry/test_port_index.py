"""PortIndex reads port names a column at a time: the same ports, names and refusals as ``PortEnd.parse``."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fabric.telemetry.ports import PortIndex
from fabric.ufm.objects import PortEnd

SWITCH = "1c34da0300728606"


def test_names_in_other_forms_are_read_as_portend_reads_them() -> None:
    index = PortIndex([f"{SWITCH}_1", f"0x{SWITCH.upper()}_2", f" {SWITCH}_03 ", "abc_4", f"{SWITCH}_0",
                       f"{SWITCH.upper()}_5"])
    assert index.names == (f"{SWITCH}_1", f"{SWITCH}_2", f"{SWITCH}_3", "0000000000000abc_4", f"{SWITCH}_0",
                           f"{SWITCH}_5")
    assert index.find([f"{SWITCH}_3", "0xABC_4", f"{SWITCH}_0", f"{SWITCH}_1", f"{SWITCH}_5"]).tolist() == [
        2, 3, 4, 0, 5]


@pytest.mark.parametrize("name", [f"{SWITCH}:1", f"{SWITCH}_1x", f"{SWITCH}_", f"{SWITCH}1_1", "leaf01/1", ""])
def test_a_name_that_is_no_port_name_is_refused(name: str) -> None:
    with pytest.raises(ValueError, match="watched ports: not a UFM port name"):
        PortIndex([f"{SWITCH}_1", name])


def test_a_port_not_watched_or_no_port_name_is_found_nowhere() -> None:
    index = PortIndex([f"{SWITCH}_1", f"{SWITCH}_2", "0000000000000000_0"])
    names = [f"{SWITCH}_3", "0000000000000001_1", "leaf01/1", f"{SWITCH}_", f"{SWITCH}_2", f"{SWITCH}_1x", "",
             f"{SWITCH}:1"]
    assert index.find(names).tolist() == [-1, -1, -1, -1, 1, -1, -1, -1]


def test_a_port_number_past_16_bits_is_refused_not_taken_for_another_port() -> None:
    """Keys hold a port number in 16 bits: port 65,536 of one node would be port 0 of the next."""
    with pytest.raises(ValueError, match="port number past 65535"):
        PortIndex(["0000000000000001_65536", "0000000000000002_0"])
    index = PortIndex(["0000000000000001_65535", "0000000000000002_0"])
    assert index.find(["0000000000000001_65536", "0000000000000002_0"]).tolist() == [-1, 1]


in_form = st.builds("{}_{}".format, st.text("0123456789abcdef", min_size=16, max_size=16), st.integers(0, 65_535))
other_forms = st.builds(
    "{}{}{}{}{}{}{}".format, st.sampled_from(["", "", " "]), st.sampled_from(["", "0x", "0x", "0x", "0x", "0X"]),
    st.one_of(st.text("0123456789abcdefABCDEF", min_size=16, max_size=16),
              st.text("0123456789abcdefABCDEF", min_size=1, max_size=17)),
    st.sampled_from(["_"] * 15 + [":"]), st.sampled_from(["", "0", "00"]), st.integers(0, 70_000),
    st.sampled_from(["", "", " ", "\t", "x"]))
port_names = st.one_of(in_form, in_form, in_form, other_forms)
"""Mostly UFM's form, else what ``PortEnd.parse`` takes too (``0x``, upper case, fewer digits, leading zeros,
spaces) or refuses (``0X``, 17 digits, another separator, a letter after the number; a port number past 16
bits, here)."""


def _read_one_at_a_time(names: list[str]) -> list[str] | None:
    """What the names are as ``PortEnd`` reads them, one at a time; ``None`` if one is refused."""
    try:
        ends = [PortEnd.parse(name) for name in names]
    except ValueError:
        return None
    return None if any(end.port >= 1 << 16 for end in ends) else [end.name for end in ends]


@given(st.lists(port_names, min_size=1, max_size=12), st.lists(port_names, max_size=6))
def test_columnar_reading_agrees_with_portend_name_by_name(names: list[str], others: list[str]) -> None:
    expected = _read_one_at_a_time(names)
    if expected is None:
        with pytest.raises(ValueError, match="watched ports"):
            PortIndex(names)
        return
    if len(set(expected)) != len(expected):
        with pytest.raises(ValueError, match="named twice"):
            PortIndex(names)
        return
    index = PortIndex(names)
    assert list(index.names) == expected
    assert index.find(names).tolist() == list(range(len(names)))
    assert index.find(expected[::-1]).tolist() == list(range(len(names)))[::-1]
    slot = {name: at for at, name in enumerate(expected)}
    assert index.find(others).tolist() == [slot.get((_read_one_at_a_time([name]) or [""])[0], -1) for name in others]
