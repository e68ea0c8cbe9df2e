"""The events ``fabricctl replay`` reads: a UFM event list in any of the forms an operator may have saved.

- a UFM REST answer of ``GET /app/events``: a JSON list, or ``{"data": [...]}``, in either payload shape
  (``type`` = event number up to UFM 6.16, ``event_type`` from 6.17; ``fabric.ufm.models.Event`` knows both);
- JSON lines: one such event object per line;
- UFM's ``event.log`` (``.gz`` accepted), parsed by ``fabric.ufm.eventlog``.

The format is sniffed from the first bytes. ``stream_events`` reads an event.log and JSON lines a line at a time and
a bare JSON list a piece at a time (``topology.jsonlist.file_items``), as their events are asked for, nothing of
them kept, in file order or, when asked to, in time order, sorted in bounded memory (``fabric.replay.timesort``);
any other JSON file (``{"data": [...]}``) is decoded whole; ``load_events`` holds every event, sorted. A file that
cannot be read, or in which not one event can be found, is an :class:`~topology.errors.InputError` naming the file
(and the line, where there is one). Inside a usable file a bad entry is never fatal: it is counted by kind in
``skipped`` and the first examples are kept, each naming the file and the line (or the list index). JSON is read by
``topology.strictjson``: a line of JSON lines holding a key given twice or NaN is such a bad entry; in a list, whose
reading cannot go on past it, it refuses the file, naming the element's field. An event dated
more than ``STRAY_DAYS`` from the events on either side of it in the file is such a bad entry (``timestamp far from
its neighbours``): one line with a clock set wrong must not stretch the replay over years. Event types no rule uses
are left out (in an ``event.log`` by the line's head, before the line is fully parsed; in JSON after the event is
validated, since the two payload shapes name the type differently) and counted as ``event type not used``, as the
signal mapper would count them.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import zlib
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from fabric.remediation.signals import EventLike
from fabric.replay.timesort import in_time_order
from fabric.ufm.eventlog import BAD_TIMESTAMP, FAR_OFF, NOT_TEXT, TOO_LONG, FarOff
from fabric.ufm.models import Event, TimestampRangeError
from topology import strictjson
from topology.errors import InputError
from topology.inputs import DOCUMENT, LINE_LIMIT, STDIN, capped_lines, open_input, peeked, read_stream
from topology.strictjson import JsonError

NOT_USED = "event type not used"
"""The signal mapper's own name for an event of a type no rule uses (see ``fabric.remediation.signals``)."""
KEEP_EXAMPLES = 20
STRAY_DAYS = 30
"""An event further than this from both events next to it in the file is malformed (a wrong clock)."""
_GZIP_MAGIC = b"\x1f\x8b"
_UTF8_BOM = b"\xef\xbb\xbf"
_SNIFF_BYTES = 4096
_STDIN_NAME = "<stdin>"
BY_TIME = attrgetter("timestamp")
"""An event's sort key: its time (events of one time keep their order, the sorts being stable)."""


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


@dataclass(slots=True)
class EventStream:
    """The events of a file as they are read: ``loaded`` holds the counts (complete once ``events`` is exhausted;
    its own ``events`` stays empty for an event.log and JSON lines, read as they go), ``events`` yields the
    events."""

    loaded: LoadedEvents
    events: Iterator[EventLike]
    in_order: bool
    """The events come sorted by timestamp (a ``{"data": [...]}`` document sorted in memory, or a file streamed
    with ``sort``, in bounded memory); otherwise in file order."""


