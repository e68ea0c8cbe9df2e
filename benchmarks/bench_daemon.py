"""A storm in one poll through the running daemon, and its API's latency while that cycle runs.

Three storms (``STORMS``), each a ``python -m benchmarks.run`` suite:

- ``daemon``: h100-4k, 100,000 threshold events (110/111/112/113 on random ports, the storm generator of
  ``fabric.simulator.faults``); ``GET /api/v1/status`` probed;
- ``daemon32k``: h100-32k, every cable's ends down and up once (``fabric.simulator.storms.link_bounce``: 329 from
  both ends of each of the 98,304 cables, the clock moved 10 s, then 328 from both: 393,216 events, the storm of
  ``benchmarks.bench_storm32k`` raised in the simulator the daemon polls); ``/status``, one host's health (a random
  host of the plan each probe) and the unhealthy hosts probed;
- ``breaker32k``: h100-32k, 918 (high symbol BER) from both ends of every switch-to-switch cable at one instant
  (``storms.ber_high``: a ``ber_high`` finding on each of 65,536 cables), the daemon live (not a dry run): the storm
  breaker must halt (``/status`` ``halted``, ``fabric_breaker_halted`` 1) and no port be disabled or reset (the
  simulator's disabled ports, the daemon's decisions); the same three paths probed.

Setup (not timed): the plan; the simulator on it (``benchmarks.daemon_harness``: its own process, clock frozen);
the daemon on it (its own processes, its own garbage-collector policy, on the wall clock, as a production daemon
runs, so that nothing the simulator does is timed as the daemon's; a cycle every 10 s at 4k,
every 30 s, the default, at 32k), just after its first cycle (quiet) ends. Then ``POST /simulator/events/bulk``
raises the storm at one simulated instant, so the daemon's next poll hands all of it to one cycle.

Measured, per run (a fresh simulator and daemon each):

- the storm cycle's events per second: its events over its duration, both from the daemon's own "cycle done in"
  log line (the duration is the runtime's, poll included: fetching and parsing UFM's event list, the pipeline, the
  store's writes);
- each probed path's latency from a process of its own (``_Probes``), open loop, for as long as the storm is
  raised and processed; the probes that overlap the storm cycle (from the log line's time minus its duration to
  its time) are the ones reported, p50, p99 and the longest. Neither this process nor the simulator's shares the
  probes' interpreter: this one reads the daemon's log as it grows, and parsing all of it at each look held this
  process's GIL for up to 90 ms, which the probes, when they ran on a thread here, counted as the daemon's;
- the seconds each process (the daemon's API and engine, the simulator, the probes) ran on a CPU and waited for one
  over the cycle (``schedstat`` of all their threads, looked at every half second: from the last look before the
  cycle to the first after it), which say how much of the cycle's wall time its engine ran, and what else had the
  cores; and where in the cycle each path's five slowest probes were sent;
- the daemon's peak resident memory: each of its processes' ``VmHWM`` summed at the end (a bound), and the largest
  sum of their ``VmRSS`` seen every half second while the storm ran.

This benchmark measures whatever checkout's daemon it is given, so it runs unchanged against an earlier commit:
``python -m benchmarks.bench_daemon BASELINE --storm daemon32k --runs 3`` runs this checkout's daemon and
BASELINE's (a ``git worktree``, run on this interpreter with it first on ``PYTHONPATH``, its database migrated by
its own code) in turn, on this checkout's simulator, and prints their medians and ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import random
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from benchmarks.daemon_harness import Daemon, daemon, plan_file, simulator, tree_kib, tree_sched_s
from benchmarks.measure import Measurement

HERE = Path(__file__).resolve().parents[1]
STATUS = "/api/v1/status"
HOST_HEALTH = "/api/v1/hosts/{host}/health"
UNHEALTHY_HOSTS = "/api/v1/hosts?healthy=false"


@dataclass(frozen=True, slots=True)
class Storm:
    """One storm through the daemon: where, what is raised, what is probed, what is expected."""

    preset: str
    title: str
    bulk: dict[str, Any]
    """The body of ``POST /simulator/events/bulk``."""
    paths: tuple[str, ...]
    """The API's paths probed, each ``probes_per_s`` a second; ``{host}`` is a random planned host each probe."""
    probes_per_s: float
    target_events_per_s: float | None
    """None: the storm's cycle has no target of its own (the breaker storm's verdict is the breaker's checks)."""
    target_p99_s: float
    interval: str
    max_events: int = 250_000
    """The simulator's event history: the storm and the quiet cycles' events must all be listed."""
    extra: str = ""
    """More of the daemon's configuration (TOML)."""
    breaker: bool = False
    """The storm must trip the breaker and disable or reset nothing."""


