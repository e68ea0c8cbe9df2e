"""One remediation cycle, the only place that performs side effects.

``fetch events and actual state from UFM -> signals -> detectors -> decide -> record -> execute -> reconcile``.

Level-triggered like a Kubernetes controller: the store holds the desired state of every component, each
cycle compares it with UFM and the ticket system and converges. Every side effect is logged as an intent
before it is attempted and marked done or failed after (``effects``); ``start()`` settles what a crash left
pending by reading UFM (``recovery``). In dry run nothing is written to UFM or the ticket system: decisions are
recorded, and the would-be state is kept in a scope of its own across restarts (``dryrun``; switching to live
starts from what UFM really shows).

What UFM says is checked before it is believed. Every event counts once: the cursor picks the new ones (a UFM
restart only on evidence), start-up hands the events after the saved cursor to the first cycle rather than to
the warm history, and the pipeline drops any event it has counted already. A reading of the topology that
cannot be true (``fabric.ufm.plausibility``) is refused: the last one accepted stays, and nothing is decided
until UFM shows one that can be true (``view_refused_since``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from fabric.controller import dryrun, reconcile, recovery
from fabric.controller.burnin import BurninWindows
from fabric.controller.deliveries import process_deliveries
from fabric.controller.effects import TICKET_WRITES, UFM_WRITES, CycleReport, Effects, UfmApi
from fabric.controller.linkcheck import LinkChecks
from fabric.controller.outbox import OutboxReport, OutboxSettings, TicketOutbox
from fabric.controller.ports_out import PortsOut, listings
from fabric.controller.reading import kept_of
from fabric.controller.resets import reset_outcomes, send_unsent
from fabric.controller.telemetry import TelemetryFeed
from fabric.controller.ticket_body import TicketContext, ticket_body
from fabric.controller.ticketing import Ticketing
from fabric.controller.writes import PortWrites, WriteSettings
from fabric.errors import ErrorKind
from fabric.remediation.burnin import BurninSettings
from fabric.remediation.correlate import CABLES
from fabric.remediation.detectors import Detectors
from fabric.remediation.domain import Action, ActionKind, ComponentId, Finding, Lifecycle
from fabric.remediation.muting import SilenceMuter, SilenceWindow
from fabric.remediation.observe import Observed
from fabric.remediation.pipeline import Pipeline
from fabric.remediation.policy import LINK_CHECK, Breaker, Decision, FailedRepair, PolicyConfig, PolicyState
from fabric.remediation.rules import SWITCH_FAULT, RuleSettings
from fabric.remediation.view import FabricView, fabric_context
from fabric.store import Store, Transaction
from fabric.store.records import OperatorRequest, RequestKind
from fabric.telemetry.records import SampleVerdict
from fabric.ufm.client import PortActionMethod
from fabric.ufm.cursor import CursorState, EventCursor, Lookback
from fabric.ufm.models import Event, UnhealthyPort
from fabric.ufm.plausibility import (
    ImplausibleTopologyError,
    PlausibilitySettings,
    TopologyFigures,
    refusal,
    start_refusal,
)
from fabric.ufm.snapshot import read_topology, spooled_topology, topology_digest
from tickets.base import TicketBackend
from topology.guard import CableKey, GuardReading, GuardSettings
from topology.model import Cable, Fabric

__all__ = ["CycleReport", "Engine", "EngineSettings", "UfmApi"]

log = logging.getLogger(__name__)

RECURRENCE = "recurrence"
"""The rule of a comment saying a fault was found again on a component whose ticket is open."""
_TOPOLOGY_VERSIONS = frozenset({"ports_version", "links_version", "switches_version", "servers_version"})


@dataclass(frozen=True, slots=True)
class EngineSettings:
    fabric: str = "default"
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    rules: RuleSettings = field(default_factory=RuleSettings)
    guard: GuardSettings = field(default_factory=GuardSettings)
    method: PortActionMethod = PortActionMethod.DISABLE
    """How ports are taken out (``[ufm] method``); one out by the other method is still known as out."""
    writes: WriteSettings = field(default_factory=WriteSettings)
    epoch: int = 1
    """The leader's fencing token, written with every intent."""
    plausibility: PlausibilitySettings = field(default_factory=PlausibilitySettings)
    link_up_wait: timedelta = timedelta(minutes=2)
    """How long a re-enabled link is given to come up at its planned width and speed before it is backed out."""
    outbox: OutboxSettings = field(default_factory=OutboxSettings)
    """How ticket writes the ticket system did not take are tried again."""
    recurrence_comments: timedelta = timedelta(hours=1)
    """A fault found again on a component whose ticket is open is commented on it, at most once in this long
    (counted from the component's last ticket write: the ticket itself, a reopen, a comment)."""
    burnin: BurninSettings = field(default_factory=BurninSettings)
    """A burn-in window's stricter thresholds (``[burnin]``, ``fabric.controller.burnin``)."""