def stream_events(path: Path, used: Collection[int] | None = None, *, sort: bool = False) -> EventStream:
    """Open ``path`` (``-``: the standard input) for reading its events as they are needed, in file order: an
    event.log a line at a time, JSON lines a line at a time, a bare JSON list a piece at a time, nothing of them
    kept; with ``sort``, in time order, sorted in bounded memory (``fabric.replay.timesort``: runs spilled to
    temporary files and merged). The source is opened once and its format told from its first bytes, so a pipe
    (``<(zcat week.log.gz)``, a FIFO, the standard input) is read like a file; as it cannot be read twice, its
    events always come sorted. Any other JSON document (``{"data": [...]}``) is decoded whole (within
    ``topology.inputs.DOCUMENT``) and sorted in memory. With ``used``, events of other types are counted but not
    kept. A file with no usable event raises ``InputError`` when ``events`` ends (with ``sort``, when the first
    event is asked for)."""
    name = _STDIN_NAME if str(path) == STDIN else str(path)
    source = open_input(path, stdin=True)
    try:
        head, stream = peeked(source, _SNIFF_BYTES)
        sort = sort or not _regular(source)
    except BaseException:
        source.close()
        raise
    if not head:
        stream.close()
        raise InputError("the event file is empty", source=name)
    gzipped = head[:2] == _GZIP_MAGIC
    if gzipped or head.decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")[:1] not in ("[", "{"):
        loaded = LoadedEvents(name, "event.log", [])
        return _streamed(loaded, _event_log(stream, name, used, loaded, gzipped=gzipped), sort=sort)
    if head.lstrip(b" \t\r\n")[:1] == b"[":
        loaded = LoadedEvents(name, "json", [])
        return _streamed(loaded, _json_list_file(stream, name, used, loaded), sort=sort)
    if _opens_with_an_event_line(head):
        loaded = LoadedEvents(name, "jsonl", [])
        return _streamed(loaded, _json_lines_file(stream, name, used, loaded), sort=sort)
    with stream:
        loaded = _json(stream, name, used)
    _refuse_unusable(loaded, len(loaded.events), name)
    loaded.events.sort(key=BY_TIME)
    return EventStream(loaded, iter(loaded.events), in_order=True)


def _regular(stream: IO[bytes]) -> bool:
    """A regular file: it can be read again (and mapped); a pipe cannot."""
    return stat.S_ISREG(os.fstat(stream.fileno()).st_mode)


def _streamed(loaded: LoadedEvents, in_file_order: Iterator[EventLike], *, sort: bool) -> EventStream:
    if sort:
        return EventStream(loaded, in_time_order(in_file_order, BY_TIME), in_order=True)
    return EventStream(loaded, in_file_order, in_order=False)


def load_events(path: Path, used: Collection[int] | None = None) -> LoadedEvents:
    """Read the events in ``path``, all of them, sorted; with ``used``, events of other types are counted but not
    kept."""
    stream = stream_events(path, used)
    stream.loaded.events = list(stream.events) if stream.in_order else sorted(stream.events, key=BY_TIME)
    return stream.loaded


def _refuse_unusable(loaded: LoadedEvents, kept: int, name: str) -> None:
    """Raise ``InputError`` when the file held no event that could be used (``kept``: the events kept)."""
    unreadable = loaded.records - kept - loaded.skipped[NOT_USED]
    if loaded.records and unreadable == loaded.records:
        example = loaded.examples[0] if loaded.examples else name
        raise InputError(f"not one event could be read ({loaded.format}); first problem: {example}",
                         source=name)
    if loaded.format == "event.log" and loaded.records == 0:
        raise InputError("no UFM events in the file (expected an event.log, a JSON event list or JSON lines)",
                         source=name)


# --- event.log ---------------------------------------------------------------------------------------------


def _event_log(stream: IO[bytes], name: str, used: Collection[int] | None, loaded: LoadedEvents, *, gzipped: bool
               ) -> Iterator[EventLike]:
    """The events of an event.log in file order; ``loaded``'s counts once the last is read."""
    from fabric.ufm.eventlog import EventLogStats, event_log_lines, event_log_scan, iter_event_log

    stats = EventLogStats(keep=KEEP_EXAMPLES)
    kept = 0
    try:
        with stream:
            # With types to leave out, their lines are passed over a block at a time, not read one by one.
            lines = event_log_lines(stream) if used is None else event_log_scan(stream, used)
            for event in iter_event_log(lines, label=name, stats=stats, event_ids=used, stray_days=STRAY_DAYS):
                kept += 1
                yield event
    except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError; a corrupt stream, zlib.error
        reason = getattr(exc, "strerror", None) or str(exc)
        raise InputError(f"cannot read{' (a corrupt or truncated .gz file)' if gzipped else ''}: {reason}",
                         source=name) from None
    if stats.filtered:
        loaded.skipped[NOT_USED] += stats.filtered
    # The first example of each kind is kept, so the examples can outnumber KEEP_EXAMPLES by a few.
    for bad in sorted(stats.malformed, key=attrgetter("line_no")):
        loaded.examples.append(f"{bad.source}:{bad.line_no}: {bad.reason}: {bad.text[:160]!r}")
    loaded.skipped.update(stats.kinds)
    loaded.records = kept + stats.filtered + stats.malformed_count
    _refuse_unusable(loaded, kept, name)


# --- JSON --------------------------------------------------------------------------------------------------


def _json(stream: IO[bytes], name: str, used: Collection[int] | None) -> LoadedEvents:
    data = read_stream(stream, DOCUMENT, name)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _json_fault(name, exc) from None
    try:
        document = strictjson.loads(text)
    except JsonError as exc:
        if exc.msg == "Extra data" or _first_line_is_an_object(text):
            return _json_lines(name, text, used)
        raise _json_fault(name, exc) from None
    if isinstance(document, Mapping) and "data" not in document and _looks_like_event(document):
        return _json_lines(name, text, used)  # a JSON lines file of one event
    from fabric.ufm.models import ShapeError, unwrap_list

    try:
        items = unwrap_list(document)
    except ShapeError as exc:
        raise InputError(f"not a UFM event list: {exc}", source=name) from None
    wrapped = isinstance(document, Mapping)
    loaded = LoadedEvents(name, "json-data" if wrapped else "json", [])
    prefix = "data" if wrapped else ""
    loaded.events.extend(_events_of(((f"{name}: {prefix}[{index}]", item) for index, item in enumerate(items)),
                                    used, loaded))
    return loaded


def _json_list_file(stream: IO[bytes], name: str, used: Collection[int] | None, loaded: LoadedEvents
                    ) -> Iterator[EventLike]:
    """The events of a file holding a JSON list, in list order, decoded a piece at a time as they are asked for
    (``topology.jsonlist.file_items``); ``loaded``'s counts once the last is read. The same events, counts and
    errors as the list decoded whole; an error is raised when the reading reaches it."""
    return _checked(name, loaded, _events_of(_json_list_items(stream, name), used, loaded))


def _json_list_items(stream: IO[bytes], name: str) -> Iterator[tuple[str, Any]]:
    """The elements of the JSON list ``stream`` holds and where each is; a fault as an ``InputError`` naming it.
    A regular file is mapped; a pipe, which cannot be, is copied to a temporary file first (memory stays at a
    piece or two either way)."""
    from topology.jsonlist import file_items

    try:
        with stream, _mappable(stream) as mappable:
            for index, item in enumerate(file_items(mappable)):
                yield f"{name}: [{index}]", item
    except (OSError, JsonError) as exc:
        raise _json_fault(name, exc) from None


@contextmanager
def _mappable(stream: IO[bytes]) -> Iterator[IO[bytes]]:
    """``stream`` when it is a regular file; else what is left of it copied to an anonymous temporary file (in
    ``$TMPDIR``), from its start: a pipe cannot be mapped."""
    if _regular(stream):
        yield stream
        return
    with tempfile.TemporaryFile(prefix="fabric-replay-") as spool:
        shutil.copyfileobj(stream, spool)
        spool.seek(0)
        yield spool


def _json_fault(name: str, exc: OSError | UnicodeDecodeError | JsonError) -> InputError:
    """The one line for a JSON file that could not be read (``OSError``), is not UTF-8, is not JSON, or holds JSON
    the decoder refuses (a key given twice, NaN: named by its field; a list is not read past it)."""
    if isinstance(exc, OSError):
        return InputError(f"cannot read: {exc.strerror or exc}", source=name)
    if isinstance(exc, UnicodeDecodeError):
        return InputError(f"not UTF-8 text: {exc.reason} at byte {exc.start}", source=name)
    if exc.path is not None:
        return InputError(exc.msg, source=name, column=exc.path)
    return InputError(f"invalid JSON: {_placed(exc)}", source=name, line=exc.lineno)


def _placed(exc: JsonError) -> str:
    """What is wrong, and the column of text that is not JSON (its line is said apart)."""
    return f"{exc.msg} (column {exc.colno})" if exc.colno is not None else exc.msg


def _first_line_is_an_object(text: str) -> bool:
    line = text.lstrip().split("\n", 1)[0].strip()
    try:
        return isinstance(strictjson.loads(line), dict)
    except JsonError:
        return False


def _looks_like_event(document: Mapping[str, Any]) -> bool:
    return "id" in document and ("type" in document or "event_type" in document or "event_id" in document)


def _opens_with_an_event_line(head: bytes) -> bool:
    """The file's first line (within its first bytes) is an event object alone: JSON lines, read as a stream.
    Anything else that begins with ``{`` or ``[`` is decoded whole (a document, or lines after all)."""
    text = head.removeprefix(_UTF8_BOM).lstrip(b" \t\r\n")
    line, newline, _ = text.partition(b"\n")
    if not newline:
        return False
    try:
        first = strictjson.loads(line)
    except JsonError:  # not JSON alone, not UTF-8, nested too deep, refused
        return False
    return isinstance(first, Mapping) and "data" not in first and _looks_like_event(first)


def _json_lines(name: str, text: str, used: Collection[int] | None) -> LoadedEvents:
    """JSON lines found when decoding a file whole (its first line no event alone): held, as the text is."""
    loaded = LoadedEvents(name, "jsonl", [])
    loaded.events.extend(_events_of(_json_line_items(name, _numbered(text), loaded), used, loaded))
    return loaded


def _json_lines_file(stream: IO[bytes], name: str, used: Collection[int] | None, loaded: LoadedEvents
                     ) -> Iterator[EventLike]:
    """The events of a JSON lines file in file order, read a line at a time; ``loaded``'s counts once the last is
    read. A line that is not UTF-8 is counted (``not UTF-8 text``), as in an event.log, and so is one longer than
    ``topology.inputs.LINE_LIMIT`` (``line too long``)."""
    return _checked(name, loaded, _events_of(_json_line_items(name, _numbered_lines(stream, name), loaded), used,
                                             loaded))


def _json_line_items(name: str, lines: Iterable[tuple[int, str | None]], loaded: LoadedEvents
                     ) -> Iterator[tuple[str, Any]]:
    """The values of numbered JSON lines (``None``: a line that is not UTF-8; ``TOO_LONG``: one too long to
    read) and where each is; a line that is no JSON is counted into ``loaded`` instead."""
    for line_no, line in lines:
        where = f"{name}:{line_no}"
        if line is None or line is TOO_LONG:
            loaded.records += 1
            loaded.skip(NOT_TEXT if line is None else TOO_LONG, where)
            continue
        try:
            item = strictjson.loads(line)
        except JsonError as exc:
            loaded.records += 1
            loaded.skip("invalid JSON", where, str(exc) if exc.path is not None else _placed(exc))
            continue
        yield where, item


def _numbered(text: str) -> Iterator[tuple[int, str]]:
    for line_no, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            yield line_no, line


def _numbered_lines(stream: IO[bytes], name: str) -> Iterator[tuple[int, str | None]]:
    """A stream's non-blank lines, numbered, decoded from UTF-8 (a byte-order mark before the first is dropped);
    ``None`` for a line that is not UTF-8, ``TOO_LONG`` for one longer than ``LINE_LIMIT`` bytes. ``InputError``
    when the stream cannot be read."""
    try:
        with stream:
            for line_no, raw in enumerate(capped_lines(stream), start=1):
                if len(raw.rstrip(b"\r\n")) > LINE_LIMIT:
                    yield line_no, TOO_LONG
                    continue
                data = raw.removeprefix(_UTF8_BOM) if line_no == 1 else raw
                try:
                    line = data.decode("utf-8")
                except UnicodeDecodeError:
                    yield line_no, None
                    continue
                if line.strip():
                    yield line_no, line
    except OSError as exc:
        raise _json_fault(name, exc) from None


def _validated(loaded: LoadedEvents, item: object, where: str) -> Event | None:
    """``item`` as an event, or None (counted and kept as an example) when it is not one."""
    loaded.records += 1
    if not isinstance(item, Mapping):
        loaded.skip("not an event object", where, f"a JSON {type(item).__name__}")
        return None
    try:
        return Event.model_validate(item)
    except ValidationError as exc:
        first = exc.errors()[0]
        field_path = ".".join(str(part) for part in first["loc"]) or "event"
        # A date that is no time (past year 9999 in UTC, beyond the platform's range) is counted as such.
        out_of_range = isinstance(first.get("ctx", {}).get("error"), TimestampRangeError)
        loaded.skip(BAD_TIMESTAMP if out_of_range else "invalid event", where, f"{field_path}: {first['msg']}")
    return None


def _events_of(items: Iterable[tuple[str, object]], used: Collection[int] | None, loaded: LoadedEvents
               ) -> Iterator[Event]:
    """The events among ``items`` (each with where it is), in their order: those that are events, of a used type,
    not dated far from their neighbours; the others counted into ``loaded``."""
    verdicts = FarOff[tuple[str, Event]](STRAY_DAYS)
    for where, item in items:
        if (event := _validated(loaded, item, where)) is not None:
            yield from _kept(loaded, verdicts.push(event.timestamp.toordinal(), (where, event)), used)
    yield from _kept(loaded, verdicts.end(), used)


def _checked(name: str, loaded: LoadedEvents, events: Iterator[Event]) -> Iterator[Event]:
    """``events``, then ``InputError`` if not one of the file's records was a usable event."""
    kept = 0
    for event in events:
        kept += 1
        yield event
    _refuse_unusable(loaded, kept, name)


def _kept(loaded: LoadedEvents, verdicts: Sequence[tuple[tuple[str, Event], bool]],
          used: Collection[int] | None) -> Iterator[Event]:
    """The events of ``verdicts`` to keep; the others counted into ``loaded``."""
    for (where, event), far in verdicts:
        if used is not None and event.event_id not in used:
            loaded.skipped[NOT_USED] += 1
        elif far:
            loaded.skip(FAR_OFF, where, f"{event.timestamp.isoformat()}, more than {STRAY_DAYS} days from the "
                                        "events on either side")
        else:
            yield event
