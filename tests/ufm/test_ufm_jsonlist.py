"""``list_items`` decodes a list body a piece at a time and agrees with ``strictjson.loads`` on every text."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import whole_list

from fabric.ufm.models import ShapeError
from topology.jsonlist import PIECE_BYTES, file_items, list_items
from topology.strictjson import JsonError

# Strings that look like the place between two objects, to put cuts where they must not be.
TRICKY_TEXT = st.text(max_size=8) | st.sampled_from(["},{", "}, {", '"}, {"', "\\ud800", "}\n,\t{"])
SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | TRICKY_TEXT
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=4), inner, max_size=4), max_leaves=12)
SPACE = st.text(alphabet=" \t\n\r", max_size=3)


@st.composite
def list_texts(draw: st.DrawFn) -> str:
    """A JSON list written with arbitrary JSON whitespace around every token of the outer list."""
    items = draw(st.lists(VALUES, max_size=6))
    inner = ",".join(draw(SPACE) + json.dumps(item) + draw(SPACE) for item in items)
    return draw(SPACE) + "[" + draw(SPACE) + inner + draw(SPACE) + "]" + draw(SPACE)


def _decoded(body: bytes, piece_bytes: int = PIECE_BYTES) -> tuple[str, Any]:
    """("ok", elements) or ("error", the error's class) for ``list_items``."""
    try:
        return "ok", list(list_items(body, piece_bytes=piece_bytes))
    except ShapeError:
        return "error", ShapeError
    except JsonError:
        return "error", JsonError


def _from_file(path: Path, **options: int) -> Iterator[Any]:
    with path.open("rb") as file:
        yield from file_items(file, **options)


@settings(max_examples=300, deadline=None)
@given(text=list_texts(), encoding=st.sampled_from(["utf-8", "utf-16", "utf-32-le"]))
def test_a_json_list_decodes_to_its_elements(text: str, encoding: str) -> None:
    assert _decoded(text.encode(encoding)) == ("ok", json.loads(text))


PIECES = st.sampled_from([1, 2, 7, 30, PIECE_BYTES])
"""Piece sizes: a piece's cut is tried at nearly every place between two objects, and at none."""


@settings(max_examples=300, deadline=None)
@given(text=list_texts(), piece_bytes=PIECES)
def test_pieces_cut_anywhere_give_the_elements(text: str, piece_bytes: int) -> None:
    """Cuts that fall inside a string or a nested value (a piece that is then not JSON) lose and repeat nothing."""
    body = text.encode()
    assert _decoded(body, piece_bytes) == ("ok", json.loads(body))


@settings(max_examples=500, deadline=None)
@given(text=list_texts(), cut=st.integers(0, 200), junk=st.text(alphabet='[]{},:" 0a\n\\', max_size=4)
       | st.sampled_from(['"a": 1, "a": 2, ', "NaN, ", "1e999, ", '"\\udc00", ']), where=st.integers(0, 200),
       piece_bytes=PIECES)
def test_a_damaged_list_is_refused_exactly_when_the_whole_body_is(text: str, cut: int, junk: str,
                                                                      where: int, piece_bytes: int) -> None:
    """Truncated, or with stray characters put in (a key given twice, NaN among them): the pieces accept the texts
    the whole body's decoding accepts, and give the same elements."""
    damaged = text[:min(cut, len(text))] if cut < len(text) else text
    at = min(where, len(damaged))
    damaged = damaged[:at] + junk + damaged[at:]
    assert _decoded(damaged.encode(), piece_bytes) == whole_list(damaged.encode())


@pytest.mark.parametrize(("body", "error"), [
    (b'["\\ud800"]', "[0]: a lone surrogate escape"), (b'["\xed\xa0\x80"]', "not UTF-8 text"),
    (b'[{"a": "\\udc00"}, {"b": 1}]', "[0].a: a lone surrogate"), (b"[NaN]", "[0]: NaN is not a number"),
    (b'[{"x": 1}, {"x": [Infinity]}]', "[1].x[0]: Infinity is not"), (b"[1e400, 1]", "[0]: the number '1e400'"),
    (b'[{"a": 1}, {"a": 1, "b": 2, "a": 3}]', "[1].a: duplicate key 'a'"), (b"[1, 2] x", "Extra data"),
    (b"[1]]", "Extra data"), (b"[1,]", "Expecting value"), (b"[", "Expecting value"),
    (b"[\xef\xbb\xbf1]", "Expecting value"), (b"[" * 150 + b"]" * 150, "nested deeper than 100 levels"),
    (b"[" * 50_000 + b"]" * 50_000, "nested deeper than 100 levels"),
])
@pytest.mark.parametrize("piece_bytes", [1, PIECE_BYTES])
def test_what_the_strict_decoder_refuses_is_refused_naming_the_element(body: bytes, error: str,
                                                                        piece_bytes: int) -> None:
    assert whole_list(body) == ("error", JsonError)
    with pytest.raises(JsonError, match=re.escape(error)):
        list(list_items(body, piece_bytes=piece_bytes))


def test_a_byte_order_mark_before_the_list_is_read() -> None:
    assert _decoded(b'\xef\xbb\xbf[{"a": 1}]') == ("ok", [{"a": 1}])


@pytest.mark.parametrize("body", [b'{"data": [1, 2]}', b"  {\"data\": []}", b'{"items": [1]}', b"17", b'"x"'])
def test_an_object_or_a_scalar_is_unwrapped_or_refused_as_unwrap_list_does(body: bytes) -> None:
    assert _decoded(body) == whole_list(body)


@pytest.mark.parametrize("piece_bytes", [1, PIECE_BYTES])
def test_the_elements_come_in_order_and_a_fault_surfaces_when_reached(piece_bytes: int) -> None:
    items = list_items(b'[{"id": 1}, {"id": 2}, {"id": 3} {"id": 4}]', piece_bytes=piece_bytes)
    assert next(items) == {"id": 1}
    assert next(items) == {"id": 2}
    assert next(items) == {"id": 3}
    with pytest.raises(JsonError, match="Expecting ','"):
        next(items)


@pytest.mark.parametrize("piece_bytes", [1, PIECE_BYTES])
def test_an_integer_longer_than_pythons_limit_is_refused(piece_bytes: int) -> None:
    body = b'[{"id": 1}, {"id": ' + b"7" * 1000 + b"}]"
    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(640)
    try:
        assert whole_list(body) == ("error", JsonError)
        assert _decoded(body, piece_bytes) == ("error", JsonError)
    finally:
        sys.set_int_max_str_digits(limit)


# --- a file, mapped and read a piece at a time ----------------------------------------------------------------


def _outcome(elements: Callable[[], Iterator[Any]]) -> tuple[str, Any]:
    """("ok", elements), or the error's class, or for a ``JsonError`` what it says and where."""
    try:
        return "ok", list(elements())
    except ShapeError:
        return "error", ShapeError
    except JsonError as exc:
        return "error", (exc.msg, exc.path, exc.lineno, exc.colno)


@st.composite
def list_texts_refused_midway(draw: st.DrawFn) -> str:
    """A JSON list, most often with an element refused (a key given twice, NaN) or one that no piece can end in (a
    string of cut-like text) among the others, and line breaks between them: decoded in pieces up to it, then one
    element at a time."""
    items = [json.dumps(item) for item in draw(st.lists(VALUES, max_size=8))]
    if draw(st.booleans()):
        odd = draw(st.sampled_from(['{"a": 1, "a": 2}', "[NaN]", '{"t": "' + "}, {" * 20 + '"}']))
        items.insert(draw(st.integers(0, len(items))), odd)
    space = st.text(alphabet=" \n", max_size=2)
    return "[" + ",".join(draw(space) + item + draw(space) for item in items) + "]"


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=list_texts() | list_texts_refused_midway(), cut=st.integers(0, 200),
       junk=st.text(alphabet='[]{},:" 0a\n\\\u00e9', max_size=4), where=st.integers(0, 200), piece_bytes=PIECES)
