"""The daemon chaos run's uninterrupted controls, each made once for every test that compares a run with it."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from daemon_chaos import Run, RunRecord


@pytest.fixture(scope="session")
def controls(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], RunRecord]:
    """The control of a ``[ufm] method``, run when first asked for."""
    made: dict[str, RunRecord] = {}

    def control(method: str) -> RunRecord:
        if method not in made:
            began = time.monotonic()
            name = "control" if method == "disable" else f"control-{method}"
            made[method] = Run(tmp_path_factory.mktemp("daemon-chaos"), name, method=method).execute()
            made[method].seconds = time.monotonic() - began
        return made[method]
    return control


@pytest.fixture(scope="session")
def control(controls: Callable[[str], RunRecord]) -> RunRecord:
    return controls("disable")
