"""Errors raised for unusable input: each names where the problem is."""

from __future__ import annotations


class InputError(ValueError):
    """A plan, snapshot or dump that cannot be used as it stands.

    ``source`` is a file name (or URL), ``line`` is 1-based, ``column`` is the column's header name or
    a JSON field path. The message reads like a compiler diagnostic so that editors can jump to it.
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        line: int | None = None,
        column: str | None = None,
    ) -> None:
        self.message = message
        self.source = source
        self.line = line
        self.column = column
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = self.source or "<input>"
        if self.line is not None:
            where += f":{self.line}"
        if self.column is not None:
            where += f": column {self.column!r}" if self.line is not None else f": field {self.column!r}"
        return f"{where}: {self.message}"
