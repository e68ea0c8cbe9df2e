"""The live daemon's resident memory over a simulated week at its real cadence: a cycle every 30 simulated
seconds (20,160 in the week), and every other job of the daemon at its default interval too.

``bench_week`` moves the clock three hours a cycle, which keeps h100-4k's week to minutes but runs 56 cycles, not
20,160: memory kept per cycle (a record per run, a timer, a cache keyed by the cycle's time) would not show. This
one runs every cycle of the week, live, at the price of a smaller fabric.

Setup (``benchmarks.daemon_harness``, each its own process):

- the simulator on ``SPEC`` (two of h100-4k's sixteen pods: 96 switches, 512 hosts, 1,536 cables), its clock
  running ``SPEED`` simulated seconds a real second;
- the daemon live (``dry_run = false``: it disables, opens tickets on the local backend, re-enables, keeps ports
  on probation) on a migrated SQLite database, its whole schedule compressed by the same factor: every job's
  default interval divided by ``SPEED`` (a cycle every 100 ms of real time is one every 30 simulated seconds), the
  breaker resuming by itself after a quiet hour (``storm_quiet_period``) rather than waiting for an operator;
- the week's faults of ``bench_replay.week_faults`` at an eighth (the fabric's share of h100-4k), posted as one
  scenario: a storm of ``STORM_EVENTS`` threshold events a day, flaps, BER escalations, link downs, degraded
  links, unhealthy ports, switch reboots and host reboots;
- a technician: every simulated hour the benchmark resolves, in the daemon's database, every local ticket open
  for ``REPAIR_AFTER``; the daemon's ticket poll finds it and re-enables the port.

Sampled every simulated hour: the daemon's resident memory (``VmRSS``). Reported: the peak (``VmHWM``), the RSS
at the end of each day, and the slope after the first day (warm-up: the model, the first readings, the first
storm) by least squares over the hourly samples, in MiB a day, against ``FLAT_TARGET``; the cycles run, failed and
skipped (a cycle slower than 100 ms of real time makes the scheduler skip the next), and what the daemon did.
"""

from __future__ import annotations

import dataclasses
import json
import random
import sqlite3
import statistics
import sys
import time
from contextlib import closing
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx

from benchmarks.bench_replay import DAYS, week_faults
from benchmarks.daemon_harness import Daemon, daemon, plan_file, simulator
from benchmarks.measure import Measurement
from fabric.config import DaemonSection
from topology.generate import PRESETS

SPEC = dataclasses.replace(PRESETS["h100-4k"], pods=2)
SHARE = SPEC.pods / PRESETS["h100-4k"].pods
SPEED = 300.0
"""Simulated seconds a real second: the week in 34 minutes."""
STORM_EVENTS = 600
HOUR = 3600.0
REPAIR_AFTER = timedelta(hours=4)
FLAT_TARGET = 2.0
"""MiB a day after the first: a kilobyte kept per cycle would be 2.8."""
BOUND = 120.0
"""Real seconds the simulator's clock may stand still before the benchmark gives up."""


def _interval(name: str) -> str:
    """A job's default interval divided by ``SPEED``, as the configuration writes it."""
    default = DaemonSection.model_fields[name].default
    assert isinstance(default, timedelta)
    return f"{max(1, round(default.total_seconds() * 1000 / SPEED))}ms"


def _config_extra() -> str:
    jobs = "".join(f'{name} = "{_interval(name)}"\n'
                   for name in ("ticket_send_interval", "reconcile_interval", "ticket_poll_interval"))
    return f'{jobs}\n[policy]\ndry_run = false\nstorm_quiet_period = "1h"\n'


def _scenario(seed: int) -> dict[str, Any]:
    steps = [{"at": round(when, 3), "fault": step.kind,
              **{k: v for k, v in dataclasses.asdict(step).items() if v is not None}}
             for when, step in sorted(week_faults(random.Random(seed), storm_events=STORM_EVENTS, share=SHARE),
                                      key=lambda pair: pair[0])]
    return {"name": "a week at the real cadence", "seed": seed, "steps": steps}


def _now(ufm: str) -> datetime:
    return datetime.fromisoformat(httpx.get(f"{ufm}/simulator/state", timeout=60).json()["now"])


