from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from topology.errors import InputError
from topology.formats import ndt
from topology.formats.ndt import ndt_text, parse_ndt, read_ndt, write_ndt
from topology.generate import PRESETS, fat_tree
from topology.model import End, Tier
from topology.ports import Kind


def parse(text: str, source: str = "plan.csv"):  # type: ignore[no-untyped-def]
    return parse_ndt(io.StringIO(text), source)


def test_header_variants_and_extra_columns() -> None:
    for header in ("StartDevice", "#StartDevice", "#Fields:StartDevice"):
        fabric = parse(f"rack,{header},StartPort,EndDevice,EndPort,LinkType,Notes\n"
                       "r1,SW-A,Port 1,sw-b,Port 2,Data,whatever\n")
        assert [(c.a, c.b) for c in fabric.cables] == [(End("sw-a", "1"), End("sw-b", "2"))]
        assert fabric.devices["sw-a"].name == "SW-A"


def test_port_label_forms() -> None:
    fabric = parse(
        "StartDevice,StartPort,EndDevice,EndPort\n"
        "leaf,Port 7,spine,12\n"
        "leaf,1/3/1,spine,Port 1/4/2\n"
        "leaf,Port 30,director-A,Blade 16_Port 2/20\n"
        "host1,host1 mlx5_3,leaf,Port 1\n"
        "luna-0001 mlx5_10,1,leaf,Port 2\n"
        "server9,ibp21s0f0,leaf,Port 3\n"
    )
    ends = {(c.a, c.b) for c in fabric.cables}
    assert (End("leaf", "7"), End("spine", "12")) in ends
    assert (End("leaf", "1/3/1"), End("spine", "1/4/2")) in ends
    assert (End("leaf", "30"), End("director-a", "Blade 16_Port 2/20")) in ends
    assert (End("host1 mlx5_3", "1"), End("leaf", "1")) in ends
    assert (End("luna-0001 mlx5_10", "1"), End("leaf", "2")) in ends
    assert (End("server9 ibp21s0f0", "1"), End("leaf", "3")) in ends
    assert fabric.devices["host1 mlx5_3"].kind is Kind.ADAPTER
    assert fabric.devices["host1 mlx5_3"].host == "host1"
    assert fabric.devices["leaf"].tier is Tier.LEAF
    assert fabric.devices["spine"].tier is Tier.SPINE


def test_speed_and_width_columns() -> None:
    fabric = parse("StartDevice,StartPort,EndDevice,EndPort,Speed,Width\n"
                   "a,Port 1,b,Port 1,200000,4x\n"
                   "a,Port 2,b,Port 2,NDR,\n"
                   "a,Port 3,b,Port 3,,\n")
    rates = [(c.width, c.speed_gbps) for c in fabric.cables]
    assert rates == [(4, 200.0), (None, 400.0), (None, None)]


def test_unknown_port_label_names_file_line_and_column() -> None:
    with pytest.raises(InputError) as caught:
        parse("StartDevice,StartPort,EndDevice,EndPort\nsw1,Port 1,sw2,Port 1\nsw1,abra,sw2,Port 2\n")
    error = caught.value
    assert (error.source, error.line, error.column) == ("plan.csv", 3, "StartPort")
    assert "abra" in str(error) and str(error).startswith("plan.csv:3:")


def test_duplicate_port_in_plan() -> None:
    with pytest.raises(InputError, match=r"plan.csv:3: .*sw1/Port 1 is cabled twice \(first at plan.csv:2\)"):
        parse("StartDevice,StartPort,EndDevice,EndPort\nsw1,Port 1,sw2,Port 1\nSW1,port 1,sw3,Port 1\n")


def test_missing_column() -> None:
    with pytest.raises(InputError) as caught:
        parse("StartDevice,EndDevice,EndPort\nsw1,sw2,Port 1\n")
    assert (caught.value.line, caught.value.column) == (1, "StartPort")


def test_short_row_and_empty_device() -> None:
    with pytest.raises(InputError, match=r"plan\.csv:2: column 'EndPort'"):
        parse("StartDevice,StartPort,EndDevice,EndPort\nsw1,Port 1,sw2\n")
    with pytest.raises(InputError, match=r"plan\.csv:2: column 'EndDevice'"):
        parse("StartDevice,StartPort,EndDevice,EndPort\nsw1,Port 1, ,Port 3\n")


