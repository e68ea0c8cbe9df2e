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
malformed line is counted by kind and reported with its file and line number, never raised.  A caller that
only needs some event types passes ``event_ids``: lines of other types are then counted (``filtered``) from
their head alone and never fully parsed.  Timestamps in the file carry no zone; they are read in ``tz``
(default UTC — the zone UFM writes them in is UNCONFIRMED and is likely the UFM server's local time).

A line without a timestamp continues the previous event's description only when it is what a wrapped
description looks like: indented text. UFM writes one event per line; its own parsers (the fluentd
``multiline`` source of the events dashboard plugin, the log analyzer) read a line starting with a timestamp
as the start of an entry, and no UFM sample shows anything else between entries. So a line at column 0
without a timestamp, or one that is not text (binary, or UTF-16 and other encodings, read as UTF-8 with
replacement characters), is malformed, not glued silently onto the event before it.

With ``stray_days``, a record (an event of any type) dated more than that many days from both records next to
it in the file (at the start and end of the file, from its only neighbour) is malformed too: a clock set
wrong on one line, a year 2099, would otherwise stretch the log over decades.
"""

from __future__ import annotations

import gzip
import logging
import os
import re
from collections import Counter
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, tzinfo
from pathlib import Path
from typing import IO

from fabric.ufm.models import SEVERITIES, Event

__all__ = ["EventLogStats", "MalformedLine", "far_off", "iter_event_log", "parse_event_line"]

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

# Kinds of malformed line (``EventLogStats.kinds``), as a replay summary counts them.
MALFORMED = "malformed line"
NOT_TEXT = "not UTF-8 text"
BAD_TIMESTAMP = "bad timestamp"
FAR_OFF = "timestamp far from its neighbours"


@dataclass(frozen=True, slots=True)
class MalformedLine:
    """A line that could not be parsed: where it is, why, and which kind of problem that is."""

    source: str
    line_no: int
    reason: str
    text: str
    kind: str = MALFORMED

    def __str__(self) -> str:
        return f"{self.source}:{self.line_no}: {self.reason}: {self.text[:200]!r}"


@dataclass(slots=True)
class EventLogStats:
    """Counters of one :func:`iter_event_log` run.

    ``malformed`` keeps the first ``keep`` examples, and the first of every kind even beyond them; ``kinds``
    counts them all by kind. The first line of each kind is logged (once per kind, not once per line).
    """

    parsed: int = 0
    filtered: int = 0
    """Events left out because their type is not among the ``event_ids`` asked for (heads checked only)."""
    malformed_count: int = 0
    continuation_lines: int = 0
    blank_lines: int = 0
    keep: int = 100
    malformed: list[MalformedLine] = field(default_factory=list)
    kinds: Counter[str] = field(default_factory=Counter)

    def record_malformed(self, bad: MalformedLine) -> None:
        self.malformed_count += 1
        first_of_kind = bad.kind not in self.kinds
        self.kinds[bad.kind] += 1
        if first_of_kind or len(self.malformed) < self.keep:
            self.malformed.append(bad)
        if first_of_kind:
            log.warning("malformed UFM event.log line (%s; further ones are counted, not logged): %s", bad.kind, bad)


def _is_text(line: str) -> bool:
    """No control characters (tabs aside) and no replacement characters from undecodable bytes."""
    return "\ufffd" not in line and line.expandtabs().isprintable()


def far_off(day: int, before: int | None, after: int | None, gap_days: int) -> bool:
    """True when a record of ``day`` (a date ordinal) is more than ``gap_days`` from each neighbour it has
    (``None``: none on that side); a record without neighbours is never far off."""
    if before is None and after is None:
        return False
    return (before is None or abs(day - before) > gap_days) and (after is None or abs(after - day) > gap_days)


class _Neighbours:
    """The dates of one file's records in order, to tell a record dated far from both of its neighbours.

    ``arrive`` is called as each record starts and says whether the record before it (complete now, both its
    neighbours known) is far off; ``end`` says it of the last record. A record whose date does not read is
    never far off, and as a neighbour it makes no other record far off.
    """

    __slots__ = ("before", "count", "current", "gap", "text")

    def __init__(self, gap_days: int | None) -> None:
        self.gap = gap_days
        self.count = 0
        self.text = ""
        """The latest record's date text (records come in long runs of one date: those cost a comparison)."""
        self.current: int | None = None
        """The latest record's date ordinal, and the one before it."""
        self.before: int | None = None

    def arrive(self, line: str) -> bool:
        if self.gap is None:
            return False
        self.count += 1
        text = line[:10]
        if text == self.text:  # the record before has a neighbour of its own date: it is not far off
            self.before = self.current
            return False
        day = _ordinal(text)
        stray = self.count > 1 and self._far_off(self.count - 1, day, True)
        self.text, self.before, self.current = text, self.current, day
        return stray

    def end(self) -> bool:
        return self.gap is not None and self.count > 0 and self._far_off(self.count, None, False)

    def _far_off(self, number: int, after: int | None, has_after: bool) -> bool:
        """Is the ``number``-th record (the latest complete one) far off, ``after`` being the next record's day?"""
        day = self.current
        if day is None or self.gap is None:
            return False
        before = (day if self.before is None else self.before) if number > 1 else None
        if has_after:
            return far_off(day, before, day if after is None else after, self.gap)
        return far_off(day, before, None, self.gap)


def _ordinal(text: str) -> int | None:
    try:
        return date.fromisoformat(text).toordinal()
    except ValueError:
        return None


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
    """The file as text: gunzipped when it is gzip data (whatever its name), a byte-order mark dropped."""
    with path.open("rb") as handle:
        gzipped = handle.read(2) == b"\x1f\x8b"
    if gzipped:
        return gzip.open(path, mode="rt", encoding="utf-8-sig", errors="replace")
    return path.open(encoding="utf-8-sig", errors="replace")


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
    stray_days: int | None = None,
) -> Iterator[Event]:
    """Yield the events of an ``event.log`` file (a path, gzipped accepted) or of an iterable of lines.

    Pass an :class:`EventLogStats` to learn how many lines were malformed, of which kind and where.  A ``str``
    is a path; to parse a text held in memory pass ``text.splitlines()``.  With ``event_ids``, only events of
    those types are parsed and yielded; the others are counted in ``stats.filtered`` (a line of another
    type is recognised by its head, so a malformed tail on it goes unnoticed).  With ``stray_days``, an event
    dated more than that many days from the records on either side of it is malformed (see the module's
    docstring).
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
        neighbours = _Neighbours(stray_days)
        for line_no, raw in enumerate(lines, start=1):
            line = raw.rstrip("\r\n")
            if wanted is not None and (found := head(line)) is not None and found.group(1) not in wanted:
                stray = neighbours.arrive(line)
                if pending is not None:
                    event = _finish(pending, pending_no, extra, timestamps, name, counters,
                                    stray_days if stray else None)
                    if event is not None:
                        yield event
                pending, extra, skipping = None, [], True
                counters.filtered += 1
                continue
            match = match_line(line)
            if match is None:
                if not line.strip():
                    counters.blank_lines += 1
                elif (pending is not None or skipping) and line[0] in " \t" and _is_text(line):
                    if pending is not None:
                        extra.append(line)
                    counters.continuation_lines += 1
                else:
                    counters.record_malformed(_malformed(name, line_no, line, pending is not None or skipping,
                                                         starts_with_ts(line) is not None))
                continue
            stray = neighbours.arrive(line)
            if pending is not None:
                event = _finish(pending, pending_no, extra, timestamps, name, counters,
                                stray_days if stray else None)
                if event is not None:
                    yield event
            pending, pending_no, extra, skipping = match, line_no, [], False
        if pending is not None:
            event = _finish(pending, pending_no, extra, timestamps, name, counters,
                            stray_days if neighbours.end() else None)
            if event is not None:
                yield event


def _malformed(name: str, line_no: int, line: str, after_event: bool, with_timestamp: bool) -> MalformedLine:
    if not _is_text(line):
        return MalformedLine(name, line_no, "not UTF-8 text (binary, or another encoding such as UTF-16)", line,
                             NOT_TEXT)
    if with_timestamp:
        reason = "does not match the event.log line format"
    elif after_event:
        reason = "no timestamp, and not an indented continuation of the event before it"
    else:
        reason = "no timestamp and no previous event to continue"
    return MalformedLine(name, line_no, reason, line)


def _finish(
    match: re.Match[str],
    line_no: int,
    extra: list[str],
    tz: _Timestamps,
    name: str,
    counters: EventLogStats,
    far_off_by: int | None,
) -> Event | None:
    """The event of ``match``, or None when malformed; ``far_off_by`` is the ``stray_days`` by which the event is
    far from its neighbours (None when it is not)."""
    try:
        event = _build(match, tz, extra)
    except (ValueError, OverflowError) as exc:  # month 13, say (the regex checks the form, not the calendar)
        counters.record_malformed(MalformedLine(name, line_no, f"bad timestamp: {exc}", match.string, BAD_TIMESTAMP))
        return None
    if far_off_by:
        counters.record_malformed(MalformedLine(name, line_no, f"timestamp far from its neighbours (more than "
                                                f"{far_off_by} days from the records on either side)",
                                                match.string, FAR_OFF))
        return None
    counters.parsed += 1
    return event