def _technician(database: Path, now: datetime) -> int:
    """Resolves every local ticket open for ``REPAIR_AFTER`` in the daemon's database; how many."""
    from sqlalchemy import create_engine

    from tickets.base import TicketStatus
    from tickets.local import LocalTicketBackend

    engine = create_engine(f"sqlite:///{database}", connect_args={"timeout": 60})
    try:
        backend = LocalTicketBackend(engine, clock=lambda: now)
        due = [t.key for t in backend.list(TicketStatus.OPEN) if now - t.created_at >= REPAIR_AFTER]
        for key in due:
            backend.resolve(key, "repaired: cable and optics replaced")
        return len(due)
    finally:
        engine.dispose()


def _done(database: Path) -> dict[str, int]:
    """What the daemon did over the week, from its database."""
    with closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as conn:
        return {table: int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
                for table in ("findings", "decisions", "intents", "tickets")}


def _count(running: Daemon, name: str, **labels: str) -> float:
    wanted = set(labels.items())
    return sum(value for (metric, found), value in running.metrics().items()
               if metric == name and wanted <= set(found))


def week(workdir: Path, seed: int = 11, days: int = DAYS) -> dict[str, Any]:
    plan = plan_file(workdir, "h100-4k-2pods", SPEC)
    samples: list[dict[str, float]] = []
    repaired = 0
    started = time.monotonic()
    with simulator(plan, workdir, speed=SPEED) as ufm, \
            daemon(workdir, ufm, plan, interval=_interval("interval"), extra=_config_extra()) as running:
        database = workdir / f"daemon-{running.api.rsplit(':', 1)[1]}.db"
        httpx.post(f"{ufm}/simulator/scenario", json=_scenario(seed), timeout=120).raise_for_status()
        start = _now(ufm)
        for hour in range(1, days * 24 + 1):
            due = start + timedelta(hours=hour)
            deadline = time.monotonic() + BOUND
            while (now := _now(ufm)) < due:
                if running.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the daemon or the clock stopped: {running.log.read_text()[-1500:]}")
                time.sleep(min(1.0, (due - now).total_seconds() / SPEED))
            repaired += _technician(database, now)
            samples.append({"day": hour / 24, "rss_mib": running.memory_mib(), "real_s": time.monotonic() - started})
            if hour % 24 == 0:
                print(f"day {hour // 24}: {json.dumps(samples[-1])}", file=sys.stderr, flush=True)
        peak = running.memory_mib("VmHWM")
        cycles = {outcome: _count(running, "fabric_job_runs_total", job_name="cycle", outcome=outcome)
                  for outcome in ("ok", "failed")}
        skipped = _count(running, "fabric_scheduler_misfires_total", job_name="cycle")
    warm_up = min(1.0, days / 4)  # a shorter run (``python -m benchmarks.bench_cadence DAYS``) warms up less
    after = [s for s in samples if s["day"] > warm_up]
    slope = statistics.linear_regression([s["day"] for s in after], [s["rss_mib"] for s in after]).slope
    return {"samples": samples, "peak_mib": peak, "slope_mib_per_day": slope, "cycles": cycles,
            "skipped_cycles": skipped, "repaired": repaired, "done": _done(database),
            "real_s": time.monotonic() - started}


def run(workdir: Path) -> list[Measurement]:
    result = week(workdir)
    per_day = ", ".join(f"{s['rss_mib']:.0f}" for s in result["samples"] if s["day"] == int(s["day"]))
    slope = result["slope_mib_per_day"]
    return [Measurement(
        f"the live daemon's RSS over a simulated week, a cycle every 30 simulated seconds ({SPEC.cables:,} cables)",
        [result["real_s"]], result["peak_mib"],
        note=f"RSS at the end of each simulated day (MiB): {per_day}; slope after day 1 {slope:+.2f} MiB/day "
             f"(target at most {FLAT_TARGET:g}: {'met' if slope <= FLAT_TARGET else 'MISSED'}); cycles "
             f"{result['cycles']['ok']:,.0f} ok, {result['cycles']['failed']:,.0f} failed, "
             f"{result['skipped_cycles']:,.0f} skipped; {json.dumps(result['done'])}; "
             f"{result['repaired']} tickets resolved by the technician",
        met=slope <= FLAT_TARGET, output=json.dumps(result))]


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory(prefix="fabric-bench-") as tmp:
        print(json.dumps(week(Path(tmp), days=int(sys.argv[1]) if sys.argv[1:] else DAYS)))
