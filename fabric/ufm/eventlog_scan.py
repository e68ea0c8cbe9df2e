"""An ``event.log``'s text read in blocks, the lines of event types nobody asked for passed over by one regex.

A replay asks for the 33 event types its rules use; in a training cluster's log most lines are of others (GID
and multicast-group churn, congestion thresholds). Read a line at a time, each of those lines costs a Python
iteration, a ``readline`` and a head match before it is dropped. Here a block of text is read at once and one
compiled regex (``_run_pattern``) matches, from a line's start, the longest run of consecutive lines that are each
the head of an event of a type not asked for, all of one date; such a run reaches the reader as one
:class:`PassedOver` (its first line and how many), and every other line as it is, so that
``fabric.ufm.eventlog.iter_event_log`` counts, dates and parses exactly what it would have line by line: the run's
lines are the ones its own head check would have left out (the same head regex, the type compared as the same
digits), and the date is the one its far-off check groups records by (the first ten characters).

Lines are what ``event_log_lines`` gives: the text stream's own newline handling (``\\r\\n`` and ``\\r`` read as
``\\n``), and a line longer than ``LINE_LIMIT`` characters that has not ended within the block read is given cut
to ``LINE_LIMIT + 1`` characters and the rest of it read past, never held.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import IO

from topology.inputs import LINE_LIMIT

__all__ = ["PassedOver", "scanned_lines"]

BLOCK = 1 << 20
"""Characters read at a time: a few thousand lines, so a Python iteration per block costs nothing."""


@dataclass(frozen=True, slots=True)
class PassedOver:
    """``count`` consecutive lines, each the head of an event of a type not asked for, all of the first's date."""

    first: str
    count: int


@lru_cache(maxsize=8)
def _run_pattern(wanted: frozenset[str]) -> re.Pattern[str]:
    # The head as fabric.ufm.eventlog._HEAD_RE reads it; the type group must not be one of the wanted digit strings
    # (compared as text there too: "0110" is not "110"). The date is captured and must repeat on every line.
    types = "|".join(sorted(map(re.escape, wanted), key=lambda text: (-len(text), text)))
    rest = rf"[ T]\d{{2}}:\d{{2}}:\d{{2}}(?:[.,]\d{{1,6}})? \[\d+\] \[(?!(?:{types})\])\d+\] [^\n]*\n"
    return re.compile(rf"(?P<date>\d{{4}}-\d{{2}}-\d{{2}}){rest}(?:(?P=date){rest})*")


def scanned_lines(text: IO[str], event_ids: Collection[int], *, limit: int = LINE_LIMIT, block: int = BLOCK
                  ) -> Iterator[str | PassedOver]:
    """The lines of ``text`` (each with its line end) and, in their place, the runs of lines of types other than
    ``event_ids`` (see the module's docstring)."""
    passing = _run_pattern(frozenset(str(event_id) for event_id in event_ids)).match
    carry = ""
    while chunk := text.read(block):
        carry += chunk
        while True:
            end = carry.rfind("\n") + 1
            if end:
                yield from _lines(carry, end, passing, limit)
                carry = carry[end:]
            if len(carry) <= limit:
                break
            # A line not ended within what was read: cut, as topology.inputs.capped_lines does, and read past.
            yield carry[:limit + 1]
            carry = _past_line(text, block)
    if carry:
        yield carry


def _lines(data: str, end: int, passing: Callable[[str, int, int], re.Match[str] | None], limit: int
           ) -> Iterator[str | PassedOver]:
    """The complete lines of ``data[:end]``, runs of lines passed over as one."""
    start = 0
    while start < end:
        run = passing(data, start, end)
        if run is None:
            stop = data.index("\n", start) + 1
            yield data[start:stop]
            start = stop
            continue
        stop = run.end()
        if stop - start > limit and max(map(len, data[start:stop - 1].split("\n"))) > limit:
            # A line too long among them: each given apart, for the reader to tell which.
            yield from (line + "\n" for line in data[start:stop - 1].split("\n"))
        else:
            yield PassedOver(data[start:data.index("\n", start)], data.count("\n", start, stop))
        start = stop


def _past_line(text: IO[str], block: int) -> str:
    """Read past the rest of the current line: what follows its end."""
    while chunk := text.read(block):
        _, newline, after = chunk.partition("\n")
        if newline:
            return after
    return ""
