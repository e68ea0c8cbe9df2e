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


class _Connection:
    """One keep-alive HTTP/1.1 connection of the paced sender, written to and read from with asyncio's streams.

    The sender is a benchmark's instrument: httpx's ``AsyncClient`` spends 2.3 ms of CPU on a delivery here, more
    than the receiver (2.0 ms), so at 200 a second the sender, not the receiver, fell behind on two cores and the
    open-loop queue it measured was its own. A request written as bytes and its answer read by its
    ``Content-Length`` costs a small fraction of that."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    async def post(self, request: bytes) -> int:
        """Send one request; its answer's status (the body is read and dropped)."""
        self.writer.write(request)
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
        await self.reader.readexactly(int(length[1]) if length else 0)
        return status


def _request(host: str, body: bytes, headers: dict[str, str]) -> bytes:
    lines = ["POST /webhooks/jira HTTP/1.1", f"Host: {host}", f"Content-Length: {len(body)}",
             *(f"{name}: {value}" for name, value in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def _paced(url: str, key: str, count: int, rate: float, first: int) -> tuple[list[float], int]:
    """``count`` deliveries, one due every ``1 / rate`` s; each answered one's latency from when it was due (s),
    and how many were not answered 202 (an error, a dropped connection). Each goes on an idle keep-alive
    connection, or a new one when all are busy (as a webhook sender's pool would)."""
    address = httpx.URL(url)
    host, port = address.host, address.port or 80
    requests = [_request(f"{host}:{port}", body, _headers(body, f"bench-{first + i}")) for i in range(count)
                for body in (_body(key, first + i),)]
    latencies: list[float] = []
    failed = 0
    idle: list[_Connection] = []

    async def exchange(request: bytes, reuse: bool) -> int | None:
        """The answer's status on an idle connection (``reuse``) or a new one; ``None``: no answer."""
        connection = idle.pop() if reuse and idle else _Connection(*await asyncio.open_connection(host, port))
        try:
            status = await connection.post(request)
        except (OSError, asyncio.IncompleteReadError, ValueError):
            connection.writer.close()
            return None
        idle.append(connection)
        return status

    async def send(due: float, request: bytes) -> None:
        nonlocal failed
        reused = bool(idle)
        status = await exchange(request, reuse=True)
        if status is None and reused:
            # The receiver closed that connection while it sat idle (uvicorn's keep-alive timeout, 5 s): as any
            # HTTP client does, send again on a new one.
            status = await exchange(request, reuse=False)
        if status != 202:
            failed += 1
            return
        latencies.append(time.perf_counter() - due)

    started = time.perf_counter()
    sends = []
    for index, request in enumerate(requests):
        due = started + index / rate
        pause = due - time.perf_counter()
        if pause > 0:
            await asyncio.sleep(pause)
        sends.append(asyncio.create_task(send(due, request)))
    await asyncio.gather(*sends)
    for connection in idle:
        connection.writer.close()
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
    """One run against the receiver of ``checkout``: latency quantiles (s) over ``SECONDS`` of paced load. The
    database is made by ``checkout``'s own code (``prepare`` run in it), at the schema its receiver expects."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FABRIC_")}
    env["FABRIC_TICKETS__WEBHOOK_SECRET"] = SECRET
    python = checkout / ".venv" / "bin" / "python"
    made = subprocess.run([str(python), "-c", "import json, sys; from pathlib import Path; "
                           "from benchmarks.bench_webhooks import prepare; "
                           "config, key = prepare(Path(sys.argv[1])); print(json.dumps([str(config), key]))",
                           str(workdir)], cwd=checkout, env=env, capture_output=True, text=True, check=True)
    config_text, key = json.loads(made.stdout.splitlines()[-1])
    config = Path(config_text)
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
