"""The plan's model kept between runs: the same model as parsing, never an old plan's, never from a damaged or
foreign entry."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from topology import plancache
from topology.errors import InputError
from topology.formats.ndt import ndt_text, parse_ndt_bytes, read_ndt
from topology.generate import PRESETS, fat_tree
from topology.model import Fabric

TINY = ndt_text(fat_tree(PRESETS["tiny"]))
ROWS = TINY.splitlines(keepends=True)
PER_EXAMPLE = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def shape(fabric: Fabric) -> tuple[Any, ...]:
    """Everything a fabric holds, in order, to compare two of them whole."""
    return (fabric.source, fabric.plan, list(fabric.devices.items()), fabric.cables, list(fabric.by_end.items()),
            fabric._guids, [str(error) for error in fabric.conflicts], fabric.port_names,
            [(device.tier, device.kind) for device in fabric.devices.values()])


class Parses:
    """Counts the plan parses ``read_plan`` falls back to (each one a miss of the cache)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0

        def counted(*args: Any, **kwargs: Any) -> Fabric:
            self.count += 1
            return parse_ndt_bytes(*args, **kwargs)

        monkeypatch.setattr(plancache, "parse_ndt_bytes", counted)


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Parses:
    return Parses(monkeypatch)


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache" / "fabric-remediation"


def entries(cache: Path) -> list[Path]:
    return sorted(cache.glob("*.plan-model"))


def test_a_kept_model_is_the_parsed_one_and_is_read_without_parsing(tmp_path: Path, cache: Path,
                                                                     parses: Parses) -> None:
    plan = tmp_path / "plan.csv"
    plan.write_text(ndt_text(fat_tree(PRESETS["h100-4k"])))
    first = plancache.read_plan(plan, directory=cache)
    second = plancache.read_plan(plan, directory=cache)
    assert parses.count == 1
    assert shape(second) == shape(first) == shape(read_ndt(plan))
    (entry,) = entries(cache)
    assert os.stat(cache).st_mode & 0o777 == 0o700
    assert os.stat(entry).st_mode & 0o777 == 0o600


def test_no_directory_keeps_nothing(tmp_path: Path, parses: Parses) -> None:
    plan = tmp_path / "plan.csv"
    plan.write_text(TINY)
    for _ in range(2):
        assert shape(plancache.read_plan(plan, directory=None)) == shape(read_ndt(plan))
    assert parses.count == 2
    assert list(tmp_path.iterdir()) == [plan]


@st.composite
def edited_plans(draw: st.DrawFn) -> str:
    """The tiny plan with one of its cables' cells changed: a port, a device, a rate, or the row dropped."""
    row = draw(st.integers(1, len(ROWS) - 1))
    cells = ROWS[row].rstrip("\n").split(",")
    edit = draw(st.sampled_from(["port", "device", "speed", "width", "drop"]))
    if edit == "drop":
        return "".join(ROWS[:row] + ROWS[row + 1:])
    if edit == "port":
        cells[3] = f"Port {draw(st.integers(9, 16))}"  # a leaf or spine port the tiny plan leaves free
    elif edit == "device":
        cells[2] = draw(st.sampled_from(["pod01-leaf99", "POD01-LEAF01", "pod02-spine01"]))
    elif edit == "speed":
        cells[5] = draw(st.sampled_from(["200000", "", "HDR", "100G"]))
    else:
        cells[6] = draw(st.sampled_from(["1x", "2x", "", "8x"]))
    return "".join([*ROWS[:row], ",".join(cells) + "\n", *ROWS[row + 1:]])


@PER_EXAMPLE
@given(edited=edited_plans())
def test_a_changed_plan_is_never_answered_from_the_old_entry(tmp_path_factory: pytest.TempPathFactory,
                                                              edited: str) -> None:
    work = tmp_path_factory.mktemp("changed")
    cache, plan = work / "cache", work / "plan.csv"
    plan.write_text(TINY)
    stamp = os.stat(plan).st_mtime_ns
    plancache.read_plan(plan, directory=cache)
    plan.write_text(edited)
    os.utime(plan, ns=(stamp, stamp))  # the same size and time would fool a cache keyed by them: not by the bytes
    try:
        expected = shape(read_ndt(plan))
    except InputError as exc:  # an edit the reader refuses (a port cabled twice): refused the same way
        with pytest.raises(InputError) as refused:
            plancache.read_plan(plan, directory=cache)
        assert str(refused.value) == str(exc)
        return
    assert shape(plancache.read_plan(plan, directory=cache)) == expected
    assert shape(plancache.read_plan(plan, directory=cache)) == expected  # and its own entry, now kept


