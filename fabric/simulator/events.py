"""The simulator's event history: monotonic integer ids, both REST payload shapes, and ``event.log`` lines.

REST shapes (as UFM's REST API documents them):
- up to UFM 6.16 (``LEGACY``): ``type`` is the event number as a string, ``counter`` null, timestamps with
  milliseconds (``2017-09-19 10:49:03.018``);
- from 6.17 (``CURRENT``): ``type`` is the object type, ``event_type`` the number, ``counter`` ``"N/A"``,
  timestamps to the second (``2024-05-28 08:03:05``).

``event.log`` line (UFM's fluentd and log-analyzer regexes, and real lines quoted in
``fabric/simulator/naming.py``)::

    2016-10-17 15:56:33.245 [5744] [112] WARNING [Hardware] IBPort [<path>] [dev_id: <guid>]: <description>

The category is written with underscores (``Fabric_Topology``, as in a real line) because both NVIDIA
regexes read it as ``\\w+``; the severity in capitals as in the real lines.  A UFM restart clears the REST
history and starts ids again at 1, but the log file keeps every line, as the file on disk would.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from enum import StrEnum
from typing import Any

from fabric.simulator.catalog import EventSpec
from fabric.simulator.naming import EventObject

LEGACY_MAX = (6, 16)


class EventShape(StrEnum):
    LEGACY = "legacy"
    """UFM up to 6.16: ``type`` = event number."""
    CURRENT = "current"
    """UFM 6.17 and later: ``type`` = object type, ``event_type`` = event number."""


def parse_version(text: str) -> tuple[int, ...]:
    """``"6.16.2"`` → ``(6, 16, 2)``; raises ValueError for anything else."""
    parts = text.strip().lstrip("vV").split(".")
    try:
        numbers = tuple(int(p) for p in parts if p != "")
    except ValueError:
        raise ValueError(f"not a UFM version: {text!r} (expected e.g. 6.16 or 6.20.1)") from None
    if len(numbers) < 2:
        raise ValueError(f"not a UFM version: {text!r} (expected e.g. 6.16 or 6.20.1)")
    return numbers


def shape_for_version(version: str) -> EventShape:
    return EventShape.LEGACY if parse_version(version)[:2] <= LEGACY_MAX else EventShape.CURRENT


@functools.lru_cache(maxsize=4096)
def ms_timestamp(when: datetime) -> str:
    """UFM's timestamp with milliseconds: ``2017-09-19 10:49:03.018`` (events come in bursts: memoised)."""
    return when.strftime("%Y-%m-%d %H:%M:%S.") + f"{when.microsecond // 1000:03d}"


@functools.lru_cache(maxsize=4096)
def s_timestamp(when: datetime) -> str:
    """UFM 6.17's event timestamp, to the second: ``2024-05-28 08:03:05``."""
    return when.strftime("%Y-%m-%d %H:%M:%S")


class EventRecord:
    """One event as UFM stored it."""

    __slots__ = ("_encoded", "description", "id", "obj", "spec", "when")

    def __init__(self, event_id: int, spec: EventSpec, obj: EventObject, description: str, when: datetime) -> None:
        self.id = event_id
        self.spec = spec
        self.obj = obj
        self.description = description
        self.when = when
        self._encoded: dict[EventShape, bytes] = {}

    @property
    def event_type(self) -> int:
        return self.spec.id

    def to_rest(self, shape: EventShape) -> dict[str, Any]:
        spec, obj = self.spec, self.obj
        if shape is EventShape.LEGACY:
            return {
                "category": spec.category, "severity": spec.severity, "timestamp": ms_timestamp(self.when),
                "counter": None, "object_name": obj.object_name, "object_path": obj.object_path,
                "name": spec.name, "write_to_syslog": False, "type": str(spec.id), "id": self.id,
                "description": self.description,
            }
        return {
            "id": self.id, "name": spec.name, "type": obj.object_type, "event_type": str(spec.id),
            "severity": spec.severity, "timestamp": s_timestamp(self.when), "counter": "N/A",
            "category": spec.category, "object_name": obj.object_name, "object_path": obj.object_path,
            "write_to_syslog": False, "description": self.description,
        }

    def encoded(self, shape: EventShape) -> bytes:
        data = self._encoded.get(shape)
        if data is None:
            data = json.dumps(self.to_rest(shape), separators=(",", ":")).encode()
            self._encoded[shape] = data
        return data

    def log_line(self) -> str:
        spec, obj = self.spec, self.obj
        dev = f" [dev_id: {obj.dev_id}]" if obj.dev_id else ""
        category = spec.category.replace(" ", "_")
        return (f"{ms_timestamp(self.when)} [{self.id}] [{spec.id}] {spec.severity.upper()} [{category}] "
                f"{obj.object_type} [{obj.object_path}]{dev}: {self.description}")

    def matches(self, filters: Mapping[str, str]) -> bool:
        """UFM's documented list filters: object_name, type, category, severity (group is ignored)."""
        for key, wanted in filters.items():
            value = wanted.strip().lower()
            if key == "object_name" and self.obj.object_name.lower() != value:
                return False
            if key == "type" and value not in (str(self.spec.id), self.obj.object_type.lower()):
                return False
            if key == "category" and self.spec.category.lower() != value:
                return False
            if key == "severity" and self.spec.severity.lower() != value:
                return False
        return True


