"""What the schemathesis suites share: how long they run, which checks they make, the times they try.

Each suite loads an OpenAPI document from a server answering on 127.0.0.1 and sends every operation generated
requests (its documented examples, the coverage phase's boundaries and invalid values, then Hypothesis's fuzzing),
seeded, so a failure comes back on the next run. The checks: no 5xx, every status code, content type, header and
body as documented, invalid input refused (4xx), and an operation that needs a token refusing a request without
it. ``positive_data_acceptance`` is off: a schema cannot say every rule (a matcher whose kind matches no kind, a
component not in the plan), and such input is refused with a 4xx the document lists.

``FABRIC_FUZZ_EXAMPLES`` sets the fuzzing examples per operation (``make fuzz``: 500); the default keeps each suite
within seconds on two cores.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone

import schemathesis
from hypothesis import strategies as st
from schemathesis.config import SchemathesisConfig

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


