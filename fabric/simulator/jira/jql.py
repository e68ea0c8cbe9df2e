"""The few JQL clauses the Jira backend sends, parsed into a predicate; anything else is refused as Jira refuses it.

Grammar (keywords case-insensitive)::

    query   := clause (AND clause)* [ORDER BY field [ASC|DESC] (, field [ASC|DESC])*]
    clause  := project = VALUE | labels = VALUE | labels in (VALUE, ...)
             | statusCategory (= | !=) VALUE | resolution is [not] EMPTY

``VALUE`` is a word or a double-quoted string.  Order fields: ``created``, ``key``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

__all__ = ["JqlError", "Query", "Searchable", "parse_jql"]

_TOKEN = re.compile(r'\s*(?:(?P<string>"(?:[^"\\]|\\.)*")|(?P<op>!=|=|\(|\)|,)|(?P<word>[^\s=!(),"]+))')
_CATEGORY_NAMES = {"done": "done", "to do": "new", "new": "new", "in progress": "indeterminate",
                   "indeterminate": "indeterminate"}


class JqlError(ValueError):
    """A query the fake does not understand; Jira answers these with a 400 and this text."""


class Searchable(Protocol):
    """What a clause reads of an issue."""

    @property
    def project(self) -> str: ...
    @property
    def labels(self) -> Sequence[str]: ...
    @property
    def category(self) -> str: ...
    @property
    def resolution(self) -> str | None: ...
    @property
    def created(self) -> float: ...
    @property
    def number(self) -> int: ...


Predicate = Callable[[Searchable], bool]


@dataclass(frozen=True, slots=True)
class Query:
    matches: Callable[[Searchable], bool]
    order: tuple[tuple[str, bool], ...]
    """``(field, descending)`` pairs."""

    def sort(self, issues: list[Searchable]) -> None:
        for name, descending in reversed(self.order or (("key", False),)):
            issues.sort(key=(lambda i: i.created) if name == "created" else (lambda i: i.number), reverse=descending)


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    position = 0
    text = text.rstrip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            raise JqlError(f"Error in the JQL Query: the character '{text[position:].strip()[:1]}' is a reserved "
                           f"JQL character (at character {position + 1}).")
        out.append(match.group(match.lastgroup or "word"))
        position = match.end()
    return out


def _value(token: str) -> str:
    if token.startswith('"'):
        return re.sub(r"\\(.)", r"\1", token[1:-1])
    return token


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.at = 0

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None:
            raise JqlError("Error in the JQL Query: Expecting more input at the end of the query.")
        if expected is not None and token.casefold() != expected.casefold():
            raise JqlError(f"Error in the JQL Query: Expecting '{expected}' but got '{token}'.")
        self.at += 1
        return token

    def query(self) -> Query:
        clauses = [self.clause()]
        while (token := self.peek()) is not None and token.casefold() == "and":
            self.take()
            clauses.append(self.clause())
        order: list[tuple[str, bool]] = []
        if (token := self.peek()) is not None and token.casefold() == "order":
            self.take()
            self.take("by")
            order.append(self.order_field())
            while self.peek() == ",":
                self.take()
                order.append(self.order_field())
        if (token := self.peek()) is not None:
            raise JqlError(f"Error in the JQL Query: Expecting either 'AND' or 'ORDER BY' but got '{token}'.")
        return Query(lambda issue: all(clause(issue) for clause in clauses), tuple(order))

    def order_field(self) -> tuple[str, bool]:
        name = self.take().casefold()
        if name not in ("created", "key"):
            raise JqlError(f"Not able to sort using field '{name}'.")
        descending = False
        if (token := self.peek()) is not None and token.casefold() in ("asc", "desc"):
            descending = self.take().casefold() == "desc"
        return name, descending

    def clause(self) -> Predicate:
        field = self.take().casefold()
        if field == "project":
            self.take("=")
            project = _value(self.take()).upper()
            return lambda issue: issue.project == project
        if field == "labels":
            return self.labels()
        if field == "statuscategory":
            operator = self.take()
            if operator not in ("=", "!="):
                raise JqlError(f"Error in the JQL Query: the operator '{operator}' is not supported here.")
            name = _value(self.take()).casefold()
            if name not in _CATEGORY_NAMES:
                raise JqlError(f"The value '{name}' does not exist for the field 'statusCategory'.")
            category, negated = _CATEGORY_NAMES[name], operator == "!="
            return lambda issue: (issue.category == category) != negated
        if field == "resolution":
            self.take("is")
            negated = (self.peek() or "").casefold() == "not"
            if negated:
                self.take()
            self.take("empty")
            return lambda issue: (issue.resolution is None) != negated
        raise JqlError(f"Field '{field}' does not exist or you do not have permission to view it.")

    def labels(self) -> Predicate:
        operator = self.take()
        if operator == "=":
            wanted = {_value(self.take())}
        elif operator.casefold() == "in":
            self.take("(")
            wanted = {_value(self.take())}
            while self.peek() == ",":
                self.take()
                wanted.add(_value(self.take()))
            self.take(")")
        else:
            raise JqlError(f"Error in the JQL Query: the operator '{operator}' is not supported for labels.")
        return lambda issue: not wanted.isdisjoint(issue.labels)


def parse_jql(text: str) -> Query:
    """The query ``text`` means; raises ``JqlError`` for anything outside the grammar above."""
    if not text.strip():
        raise JqlError("Error in the JQL Query: the query is empty.")
    return _Parser(text).query()
