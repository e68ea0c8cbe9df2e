"""The daemon's start-up runs under the collector's larger young generation, set before anything is read."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from fabric.daemon import process
from fabric.daemon.gcpolicy import GC_THRESHOLD


class _Read(Exception):
    pass


@pytest.fixture
def thresholds() -> Iterator[None]:
    kept = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*kept)


@pytest.mark.usefixtures("thresholds")
def test_the_young_generation_is_widened_before_the_configuration_and_the_plan_are_read(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seen: list[tuple[int, ...]] = []

    def load_config(path: Path) -> None:
        seen.append(gc.get_threshold())
        raise _Read

    monkeypatch.setattr(process, "load_config", load_config)
    with pytest.raises(_Read):
        process.run(process.RunOptions(tmp_path / "fabric.toml"))
    assert seen == [GC_THRESHOLD]
