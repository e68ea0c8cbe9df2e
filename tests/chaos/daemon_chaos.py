"""The chaos run against the real daemon: ``fabricctl run`` as a subprocess, live, on the simulator's clock, driven
through ``daemon_program``'s faults tick by tick, killed (SIGKILL, SIGTERM) at planned moments by a request observer
of the simulator, restarted, and checked from its database, the local tickets and UFM after each restart and at the
end.

How a run stays reproducible while the daemon's scheduler runs on real time: the daemon cycles every
``REAL_INTERVAL`` of real time, each cycle reading the simulator's clock first; the harness moves that clock by one
``TICK`` (``at_next_read``: the jump is made when a job next reads the clock, between two cycles) only once the
daemon has settled the tick before: two cycles finished after the jump was read (so one began after it), then a
cycle and a ``ticket_send`` run after those (UFM's job events seen, the tickets sent), then the technician's
repairs and their webhooks, then two cycles more (the deliveries processed, the re-enables settled). Cycles in
between read the same simulated time and find nothing new. ``reconcile`` and ``ticket_poll`` are made inert (a day
of real time): the cycle reconciles UFM's ports itself, and the webhooks stand for the poll.

Tickets are the local backend's (the daemon's own database): the fake Jira would add a server with timing of its
own (a lagging search, webhooks it sends when it likes) and no path of the daemon's state that this run needs.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from threading import Lock
from typing import Any, TypeVar

import httpx
import sqlalchemy as sa
from chaos_invariants import ticket_disagreements
from daemon_checks import (
    Decided,
    decided,
    found,
    held_out_without_one_ticket,
    over_the_cap,
    over_the_guard,
    over_the_hourly_limit,
    pending_intents,
    putting_back,
    rolled_back_while_done,
    taken_out_twice,
)
from daemon_faults import UfmFault
from daemon_life import BOUND, HarnessError, Life, LifeEnded
from daemon_program import HOURLY_LIMIT, LENGTH, REPAIR_AFTER, SPEC, TICK, Kill, steps
from daemon_support import migrate
from webhook_support import SECRET, jira_body, signed

from fabric import wiring
from fabric.remediation.domain import ComponentId
from fabric.remediation.signals import link_id
from fabric.simulator import SimClock, SimSettings, SimState, serve
from fabric.simulator.server import free_port
from fabric.simulator.state import RequestSeen
from fabric.store import Store, TicketState
from fabric.store.records import TicketRecord
from tickets.base import TicketStatus
from tickets.local import LocalTicketBackend
from topology.formats.ndt import write_ndt
from topology.generate import fat_tree

T = TypeVar("T")
START = datetime(2026, 5, 1, 8, 0, tzinfo=UTC)
FABRIC = "chaos"
FINGERPRINT = (
    "SELECT count(*) FROM decisions", "SELECT count(*) FROM findings", "SELECT count(*) FROM intents",
    "SELECT count(*) FROM intents WHERE state = 'pending'", "SELECT count(*) FROM tickets",
    "SELECT coalesce(sum(length(lifecycle) * id), 0) FROM components", "SELECT count(*) FROM ticket_outbox",
)
"""What a cycle that changed anything changed: the harness waits for one that changes none of it (the last: the
ticket writes waiting)."""
STALL = "20s"
"""How long the job of the port action before a ``stall`` kill runs: still running when the daemon is back (job
polls move the simulator's clock 3 s at a time), and short of a tick, so that the run keeps to the control's ticks."""
CAP = 10
"""The blast-radius cap on ``SPEC`` (the floor: 0.5 % of 256 cables is less)."""
REAL_INTERVAL = "150ms"
"""The daemon's ``[daemon] interval`` (and ``ticket_send_interval``) in real time."""


@dataclass(frozen=True, slots=True)
class Death:
    kill: str
    at: datetime
    life: int
    code: int

    def __str__(self) -> str:
        return f"{self.at:%H:%M:%S} life {self.life}: {self.kill} (exit {self.code})"


@dataclass(frozen=True, slots=True)
class Probe:
    at: datetime
    growth: float | None
    """How much the fault's metric grew over its tick (None: it has none)."""
    value: float | None
    readyz: list[str]
    """``/readyz``'s reasons at the end of the tick."""


@dataclass
class RunRecord:
    """What a run did, for the checks and the summary."""

    name: str
    database: Path
    deaths: list[Death] = field(default_factory=list)
    restarts: list[datetime] = field(default_factory=list)
    """The simulated time of each restart's first full tick, where the checks ran."""
    violations: dict[str, dict[str, str]] = field(default_factory=dict)
    """Invariant -> violation -> the moment it was first seen."""
    deliveries: dict[str, int] = field(default_factory=dict)
    """The daemon's answers to the technician's webhooks, by outcome."""
    lives: int = 0
    requests: dict[str, int] = field(default_factory=dict)
    """The daemon's requests to UFM, by method and resource."""
    decisions: list[Decided] = field(default_factory=list)
    """By tick (``tick_of``), as a killed run is compared with its control."""
    findings: list[Decided] = field(default_factory=list)
    exact: list[Decided] = field(default_factory=list)
    """The decisions at the simulated time each was taken, as two control runs are compared."""
    seconds: float = 0.0
    probes: dict[str, Probe] = field(default_factory=dict)
    """What the daemon showed of each UFM fault (``daemon_faults``) at the end of its tick."""
    method: str = "disable"
    """How the daemon took ports out (``[ufm] method``)."""

    def seen(self, invariant: str, lines: Sequence[str], moment: str) -> None:
        found = self.violations.setdefault(invariant, {})
        for line in lines:
            found.setdefault(line, moment)


def tick_of(at: datetime) -> datetime:
    """The tick a simulated time falls in: decisions of one cycle differ by the job polls that moved the clock within
    it, and a restart's recovery may wait on UFM's jobs."""
    return START + TICK * ((at - START) // TICK)


class Killer:
    """The request observer that kills the daemon at the planned moments, one kill after the other."""

    def __init__(self, kills: Sequence[Kill], clock: SimState) -> None:
        self.pending = list(kills)
        self.state = clock
        self.life: Life | None = None
        self.armed_in: int | None = None
        """The life a ``life`` kill counts in (the one after the previous kill)."""
        self.count = 0
        self.fired: list[tuple[Kill, datetime, int]] = []
        self._lock = Lock()

    def next(self) -> Kill | None:
        return self.pending[0] if self.pending else None

    def started(self, life: Life) -> None:
        with self._lock:
            self.life = life

    def __call__(self, seen: RequestSeen) -> None:
        with self._lock:
            kill, life = self.next(), self.life
            if kill is None or life is None or seen.prefix is None:
                return
            if kill.life and self.armed_in is not None and life.number <= self.armed_in:
                return
            if self.state.now() < START + kill.after and not kill.life:
                return
            if (seen.method, seen.moment) != (kill.method, kill.moment) or not seen.path.startswith(kill.path):
                return
            self.count += 1
            if self.count < kill.n:
                return
            self.pending.pop(0)
            self.count = 0
            self.armed_in = life.number
            self.fired.append((kill, self.state.now(), life.number))
        life.kill(signal.SIGKILL if kill.signal == "KILL" else signal.SIGTERM)


class Run:
    """The simulator in this process, the daemon's lives, the technician; the checks are ``daemon_checks``'."""

    def __init__(self, workdir: Path, name: str, kills: Sequence[Kill] = (), faults: Sequence[UfmFault] = (), *,
                 method: str = "disable") -> None:
        self.workdir = workdir / name
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.record = RunRecord(name, self.workdir / "fabric.db", method=method)
        self.kills = tuple(kills)
        self.faults = tuple(faults)
        self.plan = fat_tree(SPEC)
        self.plan_path = self.workdir / "plan.csv"
        self.port = free_port()
        self.first_seen: dict[str, datetime] = {}
        self.life: Life | None = None

    # -- set-up --

    def execute(self) -> RunRecord:
        """The run, checked after each restart's first tick and at the end."""
        with self.plan_path.open("w", newline="") as handle:
            write_ndt(self.plan, handle)
        for stale in self.workdir.glob("fabric.db*"):  # a run by hand in a directory used before starts afresh
            stale.unlink()
        migrate(self.record.database, FABRIC)
        self.state = SimState.from_plan(self.plan, clock=SimClock(START), settings=SimSettings(job_seconds=2.0))
        self.components = {self.state.fabric.port_at[end]: link_id(cable.key)
                           for cable in self.plan.cables for end in cable.key if end in self.state.fabric.port_at}
        self.killer = Killer(self.kills, self.state)
        self.state.request_observers += [self.killer, self._count]
        with serve(self.state) as server, httpx.Client(base_url=server.url, timeout=60) as self.sim:
            self.config = self._write_config(server.url)
            self._post("/simulator/scenario", {"name": self.record.name, "steps": steps()})
            with self._store():
                self._ticks()
        return self.record

    def _write_config(self, url: str) -> Path:
        path = self.workdir / "daemon.toml"
        path.write_text(f"""
[fabric]
name = "{FABRIC}"
plan = "{self.plan_path}"

[policy]
dry_run = false

[guard]
hourly_limit = {HOURLY_LIMIT}

[ufm]
url = "{url}"
method = "{self.record.method}"

[store]
url = "sqlite:///{self.record.database}"

[daemon]
interval = "{REAL_INTERVAL}"
ticket_send_interval = "{REAL_INTERVAL}"
reconcile_interval = "1d"
ticket_poll_interval = "1d"
shutdown_wait = "30s"
engine_niceness = 0

[api]
port = {self.port}
""")
        return path

    @contextmanager
    def _store(self) -> Iterator[None]:
        self.store: Store = wiring.open_existing_store(f"sqlite:///{self.record.database}", fabric=FABRIC,
                                                      read_only=False)
        self.tickets = LocalTicketBackend(self.store.engine, clock=self.state.now)
        try:
            yield
        finally:
            if self.life is not None:
                if self.life.process.poll() is None:
                    self.life.signal(signal.SIGTERM)
                self.life.close()
            self.store.close()

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        response = self.sim.post(path, json=body)
        if response.status_code != 200:
            raise HarnessError(f"the simulator refused {path}: {response.text}")
        return dict(response.json())

    def _count(self, seen: RequestSeen) -> None:
        if seen.prefix is not None and seen.moment == "received":
            key = f"{seen.method} {seen.path.split('/')[1] if seen.path.count('/') > 1 else seen.path}"
            self.record.requests[key] = self.record.requests.get(key, 0) + 1

    # -- lives --

    def _spawn(self) -> Life:
        self.record.lives += 1
        kill = self.killer.next()
        if kill is not None and kill.stall and not kill.life:
            self._post("/simulator/faults", {"fault": "job_stall", "count": 1, "runs_for": STALL})
        life = Life(self.config, self.port, self.workdir / f"daemon-{self.record.lives}.log",
                    {"FABRIC_TICKETS__WEBHOOK_SECRET": SECRET}, self.record.lives)
        self.killer.started(life)
        return life

    def _settled(self, body: Callable[[Life], object]) -> bool:
        """``body(life)`` on the running life, starting new lives until one gets through it; True when a life died
        on the way (the checks then run)."""
        died = False
        while True:
            if self.life is None:
                self.life = self._spawn()
            try:
                body(self.life)
                return died
            except LifeEnded as ended:
                deaths = self.record.deaths
                if ended.code not in (0, -signal.SIGKILL) or len(deaths) >= len(self.killer.fired):
                    raise HarnessError(f"life {self.life.number} exited with {ended.code} by itself:\n"
                                       f"{self.life.log.read_text()[-3000:]}") from None
                kill, at, number = self.killer.fired[len(deaths)]
                deaths.append(Death(kill.name, at, number, ended.code))
                self.life.close()
                self.life = None
                died = True

    # -- the ticks --

    def _ticks(self) -> None:
        before: dict[str, float] = {}
        """Each fault's metric before it was injected."""
        for k in range(LENGTH // TICK + 1):
            tick = START + k * TICK
            faults = [fault for fault in self.faults if fault.tick == k]
            for fault in faults:
                # Scheduled at the tick's time before the jump to it is asked for: with a jump pending, a read of
                # the clock by the daemon between the harness's reading of the time and the simulator's taking the
                # fault would put the fault a tick late (seen once in CI: the 500s fault missed its tick).
                before[fault.name] = self._metric(fault)
                answer = self._post("/simulator/faults",
                                    {**fault.step, "at": f"{(tick - self.state.now()).total_seconds()}s"})
                if datetime.fromisoformat(answer["scheduled_at"]) != max(tick, self.state.now()):
                    raise HarnessError(f"{fault.name}: scheduled at {answer['scheduled_at']}, not at {tick:%H:%M}")
            if k:
                # The daemon's own waits (UFM's jobs, polled on the simulator's clock) may have moved it past the
                # tick: a restart's recovery waiting for a job that still runs.
                ahead = max(0.0, (tick - self.state.now()).total_seconds())
                self._post("/simulator/clock/advance", {"seconds": ahead, "at_next_read": True})
            restarted = self._settled(self._tick_settled)
            for fault in self.faults:
                if fault.tick <= k <= fault.tick + fault.within and not self._shown(fault.name):
                    self._probe(fault, before[fault.name], tick)
            if self._technician(tick):
                restarted |= self._settled(self._tick_settled)
            if restarted:
                self.record.restarts.append(tick)
                self._check(f"after the restart at {tick:%H:%M}")
        self._check("at the end")
        decisions = self.store.decisions(limit=1_000_000)
        self.record.decisions = decided(decisions, tick_of)
        self.record.exact = decided(decisions, lambda at: at)
        self.record.findings = found(self.store.findings(), tick_of)

    def _tick_settled(self, life: Life) -> None:
        """Two cycles (one began after the clock's jump, or the webhooks), then more until one changes nothing in
        the store and no ticket write waits: what the tick set off (UFM's jobs, their events, the tickets, a link
        coming up after its enable) has played out."""
        life.wait_cycles(2)
        while True:
            before = self._fingerprint()
            life.wait_cycles(1)
            if self._fingerprint() == before and not before[-1]:
                return

    def _fingerprint(self) -> tuple[int, ...]:
        with self.store.engine.connect() as conn:
            return tuple(int(conn.execute(sa.text(query)).scalar_one()) for query in FINGERPRINT)

    def _technician(self, now: datetime) -> bool:
        """Resolves every ticket open for ``REPAIR_AFTER`` (the storm's too: nothing is enabled while halted) and
        tells the daemon by a signed Jira delivery; True if it resolved any."""
        open_now = {t.key for t in self.tickets.list(TicketStatus.OPEN)}
        self.first_seen = {key: self.first_seen.get(key, now) for key in open_now}
        due = sorted(key for key, seen in self.first_seen.items() if now - seen >= REPAIR_AFTER)
        for key in due:
            self.tickets.resolve(key, "repaired: cable and optics replaced")
            body = jira_body(key, resolution={"name": "Fixed"}, changelog=len(self.record.deliveries) + 1)
            outcome = self._deliver(body, signed(body, f"chaos-{key}-{now:%H%M}"))
            self.record.deliveries[outcome] = self.record.deliveries.get(outcome, 0) + 1
        return bool(due)

    def _deliver(self, body: bytes, headers: dict[str, str]) -> str:
        """One delivery to the daemon's webhook; a life that dies meanwhile is restarted and asked again."""
        return self._ask("the webhook's answer", lambda life: str(httpx.post(
            f"{life.api}/webhooks/jira", content=body, headers=headers, timeout=BOUND).json()["outcome"]))

    # -- UFM's faults --

    def _ask(self, what: str, read: Callable[[Life], T]) -> T:
        """``read`` of the running life (a new one if it died)."""
        answer: list[T] = []
        self._settled(lambda life: answer.append(life.ask(what, read)))
        return answer[-1]

    def _metric(self, fault: UfmFault) -> float:
        metric = fault.metric
        if metric is None:
            return 0.0
        return self._ask(metric.name, lambda life: life.metrics().get((metric.name, metric.labels), 0.0))

    def _shown(self, fault: str) -> bool:
        probe = self.record.probes.get(fault)
        return probe is not None and bool(probe.growth or probe.value)

    def _probe(self, fault: UfmFault, before: float, tick: datetime) -> None:
        """What the daemon showed of ``fault`` at the end of its tick: its metric's growth, ``/readyz``."""
        reasons = self._ask("/readyz", lambda life: list(life.get("/readyz").json()["reasons"]))
        after = self._metric(fault)
        self.record.probes[fault.name] = Probe(tick, after - before if fault.metric else None,
                                               after if fault.metric else None, reasons)

    # -- the checks --

    def _check(self, moment: str) -> None:
        """Every invariant that one run can judge alone, on what the store, the tickets and UFM show now."""
        with self.state.lock:
            # Out either way; isolated means listed unhealthy (OpenSM applies it at a later sweep).
            out = sorted({*self.state.fabric.disabled, *self.state.unhealthy.names()})
            jobs = [(j.created, j.action, j.port or "", j.status) for j in self.state.jobs.all()]
            # A port marked unhealthy is taken out (UFM answers the PUT once it has done it), marked healthy put back.
            jobs += [(when, "disable" if policy == "UNHEALTHY" else "enable", port, "Completed")
                     for when, policy, port in self.state.unhealthy.asked]
        records = self.store.components()
        tickets = self.store.tickets()
        decisions = self.store.decisions(limit=1_000_000)
        intents = self.store.intents(limit=1_000_000)
        found_now = {
            "held out": held_out_without_one_ticket(out, self.components, records, tickets,
                                                    self._awaiting_resume(tickets), putting_back(intents)),
            "taken out twice": taken_out_twice(jobs),
            "hourly limit": over_the_hourly_limit(decisions, HOURLY_LIMIT),
            "guard and cap": over_the_guard(decisions) + over_the_cap(jobs, CAP),
            "rolled back, done in UFM": rolled_back_while_done(intents, out, self.components),
            "tickets agree": ticket_disagreements(tickets, self.tickets.list()),
        }
        if moment == "at the end":
            found_now["pending intents"] = pending_intents(intents)
        for invariant, lines in found_now.items():
            self.record.seen(invariant, lines, moment)

    def _awaiting_resume(self, tickets: Sequence[TicketRecord]) -> frozenset[ComponentId]:
        """Components repaired while the breaker halts automation: their enable waits for the resume."""
        if not self.store.breaker_state().halted:
            return frozenset()
        latest = {row.component: row.state for row in tickets if row.component is not None}
        return frozenset(c for c, state in latest.items() if state is TicketState.RESOLVED)
