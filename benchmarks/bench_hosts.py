"""Host health on the largest fabric: ``/api/v1/status``, ``/api/v1/hosts/{h}/health`` and
``/api/v1/hosts?healthy=false`` on ``h100-32k`` (4,096 hosts, 32,768 adapters, 98,304 cables).

Setup (not timed): a migrated SQLite store holding ``OUT`` components out of service (host cables, uplinks,
adapter ports, hosts, in every state that is not in service), one leaf with an open ``switch_fault`` (its 32 hosts
behind it), and ``IN_SERVICE`` cables recorded healthy, on probation or reset (the engine never forgets a
component: after storms the table holds many of those, which host health must not read).

Measured: the API app of a checkout (``create_app`` over that store, the plan built from the preset) in a process
of its own (``benchmarks/hosts_probe.py``), requests sent one after another in process (``httpx.ASGITransport``:
routing, the endpoint in its worker thread, the response's validation and JSON, no socket), ``ROUNDS`` rounds of
every endpoint in turn after a first answer of each (the plan's index is built by the first; then the daemon's
collector policy is applied, which freezes the plan and its index as the daemon's start-up does). Each endpoint's
p50, p99 and longest over all its rounds, and the first answer's time, apart.

``python -m benchmarks.run hosts``: this checkout, ``TURNS`` processes. ``python -m benchmarks.bench_hosts
BASELINE``: with another checkout of the project (its ``fabric`` put first on ``PYTHONPATH``: a ``git worktree``
of the earlier commit is enough, this venv's packages serve both), both measured in turns (ours, theirs, ...) on the
same store, and their answers compared (a digest of each body).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks.measure import Measurement

HERE = Path(__file__).resolve().parents[1]
PROBE = Path(__file__).with_name("hosts_probe.py")
PRESET = "h100-32k"
FABRIC = "bench"
OUT = 500
IN_SERVICE = 20_000
ROUNDS = 100
TURNS = 3
TARGET_P99_S = 0.050
"""Issue 23: ``/status``, a host's health and the unhealthy list, p99."""
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def prepare(workdir: Path) -> tuple[Path, list[str]]:
    """The store, and the paths to ask: (db, [status, a host behind the faulty leaf's health, a healthy host's
    health, the unhealthy list, its text form, every host])."""
    from fabric.api.health import UNUSABLE, unhealthy
    from fabric.api.plan_index import plan_index
    from fabric.remediation.domain import ComponentId, ComponentKind, ComponentRecord, Lifecycle
    from fabric.remediation.rules import SWITCH_FAULT
    from fabric.remediation.signals import end_name, link_id
    from fabric.store import Store
    from topology.generate import PRESETS, fat_tree
    from topology.ports import Kind

    plan = fat_tree(PRESETS[PRESET])
    index = plan_index(plan)
    rng = random.Random(23)
    adapter = {key for key, device in plan.devices.items() if device.kind is Kind.ADAPTER}
    host_cables = [c for c in plan.cables if c.a.device in adapter or c.b.device in adapter]
    uplinks = [c for c in plan.cables if c.a.device not in adapter and c.b.device not in adapter]
    to_hosts, between = rng.sample(host_cables, 380 + IN_SERVICE // 2), rng.sample(uplinks, 40 + IN_SERVICE // 2)
    out_cables, in_service = to_hosts[:380] + between[:40], to_hosts[380:] + between[40:]
    ports = [ComponentId(ComponentKind.PORT, end_name(end)) for cable in rng.sample(host_cables, 50)
             for end in cable.key if end.device in adapter]
    hosts = [ComponentId(ComponentKind.HOST, host) for host in rng.sample(sorted(index.hosts), OUT - 470)]
    out = [link_id(c.key) for c in out_cables] + ports + hosts
    states = sorted(UNUSABLE)
    records = {component: ComponentRecord(states[n % len(states)], NOW - timedelta(minutes=rng.randrange(1, 600)),
                                          "ber", f"BER over threshold ({n})") for n, component in enumerate(out)}
    usable = [Lifecycle.HEALTHY, Lifecycle.PROBATION, Lifecycle.RESET]
    records |= {link_id(c.key): ComponentRecord(usable[n % 3], NOW - timedelta(hours=2), "link_flap", "repaired")
                for n, c in enumerate(in_service)}
    leaf = ComponentId(ComponentKind.SWITCH, sorted(index.behind)[len(index.behind) // 2])
    records[leaf] = ComponentRecord(Lifecycle.TICKETED, NOW - timedelta(minutes=10), SWITCH_FAULT,
                                    f"4 cables of {leaf.name} had findings within 0:05:00. Cables: a, b, c, d")
    db = workdir / f"hosts-{time.monotonic_ns()}.db"
    with Store.open(f"sqlite:///{db}", fabric=FABRIC, clock=lambda: NOW) as store, store.transaction() as tx:
        for component, record in records.items():
            tx.put_component(component, record)
    sick = unhealthy(index, {c: r for c, r in records.items() if r.lifecycle in UNUSABLE})
    well = next(host for host in index.by_name if host not in sick)
    return db, ["/api/v1/status", f"/api/v1/hosts/{index.behind[leaf.name][0]}/health",
                f"/api/v1/hosts/{well}/health", "/api/v1/hosts?healthy=false",
                "/api/v1/hosts?healthy=false&format=text", "/api/v1/hosts"]


def probe(checkout: Path, db: Path, paths: list[str], rounds: int) -> dict[str, Any]:
    """One process of ``checkout``'s API over ``db``: ``hosts_probe``'s report, and its peak RSS (MiB)."""
    env = os.environ | {"PYTHONPATH": str(checkout)}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, subprocess.Popen(
            [sys.executable, "-P", str(PROBE), str(db), str(rounds), *paths], cwd=checkout, env=env, stdout=out,
            stderr=err) as child:
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode:
            err.seek(0)
            raise RuntimeError(f"hosts_probe in {checkout}: exit {child.returncode}: {err.read()[-800:]!r}")
        out.seek(0)
        report: dict[str, Any] = json.loads(out.read())
    report["peak_rss_mib"] = usage.ru_maxrss / 1024
    return report


def p99(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[98]


def run(workdir: Path) -> list[Measurement]:
    db, paths = prepare(workdir)
    reports = [probe(HERE, db, paths, ROUNDS) for _ in range(TURNS)]
    results = []
    for n, path in enumerate(paths):
        runs = [p99(report["latencies"][path]) for report in reports]
        first = statistics.median(report["first"][path] for report in reports)
        results.append(Measurement(
            f"GET {path.removeprefix('/api/v1')} p99, {PRESET}", runs,
            max(report["peak_rss_mib"] for report in reports), TARGET_P99_S if n < 4 else None,
            f"{ROUNDS} requests a turn, in process; {OUT} components out of service, a leaf's switch fault, "
            f"{IN_SERVICE:,} in service; first answer {first * 1000:.0f} ms"))
    return results


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("baseline", type=Path, help="Another checkout of the project (an earlier commit's).")
    parser.add_argument("--turns", type=int, default=TURNS)
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--workdir", type=Path, default=Path("out"))
    args = parser.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    db, paths = prepare(args.workdir)
    sides: dict[str, list[dict[str, Any]]] = {"ours": [], "baseline": []}
    for _ in range(args.turns):
        sides["ours"].append(probe(HERE, db, paths, args.rounds))
        sides["baseline"].append(probe(args.baseline.resolve(), db, paths, args.rounds))
    print(f"{PRESET}, {args.turns} processes a side in turns, {args.rounds} rounds each; {OUT} components out of "
          f"service, a leaf's switch fault, {IN_SERVICE:,} in service\n")
    print("| endpoint | this checkout p50 / p99 / max (ms) | first (ms) | baseline p50 / p99 / max (ms) | first (ms) "
          "| same answer |")
    print("|---|---|---|---|---|---|")
    for path in paths:
        cells = []
        for side in sides.values():
            samples = [s for report in side for s in report["latencies"][path]]
            first = statistics.median(report["first"][path] for report in side)
            cells.append(f"{statistics.median(samples) * 1000:.1f} / {p99(samples) * 1000:.1f} / "
                         f"{max(samples) * 1000:.1f} | {first * 1000:.0f}")
        digests = {report["digests"][path] for side in sides.values() for report in side}
        same = "yes" if len(digests) == 1 else "NO"
        print(f"| `GET {path}` | {cells[0]} | {cells[1]} | {same} |")
    db.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
