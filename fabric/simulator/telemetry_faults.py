"""What can be wrong with UFM Telemetry's answer itself, rather than with the fabric it describes.

| kind        | the answer                                                                                  |
|-------------|---------------------------------------------------------------------------------------------|
| `stale`     | the sample taken when the fault began, again and again: its timestamp (and counters) frozen |
| `missing`   | the rows of some ports left out                                                              |
| `malformed` | `bad_header`: the header without its `port_guid` column (rows keep theirs);                  |
|             | `text_in_number`: `N/A` in the first row's `Symbol_Errors`;                                 |
|             | `truncated`: the body cut in the middle of a row                                             |

A fault lasts a window of simulated time, a number of answers, or both (whichever ends first), or until
``DELETE /simulator/telemetry_faults``. Every answer served counts against each fault that shaped it.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from fabric.simulator.counters import HEADER


class TelemetryFaultKind(StrEnum):
    STALE = "stale"
    MISSING = "missing"
    MALFORMED = "malformed"


class Malformation(StrEnum):
    BAD_HEADER = "bad_header"
    TEXT_IN_NUMBER = "text_in_number"
    TRUNCATED = "truncated"


@dataclass(slots=True)
class TelemetryFault:
    kind: TelemetryFaultKind
    end: datetime | None = None
    remaining: int | None = None
    ports: frozenset[str] = frozenset()
    """``missing``: the ports whose rows are left out."""
    malformation: Malformation = Malformation.TRUNCATED
    frozen: bytes | None = None
    """``stale``: the sample served, as taken when the fault began."""
    served: int = 0

    def active(self, now: datetime) -> bool:
        return (self.end is None or now < self.end) and (self.remaining is None or self.remaining > 0)

    def count(self) -> None:
        self.served += 1
        if self.remaining is not None:
            self.remaining -= 1

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "end": self.end.isoformat() if self.end else None,
                "remaining": self.remaining, "ports": sorted(self.ports),
                "malformation": self.malformation.value if self.kind is TelemetryFaultKind.MALFORMED else None,
                "served": self.served}


@dataclass(slots=True)
class TelemetryFaults:
    """The active faults of the telemetry feed."""

    _faults: list[TelemetryFault] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, fault: TelemetryFault) -> None:
        with self._lock:
            self._faults.append(fault)

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()

    def current(self, now: datetime) -> list[TelemetryFault]:
        """The faults that shape an answer at ``now`` (the spent ones dropped)."""
        with self._lock:
            self._faults = [f for f in self._faults if f.active(now)]
            return list(self._faults)

    def to_list(self) -> list[dict[str, Any]]:
        with self._lock:
            return [f.to_dict() for f in self._faults]


def malformed(body: bytes, how: Malformation) -> bytes:
    """``body`` (a whole CSV sample) made malformed ``how``."""
    if how is Malformation.BAD_HEADER:
        return body.replace(HEADER.encode(), HEADER.replace(",port_guid", "").encode(), 1)
    first_row = body.find(b"\n") + 1
    if how is Malformation.TEXT_IN_NUMBER:
        # Symbol_Errors is the seventh column: after six commas of the first row.
        at = first_row
        for _ in range(6):
            at = body.index(b",", at) + 1
        end = body.index(b",", at)
        return body[:at] + b"N/A" + body[end:]
    middle = max(first_row, len(body) // 2)
    cut = body.find(b",", middle)  # a comma is never a row's end: the last row is cut short, not merely dropped
    return body[:cut if cut > 0 else len(body) - 2]
