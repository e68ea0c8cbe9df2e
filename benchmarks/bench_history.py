"""The running daemon's memory while UFM's event history is at its cap, so that every cycle reads it whole.

Setup (not measured): the plan (h100-4k by default, ``--preset``); the UFM simulator on it (its own process, clock
frozen, its REST history capped at ``HISTORY`` events, the simulator's default), filled to the cap with threshold
events (``POST /simulator/events/bulk``), then its clock moved a day on. UFM answers ``GET /app/events`` with its
whole history each time: at the cap about 100 MB. On h100-32k the simulated week of ``bench_week`` reaches the cap
on day 4.

Measured, per daemon: one started on it (``benchmarks.daemon_harness``: dry run, a fresh SQLite database, the
simulator's clock, a cycle every second of real time) and, once past its first cycle, ``ROUNDS`` rounds of:
``BATCH`` more events raised (UFM drops as many of its oldest: the answer no longer begins as the last one did, so
the daemon reads it whole, as it does with a real UFM's capped history), the clock moved 30 s, the next completed
cycle waited for, then the resident memory (``VmRSS``) of the daemon's processes, each and summed. Reported: the
engine process's and the whole daemon's RSS after the last round, the largest after any round, and the engine's own
peak (``VmHWM``) before the rounds and after them: what reading the history costs beyond start-up.

``python -m benchmarks.run history`` measures this checkout. ``python -m benchmarks.bench_history BASELINE`` measures
this checkout and another (``git worktree add BASELINE REV``; run on this checkout's interpreter, its own code first
on the path) alternately on one simulator, and prints medians and ratios.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import httpx

from benchmarks.daemon_harness import daemon, plan_file, simulator, tree_by_command_mib
from benchmarks.measure import Measurement, side_by_side
from topology.generate import PRESETS

PRESET = "h100-4k"
HISTORY = 250_000
BATCH = 2_000
ROUNDS = 8
RUNS = 2
HERE = Path(__file__).resolve().parents[1]
CYCLE_BOUND = 300.0
"""Real seconds a round's cycle may take before the benchmark gives up."""

Figures = dict[str, float]


def one_daemon(checkout: Path, workdir: Path, ufm: str, plan: Path) -> Figures:
    """``checkout``'s daemon on the simulator at ``ufm`` (its history already at the cap) through the rounds."""
    with daemon(workdir, ufm, plan, interval="1s", checkout=checkout) as running:
        engine_peak_started = tree_by_command_mib(running.process.pid)["engine"]
        cycles = running.cycles()
        engine_rss: list[float] = []
        tree_rss: list[float] = []
        for _ in range(ROUNDS):
            httpx.post(f"{ufm}/simulator/events/bulk", json={"count": BATCH}, timeout=120).raise_for_status()
            httpx.post(f"{ufm}/simulator/clock/advance", json={"seconds": 30}, timeout=120).raise_for_status()
            # Two: the first may have begun before the events.
            cycles = running.next_cycle(running.next_cycle(cycles, CYCLE_BOUND), CYCLE_BOUND)
            now = tree_by_command_mib(running.process.pid, "VmRSS")
            engine_rss.append(now["engine"])
            tree_rss.append(sum(now.values()))
        engine_peak = tree_by_command_mib(running.process.pid)["engine"]
    return {"engine RSS after the rounds": engine_rss[-1], "engine RSS, largest after a round": max(engine_rss),
            "daemon RSS after the rounds": tree_rss[-1], "daemon RSS, largest after a round": max(tree_rss),
            "engine peak after its first cycle": engine_peak_started, "engine peak after the rounds": engine_peak}


def _filled(ufm: str) -> None:
    """UFM's history at its cap, a day old: older than any rule's window, so a daemon started on it keeps none of it
    (what it keeps of a storm within its windows is another matter than reading the history)."""
    for _ in range(HISTORY // 100_000 + 1):
        httpx.post(f"{ufm}/simulator/events/bulk", json={"count": 100_000}, timeout=600).raise_for_status()
    httpx.post(f"{ufm}/simulator/clock/advance", json={"seconds": 86_400}, timeout=600).raise_for_status()


def run(workdir: Path) -> list[Measurement]:
    plan = plan_file(workdir, PRESET)
    with simulator(plan, workdir, max_events=HISTORY) as ufm:
        _filled(ufm)
        found = one_daemon(HERE, workdir, ufm, plan)
    return [Measurement(
        f"the daemon's RSS with UFM's history at its cap ({HISTORY:,} events, {PRESET})", [0.0],
        found["daemon RSS, largest after a round"],
        note="; ".join(f"{name} {mib:.0f} MiB" for name, mib in found.items()))]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("baseline", type=Path)
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--preset", default=PRESET, choices=sorted(PRESETS))
    args = parser.parse_args(argv)
    sides = {"this checkout": HERE, args.baseline.name: args.baseline.resolve()}
    found: dict[str, list[Figures]] = {name: [] for name in sides}
    with tempfile.TemporaryDirectory(prefix="fabric-bench-history-") as tmp:
        workdir = Path(tmp)
        plan = plan_file(workdir, args.preset)
        with simulator(plan, workdir, max_events=HISTORY) as ufm:
            _filled(ufm)
            for _ in range(args.runs):
                for name, checkout in sides.items():
                    found[name].append(one_daemon(checkout, workdir, ufm, plan))
                    print(f"{name}: {found[name][-1]}", file=sys.stderr, flush=True)
    ours, base = (found[name] for name in sides)
    print(side_by_side(f"{args.preset}, UFM's history at {HISTORY:,} (median of {args.runs}, MiB)",
                       args.baseline.name, [(label, [f[label] for f in ours], [f[label] for f in base], "")
                                            for label in ours[0]], digits=0))
    print(f"runs: {found}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
