"""What ``fabricctl replay`` reads: sniffed formats, malformed entries counted (never fatal), bad input is exit 2."""

from __future__ import annotations

import errno
import gzip
import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from replay_support import Recording, record
from typer.testing import CliRunner

from fabric.cli.app import app
from fabric.replay import timesort
from fabric.replay.events import NOT_USED, load_events, stream_events
from fabric.replay.run import run_replay
from topology.errors import InputError

FLAP = [{"at": "90s", "fault": "flap", "link": "pod01-spine01/1", "cycles": 5, "period": "20s", "down_for": "4s"}]


@pytest.fixture(scope="module")
def flap(tmp_path_factory: pytest.TempPathFactory) -> Recording:
    return record(tmp_path_factory.mktemp("flap"), FLAP, 600)


def invoke(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["replay", *map(str, args)])
    return result.exit_code, result.stdout, result.stderr


# --- formats -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("form", "expected"), [
    ("event.log", "event.log"), ("rest-6.17.json", "json"), ("rest-6.16.json", "json"),
    ("rest-data.json", "json-data"), ("events.jsonl", "jsonl"),
])
def test_formats_are_sniffed(flap: Recording, form: str, expected: str) -> None:
    loaded = load_events(flap.files[form])
    assert (loaded.format, len(loaded.events), loaded.records) == (expected, flap.events, flap.events)
    assert [e.timestamp for e in loaded.events] == sorted(e.timestamp for e in loaded.events)


def test_gzipped_event_log(flap: Recording, tmp_path: Path) -> None:
    path = tmp_path / "event.log.1.gz"
    path.write_bytes(gzip.compress(flap.files["event.log"].read_bytes()))
    loaded = load_events(path)
    assert (loaded.format, len(loaded.events)) == ("event.log", flap.events)


def test_a_single_event_as_json_lines(flap: Recording, tmp_path: Path) -> None:
    path = tmp_path / "one.jsonl"
    path.write_text(flap.files["events.jsonl"].read_text().splitlines()[0] + "\n")
    loaded = load_events(path)
    assert (loaded.format, len(loaded.events)) == ("jsonl", 1)


def test_unused_event_types_are_counted_not_kept(flap: Recording, tmp_path: Path) -> None:
    lines = flap.files["event.log"].read_text().splitlines()
    noise = [lines[0].replace("[329]", "[66]", 1).replace("[1]", "[900]", 1),
             lines[0].replace("[329]", "[64]", 1).replace("[1]", "[901]", 1) + "\n  a continuation line"]
    path = tmp_path / "event.log"
    path.write_text("\n".join([*noise, *lines]) + "\n")
    loaded = load_events(path, used={328, 329})
    assert len(loaded.events) == flap.events and loaded.skipped == {NOT_USED: 2}
    assert loaded.records == flap.events + 2 and not loaded.examples
    rest = json.loads(flap.files["rest-6.17.json"].read_text())
    rest[0]["event_type"] = "66"
    (tmp_path / "rest.json").write_text(json.dumps(rest))
    loaded = load_events(tmp_path / "rest.json", used={328, 329})
    assert len(loaded.events) == flap.events - 1 and loaded.skipped == {NOT_USED: 1}


# --- malformed entries: counted by kind, examples name file and line ---------------------------------------


def test_malformed_event_log_lines(flap: Recording, tmp_path: Path) -> None:
    lines = flap.files["event.log"].read_text().splitlines()
    bad_time = lines[1].replace("2026-06-01 08:01:34.000", "2026-13-01 08:01:34.000")
    broken = [lines[0], "garbage that is not an event", bad_time, "2026-06-01 08:09:00 [77] truncated", *lines[2:]]
    path = tmp_path / "event.log"
    path.write_text("\n".join(broken) + "\n")
    report = run_replay(flap.snapshot, path)
    summary = report.summary
    # Text at column 0 without a timestamp is no continuation of the event before it (those are indented).
    assert summary["skipped_events"] == {"malformed line": 2, "bad timestamp": 1}
    assert summary["events"] == flap.events + 2 == summary["signals"] + 3
    assert summary["malformed"][0].startswith(f"{path}:2: no timestamp, and not an indented continuation")
    assert summary["malformed"][1].startswith(f"{path}:3: bad timestamp")
    assert summary["malformed"][2].startswith(f"{path}:4: does not match the event.log line format")
    assert report.would_act, "the rest of the log is still replayed"