STORMS = {
    "daemon": Storm("h100-4k", "a 100,000-event storm in one poll", {"count": 100_000}, (STATUS,), 20.0,
                    100_000, 0.100, "10s"),
    "daemon32k": Storm("h100-32k", "the full-fabric storm (every cable down and up) in one poll",
                       {"kind": "link_bounce", "up_after": 10}, (STATUS, HOST_HEALTH, UNHEALTHY_HOSTS), 10.0,
                       15_000, 0.050, "30s", max_events=500_000),
    "breaker32k": Storm("h100-32k", "918 from every switch-to-switch port in one poll (the breaker trips)",
                        {"kind": "ber_high"}, (STATUS, HOST_HEALTH, UNHEALTHY_HOSTS), 10.0, None, 0.050, "30s",
                        max_events=500_000, extra="\n[policy]\ndry_run = false\n", breaker=True),
}


class _Probes:
    """Each of ``paths`` every ``1 / per_s`` s from a child process, open loop: a probe is sent when it is due,
    whether the ones before it were answered or not (as a scheduler asking at any moment would), and its latency
    runs from when it was due. A probe that answered back to back would be sent only between the stalls, and not
    see them. ``stop`` returns, by path, each probe's (due, answered) in ``time.time()`` seconds, and the errors."""

    def __init__(self, api: str, paths: tuple[str, ...], per_s: float, hosts: list[str]) -> None:
        context = multiprocessing.get_context("spawn")  # no copy of this process's threads and sockets
        self._stopping = context.Event()
        self._results, sending = context.Pipe(duplex=False)
        self._process = context.Process(target=_probe_until, args=(api, paths, per_s, hosts, self._stopping,
                                                                   sending), name="api-probes", daemon=True)

    def start(self) -> None:
        self._process.start()

    def stop(self) -> tuple[dict[str, list[tuple[float, float]]], dict[str, int]]:
        self._stopping.set()
        if not self._results.poll(330):
            raise RuntimeError("the API probes did not report within 330 s")
        samples, errors = self._results.recv()
        self._process.join(10)
        return samples, errors


def _probe_until(api: str, paths: tuple[str, ...], per_s: float, hosts: list[str], stopping: Any,
                 results: Any) -> None:
    samples: dict[str, list[tuple[float, float]]] = {path: [] for path in paths}
    errors = dict.fromkeys(paths, 0)
    pick = random.Random(7)

    async def probe_all() -> None:
        limits = httpx.Limits(max_connections=2000, max_keepalive_connections=2000)
        async with httpx.AsyncClient(base_url=api, timeout=300, limits=limits) as client:

            async def probe(path: str, due: float) -> None:
                url = path.format(host=pick.choice(hosts)) if "{host}" in path else path
                try:
                    (await client.get(url)).raise_for_status()
                except httpx.HTTPError:
                    errors[path] += 1
                    return
                samples[path].append((due, time.time()))

            probes: list[asyncio.Task[None]] = []
            first, ticks = time.time(), 0
            while not stopping.is_set():
                due = first + ticks / per_s
                ticks += 1
                await asyncio.sleep(max(0.0, due - time.time()))
                probes.extend(asyncio.create_task(probe(path, due)) for path in paths)
            await asyncio.gather(*probes)

    asyncio.run(probe_all())
    results.send((samples, errors))


CYCLE_DONE = re.compile(r"cycle done in ([\d.]+) s: (\d+) events")
"""The runtime's line at the end of each cycle (``fabric.daemon.runtime``)."""


