"""The engine as a process the chaos test can SIGKILL, until ``fabricctl run`` (the daemon) exists.

What the daemon will do, minus its scheduler and API: load the configuration, open the store, the ticket
backend and the UFM client through ``fabric.wiring``, build the engine, ``await engine.start()``, then run a
cycle at each tick. Here a tick is a line ``cycle`` on stdin (the chaos test is the scheduler, so that a run is
reproducible), each answered by one JSON line on stdout; ``ready`` is printed once start-up is done. Its clock
is the simulator's: read from ``GET /simulator/state`` before start-up and each cycle, and moved by the UFM
client's waits (job polling) through ``POST /simulator/clock/advance``.

Test-only: ``FABRIC_CHAOS_KILL="<point>:<n>[@<ISO time>]"`` makes the process SIGKILL itself at the n-th
crossing of ``point`` (counted from the given simulated time on), as a crash would hit it:

| point          | where the process dies                                                               |
|----------------|--------------------------------------------------------------------------------------|
| `start`        | at the n-th UFM call of ``engine.start()``                                           |
| `cycle`        | at the n-th UFM call of the cycles (anywhere: reading, writing, reconciling)         |
| `before_write` | at the n-th port action, its intent committed, nothing sent to UFM                   |
| `job_poll`     | at the n-th wait of the UFM client (a port action's job running in UFM)               |
| `after_write`  | after UFM took the n-th port action (its job named), before the intent notes the job  |
| `ticket`       | after the n-th ticket the backend opened, before the store knows its key             |

Run: ``python tests/chaos/chaos_engine.py --config engine.toml --plan plan.csv`` (``FABRIC_UFM_PASSWORD`` set).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import sys
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

from fabric import wiring
from fabric.config import ServiceConfig, load_config
from fabric.controller.engine import CycleReport
from fabric.ufm.auth import BasicAuth
from fabric.ufm.client import EXTERNAL_INFO, JobPollPolicy, PortActionMethod, PostedAction, RetryPolicy, UfmClient
from fabric.ufm.cursor import CursorState, Lookback
from fabric.ufm.errors import UfmError
from fabric.ufm.http import SleepFn
from fabric.ufm.models import Event, Job, Port, UnhealthyPort, Versioning
from fabric.ufm.spooled import SpooledList
from tickets.base import Ticket, TicketBackend
from topology.formats.ndt import read_ndt

KILL_ENV = "FABRIC_CHAOS_KILL"
POINTS = ("start", "cycle", "before_write", "job_poll", "after_write", "ticket")


class SimulatorClock:
    """The simulator's time, as this process last saw it: read at each tick, moved by its own waits."""

    def __init__(self, url: str) -> None:
        # One client each, kept: a new httpx client costs a TLS context (60 ms), even for plain HTTP.
        self._reader = httpx.Client(base_url=url, timeout=60)
        self._mover = httpx.AsyncClient(base_url=url, timeout=60)
        self._now: datetime | None = None

    def now(self) -> datetime:
        if self._now is None:
            raise RuntimeError("the simulator's clock was not read yet: sync() first")
        return self._now

    def sync(self) -> datetime:
        response = self._reader.get("/simulator/state")
        response.raise_for_status()
        self._now = datetime.fromisoformat(response.json()["now"])
        return self._now

    async def sleep(self, seconds: float) -> None:
        """The UFM client's wait: simulated time passes, no real time."""
        response = await self._mover.post("/simulator/clock/advance", json={"seconds": seconds})
        response.raise_for_status()
        self._now = datetime.fromisoformat(response.json()["now"])

    async def __aenter__(self) -> SimulatorClock:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._reader.close()
        await self._mover.aclose()


class KillSwitch:
    """Dies (SIGKILL, no clean-up, as a crash) at the n-th crossing of one point, from a simulated time on."""

    def __init__(self, spec: str | None, clock: SimulatorClock) -> None:
        self.point: str | None = None
        self.n = 0
        self.after: datetime | None = None
        self.clock = clock
        self.phase = "start"
        self.crossed = 0
        if spec:
            where, _, after = spec.partition("@")
            point, _, n = where.partition(":")
            if point not in POINTS or not n.isdigit() or int(n) < 1:
                raise SystemExit(f"{KILL_ENV}={spec!r}: expected <point>:<n>[@<ISO time>], point one of "
                                 f"{', '.join(POINTS)}")
            self.point, self.n = point, int(n)
            self.after = datetime.fromisoformat(after) if after else None

    def cross(self, point: str) -> None:
        if point != self.point or (self.after is not None and self.clock.now() < self.after):
            return
        self.crossed += 1
        if self.crossed == self.n:
            sys.stdout.flush()
            os.kill(os.getpid(), signal.SIGKILL)

    def ufm_call(self) -> None:
        self.cross(self.phase)


