"""The timeline of what the daemon did, one line each at 80 columns (time, component, what, why): the demo's, and
the console's decisions page (``fabric.console``) reads ``decision_entries`` too.

Lines are built from what the running daemon answers over HTTP (its decisions, and for the components the demo
follows closely their findings, UFM writes and tickets) and from what the demo itself did to the fabric and the
ticket system (a fault injected, a ticket resolved, a webhook delivered). ``--verbose`` adds, under a line, its
whole reason and, for a decision, the capacity guard's figures.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from fabric.remediation.policy import LINK_CHECK, RESET_WATCH

PROBATION = "probation"
"""The rule of the comment that ends a clean probation (``fabric.remediation.policy``)."""

WIDTH = 80
_TIME, _COMPONENT, _WHAT = 8, 16, 12
_WHY = WIDTH - _TIME - _COMPONENT - _WHAT - 3

DECIDED = {"disable": "disabled", "enable": "re-enabled", "defer": "deferred", "ticket": "ticket",
           "comment": "comment", "reopen": "reopened", "quarantine": "quarantined", "halt": "halted", "reset": "reset"}
"""How a decision's kind reads in the "what" column; records (noted, nothing done) are shown only verbose, but
those of ``_SHOWN_RECORDS``."""
_SHOWN_RECORDS = {LINK_CHECK: "confirmed up", RESET_WATCH: "healthy"}
"""The records every timeline shows, by rule: a re-enabled link confirmed up, a reset link's clean watch."""
_WRITES = {"disable": "UFM: down", "enable": "UFM: up", "reset": "UFM: reset"}
_SAID = {"repair": "ticket resolved: back in service, ", LINK_CHECK: "re-enabled: ", RESET_WATCH: ""}
"""What the "what" column of a re-enable and of its link check says already, left out of their why."""
_ACTED_ON = frozenset({"disable", "defer", "ticket", "reopen", "quarantine", "reset"})


_REPORTED_BY = re.compile(r" reported by [^:]+: ")
_SEEN_BY = re.compile(r"(.*) \(seen by ([^()]+)\)$")
"""A finding's reason that names the sources that saw its fault (``fabric.remediation.sightings``)."""
_ISO_TIME = re.compile(r"\d{4}-\d\d-\d\dT(\d\d:\d\d:\d\d)(?:\.\d+)?(?:[+-]\d\d:\d\d|Z)?")


@dataclass(frozen=True, slots=True)
class Entry:
    at: datetime
    component: str
    what: str
    why: str
    details: tuple[str, ...] = ()


def short(component: str | None) -> str:
    """A component as the timeline names it: a switch or a port by its name, a cable by its first end (one end
    names a cable: ``link:a/1|b/2`` -> ``a/1``)."""
    if component is None:
        return "the fabric"
    return component.partition(":")[2].partition("|")[0] or component


def plain(reason: str) -> str:
    """A reason as a line says it: without the port that reported it (the component column names it), times
    to the second."""
    return _ISO_TIME.sub(r"\1", _REPORTED_BY.sub(": ", " ".join(reason.split())))


def fit(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 1] + "…"


def render(entry: Entry, *, verbose: bool, wrap: bool = False) -> list[str]:
    """The entry's line, its why cut to fit (``wrap``: its why wrapped under itself instead); ``verbose``: its
    details under it."""
    why = " ".join(entry.why.split())
    whys = (textwrap.wrap(why, _WHY) or [""]) if wrap else [fit(why, _WHY)]
    lines = [(f"{entry.at:%H:%M:%S} {fit(entry.component, _COMPONENT):<{_COMPONENT}} "
              f"{fit(entry.what, _WHAT):<{_WHAT}} {whys[0]}").rstrip()]
    lines += [" " * (WIDTH - _WHY) + more for more in whys[1:]]
    if not verbose:
        return lines
    indent = " " * (_TIME + 1)
    details = list(entry.details) or ([why] if len(why) > _WHY and not wrap else [])
    return [*lines, *(wrapped for detail in details
                      for wrapped in textwrap.wrap(detail, WIDTH, initial_indent=indent, subsequent_indent=indent))]


def header() -> str:
    return f"{'time':<{_TIME}} {'component':<{_COMPONENT}} {'what':<{_WHAT}} why"


def _when(text: str) -> datetime:
    return datetime.fromisoformat(text)


_GUARD_TEXT = ("guard: the worst leaf {worst_leaf} from {worst_leaf_paths} to {worst_leaf_paths_after} paths to core "
               "(minimum {worst_leaf_minimum} of {worst_leaf_planned} planned, c {c}); {disabled} of cap {cap} "
               "disabled before it, {disables_last_hour} of {hourly_limit} disables in the last hour")


def _guard(figures: Mapping[str, Any]) -> tuple[str, ...]:
    """The capacity guard's figures of a decision, as a sentence (as they are, when some are missing)."""
    if not figures:
        return ()
    try:
        return (_GUARD_TEXT.format_map(figures),)
    except KeyError:
        return ("guard: " + ", ".join(f"{name} {value}" for name, value in figures.items()),)


