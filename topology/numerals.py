"""Whole numbers written in text by someone else (UFM, a plan, a header, an environment variable).

``str.isdigit()`` is true for "²" and "٣", which ``int()`` refuses or reads as another number, and ``int()`` of
more than 4,300 digits raises: text that passed ``isdigit()`` still ended in a traceback. Every reader asks here.
"""

from __future__ import annotations

__all__ = ["whole_number"]

INT64_DIGITS = 18
"""Digits that always fit a signed 64-bit integer (the store's ids, UFM's ids): 19 may not."""


def whole_number(text: str, *, digits: int = INT64_DIGITS) -> int | None:
    """``text`` as a whole number when it is 1 to ``digits`` ASCII decimal digits and nothing else, else ``None``."""
    if 0 < len(text) <= digits and text.isascii() and text.isdigit():
        return int(text)
    return None
