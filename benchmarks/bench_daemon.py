"""A 100,000-event storm in one poll through the running daemon, and ``/api/v1/status`` while that cycle runs.

Setup (not timed): h100-4k's plan; the simulator on it (``benchmarks.daemon_harness``: its own process, clock
frozen); the daemon on it (its own process, dry run, its own garbage-collector policy), past two quiet cycles.
Then ``POST /simulator/events/bulk`` raises 100,000 threshold events (110/111/112/113 on random ports, the storm
generator of ``fabric.simulator.faults``) at one simulated instant, so the daemon's next poll hands all of them to
one cycle.

Measured, per run (a fresh simulator and daemon each):

- the storm cycle's events per second: its events over its duration, both from the daemon's own "cycle done in"
  log line (the duration is the runtime's, poll included: fetching and parsing the 43 MiB event list, the
  pipeline, the store's writes);
- ``GET /api/v1/status`` latency from a process of its own (``_StatusProbes``), 20 probes a second, open loop,
  for as long as the storm is raised and processed; the probes that overlap the storm cycle (from the log line's
  time minus its duration to its time) are the ones reported, p50, p99 and the longest. Neither this process nor
  the simulator's shares the probes' interpreter: this one reads the daemon's log as it grows (12,000 JSON lines
  by the storm's end), and parsing all of it at each look held this process's GIL for up to 90 ms, which the
  probes, when they ran on a thread here, counted as the daemon's;
- the daemon's peak resident memory (``VmHWM``) at the end.

The engine's cycle runs on a loop and thread of its own (``fabric.daemon.worker``); the API's requests share the
GIL with it. This benchmark measures whatever the checkout does, so it runs unchanged against an earlier commit.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import re
import statistics
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from benchmarks.daemon_harness import daemon, plan_file, simulator
from benchmarks.measure import Measurement

PRESET = "h100-4k"
STORM_EVENTS = 100_000
TARGET_EVENTS_PER_S = 100_000
TARGET_STATUS_P99_S = 0.100
INTERVAL = "2s"
PROBES_PER_S = 20.0


class _StatusProbes:
    """``GET /api/v1/status`` every ``1 / PROBES_PER_S`` s from a child process, open loop: a probe is sent when it
    is due, whether the ones before it were answered or not (as a scheduler asking at any moment would), and its
    latency runs from when it was due. A probe that answered back to back would be sent only between the stalls,
    and not see them. ``stop`` returns each probe's (due, answered) in ``time.time()`` seconds and the errors."""

    def __init__(self, api: str) -> None:
        context = multiprocessing.get_context("spawn")  # no copy of this process's threads and sockets
        self._stopping = context.Event()
        self._results, sending = context.Pipe(duplex=False)
        self._process = context.Process(target=_probe_until, args=(api, self._stopping, sending),
                                        name="status-probes", daemon=True)

    def start(self) -> None:
        self._process.start()

    def stop(self) -> tuple[list[tuple[float, float]], int]:
        self._stopping.set()
        if not self._results.poll(330):
            raise RuntimeError("the /status probes did not report within 330 s")
        samples, errors = self._results.recv()
        self._process.join(10)
        return samples, errors


def _probe_until(api: str, stopping: Any, results: Any) -> None:
    samples: list[tuple[float, float]] = []
    errors = 0

    async def probe_all() -> None:
        nonlocal errors
        limits = httpx.Limits(max_connections=2000, max_keepalive_connections=2000)
        async with httpx.AsyncClient(base_url=api, timeout=300, limits=limits) as client:

            async def probe(due: float) -> None:
                nonlocal errors
                try:
                    (await client.get("/api/v1/status")).raise_for_status()
                except httpx.HTTPError:
                    errors += 1
                    return
                samples.append((due, time.time()))

            probes: list[asyncio.Task[None]] = []
            first = time.time()
            while not stopping.is_set():
                due = first + len(probes) / PROBES_PER_S
                await asyncio.sleep(max(0.0, due - time.time()))
                probes.append(asyncio.create_task(probe(due)))
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

    def storm_cycle(self) -> tuple[float, float, int] | None:
        """The first cycle that handled the storm: (its end, its duration, its events) from its log line."""
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
            if found is not None and int(found[2]) >= STORM_EVENTS:
                return datetime.fromisoformat(line["time"]).timestamp(), float(found[1]), int(found[2])
        return None


