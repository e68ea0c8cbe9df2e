"""Text shown to a person (a log line, a table cell, an error message) with every invisible character made visible.

Names, reasons and matchers come from plans, UFM, ibnetdiscover dumps, the API and the command line. Shown as they
are, a newline splits one log line in two (a forged line can follow it), U+202E turns the rest of a line around,
ESC drives the terminal and a NUL or a zero-width space hides in a name. ``visible`` writes each such character as
its escape, the way Python's ``repr`` does: ``\\n``, ``\\t``, ``\\x00``, ``\\x1b``, ``\\u202e``, ``\\U000e0041``.

Which characters: every one Python calls not printable (``str.isprintable``) except the ASCII space, which is the
Unicode categories of controls (C0, DEL, C1), format characters (bidirectional marks, embeddings and isolates,
zero-width spaces and joiners, the byte-order mark, tags), line and paragraph separators, surrogates, private-use
and unassigned code points, and spaces other than U+0020 (a no-break space is a look-alike of a space). Python's
own definition follows the Unicode version of the running interpreter, so no table here goes stale.

A backslash is left as it is: a visible ``\\n`` that was typed as two characters is still one line, and doubling
every backslash would make Windows paths and regular expressions harder to read for nothing.
"""

from __future__ import annotations

import re

_NOT_ASCII_PRINTABLE = re.compile(r"[^\x20-\x7e]")
"""Candidates only: most of them (letters of other scripts) are printable and stay."""

_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char.isprintable():
        return char
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def visible(text: str) -> str:
    """``text`` with every character that is not printable written as its escape: one line, nothing hidden."""
    if text.isprintable():
        return text
    return _NOT_ASCII_PRINTABLE.sub(_escape, text)


def visible_lines(text: str) -> str:
    """``text`` as ``visible`` makes it, its line feeds kept: a document of several lines (a ticket's
    description), each line shown as it is meant and nothing else hidden or acting on the terminal."""
    return "\n".join(visible(line) for line in text.split("\n"))


def has_hidden(text: str) -> bool:
    """``text`` holds a character ``visible`` would escape."""
    return not text.isprintable()
