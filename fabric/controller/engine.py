"""One remediation cycle, the only place that performs side effects.

``fetch events and actual state from UFM -> signals -> detectors -> decide -> record -> execute -> reconcile``.

Level-triggered like a Kubernetes controller: the store holds the desired state of every component, each
cycle compares it with UFM and the ticket system and converges. Every side effect is logged as an intent
before it is attempted and marked done or failed after; ``start()`` settles what a crash left pending by
reading UFM. In dry run nothing is written to UFM or the ticket system: decisions are recorded, and the
would-be state lives in memory only (switching to live starts from what UFM really shows).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Protocol

from fabric.controller.ticketing import Ticketing
from fabric.remediation.detectors import Detectors, RuleSettings
from fabric.remediation.domain import OUT_OF_SERVICE, Action, ActionKind, ComponentId, Finding, Lifecycle
from fabric.remediation.pipeline import Pipeline
from fabric.remediation.policy import Breaker, ComponentRecord, PolicyConfig, PolicyState
from fabric.remediation.signals import SignalMapper
from fabric.remediation.view import FabricView, build_view, fabric_context
from fabric.store import Store, silence_matches
from fabric.store.records import IntentState, Silence
from fabric.ufm.client import PortActionMethod
from fabric.ufm.cursor import CursorState, EventCursor
from fabric.ufm.errors import UfmError
from fabric.ufm.models import Event, Link, Port, System, Versioning
from fabric.ufm.snapshot import fetch_snapshot
from tickets.base import TicketBackend, TicketError
from topology.guard import CableKey, CapacityGuard, GuardSettings
from topology.model import Fabric

log = logging.getLogger(__name__)

UFM_WRITES = frozenset({ActionKind.DISABLE, ActionKind.ENABLE})
CLEAR_REQUESTED = "operator_clear_requested"
"""The rule a quarantined component's record carries once an operator asked to release it."""
_TOPOLOGY_VERSIONS = frozenset({"ports_version", "links_version", "switches_version", "servers_version"})
TICKET_WRITES = frozenset({ActionKind.TICKET, ActionKind.REOPEN, ActionKind.COMMENT})
WAITING = (Lifecycle.DISABLED, Lifecycle.AWAITING_REPAIR, Lifecycle.DEFERRED, Lifecycle.TICKETED)


class UfmApi(Protocol):
    """What the engine needs of UFM (``fabric.ufm.client.UfmClient`` provides it)."""

    async def systems(self, type: str | None = None) -> list[System]: ...
    async def links(self) -> list[Link]: ...
    async def ports(self, system: str | None = None) -> list[Port]: ...
    async def port(self, name: str) -> Port: ...
    async def events(self, **filters: str) -> list[Event]: ...
    async def versioning(self) -> Versioning: ...
    async def take_out(self, port: str | Port, method: PortActionMethod) -> Any: ...
    async def put_back(self, port: str | Port, method: PortActionMethod) -> Any: ...


@dataclass(frozen=True, slots=True)
class EngineSettings:
    fabric: str = "default"
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    rules: RuleSettings = field(default_factory=RuleSettings)
    guard: GuardSettings = field(default_factory=GuardSettings)
    method: PortActionMethod = PortActionMethod.DISABLE
    epoch: int = 1
    """The leader's fencing token, written with every intent."""


@dataclass(slots=True)
class CycleReport:
    at: datetime
    events: int = 0
    findings: list[Finding] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)
    executed: int = 0
    failed: list[str] = field(default_factory=list)


