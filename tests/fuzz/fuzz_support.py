"""What the fuzz suites share: for the Hypothesis properties on the readers, the valid inputs they start from, the
ways they corrupt them and the bound on each example's time; for the schemathesis suites, how long they run, which
checks they make and the times they try.

**Readers.** A property is only as deep as its inputs: random bytes stop at a parser's first check. So each reader
is fed its own valid input, corrupted a little: the corruptions that found the faults of issue 21 (a key given twice,
NaN and Infinity, nesting thousands deep, control characters, a truncated text) and the blunter ones (a line dropped
or repeated, a token put anywhere, a range replaced by junk). JSON is also corrupted by its structure: one node of
the document, chosen anywhere in it, replaced or given a key twice, so that the corruption lands inside an element
the reader would otherwise accept.

**OpenAPI documents.** Each schemathesis suite loads an OpenAPI document from a server answering on 127.0.0.1 and
sends every operation generated requests (its documented examples, the coverage phase's boundaries and invalid
values, then Hypothesis's fuzzing), seeded, so a failure comes back on the next run. The checks: no 5xx, every
status code, content type, header and body as documented, invalid input refused (4xx), and an operation that needs
a token refusing a request without it. ``positive_data_acceptance`` is off: a schema cannot say every rule (a
matcher whose kind matches no kind, a component not in the plan), and such input is refused with a 4xx the document
lists. ``FABRIC_FUZZ_EXAMPLES`` sets the fuzzing examples per operation (``make fuzz``: 500); the default keeps each
suite within seconds on two cores.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from functools import cache
from typing import Any

import schemathesis
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from schemathesis.config import SchemathesisConfig

EXAMPLE_SECONDS = 2.0
"""The time bound of one example (Hypothesis's deadline): a reader that hangs, or goes quadratic on a corrupted
input, fails the property. Two orders of magnitude above what the inputs here take."""


def fuzz_settings(examples: int) -> settings:
    """``examples`` per property: together, the directory stays within half a minute of CI time."""
    return settings(max_examples=examples, deadline=timedelta(seconds=EXAMPLE_SECONDS),
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture, HealthCheck.large_base_example])


CONTROL = [chr(code) for code in (*range(0x20), 0x7F, 0x85, 0x9B)]
NASTY = [
    "NaN", "Infinity", "-Infinity", "1e400", "-1", "-3", "0", "9" * 5000, "[" * 3000, "{" * 3000, "[" * 150,
    '{"a": ' * 150, '"\\ud800"', "\\u0000", "\x00", "\x1b[2J", "\u202e", "\ufeff", "\r", "\n", '"', ",", ":", "[-3]",
    "}", "]", "#", "=", "'", "\\", "\u0430", '""', "null", "true", " = [", "[[x]]", "0x", "4xHDR", "Port 999999",
]
"""Tokens that broke a reader once, or could: put anywhere in a text."""
_SCRAMBLE = 7919


@st.composite
def corrupted(draw: st.DrawFn, text: str) -> str:
    """``text`` with one to three corruptions, each anywhere in it."""
    for _ in range(draw(st.integers(1, 3))):
        # Hypothesis favours small integers: scrambled, they fall anywhere in the text, not mostly at its start.
        at = draw(st.integers(0, len(text))) * _SCRAMBLE % (len(text) + 1)
        kind = draw(st.sampled_from(["truncate", "token", "control", "junk", "replace", "repeat line", "drop line"]))
        if kind == "truncate":  # at 0, Hypothesis's favourite, it halves: an empty text is one case, not a third
            text = text[:at or len(text) // 2]
        elif kind == "token":
            text = text[:at] + draw(st.sampled_from(NASTY)) + text[at:]
        elif kind == "control":
            text = text[:at] + draw(st.sampled_from(CONTROL)) + text[at:]
        elif kind == "junk":
            text = text[:at] + draw(st.text(max_size=8)) + text[at:]
        elif kind == "replace":
            text = text[:at] + draw(st.text(max_size=8)) + text[at + draw(st.integers(1, 40)):]
        else:
            lines = text.split("\n")
            line = draw(st.integers(0, len(lines) - 1))
            lines[line:line + 1] = [lines[line]] * 2 if kind == "repeat line" else []
            text = "\n".join(lines)
    return text


# --- JSON, by its structure -------------------------------------------------------------------------------------


Path = tuple[int | str, ...]


def _paths(value: Any, here: Path = ()) -> Iterator[Path]:
    yield here
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*here, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*here, index))


def _emit(value: Any, target: Path, replace: Callable[[Any], str], here: Path = ()) -> str:
    """``value`` as JSON text, the node at ``target`` written as ``replace`` of it."""
    if here == target:
        return replace(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(key)}: {_emit(item, target, replace, (*here, key))}"
                               for key, item in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_emit(item, target, replace, (*here, index)) for index, item in enumerate(value)) + "]"
    return json.dumps(value)


def _twice(value: Any, key_at: int, other: str | None) -> str:
    """An object with one of its keys given again (``other``: the second value; ``None``: the same one, which a
    reader taking the last of two keys accepts), or a non-object as it is."""
    if not isinstance(value, dict) or not value:
        return json.dumps(value)
    pairs = [f"{json.dumps(key)}: {json.dumps(item)}" for key, item in value.items()]
    key = list(value)[key_at % len(value)]
    again = json.dumps(value[key]) if other is None else other
    return "{" + ", ".join([*pairs, f"{json.dumps(key)}: {again}"]) + "}"


REPLACEMENTS = [
    "NaN", "Infinity", "-Infinity", "1e400", "-1", "0", "9" * 400, "1.5", '"\\ud800"', '"a\\u0000b"', '"\\u001b[31m"',
    '"\u202e"', '""', "null", "true", "[]", "{}", '"x"', '[{"a": 1}]',
]
"""What a node may become: numbers JSON has not, or too large, strings no UTF-8 store holds or that carry controls,
values of every other type."""


@st.composite
def corrupted_json(draw: st.DrawFn, document: Any) -> str:
    """``document`` as JSON text with one node (anywhere) given a key twice, replaced, or nested deep; then, one time
    in three, corrupted as text as well."""
    target = draw(st.sampled_from(list(_paths(document))[1:] or [()]))  # the whole document: corrupted as text
    kind = draw(st.sampled_from(["twice", "replace", "deep"]))
    if kind == "twice":
        other = draw(st.none() | st.sampled_from(REPLACEMENTS))
        key_at = draw(st.integers(0, 50))
        text = _emit(document, target[:-1], lambda node: _twice(node, key_at, other))
    elif kind == "replace":
        replacement = draw(st.sampled_from(REPLACEMENTS))
        text = _emit(document, target, lambda node: replacement)
    else:
        depth = draw(st.sampled_from([99, 101, 150, 5000]))
        text = _emit(document, target, lambda node: "[" * depth + json.dumps(node) + "]" * depth)
    return draw(corrupted(text)) if draw(st.integers(0, 2)) == 0 else text


# --- valid inputs -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Recording:
    """Ten simulated minutes of a flapping link and an event storm on the tiny preset, as UFM writes them."""

    log_lines: list[str]
    """``event.log``."""
    events: list[dict[str, Any]]
    """``GET /app/events`` (UFM 6.17's shape)."""


@cache
def recording() -> Recording:
    from fabric.simulator import SimClock, SimSettings, SimState
    from fabric.simulator.events import EventShape
    from fabric.simulator.scenario import parse_scenario
    from topology.generate import PRESETS, fat_tree

    state = SimState.from_plan(fat_tree(PRESETS["tiny"]), clock=SimClock(datetime(2026, 6, 1, 8, tzinfo=UTC)),
                               settings=SimSettings(seed=0))
    parse_scenario({"name": "fuzz", "steps": [{"fault": "flap", "cycles": 3}, {"fault": "storm", "count": 20}]}
                   ).schedule(state)
    state.advance(600)
    events = [record.to_rest(EventShape.CURRENT) for record in state.events.records()]
    return Recording(state.events.log_lines(), events)


# --- the schemathesis suites ------------------------------------------------------------------------------------


SEED = 21
EXAMPLES = int(os.environ.get("FABRIC_FUZZ_EXAMPLES", "30"))
"""Fuzzing examples per operation (the coverage and examples phases add their own, bounded by the schema)."""

CHECKS_OFF = ("positive_data_acceptance",
              # Starlette answers a 405 with the methods of the first route whose path matches, not of all of them.
              "allow_header_conformance")


def config() -> SchemathesisConfig:
    """The suites' configuration: seeded and derandomized, bounded, without the stateful phase (the operations
    are tested one by one; what they leave behind is what the next one meets)."""
    return SchemathesisConfig.from_dict({
        "seed": SEED,
        "request-timeout": 10,
        "suppress-health-check": ["all"],
        "generation": {"max-examples": EXAMPLES, "deterministic": True, "database": "none"},
        "phases": {"stateful": {"enabled": False}},
        "checks": {name: {"enabled": False} for name in CHECKS_OFF},
    })


def _instants() -> st.SearchStrategy[str]:
    """ISO 8601 times as an operator or an attacker writes them: ordinary ones, the ends of ``datetime`` in every
    zone (year 1, year 9999), without a zone, and not quite times."""
    zones = st.sampled_from([UTC, timezone(timedelta(hours=14)), timezone(timedelta(hours=-14)),
                             timezone(timedelta(hours=5, minutes=30))])
    aware = st.builds(lambda when, zone: when.replace(tzinfo=zone).isoformat(),
                      st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59)), zones)
    edges = st.sampled_from(["9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59Z",
                             "0001-01-01T00:00:00Z", "2026-05-01T08:00:00", "2026-05-01T08:00:00Z",
                             "2026-13-01T00:00:00Z", "1700000000"])
    return st.one_of(edges, aware)


schemathesis.openapi.format("date-time", _instants())


TALLIES: list[Tally] = []


@dataclass
class Tally:
    """What a suite sent: requests per operation and the time it took (printed for docs/reliability.md)."""

    name: str
    requests: Counter[str] = field(default_factory=Counter)
    started: float = 0.0
    last: float = 0.0

    def begin(self) -> None:
        """The suite's server answers: the clock starts, and the figures are printed at the end of the run."""
        self.started = time.monotonic()
        TALLIES.append(self)

    def count(self, operation: str, requests: int = 1) -> None:
        self.requests[operation] += requests
        self.last = time.monotonic()

    def line(self) -> str:
        return (f"{self.name}: {len(self.requests)} operations, {sum(self.requests.values())} requests in "
                f"{max(0.0, self.last - self.started):.1f} s")


