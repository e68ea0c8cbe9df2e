"""The chaos run of issue 9's proof: the engine process in live mode against the simulator, SIGKILLed at seeded
moments and restarted, UFM restarted while the engine is down, the invariants checked after each restart and at
the end.

The harness is the scheduler and the technician: at every tick (``daemon.interval`` of simulated time) it moves
the simulator's clock, resolves the tickets that have been open for ``REPAIR_AFTER`` (the repair), and asks the
engine for one cycle. Nothing depends on real time, so a seed gives the same run every time: the faults, their
targets, the kill points (``chaos_engine``'s table) and the simulator's own random choices all come from it.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import select
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from chaos_invariants import (
    PORT_ACTION_DONE,
    EventIndex,
    UfmEvent,
    disabled_without_one_ticket,
    hourly_rate,
    own_action_evidence,
    repeated_evidence,
    taken_out,
    ticket_disagreements,
)

from fabric import wiring
from fabric.remediation.domain import ActionKind, ComponentId
from fabric.remediation.signals import SignalMapper, link_id
from fabric.remediation.view import FabricView, build_view
from fabric.simulator import SimClock, SimSettings, SimState, serve
from fabric.store import TicketState
from fabric.ufm import BasicAuth, UfmClient
from fabric.ufm.models import Event, parse_list
from fabric.ufm.snapshot import read_topology, spooled_topology
from tickets.base import TicketStatus, dedup_key
from tickets.local import LocalTicketBackend
from topology.formats.ndt import write_ndt
from topology.generate import FatTreeSpec, fat_tree
from topology.model import Fabric
from topology.ports import Kind

ENGINE = Path(__file__).with_name("chaos_engine.py")
START = datetime(2026, 5, 1, 8, 0, tzinfo=UTC)
PASSWORD = "123456"
FABRIC = "chaos"
SPEC = FatTreeSpec(pods=4, hosts_per_pod=4, rails=4, spines_per_pod=4, cores_per_group=4, leaf_spine_cables=2,
                   spine_core_cables=2, radix=16)
"""48 switches, 320 cables, 256 of them between switches: the blast-radius cap is the floor, 10."""
INTERVAL = timedelta(minutes=2)
"""The cycle interval (``daemon.interval``): twice the default, to halve the run's cost."""
HOURLY_LIMIT = 5
"""Low, so that a few hours of faults reach it (the default, 20, needs the 4k fabric's fault rate)."""
REPAIR_AFTER = timedelta(minutes=15)
LENGTH = timedelta(minutes=150)
UFM_RESTART_AT = timedelta(minutes=100)
ENGINE_DOWN = timedelta(minutes=5)
"""How long the engine stays down around the UFM restart (other restarts are immediate)."""
STORM_AT = timedelta(minutes=118)
SILENT_FOR = 120.0
"""Real seconds the engine may take to answer one request before the harness gives up on it."""


# --- the scenario --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Story:
    """The faults of a run, in simulated time from its start."""

    steps: tuple[dict[str, Any], ...]
    """Scenario steps (``fabric.simulator.faults``), each with its ``at``, scheduled at the start."""
    blips: tuple[dict[str, Any], ...]
    """Steps applied right after the UFM restart: below every rule once, over it if counted twice."""


def story(plan: Fabric, seed: int) -> Story:
    """Flapping links, high-BER ports and dead cables (each repaired once its ticket has been open for
    ``REPAIR_AFTER``) at a rate above the hourly limit, flapping host links, blips after the UFM restart, then an
    event storm big enough to trip the breaker."""
    rng = random.Random(f"story-{seed}")
    switch: list[str] = []
    host: list[str] = []
    for cable in sorted(plan.cables, key=lambda c: c.key):
        kinds = {plan.devices[end.device].kind for end in cable.key}
        (switch if kinds == {Kind.SWITCH} else host).append(f"{cable.key[0].device}/{cable.key[0].port}")
    targets = rng.sample(switch, 16)
    steps: list[dict[str, Any]] = []
    for index, target in enumerate(targets[:14]):
        at = f"{180 + index * 390 + rng.randint(0, 120)}s"
        fault = ("flap", "ber", "link_down", "flap", "ber")[index % 5]
        if fault == "flap":
            steps.append({"at": at, "fault": "flap", "link": target, "cycles": 4, "period": "60s"})
        elif fault == "ber":
            steps.append({"at": at, "fault": "ber", "port": target, "escalate_after": "5m"})
        else:
            steps.append({"at": at, "fault": "link_down", "link": target, "duration": "20m"})
    for at, target in zip(("20m", "60m"), rng.sample(host, 2), strict=True):
        steps.append({"at": at, "fault": "flap", "link": target, "cycles": 4, "period": "60s"})
    steps.append({"at": f"{STORM_AT.total_seconds():.0f}s", "fault": "storm", "count": 600, "duration": "20m",
                  "batches": 40})
    blips = tuple({"fault": "flap", "link": target, "cycles": 2, "period": "10s", "down_for": "1s", "at": "30s"}
                  for target in targets[14:])
    return Story(tuple(steps), blips)