class Engine:
    def __init__(self, plan: Fabric, ufm: UfmApi, store: Store, tickets: TicketBackend,
                 settings: EngineSettings, clock: Callable[[], datetime]) -> None:
        if settings.method is not PortActionMethod.DISABLE:
            # Recovery, the guard's rebuild and reconciliation read what UFM shows disabled; an isolated port
            # would be invisible to them and could be counted wrongly or never restored.
            raise ValueError(f"ufm.method = {settings.method.value!r} is not supported by the engine yet: "
                             "use 'disable'")
        self.plan, self.ufm, self.store, self.settings, self.clock = plan, ufm, store, settings, clock
        self.ticketing = Ticketing(store, tickets, settings.fabric)
        self.context = fabric_context(plan)
        self.pipeline = Pipeline(plan, self.context, settings.policy, settings.rules, settings.guard,
                                 silenced=self._silenced)
        self._silences: list[Silence] = []
        self.cursor = EventCursor()
        self.view: FabricView | None = None
        self.disabled_ports: set[str] = set()
        """UFM ports whose physical state is Disabled, as of the last read."""
        self._versions: dict[str, int] = {}

    def _silenced(self, component: ComponentId, at: datetime) -> bool:
        """Silences read once a cycle (the detectors ask for every signal; a storm must not mean a query each)."""
        return any(s.active(at) and silence_matches(s.matcher, component) for s in self._silences)

    def _load_silences(self, now: datetime) -> None:
        self._silences = self.store.silences(include_ended_since=now - self.settings.rules.history)

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

    # --- start-up ------------------------------------------------------------------------------------

    async def start(self) -> None:
        """Read UFM, settle unfinished intents, rebuild the desired state and the guard, restore the cursor."""
        self._load_silences(self.clock())
        await self._refresh_fabric()
        await self._recover_intents()
        self.pipeline.state = self._load_state()
        self._rebuild_guard(self.clock())
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

    def _rebuild_guard(self, now: datetime) -> None:
        """Count what automation holds out of service. A cable UFM already shows disabled is simply counted,
        all of them first. One UFM shows up (the action was cut short by a crash, or someone enabled it by hand)
        will be disabled again by reconciliation, so it must then pass the guard, against today's capacity and
        what is already counted: if it does not, it is kept up, deferred like any finding the guard refuses, or
        still quarantined (only an operator releases a quarantine)."""
        assert self.view is not None
        components = dict(self.state.components)
        recheck: list[tuple[ComponentId, ComponentRecord, CableKey]] = []
        for component, record in sorted(self.state.components.items()):
            cable = self.context.cables.get(component)
            if cable is None or record.lifecycle not in OUT_OF_SERVICE:
                continue
            port = self.view.port_to_act_on(component)
            if port is not None and port in self.disabled_ports:
                self.guard.take_out(cable, record.since)
            else:
                recheck.append((component, record, cable))
        for component, record, cable in recheck:
            verdict = self.guard.verdict(cable, now)
            if verdict.allowed:
                self.guard.take_out(cable, now)
                continue
            reason = f"{record.reason}; after a restart UFM shows it up and the guard keeps it so: {verdict.reason}"
            quarantined = record.lifecycle is Lifecycle.QUARANTINED
            lifecycle, kind = (Lifecycle.QUARANTINED, ActionKind.RECORD) if quarantined else (
                Lifecycle.DEFERRED, ActionKind.DEFER)
            since = record.since if quarantined else now
            components[component] = replace(record, lifecycle=lifecycle, since=since, reason=reason)
            self.store.record_decision(Action(kind, now, record.rule, reason, component, dict(verdict.figures),
                                              dry_run=False))
            self.store.put_component(component, lifecycle, since=since, strikes=record.strikes, reason=reason,
                                     rule=record.rule, never_auto_restore=record.never_auto_restore,
                                     ticket_dedup_key=self.ticketing.key(component))
        self.pipeline.state = replace(self.state, components=components, waiting=None)

    def _load_state(self) -> PolicyState:
        if self.dry_run:
            return PolicyState()
        components = {
            r.id: ComponentRecord(r.lifecycle, r.since, r.rule, r.reason, r.strikes, r.never_auto_restore,
                                  r.probation_until)
            for r in self.store.components()
        }
        stored = self.store.breaker_state()
        # The findings held before a restart are not stored: a halted breaker's quiet period starts again now.
        last_held = self.clock() if stored.halted else None
        return PolicyState(components, Breaker(stored.halted, stored.since, stored.reason, last_held))

    async def _recover_intents(self) -> None:
        """Settle side effects a crash left pending: UFM says whether a port action happened."""
        assert self.view is not None
        for intent in self.store.unfinished_intents():
            port_name = (intent.payload or {}).get("port")
            if intent.kind in UFM_WRITES and port_name:
                try:
                    port = await self.ufm.port(port_name)
                except UfmError as exc:
                    log.warning("cannot settle intent %s yet: %s", intent.id, exc)
                    continue
                happened = port.is_disabled == (intent.kind is ActionKind.DISABLE)
                self.store.finish_intent(intent.id, IntentState.DONE if happened else IntentState.ROLLED_BACK,
                                         f"recovered after a restart: UFM shows {port.physical_state}")
            else:
                # Ticket writes are settled by the ticket reconciliation below (claims are adopted, not redone).
                self.store.finish_intent(intent.id, IntentState.ROLLED_BACK, "recovered after a restart")

    async def _refresh_fabric(self) -> None:
        """Re-read systems, links and ports, unless UFM's change counters say nothing moved since last time."""
        versions = await self.ufm.versioning()
        watched = {k: v for k, v in versions.versions().items() if k in _TOPOLOGY_VERSIONS}
        if self.view is not None and watched and watched == self._versions:
            return
        snapshot = await fetch_snapshot(self.ufm)
        self._versions = watched
        actual = snapshot.fabric("UFM")
        self.disabled_ports = snapshot.disabled_ports()
        self.view = build_view(self.plan, actual, self.context)
        self.pipeline.mapper = SignalMapper(self.view.resolver)
        live = self.view.live_cables(actual)
        for cable in self.view.plan_keys - live:
            self.guard.mark_down(cable)
        for cable in live & self.guard.out:
            if cable not in self.guard.disabled:
                self.guard.mark_up(cable)

    # --- the cycle -----------------------------------------------------------------------------------

    async def cycle(self) -> CycleReport:
        now = self.clock()
        report = CycleReport(now)
        self._load_silences(now)
        await self._refresh_fabric()
        new_events = self.cursor.advance(await self.ufm.events())
        report.events = len(new_events)
        previous = self.state
        step = self.pipeline.step(new_events, now, repaired=self._repaired(), resume=self._resumed(),
                                  cleared=self._cleared())
        decision = step.decision
        report.findings, report.actions = step.findings, list(decision.actions)
        self._record(step.findings, decision.actions, previous, decision.state)
        if not self.dry_run:
            await self._execute(decision.actions, report)
            if not self.state.breaker.halted:
                await self._reconcile_ports(now, report)
            self._reconcile_tickets(report)
        cursor = self.cursor.state
        self.store.save_cursor(high_water_id=cursor.high_water_id or 0, last_event_time=cursor.last_event_time,
                               restart_count=cursor.restart_count)
        return report

    def _repaired(self) -> list[ComponentId]:
        waiting = {c: r.since for c, r in self.state.components.items() if r.lifecycle in WAITING}
        return self.ticketing.repaired(waiting) if not self.dry_run and waiting else []

    def _cleared(self) -> list[ComponentId]:
        """``fabricctl components clear`` marks a quarantined component in the store; the policy releases it."""
        if self.dry_run:
            return []
        return [r.id for r in self.store.components(Lifecycle.QUARANTINED) if r.rule == CLEAR_REQUESTED]

    def _resumed(self) -> bool:
        """``fabricctl resume`` clears the breaker in the store; the policy sees it here."""
        return self.state.breaker.halted and not self.store.breaker_state().halted

    def _record(self, findings: list[Finding], actions: Sequence[Action], previous: PolicyState,
                state: PolicyState) -> None:
        """Findings, decisions and the new desired state, in one transaction, before any side effect."""
        with self.store.transaction() as tx:
            tx.add_findings(findings)
            tx.record_decisions(actions)
            if self.dry_run:
                return
            changed = {a.component for a in actions if a.component is not None}
            for component in changed:
                record = state.components.get(component)
                if record is None:
                    continue
                tx.put_component(component, record.lifecycle, since=record.since, strikes=record.strikes,
                                 reason=record.reason, rule=record.rule,
                                 never_auto_restore=record.never_auto_restore,
                                 probation_until=record.probation_until,
                                 ticket_dedup_key=self.ticketing.key(component))
            if state.breaker.halted and any(a.kind is ActionKind.HALT for a in actions):
                tx.halt(state.breaker.reason, storm_dedup_key=self.ticketing.key(None))
            if not state.breaker.halted and previous.breaker.halted:
                tx.resume("automation resumed")

    # --- side effects --------------------------------------------------------------------------------

    async def _execute(self, actions: Sequence[Action], report: CycleReport) -> None:
        for action in actions:
            if action.kind in UFM_WRITES:
                await self._port_action(action, report)
            elif action.kind in TICKET_WRITES:
                self._ticket_action(action, report)

    async def _port_action(self, action: Action, report: CycleReport) -> None:
        assert self.view is not None and action.component is not None
        port = self.view.port_to_act_on(action.component)
        if port is None:
            report.failed.append(f"{action.kind.value} {action.component}: UFM shows no port for it")
            return
        intent = self.store.begin_intent(self.settings.epoch, action.kind, action.component,
                                         {"port": port, "method": self.settings.method.value})
        try:
            if action.kind is ActionKind.DISABLE:
                await self.ufm.take_out(port, self.settings.method)
            else:
                await self.ufm.put_back(port, self.settings.method)
        except UfmError as exc:
            self.store.finish_intent(intent, IntentState.FAILED, str(exc))
            report.failed.append(f"{action.kind.value} {action.component}: {exc}")
            return
        self.store.finish_intent(intent, IntentState.DONE, f"{action.kind.value} {port}")
        if action.kind is ActionKind.DISABLE:
            self.disabled_ports.add(port)
        else:
            self.disabled_ports.discard(port)
        report.executed += 1

    def _ticket_action(self, action: Action, report: CycleReport) -> None:
        intent = self.store.begin_intent(self.settings.epoch, action.kind, action.component, {"rule": action.rule})
        summary = _summary(action)
        try:
            if action.kind is ActionKind.TICKET:
                self.ticketing.ensure_open(action.component, summary, action.reason)
            elif action.kind is ActionKind.REOPEN:
                assert action.component is not None
                self.ticketing.reopen(action.component, action.reason, summary)
            else:
                self.ticketing.comment(action.component, action.reason)
        except TicketError as exc:
            self.store.finish_intent(intent, IntentState.FAILED, str(exc))
            report.failed.append(f"{action.kind.value} {action.component}: {exc}")
            return
        self.store.finish_intent(intent, IntentState.DONE, summary)
        report.executed += 1

    async def _reconcile_ports(self, now: datetime, report: CycleReport) -> None:
        """Converge UFM to the desired state: a cable automation holds out must be disabled in UFM (a crash
        may have cut the action short, or someone enabled it by hand), and one it released must not be."""
        if self.view is None:
            return
        for component, record in list(self.state.components.items()):
            cable = self.context.cables.get(component)
            port = self.view.port_to_act_on(component)
            if cable is None or port is None:
                continue
            want_out = cable in self.guard.disabled
            is_out = port in self.disabled_ports
            # Put back only what automation itself released (on probation): a healthy cable disabled in UFM
            # may be an operator's maintenance, which automation must not undo.
            if want_out == is_out or (not want_out and record.lifecycle is not Lifecycle.PROBATION):
                continue
            kind = ActionKind.DISABLE if want_out else ActionKind.ENABLE
            action = Action(kind, now, "reconcile", f"UFM shows {port} {'up' if want_out else 'disabled'}, "
                            f"the desired state is {record.lifecycle.value}: converging", component,
                            dry_run=False)
            self.store.record_decision(action)
            report.actions.append(action)
            await self._port_action(action, report)

    def _reconcile_tickets(self, report: CycleReport) -> None:
        """Every component automation holds needs an open ticket; a disabled one with its ticket awaits repair."""
        components = dict(self.state.components)
        for component, record in components.items():
            if record.lifecycle not in WAITING and record.lifecycle is not Lifecycle.QUARANTINED:
                continue
            key = self.ticketing.key(component)
            active = self.store.active_ticket(key)
            if active is None or active.external_key is None:
                if record.lifecycle is not Lifecycle.QUARANTINED and self._resolved_since(key, record.since):
                    continue  # repaired: the policy moves it to probation next cycle
                try:
                    self.ticketing.ensure_open(component, f"{record.rule}: {component}", record.reason)
                except TicketError as exc:
                    report.failed.append(f"ticket {component}: {exc}")
                    continue
            if record.lifecycle is Lifecycle.DISABLED:
                promoted = ComponentRecord(Lifecycle.AWAITING_REPAIR, record.since, record.rule, record.reason,
                                           record.strikes, record.never_auto_restore, record.probation_until)
                components[component] = promoted
                self.store.put_component(component, Lifecycle.AWAITING_REPAIR, since=record.since,
                                         strikes=record.strikes, reason=record.reason, rule=record.rule,
                                         never_auto_restore=record.never_auto_restore, ticket_dedup_key=key)
        self.pipeline.state = replace(self.state, components=components)

    def _resolved_since(self, key: str, since: datetime) -> bool:
        return any(t.resolved_at is not None and t.resolved_at >= since for t in self.store.tickets(dedup_key=key))


def _summary(action: Action) -> str:
    target = str(action.component) if action.component else "the fabric"
    return f"[fabric-remediation] {action.rule} on {target}"
