"""ports.json read by two processes, a half each (``topology.forked``, ``ufm_snapshot._ports_in_two``): the same
fabric, or the same one-line error, as one process reading it whole, whatever the document holds."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from topology.errors import InputError
from topology.forked import in_child, may_fork
from topology.formats import ufm_snapshot
from topology.formats.ufm_render import UfmView, render_links, render_ports, render_systems
from topology.formats.ufm_snapshot import read_ufm_snapshot
from topology.generate import PRESETS, fat_tree

pytestmark = pytest.mark.skipif(not may_fork(), reason="no fork here, or a single CPU: ports.json is read whole")

VIEW = UfmView(fat_tree(PRESETS["tiny"]))
DOCUMENTS = {"systems": render_systems(VIEW), "links": render_links(VIEW), "ports": render_ports(VIEW)}
ODD = st.none() | st.booleans() | st.integers() | st.text(max_size=12) | st.lists(st.integers(), max_size=2) \
    | st.dictionaries(st.text(max_size=3), st.integers(), max_size=2)


# --- the child --------------------------------------------------------------------------------------------------


def test_the_child_hands_back_what_its_work_returned() -> None:
    assert in_child(lambda: [("a", 1, None, 2.5, {"k": [1]})])() == [("a", 1, None, 2.5, {"k": [1]})]


def test_a_child_that_fails_or_returns_what_marshal_refuses_hands_back_none() -> None:
    def fails() -> object:
        raise InputError("a bad port")

    assert in_child(fails)() is None
    assert in_child(object)() is None


def test_a_fork_refused_hands_back_none(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused() -> int:
        raise BlockingIOError("fork: resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", refused)
    assert in_child(lambda: 1)() is None


def test_no_fork_while_another_thread_runs() -> None:
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not may_fork()
    finally:
        stop.set()
        other.join()
    assert may_fork()


# --- the split read -----------------------------------------------------------------------------------------------


def _outcome(directory: Path) -> object:
    """What reading ``directory`` gives: the fabric's devices, cables and port names, or the error's one line."""
    try:
        fabric = read_ufm_snapshot(directory)
    except InputError as exc:
        return str(exc)
    devices = [(d.name, d.kind, d.guid, d.host, d.origin, d.tier) for d in fabric.devices.values()]
    return devices, [(c, c.origin, c.width, c.speed_gbps) for c in fabric.cables], list(fabric.port_names.items())


@pytest.fixture
def split_reads() -> Iterator[list[bool]]:
    """Every ports.json from the smallest size read in two; what each read did (``True``: in two)."""
    done: list[bool] = []
    real = ufm_snapshot._ports_in_two

    def counted(*args: Any) -> bool:
        done.append(real(*args))
        return done[-1]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ufm_snapshot, "SPLIT_BYTES", 1)
        patch.setattr(ufm_snapshot, "_ports_in_two", counted)
        yield done


def _one_process(directory: Path) -> object:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ufm_snapshot, "may_fork", lambda: False)
        return _outcome(directory)


def _write(directory: Path, ports: bytes) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name in ("systems", "links"):
        (directory / f"{name}.json").write_text(json.dumps(DOCUMENTS[name], separators=(",", ":")))
    (directory / "ports.json").write_bytes(ports)
    return directory


def test_a_snapshot_read_in_two_is_the_fabric_one_process_reads(tmp_path: Path, split_reads: list[bool]) -> None:
    directory = _write(tmp_path, json.dumps(DOCUMENTS["ports"], indent=1).encode())
    assert _outcome(directory) == _one_process(directory)
    assert split_reads[0] is True  # read in two, not read whole after all


@st.composite
def ports_documents(draw: st.DrawFn) -> bytes:
    """tiny's ports.json with an entry's field set to any JSON, deleted or the entry replaced, in either half,
    written compact or indented; sometimes a byte changed too (text that is not JSON, a cut inside a value)."""
    entries: list[Any] = json.loads(json.dumps(DOCUMENTS["ports"]))
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, len(entries) - 1))
        action = draw(st.sampled_from(["set", "delete", "replace"]))
        entry = entries[at]
        if action == "set" and isinstance(entry, dict):
            entry[draw(st.sampled_from(["name", "number", "dname", "active_width", "active_speed",
                                        "node_description"]))] = draw(ODD)
        elif action == "delete" and isinstance(entry, dict):
            del entry[draw(st.sampled_from(sorted(entry)))]
        else:
            entries[at] = draw(ODD)
    data = json.dumps(entries, indent=draw(st.sampled_from([None, 2]))).encode()
    if draw(st.booleans()):
        at = draw(st.integers(0, len(data) - 1))
        data = data[:at] + draw(st.sampled_from([b"", b"x", b"}", b",", b'"', b"{"])) + data[at + 1:]
    return data


@settings(max_examples=60, deadline=None)
@given(ports_documents())
@example(json.dumps([{**DOCUMENTS["ports"][0], "name": "bad"}, *DOCUMENTS["ports"][1:]]).encode())  # said here
def test_any_ports_document_read_in_two_gives_what_one_process_gives(tmp_path_factory: pytest.TempPathFactory,
                                                                    ports: bytes) -> None:
    directory = _write(tmp_path_factory.getbasetemp() / "split", ports)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ufm_snapshot, "SPLIT_BYTES", 1)
        assert _outcome(directory) == _one_process(directory)


def test_a_fault_in_the_second_half_is_said_as_one_process_says_it(tmp_path: Path, split_reads: list[bool]) -> None:
    entries = json.loads(json.dumps(DOCUMENTS["ports"]))
    entries[-1]["name"] = "no port name"
    directory = _write(tmp_path, json.dumps(entries).encode())
    said = _outcome(directory)
    assert said == _one_process(directory)
    assert f"[{len(entries) - 1}].name" in str(said) and "not a UFM port name" in str(said)
    assert split_reads[0] is False  # the child refused its half: the whole was read here, and said where
