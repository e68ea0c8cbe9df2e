"""The remediation loop of ``fabricctl demo``: a simulated UFM over HTTP, the engine, SQLite and local tickets."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console
from rich.table import Table

from fabric import wiring
from fabric.controller.engine import Engine, EngineSettings
from fabric.remediation.correlate import CABLES
from fabric.remediation.domain import Action, ActionKind
from fabric.remediation.policy import PolicyConfig
from fabric.replay.render import line_table
from fabric.simulator import SimClock, SimSettings, SimState, serve
from fabric.simulator.driver import SimulatorDriver, simulated_sleep
from fabric.ufm.auth import BasicAuth
from fabric.ufm.client import JobPollPolicy, RetryPolicy
from tickets.base import TicketBackend, TicketStatus
from topology.model import Fabric

START = datetime(2026, 1, 15, 3, 0, tzinfo=UTC)  # 3 a.m., when these things happen


def _actions_table(title: str, actions: Iterable[Action]) -> Table:
    table: Table = line_table(title, "at", "action", "rule", "component", "why")
    for action in actions:
        table.add_row(action.at.strftime("%H:%M:%S"), action.kind.value, action.rule,
                      str(action.component or "the fabric"), " ".join(action.reason.split()))
    return table


class _Loop(SimulatorDriver):
    def __init__(self, url: str, engine: Engine, tickets: TicketBackend, console: Console) -> None:
        super().__init__(url)
        self.engine, self.tickets, self.console = engine, tickets, console

    async def cycle(self, title: str) -> list[Action]:
        report = await self.engine.cycle()
        tickets = [a for a in report.actions if a.kind in (ActionKind.TICKET, ActionKind.REOPEN)]
        shown = [a for a in report.actions if a.kind not in (ActionKind.RECORD, ActionKind.TICKET, ActionKind.REOPEN)]
        if shown:
            self.console.print(_actions_table(title, shown))
        if tickets:
            self.console.print(f"{title}: {len(tickets)} tickets opened or reopened, one per component "
                               "(switch-only and deferred findings are ticketed too)")
        if not shown and not tickets:
            self.console.print(f"[dim]{title}: nothing to do[/]")
        for failure in report.failed:
            self.console.print(f"[red]failed:[/] {failure}")
        return report.actions


async def _run(plan: Fabric, state: SimState, url: str, workdir: Path, console: Console) -> bool:
    database = workdir / "fabric-remediation.db"
    database.unlink(missing_ok=True)
    with wiring.open_store(f"sqlite:///{database}", fabric="demo", clock=state.now) as store:
        tickets = wiring.ticket_backend(store, clock=state.now)
        async with wiring.ufm_client(url, BasicAuth("admin", "123456"), retry=RetryPolicy(attempts=2),
                                     job_poll=JobPollPolicy(interval=1.0, deadline=60.0),
                                     sleep=simulated_sleep(url)) as client:
            # Live mode against the simulator: this is the demo's UFM, so automation may act on it.
            engine = wiring.build_engine(plan, client, store, tickets,
                                         EngineSettings(fabric="demo", policy=PolicyConfig(dry_run=False)),
                                         clock=state.now)
            await engine.start()
            loop = _Loop(url, engine, tickets, console)

            console.print("A spine-core cable starts flapping; critical BER on 10 of pod03-leaf05's 32 uplinks, "
                          "one every two minutes; all 32 core uplinks of pod09-spine03 at once; six hosts reboot; "
                          "a spine reboots.")
            loop.inject(fault="flap", link="core01-01/1", cycles=5, period="20s")
            for n, port in enumerate(range(33, 43)):
                loop.inject(fault="ber", port=f"pod03-leaf05/{port}", escalate_after="30s", at=f"{2 * n}m")
            for port in range(33, 65):
                loop.inject(fault="ber", port=f"pod09-spine03/{port}", escalate_after="30s")
            loop.inject(fault="host_reboot", count=6, stagger="10s", downtime="4m")
            loop.inject(fault="switch_reboot", switch="pod07-spine02", downtime="3m")
            loop.advance(20 * 60)
            first = await loop.cycle("Cycle 1: decisions")
            switch_fault = next((a for a in first if a.rule == "switch_fault" and a.kind is ActionKind.TICKET), None)
            if switch_fault is not None:
                console.print(f"{switch_fault.component}: one switch fault and one ticket, not 32 cable faults "
                              f"({switch_fault.reason.partition(CABLES)[0]})")
            explained = engine.detectors.explained
            console.print(f"{len(explained)} link-downs explained by the reboots, not treated as cable faults "
                          f"(e.g. {explained[0].reason})" if explained else "no link-downs needed explaining")
            loop.advance(60)
            await loop.cycle("Cycle 2 (nothing new: idempotent)")

            store_options = f"--store sqlite:///{database} --fabric demo"
            open_tickets = tickets.list(TicketStatus.OPEN)
            console.print(f"{len(open_tickets)} tickets open in the local backend "
                          f"(fabricctl tickets list {store_options}):")
            for ticket in open_tickets[:3]:
                console.print(f"  {ticket.key}  {ticket.summary}")
            repaired = next(t for t in open_tickets if "pod03-leaf05/33|" in t.summary)
            tickets.resolve(repaired.key, "replaced the optic at both ends")
            console.print(f"A technician resolves {repaired.key} (fabricctl tickets resolve {repaired.key} --comment "
                          f"'...' {store_options}): that uplink comes back on probation, and the capacity it returns "
                          "lets a deferred one be taken out.")
            loop.advance(60)
            third = await loop.cycle("Cycle 3: after the repair")
    disabled = sum(1 for a in first if a.kind is ActionKind.DISABLE)
    deferred = sum(1 for a in first if a.kind is ActionKind.DEFER)
    after = [a.kind for a in third if a.kind is not ActionKind.RECORD]
    if after != [ActionKind.ENABLE, ActionKind.DISABLE, ActionKind.COMMENT]:
        return False
    console.print(f"Decisions, evidence and guard figures are in {database}:")
    for command in ("status", "decisions", "tickets list"):
        console.print(f"  fabricctl {command} --store sqlite:///{database} --fabric demo")
    return disabled == 9 and deferred == 2 and switch_fault is not None


def run_loop(plan: Fabric, workdir: Path, console: Console) -> bool:
    """Run the loop on ``plan``; True when it behaved as the demo promises."""
    state = SimState.from_plan(plan, clock=SimClock(START), settings=SimSettings(job_seconds=2.0))
    with serve(state) as server:
        return asyncio.run(_run(plan, state, server.url, workdir, console))
