"""JSON as the project reads it: the one decoder of every document, body, file and variable.

``json.loads`` (and pydantic-core's parser) take a key given twice as its last value, so a body naming ``matcher``
twice matches what its second one says; it reads ``NaN``, ``Infinity`` and ``1e400`` (which JSON has not) as
floats that compare false with everything; it turns ``"\\ud800"`` into a string no UTF-8 store or answer can
hold; and it recurses as deep as the document goes. This module refuses each of them with a ``JsonError`` that
says what and where (the field's path, or the line and column of text that is not JSON):

- a key given twice in one object;
- ``NaN``, ``Infinity``, ``-Infinity``, and numbers too large for a float;
- a lone surrogate escape (half of a UTF-16 pair, no character);
- nesting deeper than ``MAX_DEPTH`` (no ``RecursionError`` ever leaves it);
- what ``json.loads`` refuses: text that is not JSON, bytes that are not text, integers past Python's digit limit.

The decoding is the standard library's C scanner with hooks: a key given twice is noticed when its object closes,
without a path; only then is the text decoded a second time with hooks that leave a mark where the fault is, and
the mark found gives the path. The depth is measured once the value is built (a walk of its containers, a level
at a time, that passes over the dicts holding no container); ``\\u`` escapes, rare, are looked for in the text
before any string is checked. What this costs over ``json.loads`` is in ``docs/benchmarks.md`` (Session 11).
"""

from __future__ import annotations

import gc
import json
import math
import re
import sys
from collections.abc import Callable, Iterator
from itertools import chain, compress, repeat
from operator import is_
from typing import Any, TypeVar

from topology.ports import excerpt

__all__ = ["MAX_DEPTH", "JsonError", "as_text", "bounded", "loads", "raw_decode", "too_deep"]

MAX_DEPTH = 100
"""The deepest nesting read: far above any document the project reads (UFM's are four deep, a request body three)
and far below what recursing code (an encoder, a validator, an error's ``repr``) can walk."""

T = TypeVar("T")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


class JsonError(ValueError):
    """Text that is not JSON, or JSON the project does not read. ``msg`` says what; ``path`` names the field
    (``data[3].matcher``) when the text was JSON, ``lineno`` and ``colno`` the place when it was not."""

    def __init__(self, msg: str, *, path: str | None = None, lineno: int | None = None,
                 colno: int | None = None) -> None:
        self.msg = msg
        self.path = path
        self.lineno = lineno
        self.colno = colno
        super().__init__(str(self))

    def __str__(self) -> str:
        """``path: msg`` (``x[1].m: duplicate key 'm'``), or ``msg at line L, column C``, as the project's errors
        read: where, then what."""
        if self.path:
            return f"{self.path}: {self.msg}"
        if self.lineno is not None:
            return f"{self.msg} at line {self.lineno}, column {self.colno}"
        return self.msg

    @classmethod
    def at(cls, msg: str, text: str, pos: int) -> JsonError:
        """Text that is not JSON at ``text[pos]``, placed by line and column as ``json`` places its errors."""
        placed = json.JSONDecodeError(msg, text, pos)
        return cls(msg, lineno=placed.lineno, colno=placed.colno)

    def under(self, step: int | str) -> JsonError:
        """This error, in a value that is ``step`` of a larger one (an element of a list read one at a time)."""
        if self.path is None:
            return self
        inner = self.path if self.path.startswith("[") or not self.path else "." + self.path
        return JsonError(self.msg, path=_path((step,)) + inner, lineno=self.lineno, colno=self.colno)


def loads(data: str | bytes | bytearray | memoryview) -> Any:
    """The JSON value of ``data`` (text, or bytes as ``as_text`` decodes them), or ``JsonError``."""
    value, _ = _decode(as_text(data), 0, whole=True)
    return value