class KillableUfm:
    """The real UFM client, with the kill switch on every call the engine makes."""

    def __init__(self, inner: UfmClient, kill: KillSwitch) -> None:
        self.inner, self.kill = inner, kill

    async def topology_list(self, name: str) -> SpooledList:
        self.kill.ufm_call()
        return await self.inner.topology_list(name)

    async def port(self, name: str) -> Port:
        self.kill.ufm_call()
        return await self.inner.port(name)

    async def events(self, *, handed_over: CursorState | None = None, lookback: Lookback | None = None,
                     **filters: str) -> list[Event]:
        self.kill.ufm_call()
        return await self.inner.events(handed_over=handed_over, lookback=lookback, **filters)

    async def versioning(self) -> Versioning:
        self.kill.ufm_call()
        return await self.inner.versioning()

    async def unhealthy_ports(self) -> list[UnhealthyPort]:
        self.kill.ufm_call()
        return await self.inner.unhealthy_ports()

    async def take_out(self, port_name: str, method: PortActionMethod) -> PostedAction:
        return await self._write(self.inner.take_out, port_name, method)

    async def put_back(self, port_name: str, method: PortActionMethod) -> PostedAction:
        return await self._write(self.inner.put_back, port_name, method)

    async def _write(self, write: Callable[[str, PortActionMethod], Awaitable[PostedAction]], port_name: str,
                     method: PortActionMethod) -> PostedAction:
        self.kill.ufm_call()
        self.kill.cross("before_write")
        posted = await write(port_name, method)
        self.kill.cross("after_write")
        return posted

    async def await_jobs(self, job_ids: Sequence[str], within: float) -> dict[str, Job | UfmError]:
        self.kill.ufm_call()
        return await self.inner.await_jobs(job_ids, within)

    async def running_jobs(self) -> list[Job]:
        self.kill.ufm_call()
        return await self.inner.running_jobs()

    async def external_event(self, description: str, *, object_name: str | None = None, otype: str = "Switch",
                             event_id: int = EXTERNAL_INFO) -> None:
        self.kill.ufm_call()
        await self.inner.external_event(description, object_name=object_name, otype=otype, event_id=event_id)


class KillableTickets:
    """The real ticket backend; dies after the backend opened a ticket, when the kill switch says so."""

    def __init__(self, inner: TicketBackend, kill: KillSwitch) -> None:
        self.inner, self.kill = inner, kill

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def open(self, dedup_key: str, summary: str, description: str, labels: Sequence[str] = (), *,
             severity: int | None = None) -> Ticket:
        ticket = self.inner.open(dedup_key, summary, description, labels, severity=severity)
        self.kill.cross("ticket")
        return ticket


def _say(**fields: Any) -> None:
    print(json.dumps(fields, default=str), flush=True)


def _summary(report: CycleReport) -> dict[str, Any]:
    return {"at": report.at.isoformat(), "events": report.events, "findings": len(report.findings),
            "actions": Counter(a.kind.value for a in report.actions), "failed": [str(f) for f in report.failed]}


async def run(config_path: Path, plan_path: Path) -> None:
    config = load_config(config_path)
    url = config.ufm.target().url
    async with SimulatorClock(url) as clock:
        await _serve(config, url, plan_path, clock)


async def _serve(config: ServiceConfig, url: str, plan_path: Path, clock: SimulatorClock) -> None:
    clock.sync()
    kill = KillSwitch(os.environ.get(KILL_ENV), clock)
    plan = read_ndt(plan_path)
    auth = BasicAuth(config.ufm.user, config.ufm.secret().get_secret_value())
    with wiring.open_store(config.store.url, fabric=config.fabric.name, clock=clock.now) as store:
        tickets = KillableTickets(wiring.ticket_backend(store, clock=clock.now), kill)
        async with wiring.ufm_client(url, auth, retry=RetryPolicy(attempts=2),
                                     job_poll=JobPollPolicy(interval=1.0, deadline=60.0),
                                     sleep=_killable_sleep(clock, kill)) as client:
            engine = wiring.build_engine(plan, KillableUfm(client, kill), store, tickets,
                                         wiring.engine_settings(config), clock=clock.now)
            await engine.start()
            kill.phase = "cycle"
            _say(ready=clock.now().isoformat())
            for line in sys.stdin:
                if line.strip() != "cycle":
                    raise SystemExit(f"unknown command {line.strip()!r} (only 'cycle')")
                clock.sync()
                _say(**_summary(await engine.cycle()))


def _killable_sleep(clock: SimulatorClock, kill: KillSwitch) -> SleepFn:
    async def sleep(seconds: float) -> None:
        kill.cross("job_poll")
        await clock.sleep(seconds)
    return sleep


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, required=True, help="The service configuration (TOML).")
    parser.add_argument("--plan", type=Path, required=True, help="The wiring plan (NDT CSV).")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    asyncio.run(run(args.config, args.plan))


if __name__ == "__main__":
    main()
