"""A JSON list body decoded a piece at a time, so that decoding UFM's event list never holds the GIL long.

UFM answers ``GET /app/events`` with its whole history every time: 43 MB for a 100,000-event storm. One
``json.loads`` of it is a single C call of 0.2-0.4 s, during which no other thread of the process runs: the daemon's
API, which answers from another thread, stalls for that long (``benchmarks/bench_daemon.py``). Decoded in pieces,
the interpreter can switch threads between any two of them, and the caller can drop an element as soon as it is
decoded (the events the cursor handed over already, ``cursor.drop_handed_over``) instead of holding the whole
decoded history at once.

Two ways, the fast one first:

- **Pieces of about** ``PIECE_BYTES``, cut where one element ends and the next begins (a ``}`` then a ``,`` then a
  ``{``), each decoded whole (``topology.strictjson``, the project's one JSON decoder), wrapped in ``[`` ``]``: one
  call of the standard library's C scanner for some 600 events. A cut can fall inside a string or a nested value,
  but then its piece is not JSON: the piece before the cut either leaves a string open or a bracket unclosed. So
  when every piece decodes, every cut was between two elements of the list, by induction from the first piece,
  which begins where the list does, and the pieces' elements are the list's.
- **One element at a time** (``strictjson.raw_decode``), for every other case: a piece that does not decode (from
  its first element on: the elements before it were decoded right), a text that is not UTF-8, a body that is a
  JSON object.

What it accepts and refuses is ``strictjson.loads``'s on the whole body (``tests/ufm/test_ufm_jsonlist.py`` holds it
to that): the same encodings of the bytes, the same values, and a ``JsonError`` for any body that decoder refuses,
raised when the iteration reaches the fault, naming the element (``[41].severity: NaN is not a number JSON has``)
or the line and column of text that is not JSON. A body that is a JSON object (UFM's ``{"data": [...]}`` form) is
decoded whole and unwrapped.
"""

from __future__ import annotations

import json
import mmap
import os
import re
from collections.abc import Callable, Generator, Iterator, Mapping
from typing import IO, Any, NamedTuple

from topology import strictjson
from topology.strictjson import JsonError

__all__ = ["JSON_SPACE", "PIECE_BYTES", "ShapeError", "bare_list_bounds", "file_items", "file_list_bounds",
           "list_items", "unwrap_list"]

PIECE_BYTES = 256 * 1024
"""How much of the body one call of the decoder decodes: about 600 of UFM's events, a millisecond or two."""

_SPACE = re.compile(r"[ \t\n\r]*")
"""What JSON counts as whitespace between tokens (``json``'s own scanner skips exactly these)."""
JSON_SPACE = b" \t\n\r"
_BETWEEN_OBJECTS = re.compile(rb"\}[ \t\n\r]*,[ \t\n\r]*(?=\{)")
"""Where a piece may end: the ``}`` of an object, then the comma before the next one (only possibly a boundary
of the list's elements: the decoding of the pieces tells)."""
_LEADING_SPACE = re.compile(rb"[ \t\n\r]*")


class ShapeError(ValueError):
    """A payload does not have the shape the API promises (a list, or an object with a ``data`` list)."""


def unwrap_list(payload: Any) -> list[Any]:
    """The list in a payload that is either a bare JSON list or ``{"data": [...]}``."""
    if isinstance(payload, list):
        return payload
    if isinstance(payload, Mapping) and isinstance(payload.get("data"), list):
        return list(payload["data"])
    raise ShapeError(
        f"expected a JSON list or an object with a 'data' list, got {type(payload).__name__}"
        + (f" with keys {sorted(payload)[:10]}" if isinstance(payload, Mapping) else "")
    )


class _Resume(NamedTuple):
    """Where the pieces stopped: the byte offset of the first element not given (``0``: none given), and its
    position in the list."""

    offset: int
    position: int


