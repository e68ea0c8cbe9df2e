"""Injected API misbehaviour: errors, slow or late answers, truncated bodies and short lists for chosen endpoints.

A rule names an endpoint by the path after the REST prefix (``/resources/ports``; a trailing ``*``
matches a prefix, ``*`` alone every endpoint) and is active during a window of simulated time, for the
next N matching requests, or both (whichever ends first).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any


class ApiFaultMode(StrEnum):
    ERROR = "error"
    """Answer ``status`` (500 unless told) with a short error body."""
    DELAY = "delay"
    """Wait ``delay`` real seconds, then answer normally (long enough, it is a client timeout)."""
    TRUNCATE = "truncate"
    """Answer normally but cut the body to ``keep`` (a fraction) of its length: invalid JSON."""
    LATE = "late"
    """Carry the request out at once, but answer only ``delay`` real seconds later: a client that times out
    first does not know that its write was done."""
    EMPTY = "empty"
    """Answer a list endpoint with an empty list (valid JSON, nothing in it)."""
    PARTIAL = "partial"
    """Answer a list endpoint with only its first ``keep`` (a fraction) of items: valid JSON, a part of the list."""
    OLDEST = "oldest"
    """Answer a list endpoint with only its first ``count`` items: for ``/app/events``, UFM's oldest events."""


LIST_MODES = frozenset({ApiFaultMode.EMPTY, ApiFaultMode.PARTIAL, ApiFaultMode.OLDEST})
"""Modes that answer a valid but shortened JSON list (a paged ``{"data": [...]}`` keeps its shape)."""


@dataclass(slots=True)
class ApiFault:
    endpoint: str
    mode: ApiFaultMode
    status: int = 500
    delay: float = 0.0
    keep: float = 0.5
    count: int = 0
    """``oldest``: how many items are left in the list."""
    start: datetime | None = None
    end: datetime | None = None
    remaining: int | None = None
    method: str | None = None
    hits: int = 0

    def matches(self, path: str, method: str, now: datetime) -> bool:
        if self.method and self.method.upper() != method.upper():
            return False
        if self.start is not None and now < self.start:
            return False
        if self.end is not None and now >= self.end:
            return False
        if self.remaining is not None and self.remaining <= 0:
            return False
        pattern = self.endpoint.rstrip("/") or "/"
        if pattern == "*":
            return True
        if pattern.endswith("*"):
            return path.startswith(pattern[:-1])
        return path.rstrip("/") == pattern

    @property
    def spent(self) -> bool:
        return self.remaining is not None and self.remaining <= 0

    def shorten(self, items: list[Any]) -> list[Any]:
        """The items a list mode leaves of ``items``."""
        if self.mode is ApiFaultMode.OLDEST:
            return items[: self.count]
        if self.mode is ApiFaultMode.PARTIAL:
            return items[: int(len(items) * max(0.0, min(1.0, self.keep)))]
        return []

    def to_dict(self) -> dict[str, Any]:
        return {
            "endpoint": self.endpoint, "mode": self.mode.value, "status": self.status, "delay": self.delay,
            "keep": self.keep, "count": self.count, "start": self.start.isoformat() if self.start else None,
            "end": self.end.isoformat() if self.end else None, "remaining": self.remaining,
            "method": self.method, "hits": self.hits,
        }


class ApiFaults:
    """The active rules; the first rule matching a request applies to it."""

    def __init__(self) -> None:
        self._rules: list[ApiFault] = []
        self._lock = threading.Lock()

    def add(self, rule: ApiFault) -> None:
        with self._lock:
            self._rules.append(rule)

    def clear(self) -> None:
        with self._lock:
            self._rules.clear()

    def take(self, path: str, method: str, now: datetime) -> ApiFault | None:
        """The rule that applies to this request (counting it), or None."""
        with self._lock:
            for rule in self._rules:
                if rule.matches(path, method, now):
                    rule.hits += 1
                    if rule.remaining is not None:
                        rule.remaining -= 1
                    return rule
            self._rules = [r for r in self._rules if not r.spent and (r.end is None or now < r.end)]
            return None

    def rules(self) -> list[ApiFault]:
        with self._lock:
            return list(self._rules)
