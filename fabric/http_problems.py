"""A request FastAPI refused as invalid, one problem a field: how every HTTP app of the project words bad input.

The API answers them as one line (422), the simulator's admin API likewise (400), the fake Jira as Jira's own
``errors`` object (400): each names the field, never FastAPI's list of dictionaries.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi.exceptions import RequestValidationError

__all__ = ["problems"]


def problems(exc: RequestValidationError) -> list[tuple[str, str]]:
    """``(field, message)`` for each problem: the field's dotted path inside the body, query, path or header
    (``body`` for the body as a whole), the message without pydantic's ``Value error,`` prefix."""
    found = []
    for error in exc.errors():
        loc: Sequence[Any] = error.get("loc", ())
        if len(loc) > 1 and loc[0] in ("body", "query", "path", "header"):
            loc = loc[1:]
        field = ".".join(str(part) for part in loc) or "body"
        found.append((field, str(error.get("msg", "invalid")).removeprefix("Value error, ")))
    return found
