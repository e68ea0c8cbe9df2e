"""The running daemon's resident memory over a simulated week of h100-4k's faults, on the simulator's clock.

Setup: the simulator on h100-4k and the daemon on it (``benchmarks.daemon_harness``: each its own process, dry
run, the daemon's own garbage-collector policy), and the week's faults of ``bench_replay.week_faults`` posted as one
scenario (``POST /simulator/scenario``): a storm every day, 400 flapping links, 150 BER escalations, 100 link downs,
60 degraded links, 60 unhealthy ports, 40 switch reboots, 14 waves of host reboots. The daily storm is
``STORM_EVENTS`` threshold events, a quarter of the replay benchmark's: every cycle reads UFM's whole event list
(as it would a real UFM's), so the storms' events are read again by every later cycle, and the week has to run in
minutes.

Then the benchmark moves the simulator's clock ``STEP`` (3 hours) at a time and waits for the daemon's next cycle
(a week: 56 moves; the daemon cycles every second of real time meanwhile, so about twice as many cycles), and
samples the daemon's resident memory (``VmRSS``) and UFM's event history once per simulated day. Coarse steps
keep the week to minutes: each cycle of h100-4k after a fault re-reads UFM's ports and links. Reported: the peak
(``VmHWM``), the per-day figures, and the slope after the first day (warm-up: the model, the first reading, the
first storm), by least squares in MiB per day.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from benchmarks.bench_replay import DAYS, week_faults
from benchmarks.daemon_harness import (
    PASSWORD,
    daemon,
    plan_file,
    simulator,
    status_kib,
    tree_by_command_mib,
    write_config,
)
from benchmarks.measure import Measurement
from fabric.simulator.server import free_port
from topology.generate import PRESETS, fat_tree

PRESET = "h100-4k"
STORM_EVENTS = 5_000
STEP = 3 * 3600.0
"""Simulated seconds between cycles."""
DAY = 86400.0
CYCLE_BOUND = 300.0
"""Real seconds one cycle may take before the benchmark gives up."""


def _scenario(seed: int, preset: str = PRESET) -> dict[str, Any]:
    """The week's faults as a scenario document (``at``: seconds from when it is posted), h100-4k's scaled by the
    ``preset``'s cables (its storms too: a larger fabric's storm touches as large a share of it)."""
    share = len(fat_tree(PRESETS[preset]).cables) / len(fat_tree(PRESETS[PRESET]).cables)
    steps = []
    for when, step in sorted(week_faults(random.Random(seed), storm_events=round(STORM_EVENTS * share), share=share),
                             key=lambda pair: pair[0]):
        fields = {k: v for k, v in dataclasses.asdict(step).items() if v is not None}
        steps.append({"at": round(when, 3), "fault": step.kind, **fields})
    return {"name": f"a week of {preset}", "seed": seed, "steps": steps}


def week(workdir: Path, seed: int = 11, preset: str = PRESET) -> dict[str, Any]:
    plan = plan_file(workdir, preset)
    days: list[dict[str, float]] = []
    started = time.monotonic()
    with simulator(plan, workdir) as ufm, daemon(workdir, ufm, plan, interval="1s") as running:
        httpx.post(f"{ufm}/simulator/scenario", json=_scenario(seed, preset), timeout=120).raise_for_status()
        cycles = running.cycles()
        per_day = round(DAY / STEP)
        for step in range(1, DAYS * per_day + 1):
            moved = httpx.post(f"{ufm}/simulator/clock/advance", json={"seconds": STEP}, timeout=300)
            moved.raise_for_status()
            cycles = running.next_cycle(cycles, CYCLE_BOUND)
            if step % per_day == 0:
                state = httpx.get(f"{ufm}/simulator/state", timeout=60).json()
                by_process = tree_by_command_mib(running.process.pid, "VmRSS")
                days.append({"day": step / per_day, "rss_mib": running.memory_mib(),
                             "engine_mib": by_process.get("engine", 0.0), "api_mib": by_process.get("run", 0.0),
                             "ufm_events": float(state["events"]),
                             "events_handled": sum(value for (name, _), value in running.metrics().items()
                                                   if name == "fabric_events_total"),
                             "real_s": time.monotonic() - started})
                print(f"day {days[-1]['day']:g}: {json.dumps(days[-1])}", file=sys.stderr, flush=True)
        peak = running.memory_mib("VmHWM")
        failed = running.metrics().get(("fabric_job_runs_total", (("job_name", "cycle"), ("outcome", "failed"))), 0.0)
    after = days[1:]  # the first day is the warm-up
    slope = statistics.linear_regression([d["day"] for d in after], [d["rss_mib"] for d in after]).slope
    return {"days": days, "peak_mib": peak, "slope_mib_per_day": slope, "cycles": cycles, "failed_cycles": failed,
            "real_s": time.monotonic() - started}


async def _traced_week(workdir: Path, ufm: str, plan: Path, seed: int, preset: str = PRESET, frames: int = 8,
                       days_traced: int = DAYS) -> dict[str, Any]:
    """The engine's cycle as the daemon runs it (the same wiring, clock and garbage-collector policy), in this
    process under ``tracemalloc``, over the same week: the live Python memory per simulated day, and the source
    lines whose live memory grew most from day 1 to day 7. ``frames`` 0: nothing traced, and after each cycle what
    Python's allocator holds (``engine_steps --pools``' figures) beside the resident memory."""
    import tracemalloc

    from fabric import wiring
    from fabric.config import load_config
    from fabric.daemon.clock import ClockKind, make_clock
    from fabric.daemon.gcpolicy import apply_gc_policy, release_freed_memory
    from fabric.ufm.client import JobPollPolicy, RetryPolicy
    from topology.formats.ndt import read_ndt

    os.environ["FABRIC_UFM_PASSWORD"] = PASSWORD
    config = load_config(write_config(workdir, ufm, plan, interval="1s", port=free_port(), name="bench"))
    target = config.ufm.target()
    clock = make_clock(ClockKind.SIMULATOR, ufm)
    store = wiring.open_existing_store(config.store.url, fabric=config.fabric.name, read_only=False, clock=clock.now)
    days: list[dict[str, float]] = []
    top: list[str] = []
    try:
        await clock.sync()
        async with wiring.ufm_client(target.url, target.auth(), retry=RetryPolicy(), job_poll=JobPollPolicy(),
                                     sleep=clock.sleep) as client, httpx.AsyncClient(base_url=ufm) as admin:
            engine = wiring.build_engine(read_ndt(plan), client, store, wiring.ticket_backend(store, clock=clock.now),
                                         wiring.engine_settings(config), clock.now)
            await engine.start()
            apply_gc_policy()
            (await admin.post("/simulator/scenario", json=_scenario(seed, preset), timeout=120)).raise_for_status()
            if frames:
                tracemalloc.start(frames)
            per_day = round(DAY / STEP)
            first: tracemalloc.Snapshot | None = None
            for step in range(1, days_traced * per_day + 1):
                (await admin.post("/simulator/clock/advance", json={"seconds": STEP}, timeout=300)).raise_for_status()
                await clock.sync()
                report = await engine.cycle()
                release_freed_memory()  # as the daemon does after each job
                if not frames:
                    _print_pools(step, report.events)
                    continue
                if report.events > 20_000:
                    _print_top(tracemalloc.take_snapshot())
                print(f"step {step}: {report.events} events, traced "
                      f"{tracemalloc.get_traced_memory()[0] / 2**20:.1f} MiB, {_own_rss():.0f} MiB resident",
                      file=sys.stderr, flush=True)
                if step % per_day == 0:
                    snapshot = tracemalloc.take_snapshot()
                    first = first or snapshot
                    days.append({"day": step / per_day, "traced_mib": tracemalloc.get_traced_memory()[0] / 2**20})
                    print(f"traced day {days[-1]['day']:g}: {days[-1]['traced_mib']:.1f} MiB", file=sys.stderr,
                          flush=True)
                    _print_top(snapshot)
            if frames:
                assert first is not None
                top = [str(stat) for stat in snapshot.compare_to(first, "lineno")[:15]]
                tracemalloc.stop()
    finally:
        store.close()
        await clock.aclose()
    return {"traced_days": days, "top_growth": top}


def _print_pools(step: int, events: int) -> None:
    from benchmarks.engine_steps import free_in_arenas_mib, pool_figures, pools

    resident, figures = _own_rss(), pool_figures()
    print(f"step {step}: {events} events, {resident:.0f} MiB resident, floor "
          f"{resident - free_in_arenas_mib(figures):.0f} MiB (no free space in Python's arenas)\n{pools(figures)}",
          file=sys.stderr, flush=True)


def _print_top(snapshot: Any) -> None:
    for stat in snapshot.statistics("lineno")[:15]:
        print(f"  {stat.size / 2**20:7.1f} MiB {stat.count:9d}  {stat.traceback[0]}", file=sys.stderr)


def _own_rss() -> float:
    return status_kib(os.getpid(), "VmRSS") / 1024


def trace(workdir: Path, seed: int = 11, preset: str = PRESET, frames: int = 8, days: int = DAYS) -> dict[str, Any]:
    import asyncio

    plan = plan_file(workdir, preset)
    with simulator(plan, workdir) as ufm:
        return asyncio.run(_traced_week(workdir, ufm, plan, seed, preset, frames, days))


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
    import argparse
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", nargs="?", choices=["week", "trace"], default="week",
                        help="the daemon as a process (week), or its engine in this process under tracemalloc")
    parser.add_argument("--preset", default=PRESET, choices=sorted(PRESETS),
                        help="the fabric (week only); the faults are h100-4k's scaled by its cables")
    parser.add_argument("--frames", type=int, default=8,
                        help="trace: the frames tracemalloc keeps (0: nothing traced; Python's allocator's arenas "
                             "after each cycle)")
    parser.add_argument("--days", type=int, default=DAYS, help="trace: the simulated days traced")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fabric-bench-") as tmp:
        if arguments.mode == "trace":
            result = trace(Path(tmp), preset=arguments.preset, frames=arguments.frames, days=arguments.days)
        else:
            result = week(Path(tmp), preset=arguments.preset)
        print(json.dumps(result))
