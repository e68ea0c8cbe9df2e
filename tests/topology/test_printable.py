"""Text shown to a person: every invisible character written as its escape, nothing else changed."""

from __future__ import annotations

import codecs

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from topology.printable import has_hidden, visible, visible_lines

any_text = st.text(st.characters(codec="utf-8"), max_size=300)


@settings(max_examples=300, deadline=1000)
@given(any_text)
@example("switch:a\nb\u202ec\x00\x1b[2J\u2028\x85\u200b\ufeff\U000e0041")
def test_visible_text_is_one_line_with_nothing_hidden(text: str) -> None:
    shown = visible(text)
    assert shown.isprintable() and len(shown.splitlines()) <= 1, shown
    assert not has_hidden(shown)


@settings(max_examples=300, deadline=1000)
@given(st.text(st.characters(max_codepoint=0x7F, exclude_characters="\\"), max_size=300))
def test_an_escape_reads_back_as_the_character_it_stands_for(text: str) -> None:
    assert codecs.decode(visible(text), "unicode_escape") == text


@given(st.text(st.characters(codec="utf-8", exclude_categories=("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"))))
def test_printable_text_is_left_as_it_is(text: str) -> None:
    assert visible(text) == text  # names in any script, accents, emoji: only the invisible is escaped


@pytest.mark.parametrize(("hidden", "shown"), [
    ("\n", "\\n"), ("\t", "\\t"), ("\x00", "\\x00"), ("\x7f", "\\x7f"), ("\x9b", "\\x9b"), ("\u202e", "\\u202e"),
    ("\u2066", "\\u2066"), ("\u200f", "\\u200f"), ("\u200b", "\\u200b"), ("\xa0", "\\xa0"),
    ("\U000e0041", "\\U000e0041"),
])
def test_each_kind_of_invisible_character_has_its_escape(hidden: str, shown: str) -> None:
    assert visible(f"a{hidden}b") == f"a{shown}b"


def test_a_document_keeps_its_line_feeds_and_nothing_else() -> None:
    assert visible_lines("line one\nline\x1b[31m two\r\n") == "line one\nline\\x1b[31m two\\r\n"
