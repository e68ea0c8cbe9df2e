"""The events ``fabricctl replay`` reads: a UFM event list in any of the forms an operator may have saved.

- a UFM REST answer of ``GET /app/events``: a JSON list, or ``{"data": [...]}``, in either payload shape
  (``type`` = event number up to UFM 6.16, ``event_type`` from 6.17; ``fabric.ufm.models.Event`` knows both);
- JSON lines: one such event object per line;
- UFM's ``event.log`` (``.gz`` accepted), parsed by ``fabric.ufm.eventlog``.

The format is sniffed from the first bytes. A file that cannot be read, or in which not one event can be
found, is an :class:`~topology.errors.InputError` naming the file (and the line, where there is one). Inside a
usable file a bad entry is never fatal: it is counted by kind in ``skipped`` and the first examples are kept,
each naming the file and the line (or the list index). Event types no rule uses are left out (in an
``event.log`` by the line's head, before the line is fully parsed; in JSON after the event is validated, since
the two payload shapes name the type differently) and counted as ``event type not used``, as the signal mapper
would count them.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from fabric.remediation.signals import EventLike
from fabric.ufm.models import Event
from topology.errors import InputError

NOT_USED = "event type not used"
"""The signal mapper's own name for an event of a type no rule uses (see ``fabric.remediation.signals``)."""
KEEP_EXAMPLES = 20
_GZIP_MAGIC = b"\x1f\x8b"
_SNIFF_BYTES = 4096


@dataclass(slots=True)
class LoadedEvents:
    source: str
    format: str
    """``json`` (a list), ``json-data`` (``{"data": [...]}``), ``jsonl`` or ``event.log``."""
    events: list[EventLike]
    """Sorted by timestamp; events with the same timestamp keep the order they had in the file."""
    records: int = 0
    """Event records found in the file: the events, the skipped ones and the malformed ones."""
    skipped: Counter[str] = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)
    """The first malformed entries, ``file:line: why`` (or ``file: [index]: why``)."""

    def skip(self, why: str, where: str | None = None, detail: str = "") -> None:
        self.skipped[why] += 1
        if where is not None and len(self.examples) < KEEP_EXAMPLES:
            self.examples.append(f"{where}: {why}" + (f": {detail[:200]}" if detail else ""))


def load_events(path: Path, used: Collection[int] | None = None) -> LoadedEvents:
    """Read the events in ``path``; with ``used``, events of other types are counted but not kept."""
    head = _head(path)
    if not head:
        raise InputError("the event file is empty", source=str(path))
    if head[:2] == _GZIP_MAGIC:
        loaded = _event_log(path, used)
    else:
        first = head.decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")[:1]
        loaded = _json(path, used) if first in ("[", "{") else _event_log(path, used)
    unreadable = loaded.records - len(loaded.events) - loaded.skipped[NOT_USED]
    if loaded.records and unreadable == loaded.records:
        example = loaded.examples[0] if loaded.examples else str(path)
        raise InputError(f"not one event could be read ({loaded.format}); first problem: {example}",
                         source=str(path))
    if loaded.format == "event.log" and loaded.records == 0:
        raise InputError("no UFM events in the file (expected an event.log, a JSON event list or JSON lines)",
                         source=str(path))
    loaded.events.sort(key=attrgetter("timestamp"))
    return loaded


def _head(path: Path) -> bytes:
    try:
        with path.open("rb") as handle:
            return handle.read(_SNIFF_BYTES)
    except FileNotFoundError:
        raise InputError("no such file", source=str(path)) from None
    except IsADirectoryError:
        raise InputError("is a directory, not an event file", source=str(path)) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", source=str(path)) from None


# --- event.log ---------------------------------------------------------------------------------------------


def _event_log(path: Path, used: Collection[int] | None) -> LoadedEvents:
    from fabric.ufm.eventlog import EventLogStats, iter_event_log

    stats = EventLogStats(keep=KEEP_EXAMPLES)
    loaded = LoadedEvents(str(path), "event.log", [])
    try:
        loaded.events = list(iter_event_log(path, stats=stats, event_ids=used))
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise InputError(f"cannot read: {getattr(exc, 'strerror', None) or exc}", source=str(path)) from None
    if stats.filtered:
        loaded.skipped[NOT_USED] += stats.filtered
    for bad in sorted(stats.malformed, key=attrgetter("line_no")):
        loaded.examples.append(f"{bad.source}:{bad.line_no}: {bad.reason}: {bad.text[:160]!r}")
    bad_timestamps = sum(1 for bad in stats.malformed if bad.reason.startswith("bad timestamp"))
    if stats.malformed_count:
        # Only the kept examples say which were bad timestamps; beyond them every line is "malformed".
        loaded.skipped["malformed line"] += stats.malformed_count - bad_timestamps
        if bad_timestamps:
            loaded.skipped["bad timestamp"] += bad_timestamps
    loaded.records = len(loaded.events) + stats.filtered + stats.malformed_count
    return loaded


# --- JSON --------------------------------------------------------------------------------------------------


def _json(path: Path, used: Collection[int] | None) -> LoadedEvents:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text: {exc.reason} at byte {exc.start}", source=str(path)) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", source=str(path)) from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data" or _first_line_is_an_object(text):
            return _json_lines(path, text, used)
        raise InputError(f"invalid JSON: {exc.msg} (column {exc.colno})", source=str(path),
                         line=exc.lineno) from None
    if isinstance(document, Mapping) and "data" not in document and _looks_like_event(document):
        return _json_lines(path, text, used)  # a JSON lines file of one event
    from fabric.ufm.models import ShapeError, unwrap_list

    try:
        items = unwrap_list(document)
    except ShapeError as exc:
        raise InputError(f"not a UFM event list: {exc}", source=str(path)) from None
    wrapped = isinstance(document, Mapping)
    loaded = LoadedEvents(str(path), "json-data" if wrapped else "json", [])
    prefix = "data" if wrapped else ""
    for index, item in enumerate(items):
        _one(loaded, item, used, f"{path}: {prefix}[{index}]")
    return loaded


def _first_line_is_an_object(text: str) -> bool:
    line = text.lstrip().split("\n", 1)[0].strip()
    try:
        return isinstance(json.loads(line), dict)
    except json.JSONDecodeError:
        return False


def _looks_like_event(document: Mapping[str, Any]) -> bool:
    return "id" in document and ("type" in document or "event_type" in document or "event_id" in document)


def _json_lines(path: Path, text: str, used: Collection[int] | None) -> LoadedEvents:
    loaded = LoadedEvents(str(path), "jsonl", [])
    for line_no, line in _numbered(text):
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            loaded.records += 1
            loaded.skip("invalid JSON", f"{path}:{line_no}", f"{exc.msg} (column {exc.colno})")
            continue
        _one(loaded, item, used, f"{path}:{line_no}")
    return loaded


def _numbered(text: str) -> Iterator[tuple[int, str]]:
    for line_no, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            yield line_no, line


def _one(loaded: LoadedEvents, item: object, used: Collection[int] | None, where: str) -> None:
    loaded.records += 1
    if not isinstance(item, Mapping):
        loaded.skip("not an event object", where, f"a JSON {type(item).__name__}")
        return
    try:
        event = Event.model_validate(item)
    except ValidationError as exc:
        first = exc.errors()[0]
        field_path = ".".join(str(part) for part in first["loc"]) or "event"
        loaded.skip("invalid event", where, f"{field_path}: {first['msg']}")
        return
    if used is not None and event.event_id not in used:
        loaded.skipped[NOT_USED] += 1
        return
    loaded.events.append(event)
