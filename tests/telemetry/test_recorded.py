"""Recorded telemetry for replay: a directory of samples, any names, in the order of their timestamps."""

from __future__ import annotations

from pathlib import Path

import pytest
from telemetry_rows import MINUTE_US, T0_US, Row, csv_body, port_names

from fabric.telemetry.errors import TelemetryInputError
from fabric.telemetry.recorded import recorded_samples

NAMES = port_names(4)


def write(folder: Path, name: str, time_us: int, **rows: Row) -> Path:
    path = folder / name
    path.write_bytes(csv_body(time_us, {port: rows.get(f"p{i}", Row()) for i, port in enumerate(NAMES)}))
    return path


def test_samples_are_ordered_by_their_timestamps_not_their_names(tmp_path: Path) -> None:
    write(tmp_path, "a.csv", T0_US + 10 * MINUTE_US)
    write(tmp_path, "zz-first", T0_US, p2=Row(time_us=T0_US + 30_000_000))  # dated by its newest row
    write(tmp_path, "b.csv", T0_US + 5 * MINUTE_US)
    write(tmp_path, "c.csv", T0_US + 5 * MINUTE_US)  # the same time: by name
    write(tmp_path, ".partial.csv", T0_US - MINUTE_US)
    (tmp_path / "subdirectory").mkdir()
    found = recorded_samples(tmp_path)
    assert [recorded.path.name for recorded in found] == ["zz-first", "b.csv", "c.csv", "a.csv"]
    assert found[0].time_us == T0_US + 30_000_000
    sample = found[1].load()
    assert (sample.time_us, sample.source, sample.port_names()) == (T0_US + 5 * MINUTE_US, str(found[1].path), NAMES)


def test_a_bad_file_is_named_with_its_line_and_column(tmp_path: Path) -> None:
    write(tmp_path, "good.csv", T0_US)
    bad = write(tmp_path, "bad.csv", T0_US + MINUTE_US)
    bad.write_bytes(bad.read_bytes().replace(f",{T0_US + MINUTE_US},".encode(), b",").replace(
        str(T0_US + MINUTE_US).encode(), b"soon", 1))
    with pytest.raises(TelemetryInputError, match=rf"^{bad}:2: column 'timestamp': 'soon': not a timestamp"):
        recorded_samples(tmp_path)


def test_a_file_bad_past_its_timestamps_is_refused_when_loaded(tmp_path: Path) -> None:
    bad = write(tmp_path, "bad.csv", T0_US)
    bad.write_bytes(bad.read_bytes().replace(b",40,", b",warm,", 1))
    [recorded] = recorded_samples(tmp_path)
    with pytest.raises(TelemetryInputError, match=rf"^{bad}:2: column 'Module_Temperature': 'warm'"):
        recorded.load()


def test_an_empty_or_missing_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(TelemetryInputError, match="no telemetry sample in the directory"):
        recorded_samples(tmp_path)
    with pytest.raises(TelemetryInputError, match="cannot list the directory"):
        recorded_samples(tmp_path / "absent")