def list_items(body: bytes, *, piece_bytes: int = PIECE_BYTES) -> Iterator[Any]:
    """The elements of the JSON list in ``body`` (bare, or the ``data`` list of an object), one at a time.
    ``JsonError`` when the body is not JSON the project reads; ``ShapeError`` when it is JSON but no such list."""
    bounds = bare_list_bounds(body)
    resume = (yield from _by_pieces(body, bounds, piece_bytes)) if bounds is not None else _Resume(0, 0)
    if resume is None:
        return
    text = strictjson.as_text(body)
    # Where the fast way stopped, in characters: a piece begins on a character of its own (after a ',' or '[').
    at = len(body[:resume.offset].decode("utf-8")) if resume.offset else 0
    yield from _by_elements(text, at, resume.position)


def bare_list_bounds(body: bytes | mmap.mmap) -> tuple[int, int] | None:
    """The offsets of the ``[`` that opens and the ``]`` that closes a body (bytes, or a mapped file: nothing of it
    copied) that is a bare JSON list in UTF-8 (no byte-order mark), whitespace around it allowed; ``None`` for any
    other body."""
    found = _LEADING_SPACE.match(body)
    start = found.end() if found is not None else 0
    end = len(body) - 1
    while end > start and body[end] in JSON_SPACE:
        end -= 1
    if end <= start or body[start] != ord("[") or body[end] != ord("]") or json.detect_encoding(body[:4]) != "utf-8":
        return None
    return start, end


def file_list_bounds(file: IO[bytes]) -> tuple[int, int] | None:
    """``bare_list_bounds`` of the open regular ``file``'s bytes, reading only its first and last pages."""
    if os.fstat(file.fileno()).st_size == 0:
        return None
    with mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as body:
        return bare_list_bounds(body)


def file_items(file: IO[bytes], *, piece_bytes: int = PIECE_BYTES) -> Iterator[Any]:
    """The elements of the JSON list in the open regular ``file`` (from its start, wherever it is read to),
    exactly as ``list_items`` gives those of its bytes, read a piece at a time: the file is mapped, not read, and
    the pages behind the last piece are given back as it goes, so memory stays at a piece or two whatever the
    file's size. Only a file the fast way cannot decode to its end (a piece it refuses, not a bare UTF-8 list) is
    held whole, from where that way stopped. A ``JsonError`` names the element, or the line and column in the
    file, or the byte; ``OSError`` when it cannot be read."""
    if os.fstat(file.fileno()).st_size == 0:
        yield from list_items(b"")
        return
    with mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as body:
        bounds = bare_list_bounds(body)
        if bounds is None:
            yield from list_items(body[:])
            return
        resume = yield from _by_pieces(body, bounds, piece_bytes, _releaser(body))
        if resume is None:
            return
        if resume.offset == 0:
            yield from list_items(body[:])
            return
        # Pieces from ``resume.offset`` on, one element at a time; an error's place counted from the file's start.
        try:
            rest = body[resume.offset:].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JsonError(f"not UTF-8 text: {exc.reason} at byte {exc.start + resume.offset}") from None
        try:
            yield from _by_elements("[" + rest, 1, resume.position)
        except JsonError as exc:
            raise _placed(exc, body, resume.offset) from None


