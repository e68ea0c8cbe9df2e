"""The child of ``benchmarks.bench_hosts``: one checkout's API over a prepared store, its endpoints timed in turn.

Run as a script with the checkout measured first on ``PYTHONPATH`` (``python -P hosts_probe.py DB ROUNDS``): it
imports nothing from ``benchmarks``, so the same file measures an earlier commit's ``fabric``. Prints one JSON
object: each endpoint's latencies (seconds), its first answer's (the plan's index built then), and a digest of
each answer's body (the two checkouts must answer alike). After the first answers (the plan's index built by
them) the daemon's collector policy is applied, as the daemon does once started: the plan and its index frozen.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
import time
from datetime import UTC, datetime

import httpx

from fabric.api.app import create_app
from fabric.api.context import ApiContext, Reload, RuntimeStatus
from fabric.api.plan_index import plan_index
from fabric.config import ServiceConfig
from fabric.daemon.gcpolicy import apply_gc_policy
from fabric.store import Store
from topology.generate import PRESETS, fat_tree

PRESET = "h100-32k"
FABRIC = "bench"
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


class _Runtime:
    """A quiet engine's status: ``/status`` reads the rest from the store."""

    def status(self) -> RuntimeStatus:
        return RuntimeStatus(started_at=NOW, dry_run=False, interval_seconds=30.0, last_poll_at=NOW,
                             last_cycle_at=NOW, ufm_reachable=True)

    async def reload(self, by: str, reason: str) -> Reload:
        return Reload("nothing to reload")

    def wake(self) -> None:
        return None


async def _probe(db: str, rounds: int, paths: list[str]) -> dict[str, object]:
    with Store.open(f"sqlite:///{db}", fabric=FABRIC, clock=lambda: NOW) as store:
        app = create_app(ApiContext(config=ServiceConfig(), index=plan_index(fat_tree(PRESETS[PRESET])), store=store,
                                    runtime=_Runtime(), clock=lambda: NOW))
        latencies: dict[str, list[float]] = {path: [] for path in paths}
        first: dict[str, float] = {}
        digests: dict[str, str] = {}
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://api") as client:
            for turn in range(rounds + 1):
                for path in paths:
                    start = time.perf_counter()
                    response = await client.get(path)
                    took = time.perf_counter() - start
                    if response.status_code != 200:
                        raise RuntimeError(f"{path}: {response.status_code} {response.text[:300]}")
                    if turn == 0:
                        first[path] = took
                        digests[path] = hashlib.sha256(response.content).hexdigest()
                    else:
                        latencies[path].append(took)
                if turn == 0:  # as the daemon, once started: what lives as long as the process frozen
                    apply_gc_policy()
    return {"latencies": latencies, "first": first, "digests": digests}


def main(argv: list[str]) -> int:
    db, rounds, paths = argv[0], int(argv[1]), argv[2:]
    print(json.dumps(asyncio.run(_probe(db, rounds, paths))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
