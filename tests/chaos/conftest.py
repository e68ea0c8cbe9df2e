"""The daemon chaos run's uninterrupted control, made once for every test that compares a run with it."""

from __future__ import annotations

import time

import pytest
from daemon_chaos import Run, RunRecord


@pytest.fixture(scope="session")
def control(tmp_path_factory: pytest.TempPathFactory) -> RunRecord:
    began = time.monotonic()
    run = Run(tmp_path_factory.mktemp("daemon-chaos"), "control").execute()
    run.seconds = time.monotonic() - began
    return run