def test_malformed_json_list_entries(flap: Recording, tmp_path: Path) -> None:
    items = json.loads(flap.files["rest-6.17.json"].read_text())
    items[2] = "not an object"
    items[3] = {**items[3], "timestamp": "yesterday"}
    del items[4]["id"]
    path = tmp_path / "events.json"
    path.write_text(json.dumps({"data": items}))
    report = run_replay(flap.snapshot, path)
    assert report.summary["skipped_events"] == {"invalid event": 2, "not an event object": 1}
    assert report.summary["malformed"] == [
        f"{path}: data[2]: not an event object: a JSON str",
        f"{path}: data[3]: invalid event: timestamp: Value error, not a UFM timestamp: 'yesterday'",
        f"{path}: data[4]: invalid event: id: Field required",
    ]


@pytest.mark.parametrize("form", ["jsonl", "json"])
def test_json_lines_and_lists_are_read_as_they_go_and_sorted_in_runs(flap: Recording, tmp_path: Path, form: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """JSON lines or a JSON list in any order (a script's export) come out in time order, sorted in runs spilled
    to disk once they outnumber a run: the same events as the REST list decoded whole, none of them held in a list
    of the whole file."""
    if form == "jsonl":
        lines = flap.files["events.jsonl"].read_text().splitlines()
        path = events_file(tmp_path, "shuffled.jsonl", "\n".join(lines[::-1]) + "\n")
    else:
        items = json.loads(flap.files["rest-6.17.json"].read_text())
        path = events_file(tmp_path, "shuffled.json", json.dumps(items[::-1], indent=1))
    monkeypatch.setattr(timesort, "RUN_EVENTS", 3)
    spilled: list[int] = []
    real = timesort._spill
    monkeypatch.setattr(timesort, "_spill", lambda run, block: spilled.append(len(run)) or real(run, block))
    stream = stream_events(path, sort=True)
    assert stream.in_order and stream.loaded.events == [], "nothing read before it is asked for"
    events = list(stream.events)
    assert spilled == [3, 3, 3]
    expected = load_events(flap.files["rest-6.17.json"]).events
    assert events == expected and stream.loaded.records == flap.events and stream.loaded.format == form


@pytest.mark.parametrize("form", ["events.jsonl", "rest-6.17.json"])
def test_json_out_of_time_order_is_replayed_sorted_or_refused_for_lines_already_written(
        flap: Recording, tmp_path: Path, form: str) -> None:
    """Read in file order as the clock goes, like an event.log: an event hours before those it follows (after the
    flap's decision) makes the replay start again from the events sorted, which JSON lines already written cannot
    (before any was written, they can: see test_replay_streaming)."""
    items = [json.loads(line) for line in flap.files["events.jsonl"].read_text().splitlines()]
    items += [{**items[0], "id": 900, "timestamp": "2026-06-01 09:00:00"},
              {**items[1], "id": 901, "timestamp": "2026-06-01 04:00:00"}]
    if form == "events.jsonl":
        path = events_file(tmp_path, "late.jsonl", "".join(json.dumps(item) + "\n" for item in items))
    else:
        path = events_file(tmp_path, "late.json", json.dumps(items))
    report = run_replay(flap.snapshot, path)
    assert report.summary["events"] == flap.events + 2
    assert report.summary["first_event"].startswith("2026-06-01T04:00")
    code, out, err = invoke("-a", flap.snapshot, "-e", path, "--format", "jsonl")
    assert code == 2 and "comes after events more than a cycle later" in err and "time order" in err, (code, out, err)


def test_a_json_list_broken_far_into_the_file_names_its_line(flap: Recording, tmp_path: Path) -> None:
    items = json.loads(flap.files["rest-6.17.json"].read_text()) * 400  # over a megabyte: many pieces
    text = json.dumps(items, indent=1)
    at = text.rfind('"id":')  # in the last event: a comma where its first field's name should be
    broken = text[:at] + "," + text[at:]
    path = events_file(tmp_path, "broken.json", broken)
    with pytest.raises(json.JSONDecodeError) as whole:
        json.loads(broken)
    code, _, err = invoke("-a", flap.snapshot, "-e", path)
    assert code == 2
    assert err == (f"fabricctl: error: {path}:{whole.value.lineno}: invalid JSON: {whole.value.msg} "
                   f"(column {whole.value.colno})\n")


def test_a_json_line_that_is_not_utf8_is_counted_as_in_an_event_log(flap: Recording, tmp_path: Path) -> None:
    lines = flap.files["events.jsonl"].read_bytes().splitlines(keepends=True)
    path = events_file(tmp_path, "events.jsonl", b"".join([lines[0], b'{"id": "\xff"}\n', *lines[1:]]))
    loaded = load_events(path)
    assert len(loaded.events) == flap.events and loaded.skipped == {"not UTF-8 text": 1}
    assert loaded.examples == [f"{path}:2: not UTF-8 text"]


def test_malformed_json_lines(flap: Recording, tmp_path: Path) -> None:
    lines = flap.files["events.jsonl"].read_text().splitlines()
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join([lines[0], "{not json", "", "[1, 2]", *lines[1:]]) + "\n")
    loaded = load_events(path)
    assert len(loaded.events) == flap.events
    assert loaded.skipped == {"invalid JSON": 1, "not an event object": 1}
    assert loaded.examples[0].startswith(f"{path}:2: invalid JSON")
    assert loaded.examples[1].startswith(f"{path}:4: not an event object")


