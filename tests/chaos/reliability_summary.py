"""The figures ``docs/reliability.md`` quotes, written by the suite itself: each part of it adds its section to the
JSON file ``FABRIC_RELIABILITY_SUMMARY`` names (nothing is written when it is unset), and a markdown rendering beside
it (``.md``), so that a run's numbers are copied, never retyped.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

SUMMARY_ENV = "FABRIC_RELIABILITY_SUMMARY"


def record(section: str, figures: dict[str, Any]) -> None:
    """Merge ``figures`` as ``section`` into the summary file, if one is asked for."""
    target = os.environ.get(SUMMARY_ENV)
    if not target:
        return
    path = Path(target)
    summary = json.loads(path.read_text()) if path.exists() else {}
    summary[section] = figures
    path.write_text(json.dumps(summary, indent=2, sort_keys=True, default=str) + "\n")
    path.with_suffix(".md").write_text(markdown(summary))


def markdown(summary: dict[str, Any]) -> str:
    lines = ["# Reliability figures (written by the suite)", ""]
    for section, figures in sorted(summary.items()):
        lines += [f"## {section}", "", "| figure | value |", "|---|---|"]
        lines += [f"| {name} | {_cell(value)} |" for name, value in figures.items()]
        lines.append("")
    return "\n".join(lines)


def _cell(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}: {v}" for k, v in value.items()) or "none"
    if isinstance(value, list):
        return "; ".join(map(str, value)) or "none"
    return str(value)
