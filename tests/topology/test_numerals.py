"""Whole numbers in someone else's text: "²" passed ``isdigit()`` and failed ``int()``, and so did 5,000 digits."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fabric.terminal import width
from fabric.ufm.cursor import raw_id
from topology.formats.ufm_render import port_number
from topology.numerals import INT64_DIGITS, whole_number


@given(st.text(max_size=30) | st.from_regex(r"\A[0-9]{1,25}\Z"))
def test_any_text_is_its_number_or_none_never_an_exception(text: str) -> None:
    number = whole_number(text)
    if number is None:
        assert not (text.isascii() and text.isdigit()) or not 0 < len(text) <= INT64_DIGITS
    else:
        assert str(number) == (text.lstrip("0") or "0") and 0 <= number < 2**63


@pytest.mark.parametrize("text", ["²", "٣", "1²", "9" * 5000, "", " 7", "-1", "+1"])
def test_what_isdigit_or_int_would_have_taken_is_not_a_number(text: str) -> None:
    assert whole_number(text) is None


@pytest.mark.parametrize("text", ["²", "9" * 5000])
def test_readers_take_it_as_no_number(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert raw_id({"id": text}) is None  # UFM's event id
    assert port_number(text, 3) == 3  # a port label
    monkeypatch.setenv("COLUMNS", text)
    assert width() is None  # every table of fabricctl asks