class _CycleLines:
    """The runtime's "cycle done in" lines as the daemon's log grows: only what was added since the last look is
    read, and only those lines are decoded."""

    def __init__(self, log: Path) -> None:
        self.log, self.offset, self.partial = log, 0, b""

    def storm_cycle(self, least: int) -> tuple[float, float, int] | None:
        """The first cycle of ``least`` events or more: (its end, its duration, its events) from its log line."""
        with self.log.open("rb") as handle:
            handle.seek(self.offset)
            added = handle.read()
        self.offset += len(added)
        complete, _, self.partial = (self.partial + added).rpartition(b"\n")
        for raw in complete.splitlines():
            if b"cycle done in" not in raw:
                continue
            line = json.loads(raw)
            found = CYCLE_DONE.match(str(line.get("message", "")))
            if found is not None and int(found[2]) >= least:
                return datetime.fromisoformat(line["time"]).timestamp(), float(found[1]), int(found[2])
        return None


def _planned_hosts(running: Daemon) -> list[str]:
    """Every host of the plan, as the API names them (one a line in its text format)."""
    answer = httpx.get(f"{running.api}/api/v1/hosts", params={"format": "text"}, timeout=120)
    answer.raise_for_status()
    return answer.text.split()


def _breaker_check(running: Daemon, ufm: str) -> dict[str, Any]:
    """What the breaker storm left: halted (as ``/status`` and the metric say), and nothing disabled or reset. The
    two-process daemon's metrics are its engine's as its status record last carried them (at most 0.5 s old), so
    they are read again until the halt is in them, for 10 s at most."""
    status = httpx.get(f"{running.api}/api/v1/status", timeout=120).json()
    deadline = time.monotonic() + 10
    while (metrics := running.metrics()).get(("fabric_breaker_halted", ()), 0.0) != 1.0 \
            and time.monotonic() < deadline:
        time.sleep(0.2)
    decided = {dict(labels)["kind"]: value for (name, labels), value in metrics.items()
               if name == "fabric_decisions_total"}
    disabled = httpx.get(f"{ufm}/simulator/state", timeout=120).json()["disabled_ports"]
    return {"halted": bool(status["halted"]), "halt_reason": status["halt_reason"],
            "breaker_metric": metrics.get(("fabric_breaker_halted", ()), -1.0), "decisions": decided,
            "disabled_ports": len(disabled)}


UNIT_NICE = -5
"""The niceness the shipped systemd unit runs the daemon at (``Nice=-5``; its engine's process sets itself 5
nicer): the daemon measured as it is deployed."""


def storm_once(workdir: Path, storm: Storm, checkout: Path | None = None, nice: int = UNIT_NICE) -> dict[str, Any]:
    """One run: a fresh simulator and daemon (``checkout``'s, else this one's, started at ``nice``), the storm
    raised and its cycle measured."""
    plan = plan_file(workdir, storm.preset)
    with simulator(plan, workdir, max_events=storm.max_events) as ufm, \
            daemon(workdir, ufm, plan, interval=storm.interval, extra=storm.extra, checkout=checkout,
                   clock="system", nice=nice) as running:
        hosts = _planned_hosts(running) if any("{host}" in path for path in storm.paths) else []
        rss_before = running.memory_mib()
        probes = _Probes(running.api, storm.paths, storm.probes_per_s, hosts)
        probes.start()
        cycles = _CycleLines(running.log)
        # Raised just after a cycle ended, so that the next one starts after the simulator has raised it all: the
        # raise holds the simulator's loop (13 s for the 32k storms on a loaded host), and a poll waiting on it
        # would count that wait in the cycle. ``raise_overlap_s`` says whether it did all the same.
        deadline = time.monotonic() + 300
        while cycles.storm_cycle(0) is None:
            if time.monotonic() > deadline:
                raise RuntimeError("no cycle of the daemon ended within 300 s")
            time.sleep(0.1)
        raised = httpx.post(f"{ufm}/simulator/events/bulk", json=storm.bulk, timeout=600)
        raised.raise_for_status()
        raised_at = time.time()
        least = int(raised.json()["count"])
        deadline = time.monotonic() + 600
        rss_peak_kib = 0
        cpu = [(time.time(), tree_sched_s(os.getpid()))]
        while (cycle := cycles.storm_cycle(least)) is None:
            if time.monotonic() > deadline:
                raise RuntimeError("no cycle of the daemon handled the storm within 600 s")
            rss_peak_kib = max(rss_peak_kib, tree_kib(running.process.pid))
            time.sleep(0.5)
            cpu.append((time.time(), tree_sched_s(os.getpid())))
        samples, errors = probes.stop()
        end, seconds, events = cycle
        hwm = running.memory_mib("VmHWM")
        breaker = _breaker_check(running, ufm) if storm.breaker else None
    start = end - seconds
    # Seconds each process ran and waited to run, from the last look before the cycle to the first after it.
    before = max((sample for sample in cpu if sample[0] <= start), default=cpu[0], key=lambda sample: sample[0])
    after = min((sample for sample in cpu if sample[0] >= end), default=cpu[-1], key=lambda sample: sample[0])
    cpu_s = {command: ran - before[1].get(command, (0.0, 0.0))[0] for command, (ran, _) in after[1].items()}
    wait_s = {command: waited - before[1].get(command, (0.0, 0.0))[1] for command, (_, waited) in after[1].items()}
    paths: dict[str, Any] = {}
    for path, probed in samples.items():
        overlapping = [(began, done) for began, done in probed if done > start and began < end]
        during = sorted(done - began for began, done in overlapping)
        if not during:
            raise RuntimeError(f"no {path} probe overlapped the storm cycle")
        # Where in the cycle its slowest probes were sent (seconds from the cycle's start), to place the stalls.
        slowest = sorted(overlapping, key=lambda probe: probe[0] - probe[1])[:5]
        paths[path] = {"samples": len(during), "p50_s": statistics.median(during),
                       "p99_s": _percentile(during, 0.99), "max_s": during[-1], "latencies_s": during,
                       "slowest": [(began - start, done - began) for began, done in slowest],
                       "errors": errors[path]}
    return {"events": events, "cycle_s": seconds, "events_per_s": events / seconds, "paths": paths,
            "simulator_raise_s": float(raised.json()["seconds"]), "raise_overlap_s": max(0.0, raised_at - start),
            "cpu_s": cpu_s, "runqueue_wait_s": wait_s, "cpu_window_s": after[0] - before[0],
            "rss_before_mib": rss_before, "rss_peak_mib": hwm, "rss_sampled_peak_mib": rss_peak_kib / 1024,
            "breaker": breaker}