def as_text(data: str | bytes | bytearray | memoryview) -> str:
    """``data`` as text: bytes in UTF-8, -16 or -32 as ``json.loads`` detects them (a UTF-8 byte-order mark is
    allowed), strictly (a lone surrogate encoded is refused: it is no character); ``JsonError`` naming the byte."""
    if isinstance(data, str):
        return data
    raw = bytes(data)
    encoding = json.detect_encoding(raw)
    try:
        return raw.decode(encoding)
    except UnicodeDecodeError as exc:
        raise JsonError(f"not {encoding.upper().removesuffix('-SIG')} text: {exc.reason} at byte {exc.start}") \
            from None


def raw_decode(text: str, at: int = 0, *, depth: int = 0) -> tuple[Any, int]:
    """The JSON value that begins at ``text[at]`` (no whitespace before it) and where it ends, or ``JsonError``;
    ``depth``: how many containers around it the nesting bound counts (an element of a list read one at a time:
    1). A ``JsonError``'s line and column are counted in the whole ``text``."""
    return _decode(text, at, whole=False, depth=depth)


def bounded(load: Callable[[], T]) -> T:
    """What ``load`` decodes (a TOML or YAML parser's call: they recurse, as ``json`` does), or ``JsonError`` when
    it is nested deeper than ``MAX_DEPTH``: the parser's ``RecursionError`` caught, the depth of what it built
    measured."""
    try:
        value = load()
    except RecursionError:
        raise JsonError(f"nested deeper than {MAX_DEPTH} levels") from None
    deep = too_deep(value, shared=True)
    if deep is not None:
        raise JsonError(f"nested deeper than {MAX_DEPTH} levels", path=deep)
    return value


def too_deep(value: Any, limit: int = MAX_DEPTH, *, shared: bool = False) -> str | None:
    """The path of the first container in ``value`` nested deeper than ``limit`` (``value`` itself is at depth 1),
    or ``None``. For decoded documents of any kind (JSON, TOML, YAML): lists and dicts, walked a level at a time in
    C (``chain``, ``filter``, ``compress``: no loop in Python over the values). ``shared``: a container may be the
    child of many (YAML's aliases), and is walked once.

    A level's values are sifted by ``gc.is_tracked``, not by type: a string or a number is never tracked, and
    neither is a dict that holds no container (CPython tracks a dict from the first container put in it, and
    stops only when it holds none), so a dict of plain values, UFM's event, is passed over without its values being
    looked at: 3 ms instead of 60 on UFM's event list of 100,000 events. Only the level at
    ``limit`` is sifted by type, where a dict of plain values is one level too many."""
    level: list[Any] = [value] if type(value) in _CONTAINERS else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return _path(_first_at(value, limit + 1))
        if shared:
            level = list({id(container): container for container in level}.values())
        kinds = list(map(type, level))
        children = chain(chain.from_iterable(map(dict.values, compress(level, map(is_, kinds, repeat(dict))))),
                         chain.from_iterable(compress(level, map(is_, kinds, repeat(list)))))
        held = list(children if depth == limit else filter(gc.is_tracked, children))
        level = list(compress(held, map(_CONTAINERS.__contains__, map(type, held))))
    return None


_CONTAINERS = frozenset({dict, list})
"""The containers of a decoded document: exactly these types (every decoder the project uses makes them)."""


# --- decoding --------------------------------------------------------------------------------------------------


class _Refused(Exception):
    """Raised by the first pass's hooks: the second pass finds where."""


class _Mark:
    """Left by the second pass's hooks where a value is refused (in place of the value)."""

    __slots__ = ("key", "msg")

    def __init__(self, msg: str, key: str | None = None) -> None:
        self.msg = msg
        self.key = key


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    made = dict(pairs)
    if len(made) != len(pairs):
        raise _Refused
    return made


def _refuse_constant(name: str) -> Any:
    raise _Refused


def _finite(digits: str) -> float:
    number = float(digits)
    if math.isinf(number):
        raise _Refused
    return number


def _mark_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any] | _Mark:
    made: dict[str, Any] = {}
    for key, item in pairs:
        if key in made:
            return _Mark(f"duplicate key {excerpt(key)}", key)
        made[key] = item
    return made


def _mark_constant(name: str) -> _Mark:
    return _Mark(f"{name} is not a number JSON has")


