"""Wiring plans in the CSV format of UFM's NDT plugin.

The header row names ``StartDevice`` (also written ``#StartDevice`` or ``#Fields:StartDevice``), ``StartPort``,
``EndDevice`` and ``EndPort``; it need not be the first row nor the first column (site spreadsheets put rack
and U-height columns in front). ``LinkType`` and any other column are ignored, except ``Speed`` and ``Width``
which give the planned rate of a cable: empty (or ``N/A``) when not planned, and an error when unreadable.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TextIO

from topology.errors import InputError
from topology.inputs import DOCUMENT, read_input
from topology.model import Cable, End, Fabric
from topology.ports import Kind, PortLabelError, checked_switch_port, display_port, excerpt, parse_end
from topology.rates import MAX_LANES, NOT_GIVEN, parse_total_gbps, parse_width

REQUIRED = ("StartDevice", "StartPort", "EndDevice", "EndPort")
_ALIASES = {"#startdevice": "StartDevice", "#fields:startdevice": "StartDevice"}
_OPTIONAL = {"speed": "Speed", "width": "Width", "linkspeed": "Speed", "linkwidth": "Width"}
_HEADER_SEARCH_ROWS = 20


def read_ndt(path: Path, *, lenient: bool = False) -> Fabric:
    """Read a plan; ``lenient`` keeps the first of two cables on one port and records the conflict."""
    return parse_ndt_bytes(read_input(path, DOCUMENT), str(path), lenient=lenient)


def parse_ndt_bytes(data: bytes, source: str, *, lenient: bool = False, plan: bool = True) -> Fabric:
    """A plan from the bytes of its file (UTF-8, a byte-order mark allowed); ``source`` names it in errors.
    ``plan=False``: the CSV is an as-built fabric's (``Fabric.plan``)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"not a text file ({exc.reason})", source=source) from None
    return parse_ndt(io.StringIO(text, newline=""), source, lenient=lenient, plan=plan)


def parse_ndt(lines: Iterable[str], source: str, *, lenient: bool = False, plan: bool = True) -> Fabric:
    rows = csv.reader(lines)
    try:
        columns, header_line = _find_header(rows, source)
    except csv.Error as exc:
        raise InputError(f"unreadable CSV: {exc}", source=source, line=rows.line_num) from None
    fabric = Fabric(source, plan=plan)
    start_dev, start_port, end_dev, end_port = (columns[name] for name in REQUIRED)
    speed_col, width_col = columns.get("Speed"), columns.get("Width")
    needed = max(start_dev, start_port, end_dev, end_port)
    first = min(columns.values())
    switches: dict[str, str] = {}
    # A plan spells its rates a few ways (every cable of a tier alike): each pair of cells is read once.
    rates: dict[tuple[str, str], tuple[int | None, float | None]] = {}
    try:
        for row in rows:
            line = rows.line_num
            # Blank: no cell holds more than whitespace (one join, not a strip per cell: this runs for every row).
            if not "".join(row).strip() or (len(row) > first and row[first].lstrip().startswith("#")):
                continue
            if len(row) <= needed:
                missing = next(n for n in REQUIRED if columns[n] >= len(row))
                raise InputError(f"row has {len(row)} cells, no value for this column", source=source,
                                 line=line, column=missing)
            origin = f"{source}:{line}"
            a = _end(fabric, switches, row[start_dev], row[start_port], source, line, origin, "StartPort",
                     "StartDevice")
            b = _end(fabric, switches, row[end_dev], row[end_port], source, line, origin, "EndPort", "EndDevice")
            cells = (_cell(row, width_col), _cell(row, speed_col))
            if (rate := rates.get(cells)) is None:
                width = _width(cells[0], source, line) if width_col is not None else None
                rate = rates[cells] = (width, _speed(cells[1], width, source, line) if speed_col is not None else None)
            fabric.add_cable(Cable(a, b, rate[0], rate[1], origin), lenient=lenient)
    except csv.Error as exc:  # a field over csv.field_size_limit(), say: the file is no wiring plan
        raise InputError(f"unreadable CSV: {exc}", source=source, line=rows.line_num) from None
    if not fabric.cables:
        raise InputError(f"no cables after the header on line {header_line}", source=source)
    fabric.infer_tiers()
    return fabric