EventListener = Callable[[EventRecord], None]
FILTER_KEYS = ("object_name", "type", "category", "severity")


class EventStore:
    """The REST event history (at most ``max_events``, oldest dropped first) and the ``event.log``.

    The log keeps every event across UFM restarts (at most ``max_log`` in memory; attach a listener to
    write them all to a file) and renders its lines on demand.
    """

    def __init__(self, max_events: int = 250_000, max_log: int = 1_000_000) -> None:
        if max_events < 1 or max_log < 1:
            raise ValueError("max_events and max_log must be at least 1")
        self.max_events = max_events
        self.max_log = max_log
        self._records: list[EventRecord] = []
        self._next_id = 1
        self.emitted = 0
        """Every event since the simulator started, across UFM restarts (which start ids again at 1)."""
        self._log: list[EventRecord] = []
        self.listeners: list[EventListener] = []
        self.generation = 0
        self._joined: dict[EventShape, tuple[int, bytes]] = {}

    def __len__(self) -> int:
        return len(self._records)

    @property
    def last_id(self) -> int:
        return self._next_id - 1

    def append(self, spec: EventSpec, obj: EventObject, description: str, when: datetime) -> EventRecord:
        record = EventRecord(self._next_id, spec, obj, description, when)
        self._next_id += 1
        self.emitted += 1
        self._records.append(record)
        if len(self._records) > self.max_events + self.max_events // 10:
            del self._records[: len(self._records) - self.max_events]
        self._log.append(record)
        if len(self._log) > self.max_log + self.max_log // 10:
            del self._log[: len(self._log) - self.max_log]
        self.generation += 1
        for listener in self.listeners:
            listener(record)
        return record

    def reset(self) -> None:
        """A UFM restart: the REST history is gone and ids start again at 1 (the log file stays)."""
        self._records.clear()
        self._next_id = 1
        self.generation += 1
        self._joined.clear()

    def log_lines(self) -> list[str]:
        """Every event kept, as ``event.log`` lines (ids start again after a UFM restart, as in the file)."""
        return [record.log_line() for record in self._log]

    def warm(self, shape: EventShape) -> None:
        """Encode every event not yet encoded in ``shape`` (after a storm, so the next list is quick)."""
        for record in self._records:
            record.encoded(shape)

    def get(self, event_id: int) -> EventRecord | None:
        if not self._records:
            return None
        index = event_id - self._records[0].id
        if 0 <= index < len(self._records):
            return self._records[index]
        return None

    def records(self) -> list[EventRecord]:
        return list(self._records)

    def select(self, filters: Mapping[str, str]) -> Iterable[EventRecord]:
        wanted = {k: v for k, v in filters.items() if k in FILTER_KEYS and v}
        if not wanted:
            return self._records
        return (r for r in self._records if r.matches(wanted))

    def list_bytes(self, shape: EventShape, filters: Mapping[str, str] | None = None) -> bytes:
        """The JSON list as ``GET /app/events`` answers it; the unfiltered list is cached per generation."""
        wanted = {k: v for k, v in (filters or {}).items() if k in FILTER_KEYS and v}
        if wanted:
            return b"[" + b",".join(r.encoded(shape) for r in self.select(wanted)) + b"]"
        cached = self._joined.get(shape)
        if cached is not None and cached[0] == self.generation:
            return cached[1]
        data = b"[" + b",".join(r.encoded(shape) for r in self._records) + b"]"
        self._joined[shape] = (self.generation, data)
        return data