def _mark_infinite(digits: str) -> float | _Mark:
    number = float(digits)
    return _Mark(f"the number {excerpt(digits)} is too large for a float") if math.isinf(number) else number


_STRICT = json.JSONDecoder(object_pairs_hook=_refuse_duplicates, parse_constant=_refuse_constant,
                           parse_float=_finite)
_LOCATING = json.JSONDecoder(object_pairs_hook=_mark_duplicates, parse_constant=_mark_constant,
                             parse_float=_mark_infinite)


def _decode(text: str, at: int, *, whole: bool, depth: int = 0) -> tuple[Any, int]:
    try:
        value, end = _scan(_STRICT, text, at, whole=whole)
    except _Refused:
        value, end = _scan(_LOCATING, text, at, whole=whole)
        _check_depth(value, depth)
        raise _located(value) from None
    _check_depth(value, depth)
    # A backslash is looked for first: one character is found at memory speed, two ten times slower.
    if text.find("\\", at, end) != -1 and _SURROGATE_ESCAPE.search(text, at, end):
        lone = _first_lone_surrogate(value)
        if lone is not None:
            raise JsonError("a lone surrogate escape (half of a UTF-16 pair, no character)", path=_path(lone))
    return value, end


def _check_depth(value: Any, around: int) -> None:
    deep = too_deep(value, MAX_DEPTH - around)
    if deep is not None:
        raise JsonError(f"nested deeper than {MAX_DEPTH} levels", path=deep)


def _scan(decoder: json.JSONDecoder, text: str, at: int, *, whole: bool) -> tuple[Any, int]:
    """``decoder``'s value of the text, with the standard library's errors made ``JsonError``s."""
    try:
        if whole:
            return decoder.decode(text), len(text)
        return decoder.raw_decode(text, at)
    except json.JSONDecodeError as exc:
        raise JsonError.at(exc.msg, text, exc.pos) from None
    except RecursionError:
        raise JsonError(f"nested deeper than {MAX_DEPTH} levels") from None
    except ValueError:  # the one other: an integer longer than Python converts
        raise JsonError(f"a number of more than {sys.get_int_max_str_digits()} digits") from None


def _located(value: Any) -> JsonError:
    """The error for the first mark the second pass left in ``value``."""
    for steps, item in _walk(value):
        if isinstance(item, _Mark):
            return JsonError(item.msg, path=_path((*steps, item.key) if item.key is not None else steps))
    raise AssertionError("the second pass left no mark where the first refused")


def _first_lone_surrogate(value: Any) -> tuple[int | str, ...] | None:
    for steps, item in _walk(value):
        if isinstance(item, dict):
            for key in item:
                if not _encodes(key):
                    return (*steps, key)
        elif isinstance(item, str) and not _encodes(item):
            return steps
    return None


def _encodes(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _walk(value: Any) -> Iterator[tuple[tuple[int | str, ...], Any]]:
    """Every value in ``value`` with its path, in document order (depth first, without recursion)."""
    stack: list[tuple[tuple[int | str, ...], Any]] = [((), value)]
    while stack:
        steps, item = stack.pop()
        yield steps, item
        children = item.items() if isinstance(item, dict) else enumerate(item) if isinstance(item, list) else ()
        stack.extend(reversed([((*steps, step), child) for step, child in children]))


def _first_at(value: Any, depth: int) -> tuple[int | str, ...]:
    """The path of the first container at ``depth`` (the value itself: 1), in document order."""
    for steps, item in _walk(value):
        if len(steps) == depth - 1 and isinstance(item, dict | list):
            return steps
    return ()


def _path(steps: tuple[int | str, ...]) -> str:
    """``data[3].matcher``; a key that is no plain name quoted: ``["a b"]``. Cut when very long."""
    text = "".join(f"[{step}]" if isinstance(step, int) else
                   f".{step}" if _PLAIN_KEY.fullmatch(step) else f"[{excerpt(step)}]" for step in steps)
    text = text.removeprefix(".")
    return text if len(text) <= 120 else f"{text[:100]}… ({len(steps)} levels)"
