"""Fixtures shared by every test package."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CONFORMANCE = REPO.parent / "shared" / "conformance" / "ufm_sdk"


@pytest.fixture
def conformance() -> Path:
    """NVIDIA's UFM SDK payloads and wiring plans, found beside the repository as ``../shared``."""
    if not CONFORMANCE.is_dir():
        pytest.skip(f"conformance files not found at {CONFORMANCE} (only the project's own machines have ../shared)")
    return CONFORMANCE
