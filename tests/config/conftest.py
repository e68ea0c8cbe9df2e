"""Every configuration test starts from an environment without ``FABRIC_*`` variables."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.upper().startswith("FABRIC_"):
            monkeypatch.delenv(name)
