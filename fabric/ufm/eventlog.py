"""Parser for UFM's on-disk ``event.log`` into :class:`fabric.ufm.models.Event`.

Line shape (from UFM's own fluentd and log-analyzer parsers; the "Site [..]" part is optional)::

    TS [id] [event_type] Severity [Site [name]] [category] ObjType [object_path] [dev_id: guid]: description

for example::

    2016-10-17 15:56:33.245 [5744] [112] Warning [Hardware] IBPort [default(34) / Switch: leaf01 / NA / 16]
        [dev_id: 248a0703006d40f0]: Link-Downed counter delta threshold exceeded. ...

(one line in the file).  Object types seen: Link, IBPort, Switch, Computer, Module, Site, Grid.

Built for replaying logs of a million lines: one compiled regex, no per-line pydantic validation (the
regex has already checked every field's form, so events are built as ``model_construct`` would build them,
without its per-field bookkeeping), consecutive lines with the same timestamp parse it once, and a
malformed line is counted and reported with its file and line number, never raised.  A caller that only
needs some event types passes ``event_ids``: lines of other types are then counted (``filtered``) from
their head alone and never fully parsed.  A line that does
not start with a timestamp continues the previous event's description (UFM writes some multi-line
entries).  Timestamps in the file carry no zone; they are read in ``tz`` (default UTC — the zone UFM
writes them in is UNCONFIRMED and is likely the UFM server's local time).
"""

from __future__ import annotations

import gzip
import logging
import os
import re
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from pathlib import Path
from typing import IO

from fabric.ufm.models import SEVERITIES, Event

__all__ = ["EventLogStats", "MalformedLine", "iter_event_log", "parse_event_line"]

log = logging.getLogger(__name__)

_LINE_RE = re.compile(
    r"(?P<ts>\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,6})?) "
    r"\[(?P<id>\d+)\] \[(?P<etype>\d+)\] (?P<sev>[A-Za-z]+) "
    r"(?:Site \[(?P<site>[^\]]*)\] )?"
    r"\[(?P<cat>[^\]]*)\] (?P<otype>[A-Za-z]\w*) "
    r"\[(?P<path>.*?)\](?: \[dev_id: (?P<dev>[^\]]*)\])?"
    r":(?: (?P<desc>.*)|)$"
)
_STARTS_WITH_TS = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}")
# The head of a line, up to its event type: enough to leave out a type nobody asked for.
_HEAD_RE = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,6})? \[\d+\] \[(\d+)\] ")


@dataclass(frozen=True, slots=True)
class MalformedLine:
    """A line that could not be parsed: where it is and why."""

    source: str
    line_no: int
    reason: str
    text: str

    def __str__(self) -> str:
        return f"{self.source}:{self.line_no}: {self.reason}: {self.text[:200]!r}"


@dataclass(slots=True)
class EventLogStats:
    """Counters of one :func:`iter_event_log` run; ``malformed`` keeps the first ``keep`` examples."""

    parsed: int = 0
    filtered: int = 0
    """Events left out because their type is not among the ``event_ids`` asked for (heads checked only)."""
    malformed_count: int = 0
    continuation_lines: int = 0
    blank_lines: int = 0
    keep: int = 100
    malformed: list[MalformedLine] = field(default_factory=list)

    def record_malformed(self, bad: MalformedLine) -> None:
        self.malformed_count += 1
        if len(self.malformed) < self.keep:
            self.malformed.append(bad)
            log.warning("malformed UFM event.log line", extra={"ufm_event_log": str(bad)})


_EVENT_FIELDS = tuple(Event.model_fields)
_new_event = object.__new__
_set = object.__setattr__


def _construct(values: dict[str, object], extra: dict[str, object]) -> Event:
    """``Event.model_construct(**values, **extra)`` for ``values`` holding every field in declaration order,
    without its per-field alias and default lookups (a third of the cost of replaying a line)."""
    event: Event = _new_event(Event)
    _set(event, "__dict__", values)
    _set(event, "__pydantic_fields_set__", set(_EVENT_FIELDS))
    _set(event, "__pydantic_extra__", extra)
    _set(event, "__pydantic_private__", None)
    return event


class _Timestamps:
    """Parses timestamps, remembering the last one: events come in bursts that share it."""

    __slots__ = ("last_text", "last_value", "tz")

    def __init__(self, tz: tzinfo) -> None:
        self.tz = tz
        self.last_text = ""
        self.last_value: datetime | None = None

    def parse(self, text: str) -> datetime:
        if text == self.last_text and self.last_value is not None:
            return self.last_value
        when = datetime.fromisoformat(text)
        when = when.replace(tzinfo=UTC) if self.tz is UTC else when.replace(tzinfo=self.tz).astimezone(UTC)
        self.last_text, self.last_value = text, when
        return when


