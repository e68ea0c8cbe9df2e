"""Webhook receipt: signed Jira deliveries to ``POST /webhooks/jira`` of ``fabricctl webhook``, paced open-loop.

Setup (not timed): a migrated SQLite database (WAL, ``synchronous=FULL``, as the daemon runs it) holding one local
ticket, and ``fabricctl webhook`` on it with a webhook secret, as its own process on loopback. The load is open
loop: delivery ``i`` is sent at ``start + i / RATE`` whatever the answers before it did (a sender that waited for
each answer would slow down exactly when the receiver does, and hide its queueing), each a Jira
``jira:issue_updated`` body for that ticket, signed, with a delivery id of its own, so that every one is verified,
parsed, looked up and committed: the stored (202) path, the costliest. A delivery's latency runs from the moment
it was due to its answer, so a late send counts against the receiver. ``WARMUP`` deliveries first, not counted,
then ``SEQUENTIAL`` one after another on one keep-alive connection (closed loop, reported apart), then the paced
load, during which the receiver's CPU time per delivery is read from ``/proc``.

``python -m benchmarks.bench_webhooks [BASELINE_CHECKOUT]``: with another checkout of the project (its own
``.venv``), both receivers are measured in turns (ours, theirs, ...) in one run, on the same load.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import os
import re
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from benchmarks.measure import Measurement

HERE = Path(__file__).resolve().parents[1]
RATE = 200.0
"""Deliveries per second."""
SECONDS = 15.0
WARMUP = 100
SEQUENTIAL = 300
TARGET_P99_S = 0.020
SECRET = "bench-webhook-secret"
FABRIC = "bench"


def prepare(workdir: Path) -> tuple[Path, str]:
    """A database with one open local ticket, and the configuration naming it; returns (config, ticket key)."""
    from fabric.controller.ticketing import Ticketing
    from fabric.store import Store
    from tickets.local import LocalTicketBackend

    db = workdir / f"webhooks-{time.monotonic_ns()}.db"
    now = datetime.now(UTC)
    store = Store.open(f"sqlite:///{db}", fabric=FABRIC, clock=lambda: now)
    try:
        LocalTicketBackend.create_tables(store.engine)
        key = Ticketing(store, LocalTicketBackend(store.engine, clock=lambda: now), FABRIC).ensure_open(
            None, "storm", "the benchmark's ticket").key
    finally:
        store.close()
    config = db.with_suffix(".toml")
    config.write_text(f'[fabric]\nname = "{FABRIC}"\n[store]\nurl = "sqlite:///{db}"\n')
    return config, key


def _body(key: str, changelog: int) -> bytes:
    return json.dumps({
        "timestamp": 1_767_225_600_000 + changelog, "webhookEvent": "jira:issue_updated",
        "issue": {"key": key, "fields": {"status": {"name": "Fixed", "statusCategory": {"key": "done"}},
                                         "resolution": {"name": "Fixed"}}},
        "changelog": {"id": changelog, "items": [{"field": "status", "fromString": "Open", "toString": "Fixed"}]},
        "user": {"accountId": "5b10a2844c20165700ede21g", "displayName": "A. Technician"},
    }).encode()


def _headers(body: bytes, delivery: str) -> dict[str, str]:
    digest = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    return {"X-Hub-Signature": f"sha256={digest}", "X-Atlassian-Webhook-Identifier": delivery,
            "Content-Type": "application/json"}


async def _paced(url: str, key: str, count: int, rate: float, first: int) -> tuple[list[float], int]:
    """``count`` deliveries, one due every ``1 / rate`` s; each answered one's latency from when it was due (s),
    and how many were not answered 202 (an error, a dropped connection, a timeout)."""
    deliveries = [(body, _headers(body, f"bench-{first + i}")) for i in range(count)
                  for body in (_body(key, first + i),)]
    latencies: list[float] = []
    failed = 0
    limits = httpx.Limits(max_connections=256, max_keepalive_connections=256)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=30) as client:

        async def send(due: float, body: bytes, headers: dict[str, str]) -> None:
            nonlocal failed
            try:
                response = await client.post("/webhooks/jira", content=body, headers=headers)
            except httpx.HTTPError:
                failed += 1
                return
            if response.status_code != 202:
                failed += 1
                return
            latencies.append(time.perf_counter() - due)

        started = time.perf_counter()
        sends = []
        for index, (body, headers) in enumerate(deliveries):
            due = started + index / rate
            pause = due - time.perf_counter()
            if pause > 0:
                await asyncio.sleep(pause)
            sends.append(asyncio.create_task(send(due, body, headers)))
        await asyncio.gather(*sends)
    return latencies, failed


def _sequential(url: str, key: str, count: int, first: int) -> list[float]:
    """``count`` deliveries one after another on one keep-alive connection (closed loop); each one's latency (s)."""
    latencies: list[float] = []
    with httpx.Client(base_url=url, timeout=30) as client:
        for index in range(first, first + count):
            body = _body(key, index)
            started = time.perf_counter()
            client.post("/webhooks/jira", content=body, headers=_headers(body, f"bench-{index}")).raise_for_status()
            latencies.append(time.perf_counter() - started)
    return sorted(latencies)


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (``/proc/PID/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _announced(log: Path, receiver: subprocess.Popen[bytes]) -> str:
    """The receiver's URL from its first line, once it answers (it announces its address once bound, a moment
    before uvicorn listens on it)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and receiver.poll() is None:
        found = re.search(r"on (http://127\.0\.0\.1:\d+) ", log.read_text())
        if found is not None:
            try:
                httpx.get(f"{found[1]}/openapi.json", timeout=5)
                return found[1]
            except httpx.TransportError:
                pass
        time.sleep(0.05)
    raise RuntimeError(f"fabricctl webhook did not start: {log.read_text()[-500:]}")


def _quantile(ordered: list[float], q: float) -> float:
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def measure(checkout: Path, workdir: Path) -> dict[str, Any]:
    """One run against the receiver of ``checkout``: latency quantiles (s) over ``SECONDS`` of paced load."""
    config, key = prepare(workdir)
    env = {k: v for k, v in os.environ.items() if not k.startswith("FABRIC_")}
    env["FABRIC_TICKETS__WEBHOOK_SECRET"] = SECRET
    python = checkout / ".venv" / "bin" / "python"
    # Its log to a file: a pipe nobody reads would stop the receiver once full.
    log = config.with_suffix(".log")
    with log.open("wb") as sink:
        receiver = subprocess.Popen([str(python), "-m", "fabric.cli", "webhook", "--config", str(config), "--port",
                                     "0"], cwd=checkout, env=env, stdout=subprocess.DEVNULL, stderr=sink)
    try:
        found = _announced(log, receiver)
        asyncio.run(_paced(found, key, WARMUP, RATE, 0))
        sequential = _sequential(found, key, SEQUENTIAL, WARMUP)
        cpu_before, paced = _cpu_seconds(receiver.pid), int(RATE * SECONDS)
        answered, failed = asyncio.run(_paced(found, key, paced, RATE, WARMUP + SEQUENTIAL))
        cpu_ms = (_cpu_seconds(receiver.pid) - cpu_before) / paced * 1000
    finally:
        receiver.terminate()
        receiver.wait(30)
    # An unanswered delivery counts as the slowest there is: it was not received.
    latencies = sorted(answered) + [float("inf")] * failed
    return {"deliveries": len(latencies), "failed": failed, "p50_s": _quantile(latencies, 0.50),
            "p99_s": _quantile(latencies, 0.99), "max_s": latencies[-1], "mean_s": statistics.fmean(latencies),
            "sequential_p50_s": _quantile(sequential, 0.50), "sequential_p99_s": _quantile(sequential, 0.99),
            "receiver_cpu_ms_per_delivery": cpu_ms, "load_average": os.getloadavg()[0]}


def _measurement(title: str, runs: list[dict[str, Any]]) -> Measurement:
    return Measurement(
        title, [r["p99_s"] for r in runs], 0.0, TARGET_P99_S,
        note=f"p50 {statistics.median(r['p50_s'] for r in runs) * 1000:.1f} ms, p99 "
             f"{statistics.median(r['p99_s'] for r in runs) * 1000:.1f} ms, max "
             f"{max(r['max_s'] for r in runs) * 1000:.0f} ms; {sum(r['failed'] for r in runs)} not answered 202; "
             f"{runs[0]['deliveries']:,} deliveries a run at "
             f"{RATE:g}/s, open loop, each signed, parsed and committed (SQLite WAL, synchronous=FULL); the receiver's "
             f"CPU {statistics.median(r['receiver_cpu_ms_per_delivery'] for r in runs):.2f} ms a delivery; "
             f"{SEQUENTIAL} sequential: p50 {statistics.median(r['sequential_p50_s'] for r in runs) * 1000:.1f} ms, "
             f"p99 {statistics.median(r['sequential_p99_s'] for r in runs) * 1000:.1f} ms; host load average "
             f"{statistics.median(r['load_average'] for r in runs):.1f}",
        output=json.dumps(runs))


def run(workdir: Path, repeat: int = 3, baseline: Path | None = None) -> list[Measurement]:
    ours: list[dict[str, Any]] = []
    theirs: list[dict[str, Any]] = []
    for _ in range(repeat):
        ours.append(measure(HERE, workdir))
        if baseline is not None:
            theirs.append(measure(baseline, workdir))
    title = f"webhook receipt p99, signed Jira deliveries at {RATE:g}/s (fabricctl webhook)"
    results = [_measurement(title, ours)]
    if baseline is not None:
        results.append(_measurement(f"{title}, {baseline.name}", theirs))
    return results


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory(prefix="fabric-bench-") as tmp:
        base = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else None
        for m in run(Path(tmp), baseline=base):
            print(f"{m.name}: p99 runs {', '.join(f'{r * 1000:.1f} ms' for r in m.runs)}; {m.note}")
