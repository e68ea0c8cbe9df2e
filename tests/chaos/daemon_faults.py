"""UFM misbehaving under the daemon chaos run's program: each fault injected at one tick, and what must show it.

``FAULTS`` is the table to extend: a fault's simulator step (``fabric.simulator.faults``, applied at its tick, most
lasting one minute of simulated time: the whole tick, whose cycles all read the simulator's frozen clock; the
``timeouts`` one answers a disable's POST after UFM's client gave up on it, 30 s later, the outcome unknown), the
metric that must count it (``None``: no metric shows it today) and what ``/readyz`` must say while it lasts
(``None``: it stays ready). An event list not believed (empty, short) is counted by ``fabric_event_reads_total``
at once; ``/readyz`` says so only after ``[daemon] events_untrusted_for`` (5 minutes), longer than these faults last,
and ``tests/daemon/test_daemon_event_reads.py`` checks that part (and the stale lists).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MINUTE = "1m"


@dataclass(frozen=True, slots=True)
class Metric:
    name: str
    labels: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class UfmFault:
    name: str
    tick: int
    """The tick (from 0) at whose start the step is applied."""
    step: dict[str, Any]
    metric: Metric | None
    """What counts it, read before the step and after the tick: it must have grown (a gauge: be above zero)."""
    readyz: str | None
    """A part of one of ``/readyz``'s reasons at the end of the tick."""
    within: int = 0
    """Ticks after its own the metric may take to show it (a stalled job shows once a port action is posted)."""
    slow: bool = False
    """Costs real time (UFM's client waits 30 s before a timeout): in the long profile only."""


CYCLE_FAILED = Metric("fabric_job_errors_total", (("job_name", "cycle"), ("kind", "ufm")))
UFM_DOWN = "UFM did not answer the last cycle"


def _event_reads(outcome: str) -> Metric:
    return Metric("fabric_event_reads_total", (("outcome", outcome),))


def _api(endpoint: str, mode: str, **more: Any) -> dict[str, Any]:
    return {"fault": "api", "endpoint": endpoint, "mode": mode, "duration": MINUTE, **more}


FAULTS = (
    UfmFault("500s", 2, _api("/app/events", "error"), CYCLE_FAILED, UFM_DOWN),
    UfmFault("truncated bodies", 3, _api("/app/events", "truncate", keep=0.6), CYCLE_FAILED, UFM_DOWN),
    UfmFault("half the ports suddenly down", 7, _api("/resources/ports", "partial", keep=0.5),
             Metric("fabric_views_refused_total"), "topology readings are refused"),
    UfmFault("empty event pages", 9, _api("/app/events", "empty"), _event_reads("empty"), None),
    UfmFault("short event pages", 11, _api("/app/events", "oldest", count=5), _event_reads("short"), None),
    UfmFault("half an event page", 13, _api("/app/events", "partial", keep=0.5), _event_reads("short"), None),
    UfmFault("timeouts", 10, {"fault": "api", "endpoint": "/actions", "method": "POST", "mode": "late", "delay": 31,
                              "requests": 1}, Metric("fabric_writes_pending"), None, slow=True),
    UfmFault("UFM restarted, ids reset", 14, {"fault": "ufm_restart"}, None, None),
    UfmFault("stuck jobs", 32, {"fault": "job_stall", "count": 2}, Metric("fabric_writes_pending"), None,
             within=6),
)
