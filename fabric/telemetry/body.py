"""A sample's bytes taken within bounds: its size and its longest line, checked as the bytes arrive.

A telemetry body is read whole before it is parsed (the columnar reader takes a buffer), so its size is capped;
and a line is capped far below that, as it arrives, so that a 100 MB line from a broken feed is refused after its
first ``line_limit`` bytes, never held. The body must end with a line end: a body cut short in its last number
is otherwise a valid CSV with a wrong value.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from fabric.telemetry.errors import TelemetryInputError
from topology.inputs import Bound

__all__ = ["DEFAULT_LIMITS", "SAMPLE_BOUND", "SAMPLE_LINE_LIMIT", "BodyCheck", "BodyLimits", "checked_body"]

SAMPLE_BOUND = Bound(256 << 20, "a UFM Telemetry sample")
"""h100-32k's sample, 200,000 rows of 19 columns, is 31 MB; UFM's instance may serve many more columns."""
SAMPLE_LINE_LIMIT = 64 << 10
"""A row of a hundred counters is under 4 KiB."""
_SLICE = 4 << 20
"""How much of a chunk is scanned for line ends at once: the scan's scratch arrays stay a few MiB."""
_NEWLINE = 0x0A


@dataclass(frozen=True, slots=True)
class BodyLimits:
    size: Bound = SAMPLE_BOUND
    line: int = SAMPLE_LINE_LIMIT


DEFAULT_LIMITS = BodyLimits()


class BodyCheck:
    """The bytes of one body fed as they arrive (an HTTP response's chunks, a file's reads), refused at the
    first chunk that takes it past its size or a line past its limit; :meth:`body` gives it whole once complete."""

    def __init__(self, source: str, limits: BodyLimits = DEFAULT_LIMITS) -> None:
        self._source = source
        self._limits = limits
        self._chunks: list[bytes] = []
        self._size = 0
        self._line = 1
        """The line the next byte belongs to."""
        self._open = 0
        """Bytes of that line seen so far."""

    def feed(self, chunk: bytes) -> None:
        self._size += len(chunk)
        if self._size > self._limits.size.limit:
            raise TelemetryInputError(f"larger than {self._limits.size.shown()}, the most {self._limits.size.kinds} "
                                      "may hold", source=self._source)
        view = memoryview(chunk)
        for start in range(0, len(chunk), _SLICE):
            self._scan(view[start:start + _SLICE])
        self._chunks.append(chunk)

    def _scan(self, piece: memoryview) -> None:
        ends = np.flatnonzero(np.frombuffer(piece, np.uint8) == _NEWLINE)
        limit = self._limits.line
        if not len(ends):
            self._open += len(piece)
            if self._open > limit:
                self._too_long(self._line)
            return
        if self._open + int(ends[0]) > limit:
            self._too_long(self._line)
        if len(ends) > 1:
            lengths = np.diff(ends) - 1
            longest = int(np.argmax(lengths))
            if lengths[longest] > limit:
                self._too_long(self._line + 1 + longest)
        self._line += len(ends)
        self._open = len(piece) - int(ends[-1]) - 1
        if self._open > limit:
            self._too_long(self._line)

    def _too_long(self, line: int) -> None:
        raise TelemetryInputError(f"a line longer than {self._limits.line:,} bytes: not a telemetry row",
                                  source=self._source, line=line)

    def body(self) -> bytes:
        """The whole body: refused when it is empty, or when its last line has no line end (it was cut short)."""
        if not self._size:
            raise TelemetryInputError("empty: no header line, no rows", source=self._source)
        if self._open:
            raise TelemetryInputError("cut short: the last line has no line end", source=self._source,
                                      line=self._line)
        return self._chunks[0] if len(self._chunks) == 1 else b"".join(self._chunks)


def checked_body(chunks: Iterable[bytes], source: str, limits: BodyLimits = DEFAULT_LIMITS) -> bytes:
    """``chunks`` joined into one body, refused as :class:`BodyCheck` refuses."""
    check = BodyCheck(source, limits)
    for chunk in chunks:
        check.feed(chunk)
    return check.body()
