"""Webhook abuse over real HTTP against the live daemon's receiver, while a cable it disabled awaits repair: forged
and badly signed deliveries, replays, oversized and chunked bodies, unknown tickets, a "resolved" the ticket system
does not confirm, and deliveries out of order. Nothing is re-enabled until the ticket is really resolved; then one
genuine delivery re-enables it. Each answer's latency is recorded (printed, and into the reliability summary).

``FABRIC_WEBHOOK_ABUSE_COUNT`` (default 120; the issue's figure: 2,400) sets how many abusive deliveries are sent.
"""

from __future__ import annotations

import json
import os
import random
import signal
import statistics
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from daemon_support import daemon, migrate, simulator, write_config
from reliability_summary import record
from webhook_support import SECRET, TOKEN, jira_body, signed

from fabric import wiring
from fabric.simulator.server import free_port
from tickets.base import TicketStatus
from tickets.events import MAX_BODY_BYTES

COUNT = int(os.environ.get("FABRIC_WEBHOOK_ABUSE_COUNT", "120"))
CABLE = "core01-01/1"
Delivery = tuple[str, str, bytes, dict[str, str], int]
"""(kind, endpoint, body, headers, the status it must get)."""


def _abuse(key: str, rng: random.Random, n: int) -> Delivery:
    """The ``n``-th abusive delivery: its kind drawn by ``rng``; none may re-enable anything."""
    body = jira_body(key, changelog=50_000 + n)
    kind = rng.choice(("forged", "bad signature", "unsigned", "replayed", "oversized", "chunked", "unknown ticket",
                       "unconfirmed resolve", "reopened first", "generic bad token"))
    if kind == "forged":
        return kind, "/webhooks/jira", body, signed(body, f"forged-{n}", secret="not-the-secret"), 401
    if kind == "bad signature":
        return kind, "/webhooks/jira", body, {**signed(body, f"bad-{n}"), "X-Hub-Signature": "sha256=00"}, 401
    if kind == "unsigned":
        return kind, "/webhooks/jira", body, {"Content-Type": "application/json"}, 401
    if kind == "replayed":  # the same signed delivery again and again: stored once, then duplicates
        first = jira_body(key, changelog=1)
        return kind, "/webhooks/jira", first, signed(first, "replayed-1"), 200
    if kind in ("oversized", "chunked"):
        big = json.dumps({"issue": {"key": key}, "padding": "x" * (MAX_BODY_BYTES + 10)}).encode()
        return kind, "/webhooks/jira", big, signed(big, f"big-{n}"), 413
    if kind == "unknown ticket":
        other = jira_body(f"NOPE-{n}", changelog=n)
        return kind, "/webhooks/jira", other, signed(other, f"unknown-{n}"), 202
    if kind == "reopened first":  # a reopen arriving before (or after) any resolve: changes nothing
        reopened = jira_body(key, category="indeterminate", changelog=60_000 + n)
        return kind, "/webhooks/jira", reopened, signed(reopened, f"reopen-{n}"), 202
    if kind == "generic bad token":
        generic = json.dumps({"ticket": key, "status": "resolved"}).encode()
        return kind, "/webhooks/generic", generic, {"Authorization": "Bearer wrong",
                                                    "Content-Type": "application/json"}, 401
    return kind, "/webhooks/jira", body, signed(body, f"unconfirmed-{n}"), 202  # says resolved; the backend does not


def _send(http: httpx.Client, delivery: Delivery) -> tuple[int, float]:
    kind, endpoint, body, headers, _ = delivery
    content: bytes | Iterator[bytes] = body
    if kind == "chunked":  # no Content-Length: the receiver must count while it reads
        content = iter([body[i:i + 65_536] for i in range(0, len(body), 65_536)])
    began = time.perf_counter()
    response = http.post(endpoint, content=content, headers=headers)
    return response.status_code, time.perf_counter() - began


def _percentiles(seconds: list[float]) -> dict[str, str]:
    cuts = statistics.quantiles(seconds, n=100, method="inclusive")
    return {"p50": f"{cuts[49] * 1000:.1f} ms", "p90": f"{cuts[89] * 1000:.1f} ms",
            "p99": f"{cuts[98] * 1000:.1f} ms", "max": f"{max(seconds) * 1000:.1f} ms"}


@pytest.mark.daemon_chaos
def test_webhook_abuse_re_enables_nothing(tiny_plan: Path, tmp_path: Path) -> None:
    db = tmp_path / "fabric.db"
    migrate(db)
    port = free_port()
    with simulator(tiny_plan) as sim:
        config = write_config(tmp_path, sim.url, tiny_plan, port=port, dry_run=False)
        with daemon(config, port, tmp_path / "daemon.log", FABRIC_TICKETS__WEBHOOK_SECRET=SECRET,
                    FABRIC_TICKETS__WEBHOOK_TOKEN=TOKEN) as running, \
                wiring.open_existing_store(f"sqlite:///{db}", fabric="test", read_only=False) as store, \
                httpx.Client(base_url=running.api, timeout=30) as http:  # one kept: a new one costs 60 ms of TLS set-up
            running.wait_for("a first cycle", lambda: running.cycles() >= 1)
            sim.inject(fault="flap", link=CABLE, cycles=5, period="20s")
            sim.advance(300, at_next_read=True)
            backend = wiring.local_tickets(store)
            running.wait_for("the cable awaiting repair", lambda: running.metric(
                "fabric_components", state="awaiting_repair") == 1 and bool(backend.list(TicketStatus.OPEN)))
            (ticket,) = backend.list(TicketStatus.OPEN)
            rng = random.Random(f"webhook-abuse-{COUNT}")
            answers: Counter[str] = Counter()
            latency: dict[str, list[float]] = {}
            wrong = []
            for n in range(COUNT):
                delivery = _abuse(ticket.key, rng, n)
                status, seconds = _send(http, delivery)
                answers[f"{delivery[0]}: {status}"] += 1
                latency.setdefault("refused" if status >= 400 else "stored or ignored", []).append(seconds)
                if status != delivery[4] and not (delivery[0] == "replayed" and status == 202):
                    wrong.append(f"{delivery[0]}: {status}, expected {delivery[4]}")
            cycles = running.cycles()
            running.wait_for("three cycles after the abuse", lambda: running.cycles() >= cycles + 3)
            abused = running.metric("fabric_components", state="awaiting_repair")
            enables = running.metric("fabric_decisions_total", kind="enable")
            backend.resolve(ticket.key, "really repaired")
            genuine = jira_body(ticket.key, changelog=99_999)
            response = http.post("/webhooks/jira", content=genuine, headers=signed(genuine, "genuine"))
            running.wait_for("the genuine repair re-enabled", lambda: running.metric(
                "fabric_decisions_total", kind="enable") == 1)
            refused = {k: v for k, v in running.metrics().items() if k[0] == "fabric_webhook_deliveries_total"}
            assert running.signal(signal.SIGTERM) == 0
    assert not wrong, "\n".join(["answers other than the design's:", *wrong[:20]])
    assert (abused, enables) == (1, 0), f"after the abuse: {abused} awaiting repair, {enables} enables"
    assert response.json()["outcome"] == "accepted"
    figures = {"deliveries": COUNT, "answers": dict(sorted(answers.items())),
               "refused (daemon's metric)": {dict(labels)["outcome"]: int(v) for (_, labels), v in refused.items()},
               **{f"latency, {what}": _percentiles(seconds) for what, seconds in latency.items()}}
    print(json.dumps(figures, indent=1))
    record("webhook abuse", figures)
