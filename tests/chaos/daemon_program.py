"""The fault program the real daemon is driven through (``daemon_chaos``), and where its lives are killed.

The program is fixed (its targets are named, so a failure reads as a story); the seed picks the kills' moments. On
``SPEC`` (the old chaos run's fabric: 8 uplinks a leaf, so the guard lets 2 of them go, and a cap of 10) with an
hourly limit of 5, it holds, in simulated minutes from the start:

| when | what | what the daemon should do |
|---|---|---|
| 2 | a leaf uplink flaps (``FLAPPING``) | reset (the reset ladder's first rung) |
| 4-8 | BER on 3 uplinks of one leaf (``BER_LEAF``), critical 7 min on | reset; out at critical BER, the 3rd deferred |
| 8 | a host link goes down for 24 min | a ticket only |
| 11 | ``FLAPPING`` flaps on, within its watch after the reset | disable, ticket |
| 12 | a spine-core cable down for 20 min | reset once down 10 min; back up as its watch ends: healthy |
| 14 | a spine reboots, 3 min | its link-downs explained |
| 16-22 | 3 more cables flap | reset, each cured (quiet through its watch) |
| 15+ | every ticket open for ``REPAIR_AFTER`` resolved, a signed Jira webhook | re-enabled, on probation |
| 40-44 | critical BER on 4 core uplinks of one spine, 80 s apart (``SPINE``) | one switch ticket (2 found before it) |
| 50 | the repaired ``FLAPPING`` flaps again, on probation | a strike: deferred (hourly limit), reopened |
| 64 | an event storm (600 events on random ports over 10 min) | the breaker halts automation |
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from topology.generate import FatTreeSpec

SPEC = FatTreeSpec(pods=4, hosts_per_pod=4, rails=4, spines_per_pod=4, cores_per_group=4, leaf_spine_cables=2,
                   spine_core_cables=2, radix=16)
"""112 switches and adapters, 320 cables, 256 between switches: the blast-radius cap is the floor, 10."""
TICK = timedelta(minutes=2)
"""Simulated time between two of the harness's ticks (the daemon's ``interval`` in simulated time)."""
LENGTH = timedelta(minutes=80)
HOURLY_LIMIT = 5
REPAIR_AFTER = timedelta(minutes=15)
FLAPPING = "pod01-leaf01/5"
BER_LEAF = "pod03-leaf02"
SPINE = "pod02-spine01"
STORM_AT = timedelta(minutes=64)


def _at(minutes: float) -> str:
    return f"{minutes * 60:.0f}s"


def steps() -> list[dict[str, Any]]:
    """The program as scenario steps (``fabric.simulator.faults``), each with its ``at``."""
    program: list[dict[str, Any]] = [{"at": _at(2), "fault": "flap", "link": FLAPPING, "cycles": 4, "period": "60s"},
                                     {"at": _at(11), "fault": "flap", "link": FLAPPING, "cycles": 4, "period": "60s"}]
    # Critical 7 min after the BER: its ber_high waits a tick to settle (a leaf-spine cable) and is reset, and the
    # critical BER comes within the reset's watch, which takes the cable out. Sooner, it could reach the cycle that
    # resets (UFM's faults at ticks 2 and 3 delay the ber_high by two ticks), and count as found before the reset;
    # an odd minute keeps it off the ticks.
    program += [{"at": _at(4 + 2 * i), "fault": "ber", "port": f"{BER_LEAF}/{port}", "escalate_after": "7m"}
                for i, port in enumerate((5, 7, 9))]
    program += [
        {"at": _at(8), "fault": "link_down", "link": "pod02-leaf03/1", "duration": "24m"},
        {"at": _at(12), "fault": "link_down", "link": "core02-01/1", "duration": "20m"},
        {"at": _at(14), "fault": "switch_reboot", "switch": "pod04-spine02", "downtime": "3m"},
    ]
    program += [{"at": _at(16 + 3 * i), "fault": "flap", "link": link, "cycles": 4, "period": "60s"}
                for i, link in enumerate(("pod02-leaf02/7", "core03-02/3", "pod04-leaf03/11"))]
    program += [{"at": f"{40 * 60 + 80 * i}s", "fault": "ber", "port": f"{SPINE}/{port}", "escalate_after": "10s"}
                for i, port in enumerate((9, 11, 13, 15))]
    program += [
        {"at": _at(50), "fault": "flap", "link": FLAPPING, "cycles": 4, "period": "60s"},
        {"at": _at(STORM_AT.total_seconds() / 60), "fault": "storm", "count": 600, "duration": "10m",
         "batches": 20},
    ]
    return program


@dataclass(frozen=True, slots=True)
class Kill:
    """A death of the daemon: at the ``n``-th request matching ``method`` and ``path`` (a prefix) that UFM sees at
    ``moment`` (``received``, or ``answering``: carried out, the answer not yet sent), counted from ``after`` in
    simulated time on, by ``signal`` (``KILL`` or ``TERM``). ``life``: counted in the next life only (a kill
    during start-up, or right after a restart)."""

    name: str
    after: timedelta
    method: str
    path: str
    moment: str = "received"
    n: int = 1
    signal: str = "KILL"
    life: bool = False
    stall: bool = False
    """Before it, UFM's next port action's job is made to run 3 minutes (so that it still runs at the restart)."""


def kill_plan(seed: int, method: str = "disable") -> tuple[Kill, ...]:
    """One kill of each kind, in seeded moments, in the order of the program; the kinds are the issue's: right after
    a UFM action is posted (the cycle's decisions recorded, its event cursor not saved), during the start-up that
    follows, mid-cycle, while a UFM job runs (a disable's, made to outlast the restart), a second one right after
    that restart, SIGTERM between the cables of the forming switch fault (whose window lives in memory), and the
    last two on probation and while the storm builds up towards the breaker.

    ``method = "isolate"``: the actions are ``PUT /app/unhealthy_ports``, which run no job; the kill while a job
    runs is one as UFM receives the write instead (UFM carries it out, its answer never reaches the daemon)."""
    rng = random.Random(f"daemon-kills-{seed}")

    def minute(low: float, high: float) -> timedelta:
        return timedelta(minutes=round(rng.uniform(low, high), 1))

    verb, path = ("PUT", "/app/unhealthy_ports") if method == "isolate" else ("POST", "/actions")
    taken = minute(19, 21.9)
    return (
        Kill("action posted", minute(2.5, 4), verb, path, "answering", n=rng.randint(1, 2)),
        Kill("during start-up", timedelta(0), "GET", "/resources/systems", life=True),
        Kill("mid-cycle", minute(5, 15), "GET", "/app/events", n=rng.randint(1, 3)),
        Kill("action posted", minute(15, 17.9), verb, path, "answering"),
        Kill("write received", taken, verb, path) if method == "isolate"
        else Kill("job running", taken, "GET", "/jobs/", stall=True),
        Kill("right after the restart", timedelta(0), "GET", "/app/events", life=True),
        Kill("SIGTERM mid-cycle", timedelta(minutes=41, seconds=30), "GET", "/app/events", signal="TERM"),
        Kill("mid-cycle", minute(50, 56), "GET", "/app/events", n=rng.randint(1, 3)),
        Kill("mid-cycle", STORM_AT + minute(2, 8), "GET", "/app/events", n=rng.randint(1, 3)),
    )
