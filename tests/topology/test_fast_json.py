"""A UFM document decodes to exactly what the standard library makes of it, whichever parser reads it."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from topology.errors import InputError
from topology.formats import fastjson as fast_json
from topology.formats.ufm_snapshot import load_ufm_json


def same(a: Any, b: Any) -> bool:
    """Equal, of the same types all the way down, keys in the same order (nan is nan)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def stdlib_outcome(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Any]:
    """What ``load_ufm_json`` answers when the fast parser refuses everything: the standard library's answer."""
    def refuse(data: bytes) -> Any:
        raise fast_json.Refused

    with monkeypatch.context() as patch:
        patch.setattr(fast_json, "decode", refuse)
        return outcome(path)


def outcome(path: Path) -> tuple[str, Any]:
    try:
        return "value", load_ufm_json(path)
    except InputError as exc:
        return "error", str(exc)


def assert_as_stdlib(path: Path, data: bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Any]:
    path.write_bytes(data)
    expected = stdlib_outcome(path, monkeypatch)
    found = outcome(path)
    assert found[0] == expected[0], (data[:80], found, expected)
    assert same(found[1], expected[1]), (data[:80], found, expected)
    return found


@pytest.fixture
def document(tmp_path: Path) -> Path:
    return tmp_path / "ports.json"