def storm_once(workdir: Path) -> dict[str, Any]:
    plan = plan_file(workdir, PRESET)
    with simulator(plan, workdir) as ufm, daemon(workdir, ufm, plan, interval=INTERVAL) as running:
        deadline = time.monotonic() + 120
        while running.cycles() < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        rss_before = running.memory_mib()
        sampler = _StatusProbes(running.api)
        sampler.start()
        cycles = _CycleLines(running.log)
        raised = httpx.post(f"{ufm}/simulator/events/bulk", json={"count": STORM_EVENTS}, timeout=600)
        raised.raise_for_status()
        deadline = time.monotonic() + 600
        while (cycle := cycles.storm_cycle()) is None:
            if time.monotonic() > deadline:
                raise RuntimeError("no cycle of the daemon handled the storm within 600 s")
            time.sleep(0.5)
        samples, errors = sampler.stop()
        end, seconds, events = cycle
        peak = running.memory_mib("VmHWM")
    start = end - seconds
    during = sorted(done - began for began, done in samples if done > start and began < end)
    if not during:
        raise RuntimeError("no /status sample overlapped the storm cycle")
    return {"events": events, "cycle_s": seconds, "events_per_s": events / seconds,
            "status_samples": len(during), "status_p50_s": statistics.median(during),
            "status_p99_s": _percentile(during, 0.99), "status_max_s": during[-1],
            "status_latencies_s": during, "status_errors": errors,
            "simulator_raise_s": float(raised.json()["seconds"]),
            "rss_before_mib": rss_before, "rss_peak_mib": peak}


def _percentile(ordered: list[float], share: float) -> float:
    """The value ``share`` of ``ordered`` (ascending) are at or below, nearest rank."""
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def run(workdir: Path, repeat: int = 3) -> list[Measurement]:
    runs = [storm_once(workdir) for _ in range(repeat)]
    peak = max(r["rss_peak_mib"] for r in runs)
    median_rate = statistics.median(r["events_per_s"] for r in runs)
    # A run has some 80 probes in its cycle, so its p99 is its slowest probe; all runs' probes together estimate
    # the p99 of a request during a storm's cycle as such.
    pooled = _percentile(sorted(latency for r in runs for latency in r["status_latencies_s"]), 0.99)
    return [
        Measurement(
            f"the daemon's cycle on a {STORM_EVENTS:,}-event storm in one poll ({PRESET}, fabricctl run)",
            [r["cycle_s"] for r in runs], peak, STORM_EVENTS / TARGET_EVENTS_PER_S,
            note=f"{median_rate:,.0f} events/s (target {TARGET_EVENTS_PER_S:,}); the cycle as the daemon logs it, "
                 f"poll included; dry run, the daemon's GC policy; RSS before the storm "
                 f"{statistics.median(r['rss_before_mib'] for r in runs):.0f} MiB",
            output=json.dumps(runs)),
        Measurement(
            "GET /api/v1/status p99 while the storm cycle runs", [r["status_p99_s"] for r in runs], peak,
            TARGET_STATUS_P99_S,
            note=f"p50 {statistics.median(r['status_p50_s'] for r in runs) * 1000:.1f} ms, p99 "
                 f"{statistics.median(r['status_p99_s'] for r in runs) * 1000:.0f} ms, longest "
                 f"{max(r['status_max_s'] for r in runs) * 1000:.0f} ms; p99 of all runs' probes together "
                 f"{pooled * 1000:.0f} ms; "
                 f"{statistics.median(r['status_samples'] for r in runs):.0f} requests overlapping the cycle, "
                 f"{PROBES_PER_S:g} a second, open loop",
            output=json.dumps(runs)),
    ]


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory(prefix="fabric-bench-") as tmp:
        print(json.dumps(storm_once(Path(tmp))))
