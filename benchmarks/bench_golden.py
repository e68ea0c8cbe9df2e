"""The golden set on the largest fabric: ``GET /api/v1/hosts?golden=true`` on ``h100-32k`` (4,096 hosts, 32,768
adapters, 98,304 cables) over a month of history, from the API's index against a read of the whole history.

Setup (not timed): a migrated SQLite store created 31 days before ``NOW`` holding ``FINDINGS`` findings spread over
the month on random cables (host cables and uplinks), ``QUARANTINES`` quarantine decisions, ``TICKETS`` tickets (half
resolved), and ``STRIKES`` component records with strikes, some of them out of service.

Measured in a process of its own per turn (``python -m benchmarks.bench_golden --child DB``), each a median over
``ROUNDS`` calls:

- **index, first**: the API's ``GoldenIndex`` answering its first request: the whole history folded once;
- **index, steady**: the same index asked again with nothing new (what a scheduler polling it costs);
- **index, 10 new findings**: asked again after 10 findings were added (the rows since its last read);
- **scan per request**: a fresh index per request, reading and folding the whole history each time (the design
  the index replaces);
- **HTTP, steady**: ``GET /api/v1/hosts?golden=true`` through the app in process (``httpx.ASGITransport``): the
  index, the answer's validation and its JSON;
- **every host's health**: ``GET /api/v1/hosts`` (issue 23's endpoint, 4,096 answers of about the golden list's
  size in bytes) in the same process, as a yardstick for the host's load at the time.

``python -m benchmarks.run golden``.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks.measure import Measurement

PRESET = "h100-32k"
FABRIC = "bench"
FINDINGS = 30_000
QUARANTINES = 200
TICKETS = 2_000
STRIKES = 500
ROUNDS = 20
TURNS = 3
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
CLEAN_FOR = timedelta(days=14)
TARGET_STEADY_S = 0.050
"""A scheduler's poll of the golden set answered within the host health's target (issue 23's 50 ms)."""


def prepare(workdir: Path) -> Path:
    from fabric.remediation.domain import Action, ActionKind, ComponentRecord, Finding, Lifecycle
    from fabric.remediation.signals import link_id
    from fabric.store import Store
    from topology.generate import PRESETS, fat_tree

    plan = fat_tree(PRESETS[PRESET])
    rng = random.Random(24)
    cables = [link_id(c.key) for c in plan.cables]
    month = timedelta(days=30).total_seconds()
    findings = [Finding(rng.choice(cables), "ber", NOW - timedelta(seconds=rng.uniform(0, month)), "BER", (n,))
                for n in range(FINDINGS)]
    db = workdir / f"golden-{time.monotonic_ns()}.db"
    ticks = iter(range(10**9))

    def clock() -> datetime:
        """Created 31 days ago; each write a second after the last, as a wall clock sets them apart."""
        return NOW - timedelta(days=31) + timedelta(seconds=next(ticks))

    with Store.open(f"sqlite:///{db}", fabric=FABRIC, clock=clock) as store:
        with store.transaction() as tx:
            tx.add_findings(findings)
            tx.record_decisions(Action(ActionKind.QUARANTINE, f.at, "ber", "3 strikes", f.component, dry_run=False)
                                for f in rng.sample(findings, QUARANTINES))
            states = [Lifecycle.HEALTHY, Lifecycle.PROBATION, Lifecycle.AWAITING_REPAIR]
            for n, finding in enumerate(rng.sample(findings, STRIKES)):
                tx.put_component(finding.component, ComponentRecord(states[n % 3], finding.at, "ber", "BER",
                                                                     strikes=1 + n % 3))
        for n, finding in enumerate(rng.sample(findings, TICKETS)):
            ticket, _ = store.claim_ticket(f"k{n}", backend="local", summary="BER", component=finding.component)
            store.ticket_opened(ticket.id, f"LOCAL-{n}")
            if n % 2:
                store.ticket_resolved(ticket.id)
    return db


def _median_of(call: Callable[[], object], rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        call()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def child(db: Path) -> dict[str, Any]:
    import httpx

    from fabric.api.app import create_app
    from fabric.api.context import ApiContext
    from fabric.api.golden import GoldenIndex
    from fabric.api.plan_index import plan_index
    from fabric.config import GoldenSection, ServiceConfig
    from fabric.daemon.gcpolicy import apply_gc_policy
    from fabric.remediation.domain import Finding
    from fabric.store import Store
    from topology.generate import PRESETS, fat_tree

    index = plan_index(fat_tree(PRESETS[PRESET]))
    apply_gc_policy()
    report: dict[str, Any] = {}
    with Store.open(f"sqlite:///{db}", fabric=FABRIC, clock=lambda: NOW) as store:
        golden = GoldenIndex(index)
        started = time.perf_counter()
        report["golden_hosts"] = len(golden.golden(store, NOW, CLEAN_FOR))
        report["first"] = time.perf_counter() - started
        report["steady"] = _median_of(lambda: golden.golden(store, NOW, CLEAN_FOR), ROUNDS)
        some = [f.component for f in store.findings(limit=10)]

        def after_ten() -> None:
            store.add_findings(Finding(c, "ber", NOW - timedelta(days=20), "BER", (0,)) for c in some)
            golden.golden(store, NOW, CLEAN_FOR)

        report["ten_new"] = _median_of(after_ten, ROUNDS)
        report["scan"] = _median_of(lambda: GoldenIndex(index).golden(store, NOW, CLEAN_FOR), max(3, ROUNDS // 4))
        app = create_app(ApiContext(config=ServiceConfig(golden=GoldenSection(clean_for=CLEAN_FOR)), index=index,
                                    store=store, runtime=None, clock=lambda: NOW))  # type: ignore[arg-type]

        async def http(params: dict[str, str]) -> float:
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://api") as client:
                (await client.get("/api/v1/hosts", params=params)).raise_for_status()
                samples = []
                for _ in range(ROUNDS):
                    started = time.perf_counter()
                    (await client.get("/api/v1/hosts", params=params)).raise_for_status()
                    samples.append(time.perf_counter() - started)
                return statistics.median(samples)

        report["http"] = asyncio.run(http({"golden": "true"}))
        report["health"] = asyncio.run(http({}))
    report["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return report


def run(workdir: Path) -> list[Measurement]:
    source = prepare(workdir)
    reports = []
    for turn in range(TURNS):
        db = workdir / f"golden-turn{turn}.db"  # each turn its own copy: a turn adds findings
        db.write_bytes(source.read_bytes())
        out = subprocess.run([sys.executable, "-m", "benchmarks.bench_golden", "--child", str(db)], check=True,
                             capture_output=True, text=True, env=os.environ.copy())
        reports.append(json.loads(out.stdout))
        db.unlink()
    source.unlink()
    setup = (f"{FINDINGS:,} findings over 30 days, {QUARANTINES} quarantines, {TICKETS:,} tickets, {STRIKES} "
             f"records with strikes; {reports[0]['golden_hosts']} golden hosts")
    names = {"first": "index, first request (the month folded)", "steady": "index, steady (nothing new)",
             "ten_new": "index, after 10 new findings", "scan": "a scan of the history per request",
             "http": "GET /hosts?golden=true, steady",
             "health": "GET /hosts (every host's health, for comparison)"}
    peak = max(report["peak_rss_mib"] for report in reports)
    return [Measurement(f"golden set, {label}, {PRESET}", [report[key] for report in reports], peak,
                        TARGET_STEADY_S if key in ("steady", "http") else None, setup)
            for key, label in names.items()]


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        print(json.dumps(child(Path(argv[1]))))
        return 0
    workdir = Path(argv[0]) if argv else Path("out")
    workdir.mkdir(parents=True, exist_ok=True)
    for m in run(workdir):
        print(f"| {m.name} | {m.median_s * 1000:.1f} ms | {', '.join(f'{r * 1000:.1f}' for r in m.runs)} | "
              f"{m.verdict} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