def _what(decision: Mapping[str, Any]) -> str:
    if decision["kind"] == "record":
        return _SHOWN_RECORDS.get(str(decision["rule"]), "noted")
    if decision["kind"] == "comment" and decision["rule"] == PROBATION:
        return "healthy"
    return DECIDED.get(str(decision["kind"]), str(decision["kind"]))


def _why(decision: Mapping[str, Any]) -> str:
    """For a disable, or a deferral for capacity, the guard's verdict on the leaf it hurts most (its paths to core
    after it against the guard's minimum); else the reason, led by its rule unless the reason names it already."""
    reason, rule, guard = plain(str(decision["reason"])), str(decision["rule"]), decision["guard"]
    if decision["kind"] in ("disable", "defer") and {"worst_leaf", "worst_leaf_paths_after",
                                                      "worst_leaf_minimum"} <= guard.keys():
        fits = guard["worst_leaf_paths_after"] >= guard["worst_leaf_minimum"]
        if decision["kind"] == "disable" or not fits:
            return f"{rule}; {guard['worst_leaf']}: {guard['worst_leaf_paths_after']}{'≥' if fits else '<'}" \
                   f"{guard['worst_leaf_minimum']} paths"
        # deferred by the blast radius or the rate, not the capacity: the reason says which
    if decision["kind"] in ("enable", "record") and rule in _SAID:
        return reason.removeprefix(_SAID[rule])
    return reason if reason.startswith(rule) or decision["kind"] in ("enable", "comment", "reopen") \
        else f"{rule}: {reason}"


def decision_entries(decisions: Iterable[Mapping[str, Any]], *, verbose: bool) -> list[Entry]:
    """Every decision but the records (only ``_SHOWN_RECORDS``, unless ``verbose``). A ticket opened with a disable
    or a deferral of its component is folded into that line (``+tkt``)."""
    entries: list[Entry] = []
    for decision in decisions:
        kind = decision["kind"]
        if kind == "record" and decision["rule"] not in _SHOWN_RECORDS and not verbose:
            continue
        at, component = _when(decision["at"]), short(decision["component"])
        last = entries[-1] if entries else None
        if kind == "ticket" and last is not None and (last.at, last.component) == (at, component) \
                and last.what in (DECIDED["disable"], DECIDED["defer"]):
            entries[-1] = Entry(at, component, f"{last.what}+tkt", last.why, last.details)
            continue
        entries.append(Entry(at, component, _what(decision), _why(decision),
                             (f"{decision['component']}: {plain(decision['reason'])}", *_guard(decision["guard"]))))
    return entries


def finding_why(rule: str, reason: str) -> str:
    """A finding's why: its rule and, first, who saw its fault when its reason says so (UFM Telemetry, with or
    without UFM's events), else its reason whole."""
    reason = plain(reason)
    seen = _SEEN_BY.fullmatch(reason)
    return f"{rule}: {reason}" if seen is None else f"{rule}, seen by {seen[2]}: {seen[1]}"


def followed_entries(detail: Mapping[str, Any], event: Callable[[int], tuple[datetime, str] | None]) -> list[Entry]:
    """For a component followed closely: the findings it was acted on for, each after the first UFM event behind
    it (``event`` reads it from UFM; a fault only UFM Telemetry saw has none), and its UFM writes (when UFM
    confirmed them)."""
    name = short(detail["id"])
    acted = [str(d["reason"]) for d in detail["decisions"] if d["kind"] in _ACTED_ON]
    entries = []
    for finding in detail["findings"]:
        if not any(reason.startswith(finding["reason"]) for reason in acted):
            continue  # noted only: it was out already
        evidence = finding["evidence"]
        first = event(min(evidence)) if evidence else None
        if first is not None:
            entries.append(Entry(first[0], name, "UFM event", f"{first[1]} (and {len(evidence) - 1} more)"
                                 if len(evidence) > 1 else first[1]))
        entries.append(Entry(_when(finding["at"]), name, "finding", finding_why(finding["rule"], finding["reason"]),
                             (f"{detail['id']}: {plain(finding['reason'])}",
                              f"evidence: UFM events {', '.join(map(str, evidence))}" if evidence
                              else "evidence: UFM Telemetry's counters, no UFM event")))
    for intent in detail["intents"]:
        if intent["kind"] in _WRITES and intent["finished_at"] is not None:
            entries.append(Entry(_when(intent["finished_at"]), name, _WRITES[intent["kind"]],
                                 f"job {intent['state']}; intent stored before the write",
                                 (f"intent {intent['id']} written {intent['created_at']}, {intent['state']} "
                                  f"{intent['finished_at']}: {intent['outcome']}",)))
    return entries


def ordered(entries: Iterable[Entry]) -> list[Entry]:
    """By time; at one time in the order given."""
    return sorted(entries, key=lambda entry: entry.at)
