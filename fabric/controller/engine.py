"""One remediation cycle, the only place that performs side effects.

``fetch events and actual state from UFM -> signals -> detectors -> decide -> record -> execute -> reconcile``.

Level-triggered like a Kubernetes controller: the store holds the desired state of every component, each
cycle compares it with UFM and the ticket system and converges. Every side effect is logged as an intent
before it is attempted and marked done or failed after (``effects``); ``start()`` settles what a crash left
pending by reading UFM (``recovery``). In dry run nothing is written to UFM or the ticket system: decisions are
recorded, and the would-be state lives in memory only (switching to live starts from what UFM really shows).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from fabric.controller import reconcile, recovery
from fabric.controller.effects import TICKET_WRITES, UFM_WRITES, CycleReport, Effects, UfmApi
from fabric.controller.ticketing import Ticketing
from fabric.errors import ErrorKind
from fabric.remediation.correlate import CABLES, SWITCH_FAULT
from fabric.remediation.detectors import Detectors
from fabric.remediation.domain import Action, ActionKind, ComponentId, Finding, Lifecycle
from fabric.remediation.muting import SilenceMuter, SilenceWindow
from fabric.remediation.pipeline import Pipeline
from fabric.remediation.policy import Breaker, PolicyConfig, PolicyState
from fabric.remediation.rules import RuleSettings
from fabric.remediation.view import FabricView, build_view, fabric_context
from fabric.store import Store
from fabric.store.records import OperatorRequest, RequestKind
from fabric.ufm.client import PortActionMethod
from fabric.ufm.cursor import CursorState, EventCursor
from fabric.ufm.snapshot import fetch_snapshot
from tickets.base import TicketBackend
from topology.guard import CableKey, CapacityGuard, GuardSettings
from topology.model import Fabric

__all__ = ["CycleReport", "Engine", "EngineSettings", "UfmApi"]

log = logging.getLogger(__name__)

_TOPOLOGY_VERSIONS = frozenset({"ports_version", "links_version", "switches_version", "servers_version"})


@dataclass(frozen=True, slots=True)
class EngineSettings:
    fabric: str = "default"
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    rules: RuleSettings = field(default_factory=RuleSettings)
    guard: GuardSettings = field(default_factory=GuardSettings)
    method: PortActionMethod = PortActionMethod.DISABLE
    epoch: int = 1
    """The leader's fencing token, written with every intent."""


