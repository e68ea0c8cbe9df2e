"""``fabricctl replay --events`` from a pipe: a FIFO (what ``<(zcat week.log.gz)`` gives) and the standard input
(``--events -``), each format read once, as it comes, with the report a file gives. Run as subprocesses with a
time bound: a reader that opened the source twice would wait for a second writer that never comes."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from replay_support import Recording, record
from typer.testing import CliRunner

from fabric.cli.app import app

FLAP = [{"at": "90s", "fault": "flap", "link": "pod01-spine01/1", "cycles": 5, "period": "20s", "down_for": "4s"}]
BOUND = 60.0
"""Real seconds a replay of the tiny recording may take, from a pipe or not."""


@pytest.fixture(scope="module")
def flap(tmp_path_factory: pytest.TempPathFactory) -> Recording:
    return record(tmp_path_factory.mktemp("flap"), FLAP, 600)


def _replay_file(snapshot: Path, events: Path) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["replay", "-a", str(snapshot), "-e", str(events), "--format", "json"])
    assert result.exit_code in (0, 1), result.output  # 1: it would have acted
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def _replay(snapshot: Path, events: str, *, stdin: bytes | None = None) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "fabric.cli", "replay", "-a", str(snapshot), "-e", events,
                           "--format", "json"], input=stdin, capture_output=True, timeout=BOUND, check=False)
    assert done.returncode in (0, 1), done.stderr.decode()  # 1: it would have acted
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def _without_source(report: dict[str, Any]) -> dict[str, Any]:
    """The report less the event source's name, which differs between a file and a pipe."""
    summary = {**report["summary"], "input": {**report["summary"]["input"], "file": None}}
    return {**report, "summary": summary}


@contextmanager
def _fifo(directory: Path, data: bytes) -> Iterator[Path]:
    """A FIFO that a thread fills with ``data`` once a reader opens it, then closes."""
    path = directory / "events.fifo"
    os.mkfifo(path)

    def write() -> None:
        with path.open("wb") as sink:  # waits for the reader
            sink.write(data)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        yield path
    finally:
        if writer.is_alive():  # the reader never opened it: open it once, so that the writer ends
            with path.open("rb") as drain:
                drain.read()
        writer.join(timeout=BOUND)


def _form(recording: Recording, form: str) -> bytes:
    if form == "event.log.gz":
        return gzip.compress(recording.files["event.log"].read_bytes())
    return recording.files[form].read_bytes()


@pytest.mark.parametrize("form", ["event.log.gz", "rest-6.17.json", "events.jsonl"])
def test_a_fifo_replays_as_its_file_does(flap: Recording, tmp_path: Path, form: str) -> None:
    from_file = _replay_file(flap.snapshot, flap.files[form.removesuffix(".gz")])
    with _fifo(tmp_path, _form(flap, form)) as fifo:
        from_pipe = _replay(flap.snapshot, str(fifo))
    assert from_pipe["summary"]["events"] == flap.events
    assert _without_source(from_pipe) == _without_source(from_file)


@pytest.mark.parametrize("form", ["event.log", "rest-data.json"])
def test_the_standard_input_replays_as_its_file_does(flap: Recording, form: str) -> None:
    from_file = _replay_file(flap.snapshot, flap.files[form])
    from_stdin = _replay(flap.snapshot, "-", stdin=_form(flap, form))
    assert from_stdin["summary"]["events"] == flap.events
    assert _without_source(from_stdin) == _without_source(from_file)


@pytest.mark.parametrize("form", ["event.log", "events.jsonl"])
def test_an_endless_line_from_a_pipe_is_counted_not_held(flap: Recording, tmp_path: Path, form: str) -> None:
    """A line of 8 MiB amid the events, from a FIFO: counted as a line too long, read past (at most 1 MiB of it is
    ever held), the events around it replayed."""
    lines = flap.files[form].read_bytes().splitlines(keepends=True)
    data = b"".join([*lines[:3], b"x" * (8 << 20) + b"\n", *lines[3:]])
    with _fifo(tmp_path, data) as fifo:
        report = _replay(flap.snapshot, str(fifo))
    assert report["summary"]["events"] == flap.events + 1  # the records read, the one refused among them
    assert report["summary"]["skipped_events"] == {"line too long": 1}
    assert report["decisions"] == _replay_file(flap.snapshot, flap.files[form])["decisions"]
