"""Text for a terminal: one line per entry, whatever the reason's length (the whole text is in ``--format json``)."""

from __future__ import annotations

import shutil


def one_line(text: str, limit: int | None = None) -> str:
    """``text`` on one line (newlines and runs of spaces folded), cut with "…" at ``limit`` characters (by
    default the terminal's width, 80 when it is not a terminal)."""
    folded = " ".join(text.split())
    width = limit if limit is not None else shutil.get_terminal_size((80, 24)).columns
    return folded if len(folded) <= width else folded[: max(width - 1, 1)] + "…"
