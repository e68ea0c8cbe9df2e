"""The longest text an operator's write may store: who asks, why, what a silence matches, a repair's comment.

What the API and ``fabricctl`` write is kept in the store, and printed in the log and in tables: a 10 MB reason was
stored and logged as one line. Each edge refuses longer text, naming the field: the API's models say the limits
(pydantic's ``max_length``, so the OpenAPI document states them) and answer 422; ``fabricctl`` exits 2. The limits
are far above what a person types and far below what hurts a log line or a table.
"""

from __future__ import annotations

__all__ = ["BY_MAX", "COMMENT_MAX", "DURATION_MAX", "MATCHER_MAX", "REASON_MAX", "within"]

REASON_MAX = 1000
"""Why: a change or ticket number and a sentence or two (resume, clear, silence, expiry, reload)."""
BY_MAX = 200
"""Who asks: a user name or an e-mail address."""
MATCHER_MAX = 512
"""A silence's component id or glob: two device names and ports (``link:a/1|b/1``) with room to spare."""
COMMENT_MAX = 4000
"""What was repaired, in a ticket's comment (``fabricctl tickets resolve --comment``)."""
DURATION_MAX = 32
"""A duration as written: ``1h30m``, ``90m``, ``2d``."""


def within(text: str, limit: int, field: str) -> str:
    """``text``, when it is at most ``limit`` characters; else ``ValueError`` naming ``field`` and the limit."""
    if len(text) > limit:
        raise ValueError(f"{field}: {len(text):,} characters, more than the {limit:,} accepted")
    return text