def test_not_a_plan_and_empty_plan() -> None:
    with pytest.raises(InputError, match="no header row"):
        parse("hello world\n")
    with pytest.raises(InputError, match="no cables"):
        parse("StartDevice,StartPort,EndDevice,EndPort\n\n")


def test_repeated_cable_in_either_direction_is_merged() -> None:
    fabric = parse("StartDevice,StartPort,EndDevice,EndPort\nsw1,Port 1,sw2,Port 4\nsw2,Port 4,SW1,Port 1\n")
    assert len(fabric.cables) == 1 and not fabric.conflicts


def test_blank_and_comment_rows_are_skipped() -> None:
    fabric = parse("StartDevice,StartPort,EndDevice,EndPort\n\n# spare\n,,,\nsw1,Port 1,sw2,Port 1\n")
    assert len(fabric.cables) == 1


def test_binary_file(tmp_path: Path) -> None:
    path = tmp_path / "plan.csv"
    path.write_bytes(b"\xff\xfe\x00garbage\x80")
    with pytest.raises(InputError, match=str(path)):
        read_ndt(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_ndt(tmp_path / "absent.csv")


def test_round_trip_of_generated_plan() -> None:
    plan = fat_tree(PRESETS["tiny"])
    again = parse(ndt_text(plan))
    assert {c.key for c in again.cables} == {c.key for c in plan.cables}
    assert {k: d.tier for k, d in again.devices.items()} == {k: d.tier for k, d in plan.devices.items()}
    assert {(c.width, c.speed_gbps) for c in again.cables} == {(4, 400.0)}


def test_writer_keeps_adapter_ports_other_than_one() -> None:
    fabric = parse("StartDevice,StartPort,EndDevice,EndPort\nnode1 mlx5_0,Port 2,leaf,Port 1\n")
    buffer = io.StringIO()
    write_ndt(fabric, buffer)
    assert {c.key for c in parse(buffer.getvalue()).cables} == {c.key for c in fabric.cables}


# --- NVIDIA's own NDT files -------------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "cables", "conflicts"), [
    ("switch_to_host_topo1.ndt", 2223, 0),
    # Lists every cable from both ends: 6,390 rows, 3,195 cables, nothing in conflict.
    ("switch_to_switch_topo2.ndt", 3195, 0),
])
def test_conformance_plans_load(conformance: Path, name: str, cables: int, conflicts: int) -> None:
    fabric = read_ndt(conformance / "ndt" / name)
    assert (len(fabric.cables), len(fabric.conflicts)) == (cables, conflicts)


@pytest.mark.parametrize(("name", "rows", "conflicts", "first"), [
    # Site spreadsheets with real mistakes: ports planned twice (and, in ndth2s, per-rack host names
    # such as "Server 1 IB Port 1" that repeat in every rack).
    ("ndt.csv", 400, 40, "ndt.csv:12: port DSM07-0101-0801-02IB1/Blade 1_Port 1/1 is cabled twice (first at "),
    ("ndth2s.csv", 320, 288, "ndth2s.csv:34: port Server 1 IB Port 1 IB Port 1 is cabled twice (first at "),
])
def test_conformance_plans_with_conflicts(conformance: Path, name: str, rows: int, conflicts: int, first: str) -> None:
    path = conformance / "ndt" / name
    with pytest.raises(InputError, match="is cabled twice"):
        read_ndt(path)
    fabric = read_ndt(path, lenient=True)
    assert len(fabric.conflicts) == conflicts
    assert len(fabric.cables) == rows - conflicts
    assert str(fabric.conflicts[0]).startswith(f"{conformance / 'ndt'}/{first}")


def test_conformance_wide_plan_reads_speed(conformance: Path) -> None:
    fabric = read_ndt(conformance / "ndt" / "ndt.csv", lenient=True)
    first = fabric.cables[0]
    assert (fabric.describe(first.a), fabric.describe(first.b)) == (
        "DSM07-0101-0806-01IB0/Port 21", "DSM07-0101-0806-01IB1/Blade 1_Port 1/1")
    assert first.speed_gbps == 200.0


@pytest.mark.parametrize(("name", "line", "column"), [
    ("garbage.ndt", 1, "StartDevice"),
    ("incorrect_columns.ndt", 1, "StartPort"),
    ("incorrect_ports.ndt", 2, "StartPort"),
])
def test_conformance_malformed_plans_fail_clearly(conformance: Path, name: str, line: int, column: str) -> None:
    path = conformance / "ndt" / name
    with pytest.raises(InputError) as caught:
        read_ndt(path)
    error = caught.value
    assert (error.source, error.line, error.column) == (str(path), line, column)
    assert str(error).startswith(f"{path}:{line}: column {column!r}: ")