@dataclass(frozen=True, slots=True)
class Kill:
    """Where a life of the engine dies: at the ``n``-th crossing of ``point`` from ``at`` on (``chaos_engine``);
    ``start``: SIGKILLed between cycles at ``at``, then again at the n-th UFM call of its next start-up."""

    at: timedelta
    point: str
    n: int

    def spec(self) -> str:
        return f"{self.point}:{self.n}@{(START + self.at).isoformat()}"


def kill_plan(seed: int) -> tuple[Kill, ...]:
    """One kill of every kind in the first 90 minutes (in seeded order and moments), and three while the storm builds
    up towards the breaker (within a cycle or two of their moment: a storm window is only 15 minutes), where only
    tickets are left to die in once it trips; plus the kill before the UFM restart (``UFM_RESTART_AT``)."""
    rng = random.Random(f"kills-{seed}")
    points = ["start", "before_write", "job_poll", "after_write", "ticket", "cycle"]
    rng.shuffle(points)
    kills = [Kill(timedelta(minutes=rng.uniform(8 + 14 * i, 22 + 14 * i)), point,
                  rng.randint(1, {"start": 5, "cycle": 12, "ticket": 3}.get(point, 2)))
             for i, point in enumerate(points)]
    storm = STORM_AT.total_seconds() / 60
    for i in range(3):
        point = rng.choice(["cycle", "ticket"])
        kills.append(Kill(timedelta(minutes=rng.uniform(storm + 3 + 4 * i, storm + 6 + 4 * i)), point,
                          rng.randint(1, 3 if point == "cycle" else 2)))
    return tuple(kills)


# --- the engine process ----------------------------------------------------------------------------------------


class HarnessError(RuntimeError):
    """The run could not go on: the engine died by itself, hung, or the simulator refused a step."""


