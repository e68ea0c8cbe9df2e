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

A line without a timestamp continues the previous event's description only when it looks like a wrapped
description: indented text. UFM's own tools disagree on other lines (the events dashboard plugin's fluentd
``multiline`` source appends any line not starting with a timestamp to the entry before it; the log
analyzer reads line by line and counts a line its regexes do not match as failed), and no sample of a multi-line UFM
entry is at hand; appending everything is what let a block of garbage or UTF-16 vanish into one description,
uncounted. So a line at column 0 without a timestamp, or one that is not text (binary, or UTF-16 and other
encodings read as UTF-8, with replacement characters and NULs), is malformed and counted.

With ``stray_days``, a record (an event of any type) dated more than that many days from the records next to
it in the file (:class:`FarOff` says exactly when) is malformed too: a clock set wrong on one line, a year
2099, would otherwise stretch the log over decades.
"""

from __future__ import annotations

import gzip
import io
import logging
import os
import re
from collections import Counter
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, tzinfo
from typing import IO, Generic, TypeVar

from fabric.ufm.eventlog_scan import PassedOver, scanned_lines
from fabric.ufm.models import EVENT_FIELDS, SEVERITIES, Event, construct_event
from topology.inputs import LINE_LIMIT, capped_lines, open_input, peeked

__all__ = ["EventLogStats", "FarOff", "MalformedLine", "iter_event_log", "parse_event_line"]

log = logging.getLogger(__name__)
T = TypeVar("T")

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
TOO_LONG = "line too long"
_GZIP_MAGIC = b"\x1f\x8b"


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


class FarOff(Generic[T]):
    """Records in file order in, the same records out in the same order, each with a verdict: dated far off?

    A record is far off when its date (a day ordinal) is more than ``gap_days`` from both records next to it;
    the first and the last record, which have one neighbour, when they are that far from it while it is near
    its own other neighbour (so of two records far apart, neither is: which one is wrong cannot be told). A
    record whose date does not read (``None``) is never far off, and no record is far off from it.

    ``push`` takes a run of ``count`` consecutive records of one day as one item (an event.log comes in runs
    of thousands); each of them has a neighbour of its own day when there are two or more, so such a run is
    never far off. A run gets its verdict once the runs after it that decide it have come: ``push`` and
    ``end`` return the verdicts that are due.
    """

    __slots__ = ("gap", "pushed", "recent", "waiting")

    def __init__(self, gap_days: int) -> None:
        self.gap = gap_days
        self.pushed = 0
        self.recent: list[tuple[int | None, int]] = []
        """The day and count of the last three runs, oldest first."""
        self.waiting: list[T] = []
        """The runs without a verdict: the last one, and the first one while the third has not come."""

    def _near(self, a: int | None, b: int | None) -> bool:
        return a is None or b is None or abs(a - b) <= self.gap

    def push(self, day: int | None, item: T, count: int = 1) -> list[tuple[T, bool]]:
        recent, waiting = self.recent, self.waiting
        recent.append((day, count))
        if len(recent) > 3:
            del recent[0]
        waiting.append(item)
        self.pushed += 1
        if self.pushed == 1:
            return []
        if self.pushed == 2:
            (first, first_count), (second, second_count) = recent
            if first_count > 1 or self._near(first, second):
                return [(waiting.pop(0), False)]
            # Far from the only neighbour: far off if that one is near its own other neighbour.
            return [(waiting.pop(0), True)] if second_count > 1 else []
        (before, _), (middle, middle_count), (after, _) = recent
        verdicts = []
        if len(waiting) == 3:  # the first run, far from a second run of one record: decided by the third
            verdicts.append((waiting.pop(0), self._near(middle, after)))
        far = middle_count == 1 and not self._near(middle, before) and not self._near(middle, after)
        verdicts.append((waiting.pop(0), far))
        return verdicts

    def end(self) -> list[tuple[T, bool]]:
        """The verdicts of the runs still waiting, at the end of the file."""
        recent, waiting = self.recent, self.waiting
        if len(waiting) != 1 or self.pushed == 1:
            verdicts = [(item, False) for item in waiting]  # one run, or two runs of one record far apart
        else:
            last, last_count = recent[-1]
            before, before_count = recent[-2]
            anchored = before_count > 1 or (len(recent) == 3 and self._near(before, recent[0][0]))
            verdicts = [(waiting[0], last_count == 1 and not self._near(last, before) and anchored)]
        waiting.clear()
        return verdicts


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
        when = self._utc(text) if self.tz is UTC else None
        if when is None:
            when = datetime.fromisoformat(text)
            when = when.replace(tzinfo=UTC) if self.tz is UTC else when.replace(tzinfo=self.tz).astimezone(UTC)
        self.last_text, self.last_value = text, when
        return when

    @staticmethod
    def _utc(text: str) -> datetime | None:
        """``text`` read as UTC by ``fromisoformat`` itself, the zone written after it: six times quicker than
        reading it naive and replacing its zone. None when it does not read (the caller's reading then says why:
        the message would name the text with the zone added)."""
        try:
            return datetime.fromisoformat(text + "+00:00")
        except ValueError:
            return None


def _build(match: re.Match[str], tz: tzinfo | _Timestamps, extra_lines: list[str] | None = None) -> Event:
    ts, record_id, etype, sev, site, category, otype, path, dev, desc = match.group(
        "ts", "id", "etype", "sev", "site", "cat", "otype", "path", "dev", "desc")
    when = tz.parse(ts) if isinstance(tz, _Timestamps) else _Timestamps(tz).parse(ts)
    description = desc or ""
    if extra_lines:
        description = "\n".join([description, *extra_lines])
    # Field order is Event's declaration order (what model_construct produces); tests/replay checks it.
    return construct_event({
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
    }, {"dev_id": dev, "site": site}, set(EVENT_FIELDS))


def parse_event_line(line: str, *, tz: tzinfo = UTC) -> Event | None:
    """Parse one ``event.log`` line; ``None`` if it does not have the documented shape.

    Raises ``ValueError`` only for a line of the right shape with an impossible timestamp.
    """
    match = _LINE_RE.match(line.rstrip("\r\n"))
    if match is None:
        return None
    return _build(match, tz)


def event_log_lines(stream: IO[bytes]) -> Iterator[str]:
    """The lines of an event.log read from ``stream`` as it goes (a file or a pipe, read once): gunzipped when it
    is gzip data (whatever its name), a byte-order mark dropped, each line at most ``LINE_LIMIT`` characters and
    one (see ``topology.inputs.capped_lines``)."""
    with _event_log_text(stream) as text:
        yield from capped_lines(text)


def event_log_scan(stream: IO[bytes], event_ids: Collection[int]) -> Iterator[str | PassedOver]:
    """``event_log_lines``, read in blocks, with the runs of lines of types other than ``event_ids`` passed over
    (``fabric.ufm.eventlog_scan``): for ``iter_event_log`` with the same ``event_ids``."""
    with _event_log_text(stream) as text:
        yield from scanned_lines(text, event_ids)


def _event_log_text(stream: IO[bytes]) -> io.TextIOWrapper:
    """``stream`` as text: gunzipped when it is gzip data (whatever its name), a byte-order mark dropped."""
    head, stream = peeked(stream, len(_GZIP_MAGIC))
    raw = gzip.GzipFile(fileobj=stream, mode="rb") if head == _GZIP_MAGIC else stream
    return io.TextIOWrapper(raw, encoding="utf-8-sig", errors="replace")


def _sources(source: str | os.PathLike[str] | Iterable[str | PassedOver], label: str,
             event_ids: Collection[int] | None) -> Iterator[tuple[str, Iterable[str | PassedOver]]]:
    if isinstance(source, str | os.PathLike):
        with open_input(source) as stream:
            yield str(source), event_log_lines(stream) if event_ids is None else event_log_scan(stream, event_ids)
    else:
        yield label, source


def iter_event_log(
    source: str | os.PathLike[str] | Iterable[str | PassedOver],
    *,
    label: str = "<lines>",
    tz: tzinfo = UTC,
    stats: EventLogStats | None = None,
    event_ids: Collection[int] | None = None,
    stray_days: int | None = None,
) -> Iterator[Event]:
    """Yield the events of an ``event.log`` file (a path, gzipped accepted) or of an iterable of lines (those of a
    stream: ``event_log_lines``; ``event_log_scan``, whose runs of lines passed over count as those lines, with
    the same ``event_ids``), which errors call ``label``.

    Pass an :class:`EventLogStats` to learn how many lines were malformed, of which kind and where.  A ``str``
    is a path (read a block at a time by ``event_log_scan`` when ``event_ids`` are given); to parse a text held in
    memory pass ``text.splitlines()``.  With ``event_ids``, only events of
    those types are parsed and yielded; the others are counted in ``stats.filtered`` (a line of another
    type is recognised by its head, so a malformed tail on it goes unnoticed).  With ``stray_days``, an event
    dated more than that many days from the records around it is malformed (see :class:`FarOff`; the records
    of types left out are neighbours too), and events come a day at a time, once the days that decide it are
    read.  Reading a file may raise ``OSError``, ``EOFError`` or ``zlib.error`` (a corrupt or truncated gzip
    file); nothing else is raised.
    """
    counters = stats if stats is not None else EventLogStats()
    match_line = _LINE_RE.match
    head = _HEAD_RE.match
    wanted = None if event_ids is None else frozenset(str(e) for e in event_ids)
    timestamps = _Timestamps(tz)
    for name, lines in _sources(source, label, event_ids):
        runs = _Runs(name, stray_days, counters)
        pending: re.Match[str] | None = None
        pending_no = 0
        extra: list[str] = []
        skipping = False
        """The last event was filtered out: lines continuing it are skipped with it."""
        line_no = 0
        for raw in lines:
            if isinstance(raw, PassedOver):
                line, count, match = raw.first, raw.count, None
                line_no += count
            else:
                line_no += 1
                line = raw.rstrip("\r\n")
                if len(line) > LINE_LIMIT:
                    counters.record_malformed(MalformedLine(name, line_no, f"longer than {LINE_LIMIT:,} characters",
                                                            line[:200], TOO_LONG))
                    continue
                # The whole line's match first: a line it matches has the head's type in its own group, and with
                # ``event_log_scan`` the lines that come one by one are mostly of wanted types, which need it anyway.
                match = match_line(line)
                if wanted is None:
                    count = 0
                elif match is not None:
                    count = int(match.group("etype") not in wanted)
                else:
                    count = int((found := head(line)) is not None and found.group(1) not in wanted)
            if count:  # lines of types nobody asked for, ``count`` of them from ``line`` on, of its date
                if pending is not None and runs.add(pending.string, _finish(pending, pending_no, extra, timestamps,
                                                                            name, counters)):
                    yield from runs.ready()
                if runs.add(line, None):
                    yield from runs.ready()
                if count > 1 and runs.add_more(count - 1):
                    yield from runs.ready()
                pending, extra, skipping = None, [], True
                counters.filtered += count
                continue
            if match is None:
                _unmatched(name, line_no, line, extra if pending is not None else None, skipping, counters)
                continue
            if pending is not None and runs.add(pending.string, _finish(pending, pending_no, extra, timestamps,
                                                                        name, counters)):
                yield from runs.ready()
            pending, pending_no, extra, skipping = match, line_no, [], False
        if pending is not None:
            runs.add(pending.string, _finish(pending, pending_no, extra, timestamps, name, counters))
        yield from runs.end()


_Record = tuple[Event, int, str]
"""An event, its line number and its line."""


class _Runs:
    """The records of one file as they complete, passed on as events once they are known not to be far off.

    With ``stray_days`` the records are grouped in runs of one date, and :class:`FarOff` judges each run as a
    whole; without, every event is ready as soon as it is complete.
    """

    __slots__ = ("counters", "far_off", "flowing", "name", "records", "run", "stray_days", "text", "verdicts")

    def __init__(self, name: str, stray_days: int | None, counters: EventLogStats) -> None:
        self.name, self.stray_days, self.counters = name, stray_days, counters
        self.far_off = FarOff[list[_Record]](stray_days) if stray_days is not None else None
        self.text = ""
        """The date of the current run (the first ten characters of a record's line)."""
        self.run: list[_Record] = []
        """The events of the current run not passed on yet; ``records`` counts its records (events left out or
        malformed too)."""
        self.records = 0
        self.verdicts: list[tuple[list[_Record], bool]] = []
        self.flowing = False
        """The current run's events are passed on as they come: a run of two or more records is never far off,
        and every run before it has had its verdict and its events passed on (a day's events are not held
        until the next day's first line: a replay reads the file as it goes). ``FarOff`` then judges an
        empty list for it, with its date and count."""

    def add(self, line: str, record: _Record | None) -> bool:
        """A record (None: one that yields no event) whose line is ``line`` is complete; True when events or far-off
        verdicts are ready (``ready``)."""
        if self.far_off is None:
            if record is not None:
                self.verdicts.append(([record], False))
            return record is not None
        if line.startswith(self.text) and self.records:  # the common case: one more record of the same date
            self.records += 1
            if record is not None:
                self.run.append(record)
            if self.records == 2:
                self.flowing = not self.verdicts and not any(self.far_off.waiting)
            return self.flowing and bool(self.run)
        ready = self._close()
        self.text, self.run, self.records = line[:10], [] if record is None else [record], 1
        return ready

    def add_more(self, count: int) -> bool:
        """``count`` more records that yield no event, of the date of the one ``add`` was given last: as many calls
        of ``add`` (True when events are ready)."""
        if self.far_off is None:
            return False
        before, self.records = self.records, self.records + count
        if before < 2 <= self.records:
            self.flowing = not self.verdicts and not any(self.far_off.waiting)
        return self.flowing and bool(self.run)

    def _close(self) -> bool:
        self.flowing = False  # what is left of the run is judged with it (the last record of the file, say)
        if self.far_off is not None and self.records:
            self.verdicts += self.far_off.push(_ordinal(self.text), self.run, self.records)
            self.records = 0
        return bool(self.verdicts)

    def ready(self) -> Iterator[Event]:
        verdicts, self.verdicts = self.verdicts, []
        for records, far in verdicts:
            for event, line_no, line in records:
                if far:
                    self.counters.record_malformed(MalformedLine(
                        self.name, line_no, f"timestamp far from its neighbours (more than {self.stray_days} days "
                        "from the records on either side)", line, FAR_OFF))
                else:
                    self.counters.parsed += 1
                    yield event
        if self.flowing:
            run, self.run = self.run, []
            self.counters.parsed += len(run)
            for event, _, _ in run:
                yield event

    def end(self) -> Iterator[Event]:
        """The events still held, at the end of the file."""
        self._close()
        if self.far_off is not None:
            self.verdicts += self.far_off.end()
        return self.ready()


def _ordinal(text: str) -> int | None:
    try:
        return date.fromisoformat(text).toordinal()
    except ValueError:
        return None


def _unmatched(name: str, line_no: int, line: str, extra: list[str] | None, skipping: bool,
               counters: EventLogStats) -> None:
    """A line that is no event's: blank, a continuation of the event before it (into ``extra``, that event's
    lines, when it is kept; ``skipping``: it was left out), or malformed; counted."""
    if not line.strip():
        counters.blank_lines += 1
    elif (extra is not None or skipping) and line[0] in " \t" and _is_text(line):
        if extra is not None:
            extra.append(line)
        counters.continuation_lines += 1
    else:
        counters.record_malformed(_malformed(name, line_no, line, extra is not None or skipping,
                                             _STARTS_WITH_TS.match(line) is not None))


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
) -> _Record | None:
    try:
        event = _build(match, tz, extra)
    except (ValueError, OverflowError) as exc:  # month 13, say (the regex checks the form, not the calendar)
        counters.record_malformed(MalformedLine(name, line_no, f"bad timestamp: {exc}", match.string, BAD_TIMESTAMP))
        return None
    return event, line_no, match.string
