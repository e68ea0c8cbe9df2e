"""The running daemon's resident memory over a simulated week of h100-4k's faults, on the simulator's clock.

Setup: the simulator on h100-4k and the daemon on it (``benchmarks.daemon_harness``: each its own process, dry
run, the daemon's own garbage-collector policy), and the week's faults of ``bench_replay.week_faults`` posted as one
scenario (``POST /simulator/scenario``): a storm every day, 400 flapping links, 150 BER escalations, 100 link downs,
60 degraded links, 60 unhealthy ports, 40 switch reboots, 14 waves of host reboots. The daily storm is
``STORM_EVENTS`` threshold events, a quarter of the replay benchmark's: every cycle reads UFM's whole event list
(as it would a real UFM's), so the storms' events are read again by every later cycle, and the week has to run in
minutes.

Then the benchmark moves the simulator's clock ``STEP`` at a time and waits for a cycle of the daemon that started
after the move (a week: ``7 * 86400 / STEP`` cycles, each seeing the events of its step), and samples the daemon's
resident memory (``VmRSS``) and UFM's event history once per simulated day. Reported: the peak (``VmHWM``), the
per-day figures, and the slope after the first day (warm-up: the model, the first reading, the first storm), by
least squares in MiB per day.
"""

from __future__ import annotations

import dataclasses
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from benchmarks.bench_replay import DAYS, week_faults
from benchmarks.daemon_harness import Daemon, daemon, plan_file, simulator
from benchmarks.measure import Measurement

PRESET = "h100-4k"
STORM_EVENTS = 5_000
STEP = 3600.0
"""Simulated seconds between cycles."""
DAY = 86400.0
CYCLE_BOUND = 300.0
"""Real seconds one cycle may take before the benchmark gives up."""


def _scenario(seed: int) -> dict[str, Any]:
    """The week's faults as a scenario document (``at``: seconds from when it is posted)."""
    steps = []
    for when, step in sorted(week_faults(random.Random(seed), storm_events=STORM_EVENTS), key=lambda pair: pair[0]):
        fields = {k: v for k, v in dataclasses.asdict(step).items() if v is not None}
        steps.append({"at": round(when, 3), "fault": step.kind, **fields})
    return {"name": "a week of h100-4k", "seed": seed, "steps": steps}


def _one_cycle_after(running: Daemon, before: float) -> float:
    """Wait until a cycle that started after the clock moved has completed (two completions: the first may have
    been under way); the count of cycles then."""
    deadline = time.monotonic() + CYCLE_BOUND
    while (cycles := running.cycles()) < before + 2:
        if time.monotonic() > deadline or running.process.poll() is not None:
            raise RuntimeError(f"the daemon did not complete a cycle: {running.log.read_text()[-1500:]}")
        time.sleep(0.1)
    return cycles


def week(workdir: Path, seed: int = 11) -> dict[str, Any]:
    plan = plan_file(workdir, PRESET)
    days: list[dict[str, float]] = []
    started = time.monotonic()
    with simulator(plan, workdir) as ufm, daemon(workdir, ufm, plan, interval="1s") as running:
        httpx.post(f"{ufm}/simulator/scenario", json=_scenario(seed), timeout=120).raise_for_status()
        cycles = running.cycles()
        per_day = round(DAY / STEP)
        for step in range(1, DAYS * per_day + 1):
            moved = httpx.post(f"{ufm}/simulator/clock/advance", json={"seconds": STEP}, timeout=300)
            moved.raise_for_status()
            cycles = _one_cycle_after(running, cycles)
            if step % per_day == 0:
                state = httpx.get(f"{ufm}/simulator/state", timeout=60).json()
                days.append({"day": step / per_day, "rss_mib": running.memory_mib(),
                             "ufm_events": float(state["events"]),
                             "events_handled": running.metrics().get(("fabric_events_total", ()), 0.0),
                             "real_s": time.monotonic() - started})
                print(f"day {days[-1]['day']:g}: {json.dumps(days[-1])}", file=sys.stderr, flush=True)
        peak = running.memory_mib("VmHWM")
        failed = running.metrics().get(("fabric_cycles_total", (("outcome", "failed"),)), 0.0)
    after = days[1:]  # the first day is the warm-up
    slope = statistics.linear_regression([d["day"] for d in after], [d["rss_mib"] for d in after]).slope
    return {"days": days, "peak_mib": peak, "slope_mib_per_day": slope, "cycles": cycles, "failed_cycles": failed,
            "real_s": time.monotonic() - started}


def run(workdir: Path) -> list[Measurement]:
    result = week(workdir)
    rss = ", ".join(f"{d['rss_mib']:.0f}" for d in result["days"])
    return [Measurement(
        f"the daemon's RSS over a simulated week ({PRESET}, a cycle every {STEP / 60:g} simulated minutes)",
        [result["real_s"]], result["peak_mib"],
        note=f"RSS per simulated day (MiB): {rss}; peak {result['peak_mib']:.0f} MiB; slope after day 1 "
             f"{result['slope_mib_per_day']:+.1f} MiB/day; {result['cycles']:.0f} cycles, "
             f"{result['failed_cycles']:.0f} failed; UFM's event history at the end "
             f"{result['days'][-1]['ufm_events']:,.0f} events",
        output=json.dumps(result))]


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory(prefix="fabric-bench-") as tmp:
        print(json.dumps(week(Path(tmp))))
