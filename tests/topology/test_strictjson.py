"""``topology.strictjson``: what ``json.loads`` reads, less a key given twice, NaN and Infinity, lone surrogates
and nesting past ``MAX_DEPTH``; each refusal names its field, or its line and column."""

from __future__ import annotations

import json
import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from topology.strictjson import MAX_DEPTH, JsonError, loads, raw_decode, too_deep

VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20)


@settings(max_examples=200, deadline=None)
@given(VALUES, st.sampled_from(["utf-8", "utf-16", "utf-32"]), st.booleans())
def test_what_json_writes_reads_back_the_same(value: object, encoding: str, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    assert loads(text) == value
    assert loads(text.encode(encoding)) == value


@pytest.mark.parametrize(("text", "error"), [
    ('{"matcher": "leaf-1:*", "matcher": "switch:*"}', "matcher: duplicate key 'matcher'"),
    ('{"data": [{"a": 1}, {"b": {"c": 1, "c": 1}}]}', "data[1].b.c: duplicate key 'c'"),
    ('[{"a b": 1, "a b": 2}]', "[0]['a b']: duplicate key 'a b'"),
    ('{"severity": NaN}', "severity: NaN is not a number JSON has"),
    ("[1, Infinity]", "[1]: Infinity is not a number JSON has"),
    ('{"x": [-Infinity]}', "x[0]: -Infinity is not a number JSON has"),
    ("[1e400]", "[0]: the number '1e400' is too large for a float"),
    ('{"name": "\\ud800"}', "name: a lone surrogate escape"),
    ('{"\\udfff": 1}', "['\\udfff']: a lone surrogate escape"),
    ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "[0][0][0]"),
    ("[" * 20_000 + "]" * 20_000, f"nested deeper than {MAX_DEPTH} levels"),
    ('{"a": 1,\n "b": }', "Expecting value at line 2, column 7"),
    ("[1] [2]", "Extra data at line 1, column 5"),
    ("1" * 5000, "a number of more than 4300 digits"),
])
def test_a_refusal_says_what_and_where(text: str, error: str) -> None:
    with pytest.raises(JsonError) as raised:
        loads(text)
    assert error in str(raised.value)


def test_the_deepest_nesting_read_is_max_depth() -> None:
    assert loads("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
    with pytest.raises(JsonError, match=f"nested deeper than {MAX_DEPTH} levels"):
        loads("{" + '"a": {' * MAX_DEPTH + "}" * (MAX_DEPTH + 1))


def test_a_surrogate_pair_is_one_character() -> None:
    assert loads('["\\ud83d\\ude00"]') == ["\U0001f600"]


def test_bytes_that_are_not_text_are_named_by_their_offset() -> None:
    with pytest.raises(JsonError, match="not UTF-8 text: invalid start byte at byte 3"):
        loads(b'["a\xff"]')
    with pytest.raises(JsonError, match="not UTF-8 text"):  # a surrogate encoded is no character either
        loads(b'["\xed\xa0\x80"]')


def test_raw_decode_counts_the_containers_around_and_places_errors_in_the_whole_text() -> None:
    assert raw_decode('[1, {"a": [2]}] ', 4, depth=1) == ({"a": [2]}, 14)
    inner = "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)
    assert raw_decode(inner, depth=1)[1] == len(inner)
    with pytest.raises(JsonError, match="nested deeper"):
        raw_decode(inner, depth=2)
    with pytest.raises(JsonError) as raised:
        raw_decode('[1,\n {"a": 1, "a": 2}]', 5, depth=1)
    assert str(raised.value.under(1)) == "[1].a: duplicate key 'a'"
    with pytest.raises(JsonError, match=re.escape("Expecting value at line 2, column 2")):
        raw_decode("[1,\n ]", 5)


def test_too_deep_walks_a_shared_container_once() -> None:
    """YAML's aliases make one container the child of many: 2**60 paths, 61 containers."""
    shared: list[object] = []
    for _ in range(60):
        shared = [shared, shared]
    started = time.perf_counter()
    assert too_deep(shared, shared=True) is None
    assert too_deep(shared, limit=10, shared=True) == "[0]" * 10
    assert time.perf_counter() - started < 1.0


def _depth(value: object) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


NESTED = st.recursive(st.none() | st.integers() | st.text(max_size=3),
                      lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner,
                                                                                   max_size=3), max_leaves=40)


@settings(max_examples=200, deadline=None)
@given(NESTED, st.integers(0, 8))
def test_too_deep_finds_a_container_exactly_when_the_nesting_passes_the_limit(value: object, limit: int) -> None:
    assert (too_deep(value, limit) is not None) == (_depth(value) > limit)
    assert (too_deep(value, limit, shared=True) is not None) == (_depth(value) > limit)
