from __future__ import annotations

import contextlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from topology.ports import (
    Kind,
    PortLabelError,
    bounded_number,
    director_asic,
    display_port,
    excerpt,
    parse_end,
    switch_port,
)
from topology.rates import lane_gbps, parse_total_gbps, parse_width, parse_width_speed


@pytest.mark.parametrize(("text", "label"), [
    ("Port 21", "21"), ("21", "21"), ("port 007", "7"), (" Port  3 ", "3"),
    ("1/3/1", "1/3/1"), ("Port 1/03/2", "1/3/2"), ("Port P1/2/1", "p1/2/1"),
    ("Blade 16_Port 2/20", "Blade 16_Port 2/20"), ("blade 03_port 1/07", "Blade 3_Port 1/7"),
    ("abra", None), ("", None), ("Port", None), ("mlx5_0", None),
])
def test_switch_port_labels(text: str, label: str | None) -> None:
    assert switch_port(text) == label


def test_display_port() -> None:
    assert display_port("21") == "Port 21"
    assert display_port("Blade 3_Port 1/7") == "Blade 3_Port 1/7"


@pytest.mark.parametrize(("device", "port", "expected"), [
    ("leaf1", "Port 4", ("leaf1", Kind.SWITCH, "4", None)),
    ("SAT1", "SAT1 ibp11s0f0", ("SAT1 ibp11s0f0", Kind.ADAPTER, "1", "SAT1")),
    ("node7", "mlx5_3", ("node7 mlx5_3", Kind.ADAPTER, "1", "node7")),
    ("Server 1 IB Port 1", "IB Port 1", ("Server 1 IB Port 1 IB Port 1", Kind.ADAPTER, "1", "Server 1 IB Port 1")),
    ("luna-0001 mlx5_10", "1", ("luna-0001 mlx5_10", Kind.ADAPTER, "1", "luna-0001")),
    ("luna-0001 mlx5_10", "HCA-2/2", ("luna-0001 mlx5_10", Kind.ADAPTER, "2", "luna-0001")),
])
def test_parse_end(device: str, port: str, expected: tuple[str, Kind, str, str | None]) -> None:
    end = parse_end(device, port)
    assert (end.device, end.kind, end.port, end.host) == expected


@pytest.mark.parametrize(("device", "port"), [("sw1", "abra"), ("luna-0001 mlx5_10", "Port x"), ("", "Port 1")])
def test_parse_end_rejects(device: str, port: str) -> None:
    with pytest.raises(PortLabelError):
        parse_end(device, port)


def test_rates() -> None:
    assert [parse_width(w) for w in ("4x", "IB_4x", "1X", "4", 2, "wide", None, 0)] == [4, 4, 1, 4, 2, None, None, None]
    assert lane_gbps("ndr") == 100.0 and lane_gbps("bogus") is None
    assert parse_total_gbps("200000") == 200.0
    assert parse_total_gbps("400G") == 400.0
    assert parse_total_gbps("200G HDR cable") == 200.0
    assert parse_total_gbps("HDR", lanes=2) == 100.0
    assert parse_total_gbps("fast") is None
    assert parse_width_speed("4xHDR") == (4, 200.0)
    assert parse_width_speed("1xNDR") == (1, 100.0)
    assert parse_width_speed("nonsense") == (None, None)


# --- numbers out of range: refused before int() sees them -----------------------------------------------------

HUGE = "9" * 5000


@pytest.mark.parametrize("label", [
    "Port 1025", HUGE, f"Port {HUGE}", f"1/{HUGE}/1", f"{HUGE}/1/1", f"Blade {HUGE}_Port 1/1", "Port 0" + HUGE,
])
def test_port_numbers_out_of_range_are_no_labels(label: str) -> None:
    assert switch_port(label) is None
    with pytest.raises(PortLabelError, match=r"port number .* is out of range \(at most 1024\)"):
        parse_end("leaf1", label)


def test_port_numbers_up_to_the_bound_and_leading_zeros() -> None:
    assert switch_port("Port 1024") == "1024"
    assert switch_port("0" * 5000 + "7") == "7"
    assert bounded_number("1024") == 1024 and bounded_number("1025") is None and bounded_number(HUGE) is None
    with pytest.raises(PortLabelError, match="out of range"):
        parse_end("luna-0001 mlx5_10", f"HCA-1/{HUGE}")


def test_director_asic_numbers_out_of_range() -> None:
    with pytest.raises(PortLabelError, match="out of range"):
        director_asic(f"MCS8500/L{HUGE}/U1")
    with pytest.raises(PortLabelError, match="out of range"):
        director_asic("L1/U1/2000")


def test_long_values_are_quoted_short() -> None:
    with pytest.raises(PortLabelError) as caught:
        parse_end("sw1", "x" * 5000)
    assert len(str(caught.value)) < 300 and "(5000 characters)" in str(caught.value)
    assert excerpt("short") == "'short'"


def test_rates_out_of_range() -> None:
    assert [parse_width(w) for w in ("12x", "13x", "16", HUGE, f"{HUGE}x", "-4x", "nan", 13, -1)] == [
        12, None, None, None, None, None, None, None, None]
    assert parse_total_gbps("2400G") == 2400.0
    assert [parse_total_gbps(t) for t in ("2401G", HUGE, "0", "0.0G", "nan", "inf", "   ")] == [None] * 7
    assert parse_width_speed(f"{HUGE}xHDR") == (None, None)
    assert parse_width_speed("13xNDR") == (None, None)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60) | st.from_regex(r"(?i)(port |blade )?\d{0,9}([/_]\d{0,9}){0,3}", fullmatch=True)
       | st.sampled_from([f"Port {HUGE}", f"1/{HUGE}/1", "²/1/1", f"Blade 1_Port {HUGE}/1", f"L1/U{HUGE}", "4²x"]))
def test_label_readers_return_or_raise_port_label_errors_only(text: str) -> None:
    label = switch_port(text)
    assert label is None or switch_port(label) == label, "a canonical label reads as itself"
    try:
        end = parse_end("sw1", text)
    except PortLabelError as exc:
        assert "\n" not in str(exc)
    else:
        assert end.port
    with contextlib.suppress(PortLabelError):
        director_asic(text)
    parse_width(text)
    parse_total_gbps(text)
    parse_width_speed(text)
