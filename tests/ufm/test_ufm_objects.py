"""Port names and event object paths."""

from __future__ import annotations

import pytest

from fabric.ufm.objects import PortEnd, link_ends, normalize_guid, parse_object_path


def test_port_name_round_trip() -> None:
    end = PortEnd.parse("0x1C34DA0300728606_37")
    assert end == PortEnd("1c34da0300728606", 37)
    assert end.name == "1c34da0300728606_37"
    assert str(end) == end.name


@pytest.mark.parametrize("bad", ["", "1c34da0300728606", "1c34da0300728606_", "zz_1", "1c34da0300728606_1_2"])
def test_bad_port_names(bad: str) -> None:
    with pytest.raises(ValueError):
        PortEnd.parse(bad)


def test_normalize_guid() -> None:
    assert normalize_guid("0xABC") == "0000000000000abc"
    with pytest.raises(ValueError):
        normalize_guid("not-a-guid")


def test_ibport_path_on_a_switch() -> None:
    ref = parse_object_path("IBPort", "default(34) / Switch: c931ibsw-leaf01 / NA / 16")
    assert ref.site == "default"
    assert (ref.device_kind, ref.device_name, ref.port_label) == ("Switch", "c931ibsw-leaf01", "16")


def test_ibport_path_on_a_host_keeps_slashes_in_the_port_label() -> None:
    ref = parse_object_path("IBPort", "default / Computer: luna-0218 / NA / HCA-1/1")
    assert (ref.device_kind, ref.device_name, ref.port_label) == ("Computer", "luna-0218", "HCA-1/1")


def test_ibport_path_with_a_split_port_label() -> None:
    ref = parse_object_path("IBPort", "default / Switch: T3-E21-N-U47 / 1/17/1")
    assert (ref.device_name, ref.port_label) == ("T3-E21-N-U47", "1/17/1")


def test_link_path_holds_both_ends() -> None:
    ref = parse_object_path("Link", "default / 9c0591030090e000_33 Switch T3 : fc6a1c0300244e00_8")
    assert ref.ends == (PortEnd("9c0591030090e000", 33), PortEnd("fc6a1c0300244e00", 8))
    assert ref.device_name is None


def test_link_ends_fall_back_to_the_link_down_description() -> None:
    description = (
        "Link went down: (Switch:T3-E21-N-U47:1/17/1)9c0591030090e000:33 - "
        "(Switch:T4-E45-L-U51:1/4/2)fc6a1c0300244e00:8, cable S/N: MT2330FT09118"
    )
    assert link_ends("default", description) == (
        PortEnd("9c0591030090e000", 33),
        PortEnd("fc6a1c0300244e00", 8),
    )


def test_link_with_one_end_only_has_no_ends() -> None:
    assert parse_object_path("Link", "default / 9c0591030090e000_33").ends is None


def test_switch_module_site_and_empty_paths() -> None:
    switch = parse_object_path("Switch", "default / Switch: spine-01")
    assert (switch.device_kind, switch.device_name, switch.port_label) == ("Switch", "spine-01", None)
    module = parse_object_path("Module", "default / Switch: spine-01 / FAN 2")
    assert module.device_name == "spine-01"
    site = parse_object_path("Site", "default(2)")
    assert (site.site, site.device_name) == ("default", None)
    assert parse_object_path("Grid", None).site is None