# --- input that used to crash the reader or pass as a plan ---------------------------------------------------

HEADER = "StartDevice,StartPort,EndDevice,EndPort,Speed,Width\n"


def error_of(text: str) -> InputError:
    with pytest.raises(InputError) as caught:
        parse(text)
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 400, "one short line"
    return caught.value


def test_a_field_over_the_csv_limit_names_the_line() -> None:
    error = error_of(HEADER + "a,Port 1,b,Port 1,,\n" + "x" * 200_000 + ",Port 2,b,Port 2,,\n")
    assert (error.source, error.line) == ("plan.csv", 3) and "field larger than field limit" in error.message


def test_header_in_a_later_column_then_a_short_row() -> None:
    error = error_of("rack,StartDevice,StartPort,EndDevice,EndPort\nr1\n")
    assert (error.line, error.column) == (2, "StartDevice")


@pytest.mark.parametrize(("row", "column"), [
    ("sw1,Port " + "9" * 5000 + ",sw2,Port 1", "StartPort"),
    ("sw1,Port 1,sw2," + "9" * 5000, "EndPort"),
    ("sw1,Port 1,sw2,Blade " + "9" * 5000 + "_Port 1/2", "EndPort"),
    ("sw1,Port 1025,sw2,Port 1", "StartPort"),
    ("node1 mlx5_0,HCA-1/" + "9" * 5000 + ",sw2,Port 1", "StartPort"),
])
def test_port_numbers_out_of_range(row: str, column: str) -> None:
    error = error_of("StartDevice,StartPort,EndDevice,EndPort\n" + row + "\n")
    assert (error.line, error.column) == (2, column) and "out of range (at most 1024)" in error.message


@pytest.mark.parametrize(("speed", "width", "column"), [
    ("fast", "4x", "Speed"), ("nan", "4x", "Speed"), ("-400G", "", "Speed"), ("0", "", "Speed"),
    ("9" * 5000, "", "Speed"), ("HDR100", "", "Speed"),
    ("400000", "-4x", "Width"), ("400000", "nan", "Width"), ("", "16x", "Width"), ("", "0", "Width"),
    ("", "9" * 5000, "Width"), ("", "wide", "Width"),
])
def test_unreadable_speed_or_width_names_file_line_and_column(speed: str, width: str, column: str) -> None:
    error = error_of(HEADER + "a,Port 1,b,Port 1,400000,4x\n" + f"a,Port 2,b,Port 2,{speed},{width}\n")
    assert (error.source, error.line, error.column) == ("plan.csv", 3, column)
    assert str(error).startswith(f"plan.csv:3: column {column!r}: unreadable {column.lower()} ")


def test_what_plans_write_for_speed_and_width_still_reads() -> None:
    fabric = parse(HEADER + "a,Port 1,b,Port 1,200000,4x\na,Port 2,b,Port 2,N/A,n/a\na,Port 3,b,Port 3,,\n"
                   "a,Port 4,b,Port 4,200G HDR cable,IB_4x\na,Port 5,b,Port 5,ndr,2\na,Port 6,b,Port 6,400G,\n")
    assert [(c.width, c.speed_gbps) for c in fabric.cables] == [
        (4, 200.0), (None, None), (None, None), (4, 200.0), (2, 200.0), (None, 400.0)]


# --- fuzzing: whatever the text, a plan or an InputError naming it ------------------------------------------

PLAN_ROWS = [row.split(",") for row in ndt_text(fat_tree(PRESETS["tiny"])).splitlines()][:12]
ODD_CELLS = st.sampled_from(["", " ", "#", "9" * 5000, "Port 99999", "-4x", "nan", "fast", "0", '"', "\x00",
                             "Blade 1_Port 1/9999", "HCA-2/1", "mlx5_0", "x" * 200, "StartDevice", "1/3/1"])