class EngineProcess:
    """One life of the engine (``chaos_engine.py``), spoken to line by line."""

    def __init__(self, config: Path, plan: Path, log: Path, kill: str | None) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("FABRIC_")}
        env["FABRIC_UFM_PASSWORD"] = PASSWORD
        if kill:
            env["FABRIC_CHAOS_KILL"] = kill
        self.log = log
        with log.open("ab") as stderr:
            self.proc = subprocess.Popen([sys.executable, str(ENGINE), "--config", str(config), "--plan", str(plan)],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, text=True,
                                         env=env)

    def _answer(self) -> dict[str, Any] | None:
        """The next line the engine writes; None when it died (SIGKILL, as planned)."""
        assert self.proc.stdout is not None
        readable, _, _ = select.select([self.proc.stdout], [], [], SILENT_FOR)
        if not readable:
            self.proc.kill()
            raise HarnessError(f"the engine said nothing for {SILENT_FOR:.0f} s{self._tail()}")
        line = self.proc.stdout.readline()
        if line:
            return dict(json.loads(line))
        code = self.proc.wait(timeout=30)
        if code != -signal.SIGKILL:
            raise HarnessError(f"the engine exited with {code} by itself{self._tail()}")
        return None

    def _tail(self) -> str:
        lines = self.log.read_text(errors="replace").splitlines()[-15:]
        return ":\n  " + "\n  ".join(lines) if lines else ""

    def ready(self) -> bool:
        return self._answer() is not None

    def cycle(self) -> dict[str, Any] | None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write("cycle\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass
        return self._answer()

    def sigkill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        """End of the run: stdin closes, the engine returns."""
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            if self.proc.wait(timeout=60) != 0:
                raise HarnessError(f"the engine exited with {self.proc.returncode} at the end{self._tail()}")


# --- one run ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Death:
    at: datetime
    how: str

    def __str__(self) -> str:
        return f"{self.at:%H:%M:%S} {self.how}"


@dataclass
class RunRecord:
    """What a run did and what broke, for the test to judge and show."""

    name: str
    deaths: list[Death] = field(default_factory=list)
    violations: dict[str, dict[str, str]] = field(default_factory=dict)
    """Invariant -> violation -> when it was first seen."""
    trip: datetime | None = None
    figures: dict[str, int] = field(default_factory=dict)

    def broken(self, invariant: str) -> list[str]:
        return [f"{line} [seen {moment}]" for line, moment in self.violations.get(invariant, {}).items()]

    def summary(self) -> str:
        figures = ", ".join(f"{k} {v}" for k, v in self.figures.items())
        trip = f"{self.trip:%H:%M:%S}" if self.trip else "never"
        kills = f"; {len(self.deaths)} kills: " + ", ".join(map(str, self.deaths)) if self.deaths else ""
        return f"{self.name}: breaker tripped {trip}; {figures}{kills}"


def tick_of(at: datetime) -> datetime:
    """The tick of the cycle that ran at ``at`` (the cycle's ``now``: job polls move the clock within it)."""
    return START + INTERVAL * ((at - START) // INTERVAL)


_ACTION = re.compile(r"action (\w+) succeeded")


class Run:
    """The simulator (in this process, over loopback), the engine's lives, the technician and the checks."""

    def __init__(self, plan: Fabric, workdir: Path, seed: int, name: str, kills: Sequence[Kill]) -> None:
        self.plan, self.workdir, self.seed = plan, workdir, seed
        self.record = RunRecord(name)
        self.pending = list(kills)
        self.killing = bool(kills)
        self.lives = 0
        self.database = workdir / "fabric.db"
        self.plan_path = workdir / "plan.csv"
        self.config = workdir / "engine.toml"
        self.archive: list[UfmEvent] = []
        self.epoch = 0
        self.first_seen: dict[str, datetime] = {}
        self.life: EngineProcess | None = None
        self.life_checked = True

    # -- set-up --

    def execute(self) -> RunRecord:
        self.workdir.mkdir(parents=True, exist_ok=True)
        with self.plan_path.open("w", newline="") as handle:
            write_ndt(self.plan, handle)
        self.state = SimState.from_plan(self.plan, clock=SimClock(START),
                                        settings=SimSettings(job_seconds=2.0, seed=self.seed))
        # One HTTP client, kept: a new httpx client costs a TLS context (60 ms), even for plain HTTP.
        with serve(self.state) as server, httpx.Client(base_url=server.url, timeout=60) as self.http:
            self.config.write_text(_engine_config(server.url, self.database))
            self.view = asyncio.run(_view(server.url, self.plan))
            self.mapper = SignalMapper(self.view.resolver)
            self.components = _port_components(self.view)
            plot = story(self.plan, self.seed)
            self._post("/simulator/scenario", {"name": "chaos", "seed": self.seed, "steps": list(plot.steps)})
            with self._store():
                self._ticks(plot)
        return self.record

    @contextmanager
    def _store(self) -> Iterator[None]:
        self.life = self._spawn()  # creates the database
        self.store = wiring.open_existing_store(f"sqlite:///{self.database}", fabric=FABRIC, read_only=False)
        self.tickets = LocalTicketBackend(self.store.engine, clock=self.state.now)
        try:
            yield
        finally:
            if self.life is not None:
                self.life.stop()
            self.store.close()

    def _post(self, path: str, body: dict[str, Any]) -> None:
        response = self.http.post(path, json=body)
        if response.status_code != 200:
            raise HarnessError(f"the simulator refused {path}: {response.text}")

    def _ufm(self, path: str) -> Any:
        response = self.http.get(f"/ufmRest{path}", auth=("admin", PASSWORD))
        response.raise_for_status()
        return response.json()

    # -- the ticks --

    def _ticks(self, plot: Story) -> None:
        down_until: datetime | None = None
        for k in range(LENGTH // INTERVAL + 1):
            tick = START + k * INTERVAL
            now = self.state.now()
            if now < tick:
                self._post("/simulator/clock/advance", {"seconds": (tick - now).total_seconds()})
            if tick - START == UFM_RESTART_AT:
                if self.killing and self.life is not None:
                    self._external_kill(tick, "SIGKILL between cycles, then UFM restarts while it is down")
                    down_until = tick + ENGINE_DOWN
                self._ufm_restart(plot)
            if self.pending and self.pending[0].point == "start" and tick >= START + self.pending[0].at:
                self._start_kill(tick)
            self._technician(tick)
            if down_until is not None and tick < down_until:
                continue
            self._cycle(tick)
        self._check(f"at the end ({self.state.now():%H:%M})")
        self._figures()

    def _spawn(self) -> EngineProcess:
        """A new life, started (lives that die in start-up, as planned, are followed by the next)."""
        while True:
            self.lives += 1
            kill = self.pending[0] if self.pending else None
            spec = None if kill is None or kill.point == "start" else kill.spec()
            life = EngineProcess(self.config, self.plan_path, self.workdir / f"engine-{self.lives}.log", spec)
            if life.ready():
                self.life_checked = self.lives == 1
                return life
            self._died(kill, "during start-up")

    def _died(self, kill: Kill | None, where: str) -> None:
        assert kill is not None, "the engine died with no kill planned"
        self.record.deaths.append(Death(self.state.now(), f"{kill.point}:{kill.n} {where}"))
        self.pending.pop(0)

    def _external_kill(self, tick: datetime, how: str) -> None:
        assert self.life is not None
        self.life.sigkill()
        self.life = None
        self.record.deaths.append(Death(tick, how))

    def _start_kill(self, tick: datetime) -> None:
        """SIGKILL between cycles, then a start-up that dies at its n-th UFM call."""
        kill = self.pending[0]
        if self.life is not None:
            self._external_kill(tick, "SIGKILL between cycles")
        self.lives += 1
        life = EngineProcess(self.config, self.plan_path, self.workdir / f"engine-{self.lives}.log",
                             f"start:{kill.n}")
        if life.ready():  # start-up made fewer UFM calls than n: it lives on
            self.life, self.life_checked = life, False
            self.pending.pop(0)
        else:
            self._died(kill, "during start-up")

    def _cycle(self, tick: datetime) -> None:
        """This tick's cycle, however many lives it takes."""
        while True:
            if self.life is None:
                self.life = self._spawn()
            answer = self.life.cycle()
            if answer is not None:
                break
            self.life = None
            self._died(self.pending[0] if self.pending else None, "mid-cycle")
        if answer["failed"]:
            self.record.figures["failed side effects"] = (self.record.figures.get("failed side effects", 0)
                                                          + len(answer["failed"]))
        if not self.life_checked:
            self.life_checked = True
            self._check(f"after the restart at {tick:%H:%M}")

    # -- UFM, the technician --

    def _ufm_events(self) -> list[UfmEvent]:
        return [self._placed(event) for event in parse_list(Event, self._ufm("/app/events"))]

    def _placed(self, event: Event) -> UfmEvent:
        component: ComponentId | None = None
        action = None
        if event.event_id == PORT_ACTION_DONE:
            component = self.components.get(event.object_name or "")
            found = _ACTION.search(event.description or "")
            action = found.group(1) if found else None
        elif (signal_ := self.mapper.one(event)) is not None:
            component = signal_.component
        return UfmEvent(self.epoch, event.id, event.event_id, event.timestamp, event.object_name or "", component,
                        action)

    def _ufm_restart(self, plot: Story) -> None:
        self.archive += self._ufm_events()
        self._post("/simulator/restart", {})
        self.epoch += 1
        for blip in plot.blips:
            self._post("/simulator/faults", blip)

    def _technician(self, now: datetime) -> None:
        """Repairs what has been ticketed for ``REPAIR_AFTER`` (not the storm: that is no component)."""
        storm = dedup_key(FABRIC, f"storm:{FABRIC}")
        open_now = {t.key: t for t in self.tickets.list(TicketStatus.OPEN) if t.dedup_key != storm}
        self.first_seen = {key: self.first_seen.get(key, now) for key in open_now}
        for key, seen in sorted(self.first_seen.items()):
            if now - seen >= REPAIR_AFTER:
                self.tickets.resolve(key, "repaired: cable and optics replaced")

    # -- the checks --

    def _check(self, moment: str) -> None:
        """Every invariant but the breaker's (``breaker_trip``: it needs both runs), on what the store, the backend
        and UFM show now; each violation is kept with when it was first seen."""
        automation = {str(i.payload.get("port")) for i in self.store.intents(limit=1_000_000)
                      if i.kind is ActionKind.DISABLE}
        findings = self.store.findings()
        self.index = EventIndex(self.archive + self._ufm_events())
        found = {
            "a": repeated_evidence(findings, self.index),
            "b": own_action_evidence(findings, self.index),
            "c": hourly_rate(self.index, HOURLY_LIMIT, tick_of),
            "e": disabled_without_one_ticket(self._ufm_disabled(), self.components, automation,
                                             self.tickets.list(TicketStatus.OPEN),
                                             lambda c: dedup_key(FABRIC, str(c)),
                                             self._awaiting_resume() | self._enables_in_flight()),
            "f": ticket_disagreements(self.store.tickets(), self.tickets.list()),
        }
        for invariant, lines in found.items():
            seen = self.record.violations.setdefault(invariant, {})
            for line in lines:
                seen.setdefault(line, moment)

    def _enables_in_flight(self) -> frozenset[ComponentId]:
        """Components whose re-enable is sent and not settled (after a restart, one whose answer a kill kept from
        being noted waits until UFM shows no job that could still carry it out): repaired, their ticket resolved."""
        return frozenset(i.component for i in self.store.unfinished_intents()
                         if i.kind is ActionKind.ENABLE and i.component is not None)

    def _awaiting_resume(self) -> frozenset[ComponentId]:
        """Components repaired while automation is halted: their enable waits for the resume."""
        if not self.store.breaker_state().halted:
            return frozenset()
        latest = {row.component: row.state for row in self.store.tickets() if row.component is not None}
        return frozenset(c for c, state in latest.items() if state is TicketState.RESOLVED)

    def _ufm_disabled(self) -> list[str]:
        return sorted(p["name"] for p in self._ufm("/resources/ports") if p["physical_state"] == "Disabled")

    def _figures(self) -> None:
        decisions = self.store.decisions()
        self.record.trip = next((d.action.at for d in decisions if d.action.kind is ActionKind.HALT), None)
        decided = Counter(d.action.kind.value for d in decisions)
        done = Counter(e.action for e in self.index.port_actions())
        self.record.figures |= {
            "findings": len(self.store.findings()), "disables decided": decided["disable"],
            "defers": decided["defer"], "quarantines": decided["quarantine"],
            "disables UFM ran": done["disable"], "ports UFM took out": len(taken_out(self.index, tick_of)),
            "enables UFM ran": done["enable"],
            "tickets": len(self.tickets.list()), "engine lives": self.lives,
        }


def _engine_config(url: str, database: Path) -> str:
    return f"""\
[fabric]
name = "{FABRIC}"

[policy]
dry_run = false

[escalation]
# The story is of take-outs at a rate above the hourly limit (the guard keeps links up): a finding takes its link
# out at once. The reset ladder's kills are the daemon run's (daemon_program).
max_resets = 0

[guard]
hourly_limit = {HOURLY_LIMIT}

[ufm]
url = "{url}"

[store]
url = "sqlite:///{database}"

[daemon]
interval = "{INTERVAL.total_seconds():.0f}s"
"""


async def _view(url: str, plan: Fabric) -> FabricView:
    async with UfmClient(url, BasicAuth("admin", PASSWORD)) as client, spooled_topology(client) as lists:
        actual = read_topology(lists, "UFM").fabric
    return build_view(plan, actual)


def _port_components(view: FabricView) -> dict[str, ComponentId]:
    """Every UFM port name of a planned cable -> that cable."""
    found = {}
    for name, end in view.resolver.ports.items():
        cable = view.resolver.cable_at(end)
        if cable is not None:
            found[name] = link_id(cable)
    return found


def chaos(workdir: Path, seed: int) -> tuple[RunRecord, RunRecord]:
    """The uninterrupted run and the killed one, on the same seed."""
    plan = fat_tree(SPEC)
    control = Run(plan, workdir / "uninterrupted", seed, "uninterrupted", ()).execute()
    killed = Run(plan, workdir / "killed", seed, "killed", kill_plan(seed)).execute()
    return control, killed


if __name__ == "__main__":  # a run by hand: python tests/chaos/chaos_run.py WORKDIR [SEED]
    import time

    from chaos_invariants import breaker_trip

    began = time.perf_counter()
    control, killed = chaos(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 9)
    for record in (control, killed):
        print(record.summary())
        for invariant in "abcef":
            for line in record.broken(invariant):
                print(f"  ({invariant}) {line}")
    for line in breaker_trip(control.trip, killed.trip, INTERVAL):
        print(f"  (d) {line}")
    print(f"{time.perf_counter() - began:.1f} s")