@st.composite
def damage(draw: st.DrawFn) -> tuple[str, int, bytes]:
    how = draw(st.sampled_from(["cut", "flip", "replace", "append"]))
    return how, draw(st.integers(0, 1 << 20)), draw(st.binary(min_size=1, max_size=64))


@PER_EXAMPLE
@given(damaged=damage())
def test_a_damaged_entry_is_passed_over_and_written_again(tmp_path_factory: pytest.TempPathFactory,
                                                          damaged: tuple[str, int, bytes]) -> None:
    work = tmp_path_factory.mktemp("damaged")
    cache, plan = work / "cache", work / "plan.csv"
    plan.write_text(TINY)
    expected = shape(plancache.read_plan(plan, directory=cache))
    (entry,) = entries(cache)
    kept = entry.read_bytes()
    how, at, junk = damaged
    at %= len(kept)
    if how == "cut":
        changed = kept[:at]
    elif how == "flip":
        changed = kept[:at] + bytes([kept[at] ^ (junk[0] or 1)]) + kept[at + 1:]
    elif how == "replace":
        changed = junk
    else:
        changed = kept + junk
    entry.write_bytes(changed)
    assert shape(plancache.read_plan(plan, directory=cache)) == expected
    rewritten = plancache._load(cache, entry)  # written again whole: the next run reads it
    assert rewritten is not None
    assert shape(rewritten) == expected


def test_a_payload_of_another_shape_is_passed_over(tmp_path: Path, cache: Path, parses: Parses) -> None:
    """An entry whose digest is right but whose payload is not a model (as another version of this module might
    have written, were the key not to change with the code) is parsed again, not an error."""
    import hashlib
    import marshal

    plan = tmp_path / "plan.csv"
    plan.write_text(TINY)
    plancache.read_plan(plan, directory=cache)
    (entry,) = entries(cache)
    for payload in (marshal.dumps(("plan.csv", True, [("x",)], [], [])), marshal.dumps([1, 2]), b"\xff"):
        entry.write_bytes(hashlib.sha256(payload).digest() + payload)
        assert shape(plancache.read_plan(plan, directory=cache)) == shape(read_ndt(plan))
    assert parses.count == 4


def test_other_code_misses_every_entry(tmp_path: Path, cache: Path, parses: Parses,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    plan = tmp_path / "plan.csv"
    plan.write_text(TINY)
    plancache.read_plan(plan, directory=cache)
    monkeypatch.setattr(plancache, "_code_digest", lambda: b"another release")
    plancache.read_plan(plan, directory=cache)
    assert parses.count == 2
    assert len(entries(cache)) == 2


def test_code_without_its_source_keeps_nothing(tmp_path: Path, cache: Path, parses: Parses,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    plan = tmp_path / "plan.csv"
    plan.write_text(TINY)
    monkeypatch.setattr(plancache, "_code_digest", lambda: None)
    for _ in range(2):
        assert shape(plancache.read_plan(plan, directory=cache)) == shape(read_ndt(plan))
    assert parses.count == 2
    assert not cache.exists()


def test_the_key_holds_the_name_and_the_lenient_flag(tmp_path: Path, cache: Path, parses: Parses) -> None:
    """The cables' origins name the file they were read from: a copy of the plan elsewhere is its own entry."""
    plan, copy = tmp_path / "plan.csv", tmp_path / "copy.csv"
    plan.write_text(TINY)
    copy.write_text(TINY)
    plancache.read_plan(plan, directory=cache)
    copied = plancache.read_plan(copy, directory=cache)
    assert copied.cables[0].origin == f"{copy}:2"
    plancache.read_plan(plan, lenient=True, directory=cache)
    assert parses.count == 3


def test_a_lenient_plan_with_conflicts_is_not_kept(tmp_path: Path, cache: Path) -> None:
    plan = tmp_path / "plan.csv"
    plan.write_text(TINY + "pod01-node09,pod01-node09 mlx5_0,pod01-leaf01,Port 1,Data,400000,4x\n")
    fabric = plancache.read_plan(plan, lenient=True, directory=cache)
    assert fabric.conflicts
    assert entries(cache) == []


@pytest.fixture
def kept(tmp_path: Path, cache: Path) -> Iterator[tuple[Path, Path]]:
    plan = tmp_path / "plan.csv"
    plan.write_text(TINY)
    plancache.read_plan(plan, directory=cache)
    (entry,) = entries(cache)
    yield plan, entry


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o622])
def test_an_entry_others_may_read_or_write_is_not_trusted(kept: tuple[Path, Path], cache: Path, parses: Parses,
                                                          mode: int) -> None:
    plan, entry = kept
    entry.chmod(mode)
    plancache.read_plan(plan, directory=cache)
    assert parses.count == 1
    assert os.stat(entry).st_mode & 0o777 == 0o600  # replaced by one of its own


