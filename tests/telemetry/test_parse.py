"""A UFM Telemetry CSV read into a Sample, and every kind of bad body refused in one line naming where."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from telemetry_rows import HEADER, T0_US, Row, csv_body, port_names

from fabric.errors import BadInputError, as_fabric_error
from fabric.telemetry.body import BodyCheck, BodyLimits, checked_body
from fabric.telemetry.columns import Counter
from fabric.telemetry.errors import TelemetryInputError
from fabric.telemetry.parse import parse_sample, read_sample
from topology.inputs import Bound

NAMES = port_names(3)
GOOD = csv_body(T0_US, {name: Row(symbol_errors=i, packets=10 * i) for i, name in enumerate(NAMES)})


def refusal(body: bytes, **limits: object) -> str:
    with pytest.raises(TelemetryInputError) as caught:
        parse_sample(body, "https://ufm.example/csv/xcset/low_freq_debug",
                     BodyLimits(**limits) if limits else BodyLimits())  # type: ignore[arg-type]
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("https://ufm.example/csv/xcset/low_freq_debug")
    return message


def test_columns_are_read_by_name_in_any_order_with_others_ignored() -> None:
    shuffled = list(reversed(HEADER))
    rows = {name: Row(symbol_errors=i + 1, packets=2**63 + i, link_downed=i) for i, name in enumerate(NAMES)}
    sample = parse_sample(csv_body(T0_US, rows, shuffled), "s")
    assert sample.port_names() == NAMES
    assert sample.counters[Counter.SYMBOL_ERRORS].tolist() == [1, 2, 3]
    assert sample.counters[Counter.RCV_PACKETS].tolist() == [2**63, 2**63 + 1, 2**63 + 2]  # 64-bit, exact
    assert sample.counters[Counter.LINK_DOWNED].dtype == np.uint64
    assert sample.time_us == T0_US


def test_port_names_are_rest_names_whatever_the_guid_is_written_as() -> None:
    body = GOOD.replace(b"0xb83fd20300000000", b"0XB83FD20300000000").replace(b"0xb83fd20300000000", b"0x0")
    sample = parse_sample(body, "s")
    assert sample.port_names() == NAMES
    short = parse_sample(csv_body(T0_US, {"00000000000000ab_7": Row()}).replace(b"0x00000000000000ab", b"0xab"), "s")
    assert short.port_names() == ["00000000000000ab_7"]


def test_the_newest_row_dates_the_sample() -> None:
    rows = {NAMES[0]: Row(time_us=T0_US - 5), NAMES[1]: Row(time_us=T0_US + 3_000_000), NAMES[2]: Row()}
    sample = parse_sample(csv_body(T0_US, rows), "s")
    assert sample.time_us == T0_US + 3_000_000
    assert sample.newest_line == 3
    assert sample.row_time_us.tolist() == [T0_US - 5, T0_US + 3_000_000, T0_US]


@pytest.mark.parametrize(("written", "degrees"), [("45", 45.0), ("45C", 45.0), (" 61.5 ", 61.5), ("", None),
                                                   ("NA", None), ("N/A", None), ("0", None), ("0C", None)])
def test_temperatures_and_no_reading(written: str, degrees: float | None) -> None:
    sample = parse_sample(csv_body(T0_US, {NAMES[0]: Row(temperature=written)}), "s")
    value = float(sample.temperature[0])
    assert (np.isnan(value) if degrees is None else value == degrees)


def test_counters_are_read_as_pyarrow_reads_whole_numbers() -> None:
    body = GOOD.replace(b",1,10,", b",0x1F, 0010 ,", 1)
    assert parse_sample(body, "s").counters[Counter.SYMBOL_ERRORS].tolist() == [0, 31, 2]
    assert parse_sample(body, "s").counters[Counter.RCV_PACKETS].tolist() == [0, 10, 20]


def test_windows_line_ends_are_read() -> None:
    assert parse_sample(GOOD.replace(b"\n", b"\r\n"), "s").port_names() == NAMES


@pytest.mark.parametrize(("body", "where", "what"), [
    (GOOD.replace(b",Link_Down_IB,", b",LinkDowned,"), ":1: column 'Link_Down_IB'", "missing from the header"),
    (GOOD.replace(b",tag,", b",Symbol_Errors,"), ":1: column 'Symbol_Errors'", "named twice"),
    (b"<html><body>502 Bad Gateway</body></html>\n", ":1: column 'timestamp'", "missing from the header"),
    (b'{"error": "no such instance"}\n', ":1: column 'timestamp'", "missing from the header"),
    (b"\xff\xfe\x00t\n", ":1:", "not a CSV line"),
    (b"", "", "empty"),
    (GOOD[:GOOD.index(b"\n") + 1], ":2:", "a header alone"),
    (GOOD[:-1], ":4:", "cut short"),
    (GOOD[:-20] + b"\n", ":4:", "fields where the header names 14"),
    (GOOD.replace(b",0xb83", b",,0xb83", 1), ":2:", "fields where the header names 14"),
    (GOOD + b"\n", ":5: column 'timestamp'", "not a timestamp"),
    (GOOD.replace(b"\n", b"\r"), ":1:", "cut short"),
    (GOOD.replace(b"\n", b"\r", 2), ":1:", "a carriage return that ends no line"),
])
def test_a_body_that_is_not_a_telemetry_csv_is_refused(body: bytes, where: str, what: str) -> None:
    message = refusal(body)
    assert f"low_freq_debug{where}" in message
    assert what in message


def test_a_port_given_two_rows_is_refused_naming_both_lines() -> None:
    rows = csv_body(T0_US, {name: Row() for name in NAMES}).splitlines(keepends=True)
    body = b"".join([*rows, rows[2].replace(b"0xb83fd20300000000", b"0xB83FD20300000000")])
    message = refusal(body)
    assert ":5: column 'Node_GUID'" in message
    assert f"port {NAMES[1]} has a row already, at line 3" in message


@pytest.mark.parametrize("bad", ["-3", "NaN", "nan", "abc", "", "1.5", "1e3", "18446744073709551616", "0x", "+5"])
@pytest.mark.parametrize("counter", list(Counter))
def test_a_counter_that_is_not_a_whole_number_is_refused(counter: Counter, bad: str) -> None:
    body = csv_body(T0_US, {NAMES[0]: Row(), NAMES[1]: Row()})
    lines = body.decode().splitlines()
    cells = lines[2].split(",")
    cells[HEADER.index(counter.value)] = bad
    lines[2] = ",".join(cells)
    message = refusal(("\n".join(lines) + "\n").encode())
    assert f":3: column '{counter.value}': {bad!r}: not a counter value" in message


@pytest.mark.parametrize(("column", "bad", "what"), [
    ("Node_GUID", "0xnotaguid", "not a GUID"), ("Node_GUID", "0x1234567890abcdef0", "not a GUID"),
    ("Port_Number", "-1", "not a port number"), ("Port_Number", "70000", "not a port number"),
    ("timestamp", "0", "not a time"), ("timestamp", "-5", "not a time"), ("timestamp", "1.7e15", "not a timestamp"),
    ("timestamp", "99999999999999999", "not a time between 1970 and 3000"),
    ("Module_Temperature", "hot", "not a temperature"), ("Module_Temperature", "NaN", "not a temperature"),
    ("Module_Temperature", "inf", "not a temperature"),
])
def test_a_key_or_a_temperature_that_cannot_be_read_is_refused(column: str, bad: str, what: str) -> None:
    lines = GOOD.decode().splitlines()
    cells = lines[3].split(",")
    cells[HEADER.index(column)] = bad
    lines[3] = ",".join(cells)
    message = refusal(("\n".join(lines) + "\n").encode())
    assert f":4: column '{column}'" in message
    assert what in message


def test_a_long_line_is_refused_naming_it() -> None:
    lines = GOOD.decode().splitlines()
    lines[2] = lines[2].replace(",,", "," + "x" * 70_000 + ",", 1)
    assert ":3:" in refusal(("\n".join(lines) + "\n").encode())
    assert ":1:" in refusal(GOOD, line=20)


def test_a_body_past_its_size_is_refused() -> None:
    assert "larger than 100 bytes" in refusal(GOOD, size=Bound(100, "a sample"))


def test_a_100_mb_line_is_refused_after_its_first_chunks_never_held() -> None:
    taken = 0

    def endless_line() -> Iterator[bytes]:
        nonlocal taken
        yield GOOD
        for _ in range(100):
            taken += 1
            yield b"x" * (1 << 20)

    with pytest.raises(TelemetryInputError, match=r"stream:5: a line longer than 65,536 bytes"):
        checked_body(endless_line(), "stream")
    assert taken == 1


def test_line_lengths_are_counted_across_chunks() -> None:
    check = BodyCheck("chunks", BodyLimits(line=10))
    for chunk in (b"0123", b"45678\n01", b"23456789\n"):
        check.feed(chunk)
    assert check.body() == b"012345678\n0123456789\n"
    longer = BodyCheck("chunks", BodyLimits(line=10))
    with pytest.raises(TelemetryInputError, match=r"chunks:3: a line longer"):
        for chunk in (b"ab\n", b"cd\n0123", b"4567890"):
            longer.feed(chunk)


def test_a_refusal_is_bad_input_for_the_command_line() -> None:
    with pytest.raises(TelemetryInputError) as caught:
        parse_sample(b"", "s")
    assert isinstance(as_fabric_error(caught.value), BadInputError)


def test_a_recorded_file_is_read_and_bad_paths_refused(tmp_path: Path) -> None:
    path = tmp_path / "sample.csv"
    path.write_bytes(GOOD)
    assert read_sample(path).port_names() == NAMES
    with pytest.raises(TelemetryInputError, match="no such file"):
        read_sample(tmp_path / "absent.csv")
    with pytest.raises(TelemetryInputError, match="is a directory"):
        read_sample(tmp_path)
    path.write_bytes(GOOD.replace(b",3,", b",-3,", 1))
    with pytest.raises(TelemetryInputError, match=rf"^{path}:\d: column"):
        read_sample(path)


counters = st.integers(min_value=0, max_value=2**64 - 1)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(counters, counters, counters, counters, counters), min_size=1, max_size=30),
       st.permutations(HEADER))
def test_counters_come_back_as_written(values: list[tuple[int, int, int, int, int]], columns: list[str]) -> None:
    names = port_names(len(values), per_switch=3)
    rows = {name: Row(*counts) for name, counts in zip(names, values, strict=True)}
    sample = parse_sample(csv_body(T0_US, rows, columns), "s")
    assert sample.port_names() == names
    for index, counter in enumerate(Counter):
        assert sample.counters[counter].tolist() == [counts[index] for counts in values]
