"""Fixtures shared by every test package."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CONFORMANCE = REPO.parent / "shared" / "conformance" / "ufm_sdk"


@pytest.fixture(autouse=True, scope="session")
def _private_cache_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """``fabricctl verify`` keeps plans' models under ``$XDG_CACHE_HOME``: the tests' in a directory of their own,
    not the user's (and the commands the tests start inherit it)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
        yield


@pytest.fixture
def tiny_plan(tmp_path: Path) -> Path:
    """The ``tiny`` preset's wiring plan as an NDT file."""
    from topology.formats.ndt import write_ndt
    from topology.generate import PRESETS, fat_tree

    path = tmp_path / "plan.csv"
    with path.open("w", newline="") as handle:
        write_ndt(fat_tree(PRESETS["tiny"]), handle)
    return path


@pytest.fixture
def conformance() -> Path:
    """NVIDIA's UFM SDK payloads and wiring plans, found beside the repository as ``../shared``."""
    if not CONFORMANCE.is_dir():
        pytest.skip(f"conformance files not found at {CONFORMANCE} (only the project's own machines have ../shared)")
    return CONFORMANCE


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Skips as one line per reason, with how many tests it skipped (pytest's ``-rs`` lists every test)."""
    reasons: dict[str, int] = {}
    for report in terminalreporter.stats.get("skipped", []):
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        reason = reason.removeprefix("Skipped: ")
        reasons[reason] = reasons.get(reason, 0) + 1
    if reasons:
        terminalreporter.section("skipped, by reason", sep="-")
        for reason, count in sorted(reasons.items(), key=lambda item: -item[1]):
            terminalreporter.write_line(f"{count:>4} skipped: {reason}")
