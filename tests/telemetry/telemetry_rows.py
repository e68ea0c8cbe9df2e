"""Telemetry samples for tests: UFM Telemetry's CSV written from per-port counters."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from fabric.telemetry.parse import parse_sample
from fabric.telemetry.sample import Sample

T0_US = 1_764_547_200_000_000
"""2025-12-01 00:00 UTC."""
MINUTE_US = 60_000_000
NDR_BPS = 400e9
"""A 4x NDR port: 4 lanes of 100 Gb/s."""
HEADER = ("timestamp", "source_id", "tag", "Node_GUID", "port_guid", "Port_Number", "Symbol_Errors",
          "PortRcvPktsExtended", "PortRcvErrors", "PortRcvRemotePhysicalErrors", "Link_Down_IB", "Module_Temperature",
          "phy_symbol_errors", "fec_mode_active")
"""As UFM's secondary telemetry instance writes it (NVIDIA's PDR plugin simulator's), with two columns not used."""


def port_names(count: int, per_switch: int = 4) -> list[str]:
    """``count`` UFM port names, ``per_switch`` ports to a GUID."""
    return [f"{0xB83FD20300000000 + index // per_switch:016x}_{index % per_switch + 1}" for index in range(count)]


@dataclass
class Row:
    symbol_errors: int = 0
    packets: int = 0
    rcv_errors: int = 0
    remote_errors: int = 0
    link_downed: int = 0
    temperature: str = "40"
    time_us: int | None = None
    """The row's own timestamp; the sample's time when ``None``."""

    def cells(self, name: str, time_us: int) -> dict[str, str]:
        guid, number = name.split("_")
        return {"timestamp": str(self.time_us if self.time_us is not None else time_us), "source_id": f"0x{guid}",
                "tag": "", "Node_GUID": f"0x{guid}", "port_guid": f"0x{guid}", "Port_Number": number,
                "Symbol_Errors": str(self.symbol_errors), "PortRcvPktsExtended": str(self.packets),
                "PortRcvErrors": str(self.rcv_errors), "PortRcvRemotePhysicalErrors": str(self.remote_errors),
                "Link_Down_IB": str(self.link_downed), "Module_Temperature": self.temperature,
                "phy_symbol_errors": "7", "fec_mode_active": "0"}


def csv_body(time_us: int, rows: Mapping[str, Row], columns: Iterable[str] = HEADER) -> bytes:
    columns = list(columns)
    lines = [",".join(columns)]
    for name, row in rows.items():
        cells = row.cells(name, time_us)
        lines.append(",".join(cells[column] for column in columns))
    return ("\n".join(lines) + "\n").encode()


@dataclass
class Feed:
    """The counters of a set of ports, advanced by a test and written as successive samples."""

    names: list[str]
    rows: dict[str, Row] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in self.names:
            self.rows.setdefault(name, Row())

    def sample(self, time_us: int, *, missing: Iterable[str] = ()) -> Sample:
        left_out = set(missing)
        present = {name: replace(row) for name, row in self.rows.items() if name not in left_out}
        return parse_sample(csv_body(time_us, present), f"sample-at-{time_us}")