# --- bad input: exit 2, naming the file ---------------------------------------------------------------------


def test_bad_inputs_exit_2(flap: Recording, tmp_path: Path) -> None:
    empty = tmp_path / "empty.log"
    empty.write_text("")
    junk = tmp_path / "junk.log"
    junk.write_text("hello\nworld\n")
    bad_json = tmp_path / "bad.json"
    bad_json.write_text('[{"id": 1,\n "event_type": }]')
    not_list = tmp_path / "object.json"
    not_list.write_text('{"events": []}')
    all_bad = tmp_path / "all-bad.json"
    all_bad.write_text('[{"id": "x"}, 3]')
    config = tmp_path / "config.toml"
    config.write_text("[policy]\nstorm_window = '10 minutes'\n")
    cases = [
        (["-a", flap.snapshot, "-e", tmp_path / "missing.log"], f"{tmp_path / 'missing.log'}: no such file"),
        (["-a", flap.snapshot, "-e", empty], f"{empty}: the event file is empty"),
        (["-a", flap.snapshot, "-e", junk], f"{junk}: not one event could be read (event.log); first problem: "
                                            f"{junk}:1: no timestamp and no previous event to continue"),
        (["-a", flap.snapshot, "-e", bad_json], f"{bad_json}:2: invalid JSON: Expecting value (column 16)"),
        (["-a", flap.snapshot, "-e", not_list], f"{not_list}: not a UFM event list: expected a JSON list or an "
                                                "object with a 'data' list"),
        (["-a", flap.snapshot, "-e", all_bad], f"{all_bad}: not one event could be read (json)"),
        (["-a", flap.snapshot, "-e", flap.files["event.log"], "--interval", "1 minute"],
         "--interval: not a duration: '1 minute'"),
        (["-a", flap.snapshot, "-e", flap.files["event.log"], "--interval", "0s"], "--interval: must be at least 1s"),
        (["-a", flap.snapshot, "-e", flap.files["event.log"], "--config", config],
         f"{config}: policy.storm_window: not a duration: '10 minutes'"),
        (["-a", tmp_path, "-e", flap.files["event.log"]], f"{tmp_path}/systems.json: no such file"),
        (["-a", flap.snapshot, "-e", flap.files["event.log"], "--plan", tmp_path / "nope.csv"],
         f"{tmp_path / 'nope.csv'}: no such file"),
    ]
    for args, message in cases:
        code, _, err = invoke(*args)
        assert code == 2, (args, err)
        assert err.startswith(f"fabricctl: error: {message}"), (message, err)