def _build(match: re.Match[str], tz: tzinfo | _Timestamps, extra_lines: list[str] | None = None) -> Event:
    ts, record_id, etype, sev, site, category, otype, path, dev, desc = match.group(
        "ts", "id", "etype", "sev", "site", "cat", "otype", "path", "dev", "desc")
    when = tz.parse(ts) if isinstance(tz, _Timestamps) else _Timestamps(tz).parse(ts)
    description = desc or ""
    if extra_lines:
        description = "\n".join([description, *extra_lines])
    # Field order is Event's declaration order (what model_construct produces); tests/replay checks it.
    return _construct({
        "id": int(record_id),
        "event_id": int(etype),
        "object_type": otype,
        "timestamp": when,
        "name": None,
        "type": otype,
        "event_type": etype,
        "severity": SEVERITIES.get(sev.lower(), sev),
        "counter": None,
        "category": category,
        "object_name": dev,
        "object_path": path,
        "write_to_syslog": None,
        "description": description,
    }, {"dev_id": dev, "site": site})


def parse_event_line(line: str, *, tz: tzinfo = UTC) -> Event | None:
    """Parse one ``event.log`` line; ``None`` if it does not have the documented shape.

    Raises ``ValueError`` only for a line of the right shape with an impossible timestamp.
    """
    match = _LINE_RE.match(line.rstrip("\r\n"))
    if match is None:
        return None
    return _build(match, tz)


def _open_text(path: Path) -> IO[str]:
    if path.suffix == ".gz":
        return gzip.open(path, mode="rt", encoding="utf-8", errors="replace")
    return path.open(encoding="utf-8", errors="replace")


def _sources(source: str | os.PathLike[str] | Iterable[str]) -> Iterator[tuple[str, Iterable[str]]]:
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        with _open_text(path) as handle:
            yield str(path), handle
    else:
        yield "<lines>", source


def iter_event_log(
    source: str | os.PathLike[str] | Iterable[str],
    *,
    tz: tzinfo = UTC,
    stats: EventLogStats | None = None,
    event_ids: Collection[int] | None = None,
) -> Iterator[Event]:
    """Yield the events of an ``event.log`` file (a path, ``.gz`` accepted) or of an iterable of lines.

    Pass an :class:`EventLogStats` to learn how many lines were malformed and where.  A ``str`` is a
    path; to parse a text held in memory pass ``text.splitlines()``.  With ``event_ids``, only events of
    those types are parsed and yielded; the others are counted in ``stats.filtered`` (a line of another
    type is recognised by its head, so a malformed tail on it goes unnoticed).
    """
    counters = stats if stats is not None else EventLogStats()
    match_line = _LINE_RE.match
    starts_with_ts = _STARTS_WITH_TS.match
    head = _HEAD_RE.match
    wanted = None if event_ids is None else frozenset(str(e) for e in event_ids)
    timestamps = _Timestamps(tz)
    for name, lines in _sources(source):
        pending: re.Match[str] | None = None
        pending_no = 0
        extra: list[str] = []
        skipping = False
        """The last event was filtered out: lines continuing it are skipped with it."""
        for line_no, raw in enumerate(lines, start=1):
            line = raw.rstrip("\r\n")
            if wanted is not None and (found := head(line)) is not None and found.group(1) not in wanted:
                if pending is not None:
                    event = _finish(pending, pending_no, extra, timestamps, name, counters)
                    if event is not None:
                        yield event
                pending, extra, skipping = None, [], True
                counters.filtered += 1
                continue
            match = match_line(line)
            if match is None:
                if not line.strip():
                    counters.blank_lines += 1
                elif (pending is not None or skipping) and starts_with_ts(line) is None:
                    if pending is not None:
                        extra.append(line)
                    counters.continuation_lines += 1
                else:
                    reason = "does not match the event.log line format"
                    if pending is None and starts_with_ts(line) is None:
                        reason = "no timestamp and no previous event to continue"
                    counters.record_malformed(MalformedLine(name, line_no, reason, line))
                continue
            if pending is not None:
                event = _finish(pending, pending_no, extra, timestamps, name, counters)
                if event is not None:
                    yield event
            pending, pending_no, extra, skipping = match, line_no, [], False
        if pending is not None:
            event = _finish(pending, pending_no, extra, timestamps, name, counters)
            if event is not None:
                yield event


def _finish(
    match: re.Match[str],
    line_no: int,
    extra: list[str],
    tz: _Timestamps,
    name: str,
    counters: EventLogStats,
) -> Event | None:
    try:
        event = _build(match, tz, extra)
    except ValueError as exc:  # e.g. month 13: the regex checks the form, not the calendar
        counters.record_malformed(MalformedLine(name, line_no, f"bad timestamp: {exc}", match.string))
        return None
    counters.parsed += 1
    return event