@st.composite
def mutated_plans(draw: st.DrawFn) -> str:
    """The tiny plan's first rows with cells replaced, rows cut short or dropped, and junk lines inserted."""
    rows = [list(row) for row in PLAN_ROWS]
    for _ in range(draw(st.integers(0, 6))):
        row = draw(st.integers(0, len(rows) - 1))
        action = draw(st.sampled_from(["cell", "cut", "drop", "insert"]))
        if action == "cell" and rows[row]:
            rows[row][draw(st.integers(0, len(rows[row]) - 1))] = draw(ODD_CELLS | st.text(max_size=12))
        elif action == "cut":
            rows[row] = rows[row][: draw(st.integers(0, len(rows[row])))]
        elif action == "drop" and len(rows) > 1:
            del rows[row]
        else:
            rows.insert(row, [draw(st.text(max_size=30))])
    return "\n".join(",".join(row) for row in rows) + "\n"


@settings(max_examples=250, deadline=None)
@given(mutated_plans() | st.text(max_size=400))
def test_any_text_is_a_plan_or_an_input_error_naming_the_file(text: str) -> None:
    try:
        fabric = parse(text, "fuzz.csv")
    except InputError as exc:
        assert str(exc).startswith("fuzz.csv") and "\n" not in str(exc)
    else:
        assert fabric.cables


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=300))
def test_any_bytes_are_a_plan_or_an_input_error_naming_the_file(tmp_path_factory: pytest.TempPathFactory,
                                                                 data: bytes) -> None:
    path = tmp_path_factory.getbasetemp() / "fuzz-plan.csv"
    path.write_bytes(b"StartDevice,StartPort,EndDevice,EndPort\n" + data)
    try:
        read_ndt(path)
    except InputError as exc:
        assert str(exc).startswith(str(path))


# A switch's device cell, once read, skips parse_end for its other ports: the plan must read as it does without.
PLAN_DEVICES = st.sampled_from(["leaf-1", "LEAF-1", " leaf-1", "leaf  1", "leaf 1", "spine-1", "node1",
                                "node1 mlx5_0", "node1 mlx5_1", "", "dir-1"])
PLAN_PORTS = st.sampled_from(["1", "Port 1", "port  2", " 02 ", "1/3/1", "Port 1/4/2", "Blade 16_Port 2/20",
                              "Blade 1_Port  1/2", "9999", "Port 1025", "1/2/9999", "mlx5_0", "node1 mlx5_0",
                              "HCA-1/1", "ibp21s0f0", "x", ""])


def outcome_of(text: str, *, lenient: bool) -> object:
    try:
        fabric = parse_ndt(io.StringIO(text), "plan.csv", lenient=lenient)
    except InputError as exc:
        return str(exc)
    devices = [(d.name, d.kind, d.host, d.origin, d.tier) for d in fabric.devices.values()]
    return devices, fabric.cables, [str(c) for c in fabric.conflicts]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(PLAN_DEVICES, PLAN_PORTS, PLAN_DEVICES, PLAN_PORTS), min_size=1, max_size=12),
       st.booleans())
def test_a_switch_read_before_reads_as_parse_end_reads_it(rows: list[tuple[str, str, str, str]],
                                                         lenient: bool) -> None:
    text = "StartDevice,StartPort,EndDevice,EndPort\n" + "".join(",".join(row) + "\n" for row in rows)
    found = outcome_of(text, lenient=lenient)
    with pytest.MonkeyPatch.context() as monkeypatch:  # every end through parse_end
        monkeypatch.setattr(ndt, "checked_switch_port", lambda text: None)
        expected = outcome_of(text, lenient=lenient)
    assert found == expected


@pytest.mark.parametrize(("name", "code"), [("sw\x001", "U+0000"), ("sw\x1b[2J1", "U+001B"), ("sw\x7f", "U+007F"),
                                            ("sw\x9b1", "U+009B")])
def test_a_control_character_in_a_device_name_is_refused_naming_the_line(name: str, code: str) -> None:
    """A NUL in a name was read as part of it: a device no UFM shows, reported missing, its name cutting the log."""
    error = error_of(f"StartDevice,StartPort,EndDevice,EndPort\nsw0,Port 1,sw2,Port 1\n{name},Port 1,sw2,Port 2\n")
    assert (error.source, error.line) == ("plan.csv", 3)
    assert f"holds the control character {code}" in error.message


def test_a_name_with_a_non_ascii_letter_is_read() -> None:
    fabric = parse("StartDevice,StartPort,EndDevice,EndPort\nsw1,Port 1,sw\u04302,Port 1\n")
    assert {device.name for device in fabric.devices.values()} == {"sw1", "sw\u04302"}