def test_a_file_gives_what_its_bytes_give_errors_placed_alike(tmp_path: Path, text: str, cut: int, junk: str,
                                                              where: int, piece_bytes: int) -> None:
    """Whole or damaged, with a piece refused midway or not: the file's elements, or its error at the same field or
    line and column, are those of ``list_items`` on its bytes."""
    damaged = text[:min(cut, len(text))] if cut < len(text) else text
    at = min(where, len(damaged))
    body = (damaged[:at] + junk + damaged[at:]).encode()
    path = tmp_path / "list.json"
    path.write_bytes(body)
    assert _outcome(lambda: _from_file(path, piece_bytes=piece_bytes)) == _outcome(
        lambda: list_items(body, piece_bytes=piece_bytes))


def test_a_file_refused_midway_names_the_line_and_column_in_the_file(tmp_path: Path) -> None:
    """Element 200 is a string no piece can be cut in: the pieces stop before it, the elements go on one at a time
    from there, and an error further on is placed in the file, not in the rest decoded."""
    elements = ",\n".join(json.dumps({"id": n, "text": "x" * 40}) for n in range(200))
    path = tmp_path / "list.json"
    path.write_text("[" + elements + ',\n{"id": 200, "text": "' + "}, {" * 1000 + '"},\n  {"id": 1,, "b": 2}]')
    items = _from_file(path, piece_bytes=1000)
    assert [next(items)["id"] for _ in range(201)] == list(range(201))
    with pytest.raises(JsonError) as raised:
        next(items)
    with pytest.raises(json.JSONDecodeError) as whole:
        json.loads(path.read_text())
    assert (raised.value.lineno, raised.value.colno) == (whole.value.lineno, whole.value.colno) == (202, 12)


def test_a_field_refused_midway_is_named_by_its_place_in_the_whole_list(tmp_path: Path) -> None:
    elements = ",".join(json.dumps({"id": n}) for n in range(300))
    path = tmp_path / "list.json"
    path.write_text("[" + elements + ', {"id": 300, "severity": NaN}]')
    with pytest.raises(JsonError, match=re.escape("[300].severity: NaN is not a number JSON has")):
        list(_from_file(path, piece_bytes=100))


def test_an_empty_or_missing_file(tmp_path: Path) -> None:
    (tmp_path / "empty.json").write_bytes(b"")
    with pytest.raises(JsonError):
        list(_from_file(tmp_path / "empty.json"))
    with pytest.raises(FileNotFoundError):
        list(_from_file(tmp_path / "missing.json"))


def test_bytes_that_are_not_utf8_midway_are_named_by_their_offset_in_the_file(tmp_path: Path) -> None:
    head = "[" + ",".join(json.dumps({"id": n}) for n in range(100)) + ","
    path = tmp_path / "list.json"
    path.write_bytes(head.encode() + b'"\xff"]')
    with pytest.raises(JsonError, match=f"not UTF-8 text: invalid start byte at byte {len(head.encode()) + 1}$"):
        list(_from_file(path, piece_bytes=64))