def halves(body: bytes | mmap.mmap, bounds: tuple[int, int]) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """The list within ``bounds`` (``bare_list_bounds``) cut in two near its middle where a piece may end: the
    bounds of each half, for ``part_items``; ``None`` where no such place is found past the middle."""
    start, end = bounds
    cut = _BETWEEN_OBJECTS.search(body, (start + end) // 2, end)
    if cut is None:
        return None
    return (start, cut.start() + 1), (cut.end() - 1, end)


def part_items(body: mmap.mmap, part: tuple[int, int]) -> Generator[Any, None, bool]:
    """The elements of one of a mapped list's ``halves``, a piece at a time as ``file_items`` decodes them, the
    pages behind each piece given back; returns whether the part was decoded to its end. ``False`` (some elements
    may have come out already): a piece the fast way refuses, a cut that was not between two elements or a fault,
    which only the whole list's decoding places."""
    return (yield from _by_pieces(body, part, PIECE_BYTES, _releaser(body))) is None


def _releaser(body: mmap.mmap) -> Callable[[int], None] | None:
    """Give back the mapped pages before an offset: clean pages of a file, read again should they be needed."""
    if not hasattr(mmap, "MADV_DONTNEED"):  # not on every platform; memory then follows the file's size
        return None

    def release(before: int) -> None:
        whole_pages = before - before % mmap.PAGESIZE
        if whole_pages:
            body.madvise(mmap.MADV_DONTNEED, 0, whole_pages)

    return release


def _placed(exc: JsonError, body: mmap.mmap, offset: int) -> JsonError:
    """``exc``, raised on the text from byte ``offset`` of ``body`` behind a ``[``, with the line and column it
    has in the whole file (an error naming an element's field has none)."""
    if exc.lineno is None or exc.colno is None:
        return exc
    lines_before = sum(body[at:min(at + (1 << 20), offset)].count(b"\n") for at in range(0, offset, 1 << 20))
    line_start = body.rfind(b"\n", 0, offset) + 1
    colno = exc.colno
    if exc.lineno == 1:  # on the line the text began in: the characters before it on that line count, not its '['
        colno = exc.colno - 1 + len(body[line_start:offset].decode("utf-8"))
    return JsonError(exc.msg, path=exc.path, lineno=exc.lineno + lines_before, colno=colno)


def _by_pieces(body: bytes | mmap.mmap, bounds: tuple[int, int], piece_bytes: int,
               release: Callable[[int], None] | None = None) -> Generator[Any, None, _Resume | None]:
    """The list's elements, piece by piece; ``None`` once all are out, or where the rest must be decoded the other
    way. ``release`` is told, after each piece, the offset before which the body will not be read again."""
    start, end = bounds
    at = start + 1
    given = 0
    while True:
        cut = _BETWEEN_OBJECTS.search(body, at + piece_bytes, end) if at + piece_bytes < end else None
        stop = end if cut is None else cut.start() + 1
        try:
            items = strictjson.loads(b"[" + body[at:stop] + b"]")
        except JsonError:  # a cut inside a value, or a fault the elements decoded one at a time will name
            return _Resume(0 if at == start + 1 else at, given)
        yield from items
        given += len(items)
        if cut is None:
            return None
        at = cut.end()
        if release is not None:
            release(at)


def _skip_space(text: str, at: int) -> int:
    found = _SPACE.match(text, at)
    assert found is not None  # ``*`` matches the empty string anywhere
    return found.end()


def _by_elements(text: str, at: int, index: int = 0) -> Iterator[Any]:
    """The elements from character ``at`` on: the list's start (``0``), or the first element of a piece, the
    list's ``index``-th."""
    if at == 0:
        start = _skip_space(text, 0)
        if not text.startswith("[", start):
            yield from unwrap_list(strictjson.loads(text))
            return
        at = _skip_space(text, start + 1)
        if text.startswith("]", at):
            at += 1
            if _skip_space(text, at) != len(text):
                raise JsonError.at("Extra data", text, at)
            return
    at = _skip_space(text, at)
    while True:
        try:
            item, at = strictjson.raw_decode(text, at, depth=1)
        except JsonError as exc:
            raise exc.under(index) from None
        yield item
        index += 1
        at = _skip_space(text, at)
        if text.startswith(",", at):
            at = _skip_space(text, at + 1)
        elif text.startswith("]", at):
            at += 1
            break
        else:
            raise JsonError.at("Expecting ',' delimiter", text, at)
    if _skip_space(text, at) != len(text):
        raise JsonError.at("Extra data", text, at)