# Text the standard library reads and pydantic-core refuses: the fallback must give the standard library's value.
@pytest.mark.parametrize("text", [
    '["\\ud800"]',  # a lone surrogate escape
    '{"a": "\\udc00\\ud800"}',
    "[" * 300 + "]" * 300,  # deeper than pydantic-core's 200
    "[" + "7" * 4300 + "]",  # the longest integer both read...
    "[" + "1" * 5000 + ".5]",  # ... and a float longer than pydantic-core reads
])
def test_what_pydantic_core_refuses_is_decoded_by_the_standard_library(document: Path, text: str,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    document.write_text(text)
    assert same(load_ufm_json(document), json.loads(text))


@pytest.mark.parametrize(("data", "message"), [
    (b'[{"name": 1}\r\n\r\n,]', ":3: invalid JSON: Expecting value (column 2)"),  # \r\n read as one newline
    (b'[1]\r\r\rx', ":4: invalid JSON: Extra data (column 1)"),  # \r alone too
    (b"\xef\xbb\xbf\xef\xbb\xbf[]", ":1: invalid JSON: Unexpected UTF-8 BOM (decode using utf-8-sig) (column 1)"),
    (b'["\xff"]', "not UTF-8 text: invalid start byte at byte 2"),
    (b"[" + b"9" * 5000 + b"]", f"invalid JSON: a number of more than {sys.get_int_max_str_digits()} digits"),
    (b"[" * 100_000, "invalid JSON: nested too deeply"),
])
def test_errors_are_the_standard_librarys(document: Path, data: bytes, message: str,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    kind, text = assert_as_stdlib(document, data, monkeypatch)
    assert kind == "error" and text.endswith(message) and text.startswith(str(document))


def test_a_lower_integer_limit_is_the_standard_librarys(document: Path) -> None:
    """pydantic-core reads 1,000 digits whatever the limit: below its own 4,300 the standard library decodes."""
    document.write_text("[" + "7" * 1000 + "]")
    previous = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(640)
    try:
        with pytest.raises(InputError, match="a number of more than 640 digits"):
            load_ufm_json(document)
    finally:
        sys.set_int_max_str_digits(previous)


def test_pydantic_core_skips_the_byte_order_mark_itself() -> None:
    assert fast_json.decode(b'\xef\xbb\xbf[{"name": "x"}]') == [{"name": "x"}]
    with pytest.raises(fast_json.Refused):  # a second one is bad JSON
        fast_json.decode(b'\xef\xbb\xbf\xef\xbb\xbf[]')


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)


@st.composite
def documents(draw: st.DrawFn) -> bytes:
    """JSON as json.dumps writes it (compact, indented, ASCII or not, with \\r\\n), then perhaps damaged."""
    text = json.dumps(draw(JSON_VALUES), ensure_ascii=draw(st.booleans()), indent=draw(st.sampled_from([None, 1])))
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    data = (b"\xef\xbb\xbf" if draw(st.booleans()) else b"") + text.encode("utf-8")
    if data and draw(st.booleans()):  # overwrite, insert or cut at some byte
        at = draw(st.integers(0, len(data) - 1))
        piece = draw(st.sampled_from([b"", b",", b"]", b"}", b'"', b"\\", b"\x00", b"\t", b"\xff", b"\xed\xa0\x80",
                                      b"\\ud800", b"NaN", b"-", b"1e999", b"\r"]) | st.binary(max_size=3))
        data = data[:at] + piece + data[at + draw(st.integers(0, 2)):]
    return data


@settings(max_examples=400, deadline=None)
@given(documents())
def test_any_document_decodes_as_the_standard_library_decodes_it(tmp_path_factory: pytest.TempPathFactory,
                                                                 data: bytes) -> None:
    path = tmp_path_factory.getbasetemp() / "fast-json.json"
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert_as_stdlib(path, data, monkeypatch)


# --- a list response decoded for some fields of its objects -------------------------------------------------

FIELDS = ("name", "dname", "n")
ENTRY_KEYS = st.sampled_from([*FIELDS, "other", "data", "Name", ""])


def projected(value: Any) -> Any:
    """What ``decode_entries`` should make of what json.loads gave: the objects' fields in FIELDS, or Refused."""
    wrapped = isinstance(value, dict) and "data" in value
    entries = value["data"] if wrapped else value
    if not isinstance(entries, list) or not all(isinstance(entry, dict) for entry in entries):
        return fast_json.Refused
    kept = [{key: entry[key] for key in FIELDS if key in entry} for entry in entries]
    return {"data": kept} if wrapped else kept


@st.composite
def list_documents(draw: st.DrawFn) -> bytes:
    """Lists of objects (perhaps wrapped in {"data": ...}, perhaps with an odd entry), written by json.dumps."""
    entries = draw(st.lists(st.dictionaries(ENTRY_KEYS, JSON_VALUES, max_size=5) | JSON_VALUES, max_size=5))
    value: Any = entries
    if draw(st.booleans()):
        value = {"data": entries, **draw(st.dictionaries(ENTRY_KEYS, JSON_VALUES, max_size=2))}
    text = json.dumps(value, ensure_ascii=draw(st.booleans()))
    if draw(st.booleans()):  # a key written twice: the last one counts, as in json.loads
        text = text.replace('"name": ', '"name": 0, "name": ', 1)
    return (b"\xef\xbb\xbf" if draw(st.booleans()) else b"") + text.encode("utf-8", "surrogatepass")


@settings(max_examples=400, deadline=None)
@given(list_documents() | documents())
def test_a_list_response_keeps_the_fields_asked_for(data: bytes) -> None:
    try:
        expected = projected(json.loads(data.decode("utf-8-sig")))
    except ValueError:  # bad JSON, bad UTF-8, a lone surrogate: the fast decoder refuses it too
        expected = fast_json.Refused
    try:
        found = fast_json.decode_entries(data, FIELDS)
    except fast_json.Refused:
        found = fast_json.Refused
    if found is fast_json.Refused:  # it may refuse what the standard library reads: that is decoded whole
        return
    assert expected is not fast_json.Refused, data[:120]
    assert same(sorted_entries(found), sorted_entries(expected)), (data[:120], found, expected)


def sorted_entries(value: Any) -> Any:
    """The entries' keys in one order: a projection's order is its fields', the document's is not kept."""
    entries = value["data"] if isinstance(value, dict) else value
    kept = [dict(sorted(entry.items())) for entry in entries]
    return {"data": kept} if isinstance(value, dict) else kept


def test_a_list_response_is_refused_when_it_is_no_list_of_objects() -> None:
    for text in (b'{"x": []}', b"[1]", b'[{"name": 1}, []]', b'{"data": [1]}', b'{"data": {}}', b"7",
                 b'[{"name": "\\ud800"}]', b"[" * 300):
        with pytest.raises(fast_json.Refused):
            fast_json.decode_entries(text, FIELDS)
    assert fast_json.decode_entries(b'{"data": [{"name": 1, "x": 2}], "total": 1}', FIELDS) == {"data": [{"name": 1}]}