def _cell(row: Sequence[str], index: int | None) -> str:
    return row[index].strip() if index is not None and index < len(row) else ""


def _width(text: str, source: str, line: int) -> int | None:
    width = parse_width(text)
    if width is None and text.casefold() not in NOT_GIVEN:
        raise InputError(f"unreadable width {excerpt(text)} (expected 1x to {MAX_LANES}x, e.g. 4x, or nothing)",
                         source=source, line=line, column="Width")
    return width


def _speed(text: str, width: int | None, source: str, line: int) -> float | None:
    speed = parse_total_gbps(text, width)
    if speed is None and text.casefold() not in NOT_GIVEN:
        raise InputError(f"unreadable speed {excerpt(text)} (expected a total such as 400000 (Mb/s) or 400G, "
                         "a generation such as NDR, or nothing)", source=source, line=line, column="Speed")
    return speed


def _find_header(rows: Iterable[Sequence[str]], source: str) -> tuple[dict[str, int], int]:
    first_line: int | None = None
    for number, row in enumerate(rows, start=1):
        if not any(cell.strip() for cell in row):
            continue
        first_line = first_line or number
        columns: dict[str, int] = {}
        for index, cell in enumerate(row):
            name = cell.strip()
            lowered = name.casefold().replace(" ", "")
            canonical = _ALIASES.get(lowered) or next((r for r in REQUIRED if r.casefold() == lowered), None)
            canonical = canonical or _OPTIONAL.get(lowered)
            if canonical and canonical not in columns:
                columns[canonical] = index
        if "StartDevice" in columns or len(columns.keys() & set(REQUIRED)) >= 2:
            for name in REQUIRED:
                if name not in columns:
                    raise InputError(
                        "header row lacks this required column (need StartDevice, StartPort, EndDevice, EndPort)",
                        source=source, line=number, column=name,
                    )
            return columns, number
        if number >= _HEADER_SEARCH_ROWS:
            break
    raise InputError(
        "no header row naming StartDevice, StartPort, EndDevice, EndPort (is this an NDT wiring plan?)",
        source=source, line=first_line or 1, column="StartDevice",
    )


def _end(fabric: Fabric, switches: dict[str, str], device: str, port: str, source: str, line: int, origin: str,
         port_col: str, device_col: str) -> End:
    """The end a row's device and port cells name; ``switches`` maps device cells already read as a switch to
    its key, so that a switch's other ports need only their label read (a switch has dozens)."""
    if (key := switches.get(device)) is not None:
        try:
            label = checked_switch_port(" ".join(port.split()))  # as parse_end reads a switch's port
        except PortLabelError:
            label = None  # out of range: parse_end says so below
        if label is not None:
            return End(key, label)
    if not device.strip():
        raise InputError("empty device name", source=source, line=line, column=device_col)
    try:
        parsed = parse_end(device, port)
    except PortLabelError as exc:
        raise InputError(str(exc), source=source, line=line, column=port_col) from None
    node = fabric.add_device(parsed.device, parsed.kind, host=parsed.host, origin=origin)
    if parsed.kind is Kind.SWITCH:
        switches[device] = node.key
    return End(node.key, parsed.port)


def write_ndt(fabric: Fabric, out: TextIO) -> None:
    """Write a plan NDT can read; host ends as ``<host>,<adapter node description>``."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["#StartDevice", "StartPort", "EndDevice", "EndPort", "LinkType", "Speed", "Width"])
    for cable in fabric.cables:
        cells: list[str] = []
        for end in (cable.a, cable.b):
            device = fabric.devices[end.device]
            if device.kind is Kind.ADAPTER and end.port == "1":
                cells += [device.host_name, device.name]
            else:
                cells += [device.name, display_port(end.port)]
        speed = f"{round(cable.speed_gbps * 1000)}" if cable.speed_gbps else ""
        width = f"{cable.width}x" if cable.width else ""
        writer.writerow([*cells, "Data", speed, width])


def ndt_text(fabric: Fabric) -> str:
    buffer = io.StringIO()
    write_ndt(fabric, buffer)
    return buffer.getvalue()
