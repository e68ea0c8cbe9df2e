from __future__ import annotations

import pytest

from topology.ports import Kind, PortLabelError, display_port, parse_end, switch_port
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
