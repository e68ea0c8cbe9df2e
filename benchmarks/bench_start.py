"""The daemon's start-up on h100-32k: seconds from ``fabricctl run`` to its first completed cycle, and its peak
resident memory over that time, summed over its processes.

Setup (not timed): h100-32k's plan (2,304 switches, 98,304 cables, 196,608 ports); the UFM simulator on it
(``benchmarks.daemon_harness``: its own process, clock frozen), serving 7 MB of systems, 38 MB of links and 146 MB of
ports. Measured, per run: a fresh daemon (``fabricctl run``, dry run, a fresh migrated SQLite database) is started
and ``GET /api/v1/metrics`` asked every 0.2 s until ``fabric_job_runs_total{job_name="cycle",outcome="ok"}`` is 1;
the seconds from starting the process to that answer, and the largest resident memory of the daemon's process tree,
sampled from ``/proc`` every 50 ms, or the sum of its processes' own peaks (``VmHWM``, which no sample can miss)
where that is larger: a bound, reached only if the API's and the engine's peaks coincide. The side-by-side table
shows the sampled figure alone too.

``python -m benchmarks.run start`` measures this checkout. ``python -m benchmarks.bench_start BASELINE`` measures
this checkout and another one (``git worktree add BASELINE REV``; it runs on this checkout's interpreter, its own
code first on the path) side by side, alternately (ours, theirs, ours, ...) on one simulator, and prints the
medians and their ratios.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from benchmarks.daemon_harness import (
    PASSWORD,
    START_BOUND,
    plan_file,
    simulator,
    tree_by_command_mib,
    tree_kib,
    write_config,
)
from benchmarks.measure import Measurement, side_by_side
from fabric.simulator.server import free_port

PRESET = "h100-32k"
TARGET_START_S = 10.0
TARGET_PEAK_MIB = 500.0
RUNS = 3
HERE = Path(__file__).resolve().parents[1]
_CYCLE = 'fabric_job_runs_total{job_name="cycle",outcome="ok"}'


def _cycles(api: str) -> float:
    for line in httpx.get(f"{api}/api/v1/metrics", timeout=30).text.splitlines():
        if line.startswith(_CYCLE):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def start_once(checkout: Path, workdir: Path, ufm_url: str, plan: Path) -> tuple[float, float, float]:
    """One daemon of ``checkout`` started on ``ufm_url``: seconds to its first completed cycle, peak MiB (the larger
    of the sampled peak and the sum of the processes' own), the sampled peak MiB."""
    port = free_port()
    config = write_config(workdir, ufm_url, plan, interval="60s", port=port, name="bench", checkout=checkout)
    env = {k: v for k, v in os.environ.items() if not k.startswith("FABRIC_")}
    env.update(FABRIC_UFM_PASSWORD=PASSWORD, PYTHONPATH=str(checkout))
    api = f"http://127.0.0.1:{port}"
    log = workdir / f"start-{port}.log"
    peak_kib = sampled_kib = 0
    started = time.perf_counter()
    with log.open("wb") as sink:
        process = subprocess.Popen([sys.executable, "-m", "fabric.cli", "run", "--config", str(config), "--clock",
                                    "simulator"], cwd=checkout, env=env, stdout=subprocess.DEVNULL, stderr=sink)
    done = threading.Event()

    def sample() -> None:
        nonlocal sampled_kib
        while not done.is_set():
            sampled_kib = max(sampled_kib, tree_kib(process.pid))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the daemon exited {process.returncode}: {log.read_text()[-1500:]}")
            if time.perf_counter() - started > START_BOUND:
                raise RuntimeError(f"no first cycle within {START_BOUND:g} s: {log.read_text()[-1500:]}")
            try:
                if _cycles(api) >= 1:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        seconds = time.perf_counter() - started
        peak_kib = tree_kib(process.pid, "VmHWM")
        peaks = ", ".join(f"{command} {mib:.0f} MiB"
                          for command, mib in sorted(tree_by_command_mib(process.pid).items()))
        print(f"{checkout.name}: each process's peak: {peaks}", file=sys.stderr)
    finally:
        done.set()
        sampler.join()
        process.terminate()
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return seconds, max(peak_kib, sampled_kib) / 1024, sampled_kib / 1024


def run(workdir: Path) -> list[Measurement]:
    plan = plan_file(workdir, PRESET)
    with simulator(plan, workdir) as url:
        runs = [start_once(HERE, workdir, url, plan) for _ in range(RUNS)]
    peak = max(mib for _, mib, _ in runs)
    note = f"{PRESET}, fabricctl run to its first completed cycle; peak RSS of its processes ≤ {TARGET_PEAK_MIB:g} MiB"
    return [Measurement(f"daemon start {PRESET}", [s for s, _, _ in runs], peak, TARGET_START_S, note,
                        met=statistics.median(s for s, _, _ in runs) < TARGET_START_S and peak <= TARGET_PEAK_MIB)]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("baseline", type=Path)
    parser.add_argument("--runs", type=int, default=RUNS)
    args = parser.parse_args(argv)
    sides = {"this checkout": HERE, args.baseline.name: args.baseline.resolve()}
    found: dict[str, list[tuple[float, float, float]]] = {name: [] for name in sides}
    with tempfile.TemporaryDirectory(prefix="fabric-bench-start-") as tmp:
        workdir = Path(tmp)
        plan = plan_file(workdir, PRESET)
        with simulator(plan, workdir) as url:
            for _ in range(args.runs):
                for name, checkout in sides.items():
                    found[name].append(start_once(checkout, workdir, url, plan))
                    print(f"{name}: {found[name][-1][0]:.1f} s, {found[name][-1][1]:.0f} MiB "
                          f"({found[name][-1][2]:.0f} sampled)", file=sys.stderr)
    (ours, base) = (found[name] for name in sides)
    print(side_by_side(f"{PRESET} daemon start (median of {args.runs})", args.baseline.name, [
        (label, [r[column] for r in ours], [r[column] for r in base], unit)
        for label, column, unit in (("start to first cycle", 0, " s"), ("peak RSS", 1, " MiB"),
                                    ("peak RSS sampled (the processes at once)", 2, " MiB"))]))
    print(f"runs: {found}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