def test_a_directory_others_may_enter_is_neither_read_nor_written(kept: tuple[Path, Path], cache: Path,
                                                                  parses: Parses) -> None:
    plan, entry = kept
    cache.chmod(0o755)
    before = entry.stat().st_mtime_ns
    plancache.read_plan(plan, directory=cache)
    assert parses.count == 1
    assert entry.stat().st_mtime_ns == before
    assert os.stat(cache).st_mode & 0o777 == 0o755  # not made private: it may be someone else's


def test_an_entry_that_is_a_link_is_not_followed(kept: tuple[Path, Path], cache: Path, parses: Parses) -> None:
    plan, entry = kept
    elsewhere = entry.with_name("elsewhere")
    entry.rename(elsewhere)
    entry.symlink_to(elsewhere)
    plancache.read_plan(plan, directory=cache)
    assert parses.count == 1
    assert not entry.is_symlink()


def test_an_unwritable_directory_is_no_error(tmp_path: Path, parses: Parses) -> None:
    plan, blocker = tmp_path / "plan.csv", tmp_path / "file"
    plan.write_text(TINY)
    blocker.write_text("")
    for _ in range(2):
        assert shape(plancache.read_plan(plan, directory=blocker / "cache")) == shape(read_ndt(plan))
    assert parses.count == 2


def test_only_the_newest_entries_are_kept(tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plancache, "KEPT", 3)
    plan = tmp_path / "plan.csv"
    written = []
    for k in range(5):
        before = set(entries(cache))
        plan.write_text(TINY + f"pod01-leaf01,Port {12 + k},pod01-leaf02,Port {12 + k}\n")
        plancache.read_plan(plan, directory=cache)
        (new,) = set(entries(cache)) - before
        os.utime(new, (k + 1, k + 1))  # write times a test can order (the file system's may tie), all in the past
        written.append(new)
    assert entries(cache) == sorted(written[2:])


def test_a_dead_writers_temporary_file_is_removed_a_live_ones_kept(tmp_path: Path, cache: Path) -> None:
    plan = tmp_path / "plan.csv"
    plan.write_text(TINY)
    cache.mkdir(mode=0o700, parents=True)
    dead, live = cache / ".dead.tmp", cache / ".live.tmp"
    for temporary in (dead, live):
        temporary.write_bytes(b"half an entry")
    os.utime(dead, (1, 1))
    plancache.read_plan(plan, directory=cache)
    assert not dead.exists()
    assert live.exists()


@pytest.mark.parametrize(("xdg", "expected"), [("/var/tmp/c", "/var/tmp/c/fabric-remediation"),
                                                ("relative", "HOME/.cache/fabric-remediation"),
                                                ("", "HOME/.cache/fabric-remediation")])
def test_the_directory_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, xdg: str,
                                   expected: str) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", xdg)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert plancache.default_directory() == Path(expected.replace("HOME", str(tmp_path)))