def _percentile(ordered: list[float], share: float) -> float:
    """The value ``share`` of ``ordered`` (ascending) are at or below, nearest rank."""
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def breaker_held(run: dict[str, Any]) -> bool:
    """The breaker storm's run halted, with nothing disabled or reset (``True`` for a storm of another kind)."""
    found = run["breaker"]
    if found is None:
        return True
    return bool(found["halted"] and found["breaker_metric"] == 1.0 and found["disabled_ports"] == 0
                and not found["decisions"].get("disable") and not found["decisions"].get("reset"))


def measure(name: str, workdir: Path, repeat: int = 3) -> list[Measurement]:
    storm = STORMS[name]
    runs = [storm_once(workdir, storm) for _ in range(repeat)]
    peak = max(r["rss_peak_mib"] for r in runs)
    events = runs[-1]["events"]
    median_rate = statistics.median(r["events_per_s"] for r in runs)
    held = all(breaker_held(r) for r in runs)
    mode = ("live, the breaker " + ("halted, nothing disabled" if held else "NOT as expected")) if storm.breaker \
        else "dry run"
    rate = storm.target_events_per_s
    found = [Measurement(
        f"the daemon's cycle on {storm.title} ({storm.preset}, {events:,} events, fabricctl run)",
        [r["cycle_s"] for r in runs], peak, events / rate if rate else None,
        note=f"{median_rate:,.0f} events/s{f' (target {rate:,.0f})' if rate else ''}; the cycle as the daemon logs "
             f"it, poll included; {mode}; the daemon's GC policy; RSS before the "
             f"storm {statistics.median(r['rss_before_mib'] for r in runs):.0f} MiB, sampled peak "
             f"{max(r['rss_sampled_peak_mib'] for r in runs):.0f} MiB",
        output=json.dumps(runs), met=held if rate is None else (None if held else False))]
    for path in storm.paths:
        per_run = [r["paths"][path] for r in runs]
        # A run has a few hundred probes of a path in its cycle at most, so its p99 is among its slowest; all runs'
        # probes together estimate the p99 of a request during a storm's cycle as such. The target is every run's.
        pooled = _percentile(sorted(latency for p in per_run for latency in p["latencies_s"]), 0.99)
        worst = max(p["p99_s"] for p in per_run)
        found.append(Measurement(
            f"GET {path} p99 while the storm cycle runs ({storm.preset})", [p["p99_s"] for p in per_run], peak,
            storm.target_p99_s,
            note=f"p50 {statistics.median(p['p50_s'] for p in per_run) * 1000:.1f} ms, p99 by run "
                 f"{', '.join(f'{p99 * 1000:.0f}' for p99 in (p['p99_s'] for p in per_run))} ms, longest "
                 f"{max(p['max_s'] for p in per_run) * 1000:.0f} ms; p99 of all runs' probes together "
                 f"{pooled * 1000:.0f} ms; {statistics.median(p['samples'] for p in per_run):.0f} requests "
                 f"overlapping the cycle, {storm.probes_per_s:g} a second, open loop",
            output=json.dumps(runs), met=worst <= storm.target_p99_s))
    return found


