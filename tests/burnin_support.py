"""The weak-ports burn-in scenario (``examples/scenarios/burnin-weak-ports.toml``) as the command's, the engine's and
the daemon's burn-in tests plant it on ``tiny``, and what its survivors report must say."""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

SCENARIO = Path(__file__).resolve().parents[1] / "examples" / "scenarios" / "burnin-weak-ports.toml"
NOT_SURVIVED = {
    "failed": {"pod01-leaf01/Port 1", "pod01-leaf01/Port 5", "pod01-leaf01/Port 7", "pod01-spine01/Port 1",
               "pod01-spine02/Port 1"},
    "idle": {"pod02-leaf02/Port 5", "pod02-spine01/Port 3"},  # the link the workload misses, both ends
}
"""The ports of a window on the scenario that did not survive, by verdict (``idle``: where UFM Telemetry is read)."""
UPLINKS = {"link:pod01-leaf01/5|pod01-spine01/1", "link:pod01-leaf01/7|pod01-spine02/1"}
"""The two weak uplinks of one leaf: the capacity guard lets one of them go."""
HOST_LINK = "link:pod01-leaf01/1|pod01-node01 mlx5_0/1"
"""The weak host link: a ticket, never a disable."""


def steps() -> Iterator[dict[str, Any]]:
    """The scenario's steps, each without its ``at``: planted at once."""
    for step in tomllib.loads(SCENARIO.read_text())["steps"]:
        yield {key: value for key, value in step.items() if key != "at"}


def plant(inject: Callable[..., object]) -> None:
    for step in steps():
        inject(**step)


def not_survived(report: dict[str, Any]) -> dict[str, set[str]]:
    """A survivors report's ports that did not survive, by verdict."""
    by_verdict: dict[str, set[str]] = {}
    for entry in report["not_survived"]:
        by_verdict.setdefault(entry["verdict"], set()).add(entry["port"])
    return by_verdict
