"""An engine wired to a simulated UFM over real loopback HTTP, a real SQLite store and the local ticket backend."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from fabric.controller.engine import CycleReport, Engine, EngineSettings
from fabric.remediation.escalation import ResetLadder
from fabric.remediation.policy import PolicyConfig
from fabric.remediation.rules import RuleSettings
from fabric.simulator import SimClock, SimSettings, SimState, serve
from fabric.simulator.driver import SimulatorDriver, simulated_sleep
from fabric.store import Store
from fabric.ufm import BasicAuth, JobPollPolicy, PortActionMethod, RetryPolicy, UfmClient
from tickets.local import LocalTicketBackend
from topology.guard import GuardSettings
from topology.model import Fabric

START = datetime(2026, 5, 1, 8, 0, tzinfo=UTC)
TAKE_OUT_AT_ONCE = ResetLadder(max_resets=0)
"""The rig's reset ladder unless a test gives one: its scenarios are about what follows a take-out (the writes, the
tickets, repairs, restarts), so a finding takes its link out at once; the ladder before it is
``test_resets_engine``'s, with the service's default (``ResetLadder()``)."""


class ClientSleep:
    """The UFM client's waits (job polls, retry back-off) advance the simulator's clock; a test may make the next
    one raise instead (the engine dies while it waits for a job)."""

    def __init__(self, url: str) -> None:
        self._advance = simulated_sleep(url)
        self.fail_with: BaseException | None = None

    async def __call__(self, seconds: float) -> None:
        if self.fail_with is not None:
            error, self.fail_with = self.fail_with, None
            raise error
        await self._advance(seconds)


@dataclass
class Rig(SimulatorDriver):
    url: str
    state: SimState
    store: Store
    tickets: LocalTicketBackend
    engine: Engine
    client: UfmClient
    runner: asyncio.Runner
    sleep: ClientSleep

    timeout: float = 60.0

    def cycle(self) -> CycleReport:
        return self.runner.run(self.engine.cycle())

    def critical_ber(self, port: str) -> CycleReport:
        """A critical BER on ``port``'s cable, seen by a cycle 30 s later, and the report of the cycle that acts on it:
        the same one for a host's link, ``immediate_settle`` later for a cable between two switches (it is held
        for the correlation to see the switch's other cables first, ``fabric.remediation.settling``)."""
        self.inject(fault="ber", port=port, escalate_after=0)
        self.advance(30)
        report = self.cycle()
        if report.settling:
            self.advance(self.engine.settings.rules.immediate_settle.total_seconds())
            report = self.cycle()
        return report

    def port_state(self, name: str) -> str:
        response = httpx.get(f"{self.url}/ufmRest/resources/ports/{name}", auth=("admin", "123456"), timeout=30)
        return str(response.json()[0]["physical_state"])


def restart(r: Rig) -> Engine:
    """A new engine process on the same store, UFM and ticket system."""
    engine = Engine(r.engine.plan, r.client, r.store, r.tickets, r.engine.settings, clock=r.state.now)
    r.runner.run(engine.start())
    r.engine = engine
    return engine


def disabled_ports(r: Rig) -> list[str]:
    """The ports this rig's UFM shows disabled, read over HTTP."""
    response = httpx.get(f"{r.url}/ufmRest/resources/ports", auth=("admin", "123456"), timeout=30)
    return sorted(p["name"] for p in response.json() if p["physical_state"] == "Disabled")


def unhealthy_ports(r: Rig) -> list[dict[str, Any]]:
    """The entries of this rig's ``/app/unhealthy_ports``, read over HTTP."""
    response = httpx.get(f"{r.url}/ufmRest/app/unhealthy_ports", auth=("admin", "123456"), timeout=30)
    return list(response.json())


def make_client(url: str, *, timeout: float = 60.0, sleep: ClientSleep | None = None) -> UfmClient:
    return UfmClient(url, BasicAuth("admin", "123456"), retry=RetryPolicy(attempts=1),
                     job_poll=JobPollPolicy(interval=1.0, deadline=60.0), timeout=timeout,
                     sleep=sleep or simulated_sleep(url))


@contextmanager
def rig(plan: Fabric, tmp_path: Path, *, dry_run: bool = False, fabric: str = "test", store_url: str | None = None,
        timeout: float = 60.0, guard: GuardSettings | None = None, rules: RuleSettings | None = None,
        method: PortActionMethod = PortActionMethod.DISABLE, resets: ResetLadder = TAKE_OUT_AT_ONCE,
        **policy: Any) -> Iterator[Rig]:
    """A simulated UFM of ``plan`` and a started engine of ``fabric`` on it, with the store at ``store_url`` (by
    default a file of its own): several rigs may share one database, one fabric each. ``timeout``: the UFM
    client's, in real seconds."""
    state = SimState.from_plan(plan, clock=SimClock(START), settings=SimSettings(job_seconds=2.0))
    store = Store.open(store_url or f"sqlite:///{tmp_path / 'fabric.db'}", fabric=fabric, clock=state.now)
    tickets = LocalTicketBackend(store.engine, clock=state.now)
    # One event loop for the whole test: the client's connection pool belongs to it.
    with serve(state) as server, asyncio.Runner() as runner:
        sleep = ClientSleep(server.url)
        client = make_client(server.url, timeout=timeout, sleep=sleep)
        settings = EngineSettings(fabric=fabric, policy=PolicyConfig(dry_run=dry_run, resets=resets, **policy),
                                  guard=guard or GuardSettings(), rules=rules or RuleSettings(), method=method)
        engine = Engine(plan, client, store, tickets, settings, clock=state.now)
        runner.run(engine.start())
        try:
            yield Rig(server.url, state, store, tickets, engine, client, runner, sleep)
        finally:
            runner.run(client.aclose())
            store.close()