@dataclass(frozen=True, slots=True)
class _Reading:
    """One read of UFM's systems, links and ports, not yet accepted."""

    versions: dict[str, int]
    view: FabricView
    live: set[CableKey]
    below: dict[CableKey, Cable]
    """The planned cables UFM shows up below their planned width or speed, as UFM shows them (its active width and
    speed): the only ones a link check reads UFM's figures of."""
    out: PortsOut
    figures: TopologyFigures
    digest: bytes
    """``topology_digest`` of the three lists it was made of."""
    shown_disabled: frozenset[str]
    """The ports the lists show disabled (``out`` starts from them)."""


class Engine:
    def __init__(self, plan: Fabric, ufm: UfmApi, store: Store, tickets: TicketBackend,
                 settings: EngineSettings, clock: Callable[[], datetime], *,
                 telemetry: TelemetryFeed | None = None) -> None:
        """``telemetry``: where UFM Telemetry's samples are read, once an interval, in the cycle
        (``_read_telemetry``)."""
        self.plan, self.ufm, self.store, self.settings, self.clock = plan, ufm, store, settings, clock
        self.ticketing = Ticketing(store, tickets, settings.fabric)
        self.outbox = TicketOutbox(store, self.ticketing, settings.outbox)
        self.effects = Effects(store, self.outbox, epoch=settings.epoch)
        self.writes = PortWrites(store, ufm, settings.writes, epoch=settings.epoch, method=settings.method,
                                 on_port_write=self._own_action)
        self.context = fabric_context(plan)
        self.silences = SilenceMuter()
        self.cursor = EventCursor()
        self.view: FabricView | None = None
        self._pipeline: Pipeline | None = None
        self.out = PortsOut()
        """UFM ports out of service, disabled or isolated, as of the last reading accepted (kept in step with
        automation's own writes as they are settled)."""
        self.live: set[CableKey] = set()
        """Planned cables UFM shows up, as of the last reading accepted."""
        self.below: dict[CableKey, Cable] = {}
        """Those of them UFM shows below their planned rate, as UFM shows them, as of the last reading accepted."""
        self.link_checks = LinkChecks(store, plan.cables, settings.link_up_wait)
        self._versions: dict[str, int] = {}
        self._figures = TopologyFigures.planned(plan)
        """The figures of the last reading accepted, that the next one is judged against (before the first, the
        plan's: what start-up judges its reading against)."""
        self._accepted_digest: bytes | None = None
        """``topology_digest`` of the lists the last reading accepted was made of."""
        self.shown_disabled: frozenset[str] = frozenset()
        """The ports those lists show disabled."""
        self.view_refused_since: datetime | None = None
        """Since when every reading of UFM's topology has been refused as one that cannot be true (``None``: the
        last one was accepted). While it lasts nothing is decided: the daemon is not ready."""
        self._unheld_reported: set[str] = set()
        """Ports UFM shows out that no component holds out, recorded as an operator's action (once each)."""
        self._waiting: list[Event] = []
        """New events read but not handed to the pipeline yet: at start-up, or while readings are refused."""
        self._counters: dict[str, int] = {}
        """UFM's change counters as last read (``/app/versioning``), for the event cursor to judge a list by."""
        self.telemetry = telemetry
        self._samples: list[SampleVerdict] = []
        """Samples judged and not handed to the pipeline yet (the next cycle takes them, with the events)."""
        self.burnin = BurninWindows(store, telemetry=telemetry is not None)

    @property
    def pipeline(self) -> Pipeline:
        if self._pipeline is None:
            raise RuntimeError("the engine has not started: await start() first")
        return self._pipeline

    @property
    def guard(self) -> GuardReading:
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
        reading = await self._read_fabric(await self._topology_versions(), await self.ufm.unhealthy_ports())
        why = start_refusal(self._figures, reading.figures, self.settings.plausibility)
        if why is not None:
            raise ImplausibleTopologyError(f"UFM's topology cannot be true ({why}): not starting on it; check UFM "
                                           "(or plausibility.min_planned) and start again")
        self._accept(reading)
        await recovery.settle_intents(self.store, self.writes, self.out, now)
        assert self.view is not None
        pipeline = self._new_pipeline(self._load_state(), now)
        restart = (dryrun if self.dry_run else recovery).observed_restart(
            pipeline.state, self.view, self.out, self.store, now,
            resets_since=now - self.settings.policy.resets.window)
        self._record_observed(pipeline.observe(Observed(down=self._down(), restart=restart), now))
        self._remember_findings(pipeline, now)
        saved = self.store.load_cursor()
        state = None if saved is None else CursorState(saved.high_water_id, saved.last_event_time,
                                                       saved.restart_count)
        events = await self.ufm.events(handed_over=state, lookback=self._lookback(now, burnin=True))
        self.burnin.history = events
        # Past events fill the detectors' windows but are not acted on again: a first start acts on what
        # happens from now on, a restart on what came after the saved cursor. The cursor tells which those are,
        # UFM restarts included (ids below the mark may be new ones): they wait for the first cycle.
        if state is None:
            self.cursor.prime(events)
        else:
            self.cursor = EventCursor(state)
            events = self._set_aside_new(events)
        pipeline.warm(events, self.clock())
        self._pipeline = pipeline

    async def reconfigure(self, settings: EngineSettings) -> None:
        """Apply new rules, policy and guard settings (``fabricctl run``'s reload), between two cycles.

        A pipeline is built on them from the state as it stands (the desired state of every component, the
        breaker, the storm window), its guard counting what the old one counted, and warmed on UFM's event log as
        at start-up: the detectors' windows hold the same history judged by the new rules, and no event already
        handed over is acted on again. Only the settings the pipeline is built from change (and the next burn-in
        window's thresholds); the caller refuses the others (they need a restart).
        """
        now = self.clock()
        kept = self.settings
        # Dry run or live is kept: the state a switch would start from lives in another scope (``dryrun``).
        policy = replace(settings.policy, dry_run=kept.policy.dry_run)
        self.settings = replace(kept, policy=policy, rules=settings.rules, guard=settings.guard,
                                plausibility=settings.plausibility, burnin=settings.burnin)
        try:
            pipeline = self._new_pipeline(self.state, now, succeeding=self.pipeline)
            self._remember_findings(pipeline, now)
            events = self._set_aside_new(await self.ufm.events(handed_over=self.cursor.state,
                                                               lookback=self._lookback(now, burnin=False)))
        except BaseException:
            self.settings = kept
            raise
        pipeline.warm(events, self.clock())
        self._pipeline = pipeline

    def _lookback(self, now: datetime, *, burnin: bool) -> Lookback:
        """What warming a pipeline needs of UFM's past besides what the cursor may hand over: the detectors'
        horizon (whatever is older, the pipeline's memory of events drops), and at start-up a burn-in window's
        events since it opened (its first cycle judges them: ``burnin.history``)."""
        horizon = self.settings.rules.history
        window = self.store.running_burnin() if burnin else None
        if window is not None and window.started_at is not None:
            horizon = max(horizon, now - window.started_at)
        return Lookback(now, horizon)

    def _set_aside_new(self, events: list[Event]) -> list[Event]:
        """The cursor takes the events it has not handed over yet; they wait for the next cycle (``_waiting``).
        Returns the others, for warming."""
        new = self.cursor.advance(events)
        self._waiting = [*self._waiting, *new]
        ids = {id(e) for e in new}
        return [e for e in events if id(e) not in ids]

    def _new_pipeline(self, state: PolicyState, now: datetime, *, succeeding: Pipeline | None = None) -> Pipeline:
        """A pipeline on the last reading accepted and the current settings, knowing the port writes of the history
        window as own actions before any past event reaches its detectors; its guard counts what ``succeeding``'s
        does (nothing without one) and it is not warmed."""
        assert self.view is not None
        s = self.settings
        pipeline = Pipeline(self.view, s.policy, s.rules, s.guard, state=state, muter=self.silences,
                            succeeding=succeeding, telemetry=self.telemetry is not None)
        for intent in self.store.port_writes_since(now - s.rules.history):
            if intent.component is not None:
                for at in (intent.created_at, intent.finished_at):
                    if at is not None:
                        pipeline.own_action(intent.component, at, intent.kind)
        return pipeline

    def _remember_findings(self, pipeline: Pipeline, now: datetime) -> None:
        """The recorded findings a new pipeline's correlation looks back over: no finding can come from events
        older than the detectors' history, nor be correlated with one more than a switch-fault window before it."""
        rules = self.settings.rules
        since = now - rules.history - rules.switch_fault_window
        pipeline.remember(self.store.findings(since=since, as_recorded=True),
                          [d.action for d in self.store.decisions(since=since)])

    def _own_action(self, component: ComponentId, kind: ActionKind) -> None:
        # Writes settled during start-up, before the pipeline exists, are read back from the intents log once
        # it does (``start``).
        if self._pipeline is not None:
            self._pipeline.own_action(component, self.clock(), kind)

    def _load_state(self) -> PolicyState:
        held = dryrun.state_store(self.store, dry_run=self.dry_run, now=self.clock())
        stored = held.breaker_state()
        breaker = Breaker(stored.halted, stored.since, stored.reason, stored.last_held)
        # The storm window and the held findings' figures are stored: a restart mid-storm trips, holds and
        # resumes exactly when an uninterrupted run would (the held findings themselves are only shown, not kept).
        return PolicyState(held.components(), breaker, held.storm_window(), held_count=stored.held_count)

    async def _topology_versions(self) -> dict[str, int]:
        """UFM's change counters of what the view is built from (all of them kept in ``_counters``)."""
        self._counters = (await self.ufm.versioning()).versions()
        return {k: v for k, v in self._counters.items() if k in _TOPOLOGY_VERSIONS}

    async def _read_fabric(self, versions: dict[str, int], unhealthy: list[UnhealthyPort]) -> _Reading:
        """Systems, links and ports as of ``versions`` (UFM's counters, read just before), with the unhealthy ports
        read with the counters.

        Lists of the very bytes the last reading accepted was made of make that reading again: it is not made anew
        (the same view, cables and figures, ``out`` started again from the ports they show disabled). The full
        reconcile reads the topology every few minutes whatever UFM's counters say, and on h100-32k making a
        reading is 5 s of CPU and 110-165 MiB more memory while it lasts; the digest is 0.12 s."""
        async with spooled_topology(self.ufm) as lists:
            digest = topology_digest(lists)
            if digest == self._accepted_digest and self.view is not None:
                shown = self.shown_disabled
                return _Reading(versions, self.view, self.live, self.below, PortsOut(shown, listings(unhealthy)),
                                self._figures, digest, shown)
            kept = kept_of(self.plan, self.context, read_topology(lists, "UFM"))
        view, below, disabled = kept.restored(self.plan, self.context)
        return _Reading(versions, view, kept.live, below, PortsOut(disabled, listings(unhealthy)), kept.figures,
                        digest, disabled)

    def _accept(self, reading: _Reading) -> None:
        self._versions, self.view, self.out = reading.versions, reading.view, reading.out
        self.live, self.below = reading.live, reading.below
        self._figures = reading.figures
        self._accepted_digest, self.shown_disabled = reading.digest, reading.shown_disabled
        if self.view_refused_since is not None:
            log.warning("fabric %s: UFM's topology can be true again (refused since %s): deciding again",
                        self.settings.fabric, self.view_refused_since.isoformat())
            self.view_refused_since = None

    def _down(self) -> frozenset[CableKey]:
        """The planned cables the last reading accepted does not show carrying traffic: not up, or listed unhealthy
        (an isolated link stays up; one OpenSM's health policy listed counts too, its action unknown)."""
        view = self.view
        assert view is not None
        listed = {cable for port in self.out.unhealthy if (cable := view.cable_at_port(port)) is not None}
        return frozenset((view.plan_keys - self.live) | listed)

    def _record_observed(self, decision: Decision, report: CycleReport | None = None) -> None:
        """What the policy made of an observation (``fabric.remediation.observe``): its decisions and the records it
        changed, in one transaction; nothing is carried out (UFM shows it already, or reconciliation converges)."""
        if not decision.actions and not decision.changed:
            return
        with self.store.transaction() as tx:
            tx.record_decisions(decision.actions)
            self._put_records(tx.dry_run_scope() if self.dry_run else tx, decision.state, decision.changed)
        if report is not None:
            report.actions.extend(decision.actions)

    async def _refresh_fabric(self, report: CycleReport, *, whatever_the_counters: bool = False) -> None:
        """Re-read systems, links and ports, unless UFM's change counters say nothing moved since the last reading
        accepted and UFM lists the same unhealthy ports (while readings are refused, every cycle reads again);
        refuse a reading that cannot follow it. The unhealthy ports are read every cycle (a short list): marking a
        port moves none of the counters UFM documents, and an isolation someone else made must reach the guard."""
        watched = await self._topology_versions()
        unhealthy = await self.ufm.unhealthy_ports()
        if (not whatever_the_counters and self.view is not None and watched and watched == self._versions
                and self.view_refused_since is None and listings(unhealthy) == self.out.listed):
            return
        reading = await self._read_fabric(watched, unhealthy)
        why = refusal(self._figures, reading.figures, self.settings.plausibility)
        if why is not None:
            report.views_refused += 1
            if self.view_refused_since is None:
                self.view_refused_since = report.at
            log.warning("fabric %s: UFM's topology cannot be true (%s): refused since %s, the last reading accepted "
                        "stays and nothing is decided until one can be true", self.settings.fabric, why,
                        self.view_refused_since.isoformat())
            return
        rebased = reading.view is not self.view  # the same view: the lists were the same bytes
        self._accept(reading)
        if rebased:
            self.pipeline.rebase(reading.view)
        self._record_observed(self.pipeline.observe(Observed(down=self._down()), report.at), report)

    # --- the cycle -----------------------------------------------------------------------------------

    async def cycle(self, *, poll_tickets: bool = True, send_tickets: bool = True) -> CycleReport:
        """One cycle: UFM's topology read again if its change counters moved, the events since the last cycle
        decided and acted on, writes settled, UFM and the ticket system brought in line with the desired state.

        ``poll_tickets``: the ticket backend asked for every open ticket first (``poll_tickets``), as the demo and
        the tests want; the daemon runs that poll as a job of its own, on its own schedule, as it runs the full
        ``reconcile``. ``send_tickets``: the ticket writes due sent at the end, after every UFM write
        (``send_tickets``); the daemon sends them from a job of its own, which no cycle waits for.
        """
        now = self.clock()
        report = CycleReport(now)
        self._load_silences(now)
        await self._refresh_fabric(report)
        await self._read_telemetry(now, report)
        polled = time.monotonic()
        # The whole history comes back every time; what the cursor handed over already is not validated again.
        read = await self.ufm.events(handed_over=self.cursor.state)
        report.poll_seconds = time.monotonic() - polled
        new_events = [*self._waiting, *self.cursor.advance(read, self._counters)]
        report.event_read = self.cursor.outcome
        if self.view_refused_since is not None:
            # Nothing is decided on a view that cannot be trusted: no finding, no UFM or ticket write. The events
            # (and the samples) wait for the first cycle whose reading is accepted, and the cursor is not saved, so
            # a restart hands them over again.
            self._waiting = new_events
            return report
        self._waiting = []
        samples, self._samples = self._samples, []
        report.events = len(new_events)
        report.events_by_type = Counter(str(event.event_id) for event in new_events)
        previous = self.state
        if not self.dry_run:  # like the ticket poll: a dry run acts on no ticket, deliveries wait for live mode
            await asyncio.to_thread(process_deliveries, self.store, self.ticketing, now, report)
            if poll_tickets:
                await self.poll_tickets()
        requests = self.store.pending_requests()
        resume = previous.breaker.halted and any(r.kind is RequestKind.RESUME for r in requests)
        cleared = self._cleared(requests)
        # In dry run nothing was reset: no outcome to read, the would-be watch ends when it is due.
        assert self.view is not None
        undone, unsettled = ((), frozenset()) if self.dry_run else reset_outcomes(self.state, self.view, self.store)
        settings = self.settings
        burnin = self.burnin.cycle(self.view, new_events, now, burnin=settings.burnin, policy=settings.policy,
                                   rules=settings.rules, guard=settings.guard, down=self._down())
        step = self.pipeline.step(new_events, now, repaired=await self._repaired(), resume=resume, cleared=cleared,
                                  failed_repairs=self._failed_repairs(now, report), samples=samples,
                                  undone_resets=undone, resets_unsettled=unsettled, found=burnin)
        report.repeated_events = step.repeated
        decision = step.decision
        report.findings, report.actions = step.findings, [*report.actions, *decision.actions]
        report.switch_faults, report.folded, report.settling = step.switch_faults, step.folded, step.settling
        report.explained = step.explained
        if step.explained:
            first = step.explained[0]
            log.info("%d link-down(s) explained and not counted as faults (%s: %s)", len(step.explained),
                     first.component, first.reason)
        # Counted from what the policy did, not from what the controller reported: while halted a failed repair
        # is reported again every cycle and waits.
        for action in decision.actions:
            if action.rule == LINK_CHECK and action.kind is ActionKind.REOPEN:
                report.repairs_backed_out += 1
                log.warning("%s: %s", action.component, action.reason)
        for finding in step.findings:
            if finding.rule == SWITCH_FAULT:
                log.warning("switch fault on %s: %s", finding.component, finding.reason.partition(CABLES)[0])
        self._record(step.findings, decision, previous, requests, resumed=resume, cleared=cleared)
        if not self.dry_run:
            assert self.view is not None
            await self._execute(decision.actions, report, step.findings)
            self._comment_recurrences(step.findings, previous, now, report)
            await self._converge(now, report, send_tickets=send_tickets)
        return report

    async def _read_telemetry(self, now: datetime, report: CycleReport) -> None:
        """A UFM Telemetry sample read and judged when one is due (every ``[telemetry] interval`` on the engine's
        clock); its conditions go to this cycle's step, or wait with the events while readings are refused."""
        if self.telemetry is None or self.view is None or not self.telemetry.due(now):
            return
        report.telemetry, verdict = await self.telemetry.poll(
            self.view, now, keep=self.burnin.sampled if self.burnin.open else None)
        if verdict is not None:
            self._samples.append(verdict)

    async def reconcile(self) -> CycleReport:
        """The full state reconcile (the daemon's job of that name): UFM's systems, links and ports read again
        whatever its change counters say, so a change they missed cannot outlive one reconcile, then converged as
        a cycle converges (a port automation holds out that UFM shows up is disabled again within its write's
        attempts and backoff, one it released is enabled, every component it holds has an open ticket). Decides
        nothing new; in dry run it only reads."""
        now = self.clock()
        report = CycleReport(now)
        await self._refresh_fabric(report, whatever_the_counters=True)
        if not self.dry_run and self.view_refused_since is None:
            await self._converge(now, report)
        return report

    async def _converge(self, now: datetime, report: CycleReport, *, send_tickets: bool = False) -> None:
        """UFM's ports (unless automation is halted) and the tickets brought in line with the desired state, and
        the writes in flight settled. ``send_tickets``: the ticket writes due sent after every UFM write (see
        ``cycle``)."""
        assert self.view is not None
        shown_up: list[CableKey] = []
        if not self.state.breaker.halted:
            shown_up = await reconcile.reconcile_ports(self.state, self.view, self.guard, self.out, self.live,
                                                       self.store, self.writes, now, report)
            await send_unsent(self.state, self.view, self.store, self.writes, self.out, now, report)
        await self.writes.settle(now, self.state.components, self.out, report)
        # Before the tickets are asked for: a port adopted here is held out, and needs its ticket this cycle.
        adopt = reconcile.adoptable(self.state, self.view, self.out, self.store)
        self._record_observed(self.pipeline.observe(Observed(shown_up=tuple(shown_up), adopt=adopt), now), report)
        reconcile.explain_unheld(self.state, self.view, self.out, self.store, now, report, self._unheld_reported)
        reconcile.ask_for_tickets(self.state, self.store, self.outbox)
        if send_tickets:
            self.ticket_failures(await self.send_tickets(), report)
        confirmed = reconcile.confirmed_out(self.state, self.view, self.out, self.store, self.outbox)
        self._record_observed(self.pipeline.observe(Observed(confirmed_out=confirmed), now), report)
        self._warn_unconfirmed(report)

    async def poll_tickets(self) -> int:
        """The ticket fallback poll (the daemon's job of that name): the backend asked for every open ticket the
        store holds, which heals a lost webhook delivery; the next cycle acts on the repairs found. Returns how many
        tickets it found resolved or closed; in dry run there are none."""
        if self.dry_run:
            return 0
        return await asyncio.to_thread(self.ticketing.poll)

    async def send_tickets(self) -> OutboxReport:
        """The ticket writes due carried out (``outbox``: the daemon's job of that name), in a worker thread. It
        touches the store's tickets and outbox and the ticket backend only, never the engine's state, so the daemon
        runs it beside the cycle, which never waits for it."""
        if self.dry_run:
            return OutboxReport()
        return await asyncio.to_thread(self.outbox.send_due, self.clock())

    @staticmethod
    def ticket_failures(sent: OutboxReport, report: CycleReport) -> None:
        """The writes the ticket system did not take, as the cycle's failures."""
        for entry, cause in sent.failed:
            report.fail(ErrorKind.TICKET, entry.kind.value, entry.component, cause)

    async def _repaired(self) -> list[ComponentId]:
        """Components whose ticket the store holds as resolved since they started waiting for it."""
        if self.dry_run:
            return []
        waiting = {c: r.since for c, r in self.state.components.items() if r.lifecycle in reconcile.WAITING}
        return await asyncio.to_thread(self.ticketing.repaired, waiting)

    def _failed_repairs(self, now: datetime, report: CycleReport) -> list[FailedRepair]:
        """Links re-enabled on probation that UFM has not shown up as planned within ``link_up_wait``
        (``linkcheck``); in dry run nothing was re-enabled."""
        if self.dry_run:
            return []
        state = self.state
        probation = {c: r for c in state.revisit() if (r := state.components.get(c)) is not None}
        failed = self.link_checks.check(probation, self.context.cables, self.live, self.below, now,
                                         report.actions)
        if not failed:
            return failed
        # A link UFM shows up as planned is confirmed whatever the intent log says, but a re-enable still in flight
        # (its job, or a restart's doubt whether UFM got it) is not a repair that failed.
        in_flight = {i.component for i in self.store.unfinished_intents() if i.kind in UFM_WRITES}
        return [f for f in failed if f.component not in in_flight]

    def _cleared(self, requests: Sequence[OperatorRequest]) -> list[ComponentId]:
        """Quarantined components an operator asked to release (``fabricctl components clear``); in dry run, would-be
        quarantines."""
        components = self.state.components
        return sorted({r.component for r in requests if r.kind is RequestKind.CLEAR and r.component is not None
                       and r.component in components
                       and components[r.component].lifecycle is Lifecycle.QUARANTINED})

    def _record(self, findings: list[Finding], decision: Decision, previous: PolicyState,
                requests: Sequence[OperatorRequest], *, resumed: bool, cleared: Sequence[ComponentId]) -> None:
        """Findings, decisions, the new desired state, the operator requests carried out and the event cursor
        past the events they were decided on, in one transaction, before any side effect. A dry run's desired state
        goes to its own scope, the rest to the fabric's.

        The cursor commits with the decisions: saved after the side effects, a crash among them left the cycle's
        events after the saved cursor, so the restart counted them again (findings recorded twice, "found again"
        comments, a second disable decided for one finding, the hourly rate counted from the log over its limit).
        """
        actions, state = decision.actions, decision.state
        cursor = self.cursor.state
        with self.store.transaction() as tx:
            tx.add_findings(findings)
            tx.record_decisions(actions)
            tx.save_cursor(high_water_id=cursor.high_water_id or 0, last_event_time=cursor.last_event_time,
                           restart_count=cursor.restart_count)
            for request in requests:
                outcome = _outcome(request, state, resumed=resumed, cleared=cleared, dry_run=self.dry_run)
                if outcome is not None:
                    tx.handle_request(request.id, outcome)
            held = tx.dry_run_scope() if self.dry_run else tx
            # Every record the policy changed, not only those it acted on: a deferred cable put on probation by its
            # repair has no action, and a restart read it back deferred and repaired it again.
            self._put_records(held, state, decision.changed | {a.component for a in actions if a.component is not None})
            if state.breaker.halted and any(a.kind is ActionKind.HALT for a in actions):
                held.halt(state.breaker.reason, storm_dedup_key=self.ticketing.key(None))
            if not state.breaker.halted and previous.breaker.halted:
                held.resume("automation resumed")
            if (state.recent is not previous.recent or state.held_count != previous.held_count
                    or state.breaker.last_held != previous.breaker.last_held):
                held.save_storm(state.recent, last_held=state.breaker.last_held, held_count=state.held_count)

    def _put_records(self, held: Transaction, state: PolicyState, components: Iterable[ComponentId]) -> None:
        """The records of ``components`` as ``state`` holds them, with their ticket's dedup key: the one place the
        engine writes what the policy decided a component's record is."""
        for component in sorted(components):
            record = state.components.get(component)
            if record is not None:
                held.put_component(component, record, ticket_dedup_key=self.ticketing.key(component))

    # --- side effects --------------------------------------------------------------------------------

    async def _execute(self, actions: Sequence[Action], report: CycleReport, findings: Sequence[Finding]) -> None:
        assert self.view is not None
        view = self.view
        ports = {a.component: port for a in actions
                 if a.component is not None and (port := view.port_to_act_on(a.component)) is not None}
        tickets = TicketContext(self.settings.fabric, self.settings.policy, findings, actions, ports)
        for action in actions:
            if action.kind in UFM_WRITES:
                assert action.component is not None
                port = self.view.port_to_act_on(action.component)
                if port is None:
                    report.fail(ErrorKind.UFM, action.kind.value, action.component, "UFM shows no port for it")
                else:
                    await self.writes.post(action, port, self.out, report)
            elif action.kind in TICKET_WRITES:
                record = self.state.components.get(action.component) if action.component is not None else None
                body = action.reason if action.kind is ActionKind.COMMENT else ticket_body(action, tickets, record)
                self.effects.ticket_action(action, report, body)

    def _comment_recurrences(self, findings: Sequence[Finding], previous: PolicyState, now: datetime,
                             report: CycleReport) -> None:
        """A fault found again on a component waiting for its repair (its ticket open, or quarantined): a comment on
        its ticket with what was found, rate-limited (``recurrence_comments``), so the technician sees it is still
        failing, or failing worse, without a comment a cycle."""
        since = now - self.settings.recurrence_comments
        for finding in findings:
            record = previous.components.get(finding.component)
            if record is None or (record.lifecycle not in reconcile.WAITING
                                  and record.lifecycle is not Lifecycle.QUARANTINED):
                continue
            if any(i.kind in TICKET_WRITES and i.created_at > since
                   for i in self.store.intents(component=finding.component, limit=20)):
                continue
            # A ticket opened by reconciliation (the cycle that decided it was cut short) has no ticket intent.
            ticket = self.store.active_ticket(self.ticketing.key(finding.component))
            if ticket is not None and ticket.created_at > since:
                continue
            action = Action(ActionKind.COMMENT, now, RECURRENCE, f"found again ({finding.rule}): {finding.reason}; "
                            f"{len(finding.evidence)} UFM event(s); still {record.lifecycle.value}",
                            finding.component, dry_run=False)
            self.store.record_decision(action)
            report.actions.append(action)
            self.effects.ticket_action(action, report, action.reason)

    @staticmethod
    def _warn_unconfirmed(report: CycleReport) -> None:
        """One line a cycle while writes wait for UFM (each failed attempt and each give-up had its own line)."""
        if report.writes_pending or report.writes_backing_off:
            log.warning("UFM has not confirmed %d port write(s) yet, %d are waiting to be tried again, %d were "
                        "given up", report.writes_pending, report.writes_backing_off, report.writes_given_up)


def _outcome(request: OperatorRequest, state: PolicyState, *, resumed: bool, cleared: Sequence[ComponentId],
             dry_run: bool) -> str | None:
    """What came of an operator request this cycle, for the audit trail; ``None`` while it waits (a clear the
    policy could not carry out yet, automation being halted: it is asked again every cycle until it can). In dry
    run it acts on the dry run's state, not live mode's (whose halt, say, stays until resumed in live mode)."""
    mode = "dry run: " if dry_run else ""
    if request.kind is RequestKind.RESUME:
        return mode + ("automation resumed" if resumed else "automation was not halted: nothing to resume")
    if request.component not in cleared:
        return mode + "not quarantined: nothing to release"
    record = state.components.get(request.component) if request.component is not None else None
    if record is not None and record.lifecycle is Lifecycle.QUARANTINED:
        return None
    return mode + "released: back in service on probation, within the capacity guard"