class Engine:
    def __init__(self, plan: Fabric, ufm: UfmApi, store: Store, tickets: TicketBackend,
                 settings: EngineSettings, clock: Callable[[], datetime]) -> None:
        if settings.method is not PortActionMethod.DISABLE:
            # Recovery, the guard's rebuild and reconciliation read what UFM shows disabled; an isolated port
            # would be invisible to them and could be counted wrongly or never restored. The configuration
            # refuses it at load; this is for callers that build settings themselves.
            raise ValueError(f"ufm.method = {settings.method.value!r} is not supported by the engine yet: "
                             "use 'disable'")
        self.plan, self.ufm, self.store, self.settings, self.clock = plan, ufm, store, settings, clock
        self.ticketing = Ticketing(store, tickets, settings.fabric)
        self.effects = Effects(store, ufm, self.ticketing, epoch=settings.epoch, method=settings.method)
        self.context = fabric_context(plan)
        self.silences = SilenceMuter()
        self.cursor = EventCursor()
        self.view: FabricView | None = None
        self._pipeline: Pipeline | None = None
        self.disabled_ports: set[str] = set()
        """UFM ports whose physical state is Disabled, as of the last read."""
        self._versions: dict[str, int] = {}

    @property
    def pipeline(self) -> Pipeline:
        if self._pipeline is None:
            raise RuntimeError("the engine has not started: await start() first")
        return self._pipeline

    @property
    def guard(self) -> CapacityGuard:
        return self.pipeline.guard

    @property
    def detectors(self) -> Detectors:
        return self.pipeline.detectors

    @property
    def state(self) -> PolicyState:
        return self.pipeline.state

    @property
    def dry_run(self) -> bool:
        return self.settings.policy.dry_run

    def _load_silences(self, now: datetime) -> None:
        """Silences read once a cycle (the detectors ask for every signal; a storm must not mean a query each)."""
        self.silences.load(SilenceWindow(s.matcher, s.starts_at, s.ends_at)
                           for s in self.store.silences(include_ended_since=now - self.settings.rules.history))

    # --- start-up ------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Read UFM, settle unfinished intents, rebuild the desired state and the guard, restore the cursor."""
        now = self.clock()
        self._load_silences(now)
        view, live = await self._read_fabric(await self._topology_versions())
        await recovery.settle_intents(self.store, self.ufm)
        s = self.settings
        self._pipeline = Pipeline(view, s.policy, s.rules, s.guard, state=self._load_state(), muter=self.silences)
        self._sync_guard(view, live)
        self.pipeline.amend(recovery.rebuild_guard(self.state, view, self.context, self.guard, self.disabled_ports,
                                                   self.store, self.ticketing, now))
        saved = self.store.load_cursor()
        events = await self.ufm.events()
        # Past events fill the detectors' windows but are not acted on again: a first start acts on what
        # happens from now on, a restart on what came after the saved cursor.
        if saved is None:
            self.cursor.prime(events)
            self.pipeline.warm(events, self.clock())
        else:
            self.cursor = EventCursor(CursorState(saved.high_water_id, saved.last_event_time, saved.restart_count))
            mark = saved.high_water_id or 0
            self.pipeline.warm([e for e in events if e.id <= mark], self.clock())

    def _load_state(self) -> PolicyState:
        if self.dry_run:
            return PolicyState()
        stored = self.store.breaker_state()
        # The findings held before a restart are not stored: a halted breaker's quiet period starts again now.
        last_held = self.clock() if stored.halted else None
        return PolicyState(self.store.components(), Breaker(stored.halted, stored.since, stored.reason, last_held))

    async def _topology_versions(self) -> dict[str, int]:
        """UFM's change counters of what the view is built from."""
        versions = await self.ufm.versioning()
        return {k: v for k, v in versions.versions().items() if k in _TOPOLOGY_VERSIONS}

    async def _read_fabric(self, versions: dict[str, int]) -> tuple[FabricView, set[CableKey]]:
        """Systems, links and ports as of ``versions`` (UFM's counters, read just before)."""
        self._versions = versions
        snapshot = await fetch_snapshot(self.ufm)
        actual = snapshot.fabric("UFM")
        self.disabled_ports = snapshot.disabled_ports()
        view = self.view = build_view(self.plan, actual, self.context)
        return view, view.live_cables(actual)

    def _sync_guard(self, view: FabricView, live: set[CableKey]) -> None:
        """The guard counts planned cables UFM does not show up as down, and those it shows again as up."""
        for cable in view.plan_keys - live:
            self.guard.mark_down(cable)
        for cable in live & self.guard.out:
            if cable not in self.guard.disabled:
                self.guard.mark_up(cable)

    async def _refresh_fabric(self) -> None:
        """Re-read systems, links and ports, unless UFM's change counters say nothing moved since last time."""
        watched = await self._topology_versions()
        if self.view is not None and watched and watched == self._versions:
            return
        view, live = await self._read_fabric(watched)
        self.pipeline.rebase(view)
        self._sync_guard(view, live)

    # --- the cycle -----------------------------------------------------------------------------------

    async def cycle(self) -> CycleReport:
        now = self.clock()
        report = CycleReport(now)
        self._load_silences(now)
        await self._refresh_fabric()
        new_events = self.cursor.advance(await self.ufm.events())
        report.events = len(new_events)
        previous = self.state
        requests = self.store.pending_requests()
        resume = previous.breaker.halted and any(r.kind is RequestKind.RESUME for r in requests)
        cleared = self._cleared(requests)
        step = self.pipeline.step(new_events, now, repaired=await self._repaired(), resume=resume, cleared=cleared)
        decision = step.decision
        report.findings, report.actions = step.findings, list(decision.actions)
        report.switch_faults, report.folded = step.switch_faults, step.folded
        for finding in step.findings:
            if finding.rule == SWITCH_FAULT:
                log.warning("switch fault on %s: %s", finding.component, finding.reason.partition(CABLES)[0])
        self._record(step.findings, decision.actions, previous, decision.state, requests, resumed=resume,
                     cleared=cleared)
        if not self.dry_run:
            await self._execute(decision.actions, report)
            if not self.state.breaker.halted:
                assert self.view is not None
                await reconcile.reconcile_ports(self.state, self.view, self.guard, self.disabled_ports, self.store,
                                                self.effects, now, report)
            self.pipeline.amend(await reconcile.reconcile_tickets(self.state, self.store, self.ticketing, report))
        cursor = self.cursor.state
        self.store.save_cursor(high_water_id=cursor.high_water_id or 0, last_event_time=cursor.last_event_time,
                               restart_count=cursor.restart_count)
        return report

    async def _repaired(self) -> list[ComponentId]:
        """Components whose ticket was resolved (and every open ticket brought in line with the backend)."""
        if self.dry_run:
            return []
        waiting = {c: r.since for c, r in self.state.components.items() if r.lifecycle in reconcile.WAITING}
        return await asyncio.to_thread(self.ticketing.repaired, waiting)

    def _cleared(self, requests: Sequence[OperatorRequest]) -> list[ComponentId]:
        """Quarantined components an operator asked to release (``fabricctl components clear``)."""
        if self.dry_run:
            return []
        components = self.state.components
        return sorted({r.component for r in requests if r.kind is RequestKind.CLEAR and r.component is not None
                       and r.component in components
                       and components[r.component].lifecycle is Lifecycle.QUARANTINED})

    def _record(self, findings: list[Finding], actions: Sequence[Action], previous: PolicyState,
                state: PolicyState, requests: Sequence[OperatorRequest], *, resumed: bool,
                cleared: Sequence[ComponentId]) -> None:
        """Findings, decisions, the new desired state and the operator requests carried out, in one transaction,
        before any side effect."""
        with self.store.transaction() as tx:
            tx.add_findings(findings)
            tx.record_decisions(actions)
            for request in requests:
                outcome = _outcome(request, state, resumed=resumed, cleared=cleared, dry_run=self.dry_run)
                if outcome is not None:
                    tx.handle_request(request.id, outcome)
            if self.dry_run:
                return
            changed = {a.component for a in actions if a.component is not None}
            for component in changed:
                record = state.components.get(component)
                if record is not None:
                    tx.put_component(component, record, ticket_dedup_key=self.ticketing.key(component))
            if state.breaker.halted and any(a.kind is ActionKind.HALT for a in actions):
                tx.halt(state.breaker.reason, storm_dedup_key=self.ticketing.key(None))
            if not state.breaker.halted and previous.breaker.halted:
                tx.resume("automation resumed")

    # --- side effects --------------------------------------------------------------------------------

    async def _execute(self, actions: Sequence[Action], report: CycleReport) -> None:
        assert self.view is not None
        for action in actions:
            if action.kind in UFM_WRITES:
                assert action.component is not None
                port = self.view.port_to_act_on(action.component)
                if port is None:
                    report.fail(ErrorKind.UFM, action.kind.value, action.component, "UFM shows no port for it")
                elif await self.effects.port_action(action, port, report):
                    if action.kind is ActionKind.DISABLE:
                        self.disabled_ports.add(port)
                    else:
                        self.disabled_ports.discard(port)
            elif action.kind in TICKET_WRITES:
                await self.effects.ticket_action(action, report)


def _outcome(request: OperatorRequest, state: PolicyState, *, resumed: bool, cleared: Sequence[ComponentId],
             dry_run: bool) -> str | None:
    """What came of an operator request this cycle, for the audit trail; ``None`` while it waits (a clear the
    policy could not carry out yet, automation being halted: it is asked again every cycle until it can)."""
    if request.kind is RequestKind.RESUME:
        return "automation resumed" if resumed else "automation was not halted: nothing to resume"
    if dry_run:
        return "dry run: quarantines are not kept, nothing to release"
    if request.component not in cleared:
        return "not quarantined: nothing to release"
    record = state.components.get(request.component) if request.component is not None else None
    if record is not None and record.lifecycle is Lifecycle.QUARANTINED:
        return None
    return "released: back in service on probation, within the capacity guard"
