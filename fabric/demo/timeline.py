"""The demo's timeline: what the daemon did, one line each at 80 columns (time, component, what, why).

Lines are built from what the running daemon answers over HTTP (its decisions, and for the components the demo
follows closely their findings, UFM writes and tickets) and from what the demo itself did to the fabric and the
ticket system (a fault injected, a ticket resolved, a webhook delivered). ``--verbose`` adds, under a line, its
whole reason and, for a decision, the capacity guard's figures.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from fabric.remediation.policy import LINK_CHECK

PROBATION = "probation"
"""The rule of the comment that ends a clean probation (``fabric.remediation.policy``)."""

WIDTH = 80
_TIME, _COMPONENT, _WHAT = 8, 28, 12
_WHY = WIDTH - _TIME - _COMPONENT - _WHAT - 3

DECIDED = {"disable": "disabled", "enable": "re-enabled", "defer": "deferred", "ticket": "ticket",
           "comment": "comment", "reopen": "reopened", "quarantine": "quarantined", "halt": "halted"}
"""How a decision's kind reads in the "what" column; records (noted, nothing done) are shown only verbose, but
the link check that confirms a re-enabled link."""
_WRITES = {"disable": "UFM: down", "enable": "UFM: up"}


@dataclass(frozen=True, slots=True)
class Entry:
    at: datetime
    component: str
    what: str
    why: str
    details: tuple[str, ...] = ()


def short(component: str | None) -> str:
    """A component id without its kind (``link:a/1|b/2`` -> ``a/1|b/2``): the names say which it is."""
    return "the fabric" if component is None else component.partition(":")[2] or component


def fit(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 1] + "…"


def render(entry: Entry, *, verbose: bool) -> list[str]:
    line = (f"{entry.at:%H:%M:%S} {fit(entry.component, _COMPONENT):<{_COMPONENT}} "
            f"{fit(entry.what, _WHAT):<{_WHAT}} {fit(entry.why, _WHY)}").rstrip()
    if not verbose:
        return [line]
    indent = " " * (_TIME + 1)
    details = [" ".join(entry.why.split()), *entry.details] if len(" ".join(entry.why.split())) > _WHY \
        else list(entry.details)
    return [line, *(wrapped for detail in details
                    for wrapped in textwrap.wrap(detail, WIDTH, initial_indent=indent, subsequent_indent=indent))]


def header() -> str:
    return f"{'time':<{_TIME}} {'component':<{_COMPONENT}} {'what':<{_WHAT}} why"


def _when(text: str) -> datetime:
    return datetime.fromisoformat(text)


def _guard(figures: Mapping[str, Any]) -> tuple[str, ...]:
    if not figures:
        return ()
    return ("guard: " + ", ".join(f"{name} {value}" for name, value in figures.items()),)


def _what(decision: Mapping[str, Any]) -> str:
    if decision["kind"] == "record":
        return "confirmed up" if decision["rule"] == LINK_CHECK else "noted"
    if decision["kind"] == "comment" and decision["rule"] == PROBATION:
        return "healthy"
    return DECIDED.get(decision["kind"], decision["kind"])


def _why(decision: Mapping[str, Any]) -> str:
    """The decision's reason, led by its rule unless the reason names it already."""
    reason, rule = str(decision["reason"]), str(decision["rule"])
    return reason if reason.startswith(rule) or decision["kind"] in ("enable", "comment", "reopen") \
        else f"{rule}: {reason}"


def decision_entries(decisions: Iterable[Mapping[str, Any]], *, verbose: bool) -> list[Entry]:
    """Every decision but the records (only the link checks of re-enabled links, unless ``verbose``). A ticket
    opened with a disable or a deferral of its component is folded into that line (``+tkt``)."""
    entries: list[Entry] = []
    for decision in decisions:
        kind = decision["kind"]
        if kind == "record" and decision["rule"] != LINK_CHECK and not verbose:
            continue
        at, component = _when(decision["at"]), short(decision["component"])
        last = entries[-1] if entries else None
        if kind == "ticket" and last is not None and (last.at, last.component) == (at, component) \
                and last.what in (DECIDED["disable"], DECIDED["defer"]):
            entries[-1] = Entry(at, component, f"{last.what}+tkt", last.why, last.details)
            continue
        entries.append(Entry(at, component, _what(decision), _why(decision), _guard(decision["guard"])))
    return entries


def followed_entries(detail: Mapping[str, Any], event: Callable[[int], tuple[datetime, str] | None]) -> list[Entry]:
    """For a component followed closely: the first UFM event behind each finding (``event`` reads it from UFM),
    its findings and its UFM writes (when UFM confirmed them)."""
    name = short(detail["id"])
    entries = []
    for finding in detail["findings"]:
        evidence = finding["evidence"]
        first = event(min(evidence)) if evidence else None
        if first is not None:
            entries.append(Entry(first[0], name, "UFM event", f"{first[1]} (and {len(evidence) - 1} more)"
                                 if len(evidence) > 1 else first[1]))
        entries.append(Entry(_when(finding["at"]), name, "finding", f"{finding['rule']}: {finding['reason']}",
                             (f"evidence: UFM events {', '.join(map(str, evidence))}",)))
    for intent in detail["intents"]:
        if intent["kind"] in _WRITES and intent["finished_at"] is not None:
            entries.append(Entry(_when(intent["finished_at"]), name, _WRITES[intent["kind"]],
                                 f"port write {intent['state']} (logged before it was sent)",
                                 (f"outcome: {intent['outcome']}",)))
    return entries


def ordered(entries: Iterable[Entry]) -> list[Entry]:
    """By time; at one time in the order given."""
    return sorted(entries, key=lambda entry: entry.at)