def test_a_full_disk_for_the_temporary_files_is_one_line(flap: Recording, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The decisions' spool (``--format json``) or the runs of a sort (JSON lines, ``--format jsonl``) find no
    room: exit 2, the directory named, no traceback."""
    def full(*args: object, **kwargs: object) -> object:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(timesort, "RUN_EVENTS", 3)
    monkeypatch.setattr(tempfile, "TemporaryFile", full)
    for output in ("json", "jsonl"):
        code, _, err = invoke("-a", flap.snapshot, "-e", flap.files["events.jsonl"], "--format", output)
        assert code == 2, err
        assert err == (f"fabricctl: error: No space left on device while replaying; its temporary files (the "
                       "decisions, and the events of a log out of time order) are written to "
                       f"{tempfile.gettempdir()}: set TMPDIR to a directory with room\n")


def test_the_loader_raises_input_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="is a directory"):
        load_events(tmp_path)


# --- input that used to crash replay or to vanish from its summary --------------------------------------------


def events_file(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


def test_unreadable_json_exits_2_naming_the_file(flap: Recording, tmp_path: Path) -> None:
    first = flap.files["events.jsonl"].read_text().splitlines()[0]
    cases = [
        (events_file(tmp_path, "deep.json", "[" * 100_000), "invalid JSON: nested deeper than 100 levels"),
        (events_file(tmp_path, "long.json", "[" + "9" * 5000 + "]"), "invalid JSON: a number of more than 4300"),
        (events_file(tmp_path, "deep.jsonl", first.replace("{", "{\"x\": " + "[" * 100_000, 1) + "\n"),
         "invalid JSON: nested deeper than 100 levels"),
    ]
    for path, message in cases:
        code, _, err = invoke("-a", flap.snapshot, "-e", path)
        assert code == 2 and err.startswith(f"fabricctl: error: {path}: {message}"), err


def test_a_deep_or_long_json_line_is_counted(flap: Recording, tmp_path: Path) -> None:
    lines = flap.files["events.jsonl"].read_text().splitlines()
    path = events_file(tmp_path, "events.jsonl", "\n".join([lines[0], "[" * 100_000, "9" * 5000, *lines[1:]]) + "\n")
    loaded = load_events(path)
    assert len(loaded.events) == flap.events and loaded.skipped == {"invalid JSON": 2}
    assert loaded.examples == [f"{path}:2: invalid JSON: nested deeper than 100 levels",
                               f"{path}:3: invalid JSON: a number of more than 4300 digits"]


def test_corrupt_and_truncated_gzip_exit_2(flap: Recording, tmp_path: Path) -> None:
    packed = gzip.compress(flap.files["event.log"].read_bytes())
    corrupt = packed[:12] + bytes(b ^ 0x5A for b in packed[12:40]) + packed[40:]  # a broken deflate stream
    for name, content in (("corrupt.log.gz", corrupt), ("cut.log.gz", packed[: len(packed) // 2]),
                          ("not-gzip.gz", b"\x1f\x8b" + b"\x00garbage" * 10)):
        path = events_file(tmp_path, name, content)
        code, _, err = invoke("-a", flap.snapshot, "-e", path)
        assert code == 2 and err.startswith(f"fabricctl: error: {path}: cannot read (a corrupt or truncated .gz "
                                            "file): "), err
        assert "Traceback" not in err and err.count("\n") == 1


def test_garbage_and_utf16_blocks_are_counted_by_kind(flap: Recording, tmp_path: Path) -> None:
    lines = flap.files["event.log"].read_text().splitlines()
    content = ("\n".join(lines[:2]) + "\n").encode() + b"".join(f"garbage {i}\n".encode() for i in range(30))
    content += ("\n".join(lines[2:4]) + "\n").encode("utf-16") + ("\n".join(lines[4:]) + "\n").encode()
    report = run_replay(flap.snapshot, events_file(tmp_path, "event.log", content))
    summary = report.summary
    # UTF-16's line feed is two bytes: the UTF-8 line after the block starts with the second, a NUL.
    assert summary["skipped_events"] == {"malformed line": 30, "not UTF-8 text": 3}
    assert summary["events"] == flap.events - 3 + 33 == summary["signals"] + 33
    assert summary["malformed"][0].startswith(f"{tmp_path / 'event.log'}:3: no timestamp, and not an indented")
    assert any("not UTF-8 text" in example for example in summary["malformed"]), "one example of each kind"


def test_a_line_dated_decades_away_is_skipped_with_an_example(flap: Recording, tmp_path: Path) -> None:
    lines = flap.files["event.log"].read_text().splitlines()
    for day in ("2099-12-31", "9999-12-31"):
        stray = lines[3].replace(lines[3][:10], day, 1)
        path = events_file(tmp_path, f"{day}.log", "\n".join([*lines[:3], stray, *lines[4:]]) + "\n")
        report = run_replay(flap.snapshot, path)
        assert report.summary["skipped_events"] == {"timestamp far from its neighbours": 1}
        assert report.summary["malformed"] == [
            f"{path}:4: timestamp far from its neighbours (more than 30 days from the records on either side): "
            f"{stray[:160]!r}"]
        assert report.summary["last_event"].startswith("2026-06-01")
    items = json.loads(flap.files["rest-6.17.json"].read_text())
    items[3]["timestamp"] = "2099-12-31 23:59:59"
    loaded = load_events(events_file(tmp_path, "stray.json", json.dumps(items)))
    assert loaded.skipped == {"timestamp far from its neighbours": 1}
    assert loaded.examples[0].startswith(f"{tmp_path / 'stray.json'}: [3]: timestamp far from its neighbours: 2099")


def test_timestamps_out_of_range_are_bad_or_refused(flap: Recording, tmp_path: Path) -> None:
    items = json.loads(flap.files["rest-6.17.json"].read_text())
    late = [{**items[0], "timestamp": "9999-12-31T23:59:59-07:00"}, {**items[1], "timestamp": 1e20}]
    loaded = load_events(events_file(tmp_path, "late.json", json.dumps(late + items[2:])))
    assert loaded.skipped == {"bad timestamp": 2} and len(loaded.events) == flap.events - 2
    alone = events_file(tmp_path, "alone.json", json.dumps([{**items[0], "timestamp": "9999-12-31 23:59:59"}]))
    code, _, err = invoke("-a", flap.snapshot, "-e", alone)
    assert code == 2 and err.startswith(f"fabricctl: error: {alone}: the events run from 9999-12-31T23:59:59+00:00")
    assert "dates out of range" in err


def test_interval_bounds(flap: Recording, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[daemon]\ninterval = '500ms'\n")
    cases = [
        (["--interval", "0.001"], "--interval: must be at least 1s (got 0.001s)"),
        (["--interval", "999999999999d"], "--interval: not a duration: '999999999999d' is longer than 3650 days"),
        (["--config", config], f"{config}: daemon.interval: must be at least 1s (got 0.5s)"),
    ]
    for args, message in cases:
        code, _, err = invoke("-a", flap.snapshot, "-e", flap.files["event.log"], *args)
        assert code == 2 and err == f"fabricctl: error: {message}\n", err
    assert run_replay(flap.snapshot, flap.files["event.log"], interval="1s").summary["interval_seconds"] == 1.0


# --- fuzzing: whatever the file holds, events or an InputError naming it -------------------------------------


@st.composite
def event_files(draw: st.DrawFn, recording: Recording) -> bytes:
    """One of the recording's files with lines replaced, cut, dropped or inserted, or bytes of any kind."""
    form = draw(st.sampled_from(["event.log", "rest-6.17.json", "events.jsonl", "bytes"]))
    if form == "bytes":
        return draw(st.binary(max_size=300))
    lines = recording.files[form].read_text().splitlines() if form != "rest-6.17.json" else json.dumps(
        json.loads(recording.files[form].read_text()), indent=1).splitlines()
    odd = st.sampled_from(["", "[" * 2000, "9" * 5000, '"timestamp": "9999-12-31T23:59:59-07:00",', "\x00\x01",
                           "2099-01-01 00:00:00.000 [1] [329] WARNING [X] Link [a]: b", "  indented", "}", "{"])
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["replace", "cut", "drop", "insert"]))
        if action == "replace":
            lines[at] = draw(odd | st.text(max_size=30))
        elif action == "cut":
            lines[at] = lines[at][: draw(st.integers(0, len(lines[at])))]
        elif action == "drop" and len(lines) > 1:
            del lines[at]
        else:
            lines.insert(at, draw(odd))
    content = ("\n".join(lines) + "\n").encode()
    return gzip.compress(content) if draw(st.booleans()) else content


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_event_file_gives_events_or_an_input_error_naming_it(flap: Recording, tmp_path: Path,
                                                                 data: st.DataObject) -> None:
    path = tmp_path / "fuzz-events"
    path.write_bytes(data.draw(event_files(flap)))
    try:
        loaded = load_events(path)
    except InputError as exc:
        assert str(exc).startswith(str(path)) and "\n" not in str(exc)
    else:
        assert loaded.records >= len(loaded.events) and loaded.events == sorted(loaded.events,
                                                                                key=lambda e: e.timestamp)
