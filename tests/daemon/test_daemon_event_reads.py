"""UFM answering ``/app/events`` empty, short or stale, against the real daemon: counted, ``/readyz`` not ready once
it lasts ``[daemon] events_untrusted_for`` and ready again when UFM answers whole, and nothing decided from such a
list: the decisions are those of a run of the same program on a UFM that never misbehaved."""

from __future__ import annotations

import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from daemon_support import Daemon, daemon, migrate, simulator, write_config

from fabric.simulator.driver import SimulatorDriver
from fabric.simulator.server import free_port

BOUND = "20s"
PHASES: list[tuple[str, dict[str, Any], str]] = [
    ("core01-01/1", {"mode": "empty"}, "empty"),
    ("core02-01/1", {"mode": "partial", "keep": 0.5}, "short"),
    ("core01-02/3", {"mode": "oldest"}, "stale"),  # as many events as UFM holds when it freezes: a cached list
]
"""A flap on each link while UFM answers ``/app/events`` so (the API fault), and the outcome it must be counted as."""
SETTLED = 120
"""Simulated seconds after which a 3-cycle flap of 20 s is found: its last link-down counts once it is ``[rules]
settle`` (60 s) old."""


def test_empty_short_and_stale_event_lists_are_counted_make_the_daemon_unready_and_decide_nothing(
        tiny_plan: Path, tmp_path: Path) -> None:
    faulted = _run(tiny_plan, tmp_path / "faulted", faults=True)
    control = _run(tiny_plan, tmp_path / "control", faults=False)
    assert faulted == control
    flapped = {component.partition("|")[0] for component, rule, _ in control if component and rule == "flap"}
    assert flapped >= {f"link:{link}" for link, _, _ in PHASES}, control  # the program does find each flap


def _run(plan: Path, where: Path, *, faults: bool) -> list[tuple[str | None, str, str]]:
    """The program, with the API faults or without: each flap raised while UFM answers the fault's lists, kept
    past the bound, then UFM answering whole again. Returns the decisions (component, rule, kind), oldest first."""
    where.mkdir()
    migrate(where / "fabric.db")
    port = free_port()
    with simulator(plan) as sim:
        config = write_config(where, sim.url, plan, port=port, db=where / "fabric.db")
        daemon_section = f'interval = "500ms"\nshutdown_wait = "20s"\nevents_untrusted_for = "{BOUND}"'
        config.write_text(config.read_text().replace('interval = "1s"\nshutdown_wait = "20s"', daemon_section))
        with daemon(config, port, where / "daemon.log") as d:
            d.wait_for("ready", lambda: d.get("/readyz").status_code == 200)
            sim.inject(fault="flap", link="core02-02/3", cycles=3, period="20s")  # UFM has events before the faults
            _cycles_after(d, sim, SETTLED)
            for link, fault, outcome in PHASES:
                found = _flaps(d)
                read = d.metric("fabric_event_reads_total", outcome=outcome)
                if faults:
                    count = {"count": _events(sim)} if fault["mode"] == "oldest" else {}
                    sim.inject(fault="api", endpoint="/app/events", duration="1h", **fault, **count)
                sim.inject(fault="flap", link=link, cycles=3, period="20s")  # its first link-down now
                if faults:
                    d.wait_for(f"an event list counted {outcome}", _counted_beyond(d, outcome, read))
                    assert d.get("/readyz").status_code == 200  # not for longer than the bound yet
                _cycles_after(d, sim, SETTLED)
                assert (_flaps(d) > found) is not faults  # on whole lists it is found by now: from these, nothing
                if faults:
                    unready = d.get("/readyz")
                    assert unready.status_code == 503, unready.text
                    assert any(reason.startswith(f"UFM's event lists are not believed ({outcome}: ")
                               for reason in unready.json()["reasons"]), unready.json()
                    httpx.delete(f"{sim.url}/simulator/api_faults", timeout=10).raise_for_status()
                _cycles_after(d, sim, 10)
                assert d.get("/readyz").status_code == 200
                assert _flaps(d) > found  # the events the lists lacked were handed over
            # The last flap's last event (up) came 50 s after it began, 130 s ago.
            assert d.metric("fabric_event_newest_age_seconds") == SETTLED + 10 - 50
            decisions = d.get("/decisions?limit=1000").json()
            assert d.signal(signal.SIGTERM) == 0
    return [(decision["component"], decision["rule"], decision["kind"]) for decision in decisions]


def _cycles_after(d: Daemon, sim: SimulatorDriver, seconds: float) -> None:
    """The simulator's clock moved ``seconds`` at the daemon's next read, and a whole cycle run after it."""
    seen = d.cycles()
    sim.advance(seconds, at_next_read=True)
    d.wait_for("a cycle after the clock moved", lambda: d.cycles() >= seen + 2)


def _counted_beyond(d: Daemon, outcome: str, read: float) -> Callable[[], bool]:
    return lambda: d.metric("fabric_event_reads_total", outcome=outcome) > read


def _flaps(d: Daemon) -> float:
    return d.metric("fabric_findings_total", rule="flap")


def _events(sim: SimulatorDriver) -> int:
    return int(httpx.get(f"{sim.url}/simulator/state", timeout=10).json()["events"])
