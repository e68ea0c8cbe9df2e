"""What commands print for a person: lines and tables, every value made visible, as wide as where they go.

Every value a table or a line shows (a name, a reason, a matcher: from a plan, UFM, the API or a user) goes through
``topology.printable.visible``, so a newline cannot make two rows of one, an ESC cannot drive the terminal and a
U+202E cannot turn a line around; table cells are ``rich`` ``Text``, never markup, so ``[red]`` in a name is shown,
not obeyed.

Width: on a terminal, one-line rows and tables are cut with "…" to its width; written to a file or a pipe nothing
is cut (a table is as wide as its widest row): a report redirected to a file is kept to be read whole. ``COLUMNS``
set in the environment is a width asked for, and is kept to (as rich and the shell's tools do).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING

from topology.numerals import whole_number
from topology.printable import visible

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

UNBOUNDED = 1_000_000
"""The console's width when it is not a terminal: wider than any row, so rich cuts and wraps nothing."""

_WIDTHS = {"at": 14, "action": 10, "rule": 12, "key": 10, "status": 8, "created": 14, "guid": 16, "confidence": 10}
"""On a terminal, the short columns' widths; the others share what is left."""
_RATIOS = {"component": 2, "why": 3}
"""On a terminal, how the other columns share the width: the reason gets the most."""


def width() -> int | None:
    """How wide standard output is: a terminal's width, ``COLUMNS`` when set, else None (a file or a pipe:
    unbounded)."""
    if sys.stdout.isatty():
        return shutil.get_terminal_size().columns
    columns = os.environ.get("COLUMNS", "")
    return whole_number(columns) or None  # 0 columns is no width


def one_line(text: str, limit: int | None = None) -> str:
    """``text`` on one line, made visible (``visible``: a newline shows as ``\\n``) with runs of spaces folded, cut
    with "…" at ``limit`` characters; by default at the output's ``width`` (not at all into a file or a pipe)."""
    folded = " ".join(visible(text).split())  # made visible, the only whitespace left is the ASCII space
    cut = limit if limit is not None else width()
    return folded if cut is None or len(folded) <= cut else folded[: max(cut - 1, 1)] + "…"


def console() -> Console:
    """A rich console for standard output at its ``width`` (unbounded into a file or a pipe)."""
    from rich.console import Console

    return Console(width=width() or UNBOUNDED)


def cell(value: object, style: str = "") -> Text:
    """A table cell showing ``value`` as ``one_line`` makes it (uncut: the table fits cells to its width)."""
    from rich.text import Text

    return Text(one_line(str(value), UNBOUNDED), style=style)


def cell_lines(values: Iterable[object]) -> Text:
    """A cell of several lines, one a value, each made visible: the line breaks are the table's, none a value's."""
    from rich.text import Text

    return Text("\n".join(one_line(str(value), UNBOUNDED) for value in values))


class LineTable:
    """A table of one line per row for ``out``: on a terminal cut with "…" to its width (fixed widths for the short
    columns, the rest shared, the reason ``why`` getting the most), elsewhere as wide as its rows. Every value
    added is made visible (``cell``) unless it is a ``Text`` built by ``cell`` already (with a style)."""

    def __init__(self, out: Console, title: str, *columns: str) -> None:
        from rich.table import Table

        fit = out.width < UNBOUNDED
        self.table = Table(title=title, title_justify="left", expand=fit, box=None, pad_edge=False)
        for column in columns:
            self.table.add_column(column, no_wrap=True, overflow="ellipsis" if fit else "fold",
                                  width=_WIDTHS.get(column) if fit else None,
                                  ratio=_RATIOS.get(column) if fit else None)

    def add(self, *values: object) -> None:
        from rich.text import Text

        self.table.add_row(*(value if isinstance(value, Text) else cell(value) for value in values))

    def __rich__(self) -> Table:
        return self.table


def boxed_table(title: str, columns: Iterable[str], rows: Iterable[Iterable[object]]) -> Table:
    """A bordered table (``verify``'s), every value made visible; a ``Text`` value (``cell_lines``) is kept."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title=title, title_justify="left", title_style="bold")
    for column in columns:
        table.add_column(column)
    for row in rows:
        table.add_row(*(value if isinstance(value, Text) else cell(value) for value in row))
    return table