def run(workdir: Path, repeat: int = 3) -> list[Measurement]:
    return measure("daemon", workdir, repeat)


def run_32k(workdir: Path, repeat: int = 3) -> list[Measurement]:
    return measure("daemon32k", workdir, repeat)


def run_breaker_32k(workdir: Path, repeat: int = 3) -> list[Measurement]:
    return measure("breaker32k", workdir, repeat)


def _summary(runs: list[dict[str, Any]]) -> dict[str, float]:
    """The medians compared side by side (latencies in ms, memory in MiB)."""
    medians = {"events/s": statistics.median(r["events_per_s"] for r in runs),
               "cycle s": statistics.median(r["cycle_s"] for r in runs),
               "peak RSS (VmHWM summed) MiB": statistics.median(r["rss_peak_mib"] for r in runs),
               "peak RSS (sampled) MiB": statistics.median(r["rss_sampled_peak_mib"] for r in runs),
               "daemon CPU s (all its processes)": statistics.median(
                   r["cpu_s"].get("run", 0.0) + r["cpu_s"].get("engine", 0.0) for r in runs),
               "simulator CPU s": statistics.median(r["cpu_s"].get("simulate", 0.0) for r in runs)}
    for path in runs[0]["paths"]:
        for figure in ("p50_s", "p99_s", "max_s"):
            medians[f"{path} {figure[:-2]} ms"] = statistics.median(r["paths"][path][figure] for r in runs) * 1000
    return medians


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="This checkout's daemon and BASELINE's in turn, one storm.")
    parser.add_argument("baseline", type=Path)
    parser.add_argument("--storm", choices=sorted(STORMS), default="daemon32k")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, help="Every run's figures as JSON, written after each run.")
    parser.add_argument("--nice", type=int, default=UNIT_NICE,
                        help="This checkout's daemon started at this niceness (the shipped unit's by default).")
    parser.add_argument("--baseline-nice", type=int, default=0,
                        help="BASELINE's daemon started at this niceness (0: its unit had no Nice=).")
    args = parser.parse_args(argv)
    storm = STORMS[args.storm]
    sides = {"this checkout": (None, args.nice), args.baseline.name: (args.baseline.resolve(), args.baseline_nice)}
    found: dict[str, list[dict[str, Any]]] = {name: [] for name in sides}
    with tempfile.TemporaryDirectory(prefix="fabric-bench-daemon-") as tmp:
        for _ in range(args.runs):
            for name, (checkout, nice) in sides.items():
                run = storm_once(Path(tmp), storm, checkout, nice)
                found[name].append(run)
                p99s = {path: probed["p99_s"] * 1000 for path, probed in run["paths"].items()}
                print(f"{name}: {run['events_per_s']:,.0f} events/s in {run['cycle_s']:.1f} s, p99 "
                      f"{', '.join(f'{path} {ms:.0f} ms' for path, ms in p99s.items())}, "
                      f"{run['rss_peak_mib']:.0f} MiB, breaker {run['breaker']}", file=sys.stderr, flush=True)
                if args.out is not None:
                    args.out.write_text(json.dumps(found))
    ours, base = (_summary(found[name]) for name in sides)
    print(f"| {storm.preset}: {storm.title} (median of {args.runs}) | this checkout | {args.baseline.name} | ratio |")
    print("|---|---|---|---|")
    for figure, mine in ours.items():
        print(f"| {figure} | {mine:,.1f} | {base[figure]:,.1f} | {mine / base[figure]:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
