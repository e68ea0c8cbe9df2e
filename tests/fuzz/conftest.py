"""The schemathesis suites' figures at the end of the run."""

from __future__ import annotations

import pytest
from fuzz_support import TALLIES


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if TALLIES:
        terminalreporter.section("schemathesis", sep="-")
        for tally in TALLIES:
            terminalreporter.write_line(tally.line())


@pytest.fixture(autouse=True)
def _node_id_for_schemathesis(request: pytest.FixtureRequest) -> None:
    """Schemathesis' lazy schema (``from_fixture``) renames the running test through ``node._nodeid`` so that each
    operation is reported by method and path; pytest 9.2 keeps the id elsewhere, so the attribute is given to it."""
    node = request.node
    if not hasattr(node, "_nodeid"):
        node._nodeid = node.nodeid
