"""The running engine as the API and the scheduler see it: one job at a time, what the last cycle saw and did.

Each of the scheduler's jobs (``cycle``, ``reconcile``, ``ticket_poll``: ``fabric.daemon.jobs``) runs here: on the
engine's own loop (``EngineLoop``), one at a time (they share the engine's state), timed, counted in the metrics,
logged with a cycle id on every line, its decisions one line each. A failed job (UFM down, the database refusing,
a bug) is logged and counted and the daemon goes on: the next run starts again from UFM and the store, which is
what the engine is built for. ``reload`` applies changed rules, policy and guard settings between two jobs;
shutdown (``drain``) stops new jobs and waits, bounded, for the running one.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from dataclasses import replace
from datetime import datetime, timedelta
from itertools import count
from typing import Any, TypeVar

from fabric import wiring
from fabric.api.context import DOWN_SHOWN, GuardFigures, LeaderView, LeafPaths, NotApplied, Reload, RuntimeStatus
from fabric.config import ServiceConfig, load_config
from fabric.controller.engine import CycleReport, Engine
from fabric.controller.outbox import OutboxReport
from fabric.daemon.gcpolicy import release_freed_memory
from fabric.daemon.jobs import CYCLE_JOB, RECONCILE_JOB, TICKET_POLL_JOB, TICKET_SEND_JOB, Job
from fabric.daemon.logs import CYCLE_ID
from fabric.daemon.metrics import DaemonMetrics
from fabric.daemon.worker import EngineLoop
from fabric.errors import ErrorKind, as_fabric_error
from fabric.remediation.signals import end_name
from fabric.ufm.cursor import EventRead
from topology.guard import GuardReading

log = logging.getLogger(__name__)

T = TypeVar("T")

REPORT_COUNTS = ("events", "repeated_events", "views_refused", "executed", "writes_pending", "writes_backing_off",
                 "writes_given_up", "ports_out_unheld", "switch_faults", "folded", "settling", "repairs_backed_out",
                 "deliveries")
RELOADED = ("rules", "escalation", "policy", "guard", "plausibility", "burnin")
"""The sections a reload applies (the engine's pipeline is built from them); a change to any other, or to
``policy.dry_run``, takes a restart."""


def guard_figures(guard: GuardReading, now: datetime) -> GuardFigures:
    """The worst leaf (lowest paths-to-core fraction; ties by name, so the answer is stable), the blast radius
    against its cap, the disables of the sliding hour against the limit; for the console's picture, the leaves
    below their planned paths and the cables out that automation did not take out."""
    worst: tuple[float, str] | None = None
    for leaf, planned in guard.planned.items():
        if planned:
            candidate = (guard.paths[leaf] / planned, guard.names.get(leaf, leaf))
            worst = candidate if worst is None or candidate < worst else worst
    hour_ago = now - timedelta(hours=1)
    reduced = tuple(sorted(LeafPaths(leaf, guard.paths[leaf], guard.minimum[leaf], planned)
                           for leaf, planned in guard.planned.items() if guard.paths[leaf] < planned))
    down = guard.out - guard.disabled
    return GuardFigures(worst_leaf=worst[1] if worst else None, worst_leaf_fraction=worst[0] if worst else None,
                        min_leaf_fraction=guard.settings.c, disabled=len(guard.disabled), cap=guard.cap,
                        disables_last_hour=sum(1 for at in guard.recent if at > hour_ago),
                        hourly_limit=guard.settings.hourly_limit, reduced_leaves=reduced,
                        down_not_ours=tuple((end_name(a), end_name(b)) for a, b in sorted(down)[:DOWN_SHOWN]),
                        down_total=len(down))


def _said(message: str, *, warn: bool = False, not_applied: NotApplied | None = None) -> Reload:
    """A reload's outcome, logged (a warning when nothing or not everything was applied)."""
    (log.warning if warn or not_applied else log.info)(message)
    return Reload(message, not_applied)


class DaemonRuntime:
    def __init__(self, engine: Engine, config: ServiceConfig, config_path: str, engine_loop: EngineLoop,
                 clock_sync: Callable[[], Awaitable[None]], metrics: DaemonMetrics, started_at: datetime) -> None:
        self.engine, self.config, self.config_path, self.metrics = engine, config, config_path, metrics
        self._engine_loop = engine_loop
        self._sync = clock_sync
        self._ids = count(1)
        self._one_at_a_time = asyncio.Lock()
        self._idle = asyncio.Event()
        self._idle.set()
        self._sent = asyncio.Event()
        """Set while no ``ticket_send`` runs (it runs beside the other jobs: ``drain`` waits for it too)."""
        self._sent.set()
        self._stopping = False
        self._running: asyncio.Task[object] | None = None
        self._wake: Callable[[], None] | None = None
        self._report: Callable[[], None] = _nothing
        self._cycling = self._again = False
        self._status = RuntimeStatus(started_at=started_at, dry_run=engine.dry_run,
                                     interval_seconds=config.daemon.interval.total_seconds(), ufm_reachable=True,
                                     starting=True)

    async def start(self) -> None:
        """The engine started on its loop: what the last run left pending settled, the state and the guard rebuilt,
        the pipeline warmed. Until it has, the API answers and ``/status`` says it is starting."""
        await self._engine_loop.run(self.engine.start())
        now = self.engine.clock()
        self._status = replace(self._status, starting=False, guard=guard_figures(self.engine.guard, now))
        self._record_state(now)

    def jobs(self) -> list[Job]:
        daemon = self.config.daemon
        return [Job(CYCLE_JOB, self.cycle, daemon.interval, at_once=True),
                Job(RECONCILE_JOB, self.reconcile, daemon.reconcile_interval),
                Job(TICKET_POLL_JOB, self.poll_tickets, daemon.ticket_poll_interval),
                Job(TICKET_SEND_JOB, self.send_tickets, daemon.ticket_send_interval, at_once=True)]

    def report_with(self, report: Callable[[], None]) -> None:
        """How to make what a job changed (the status, the metrics) visible at once: the engine process's status
        record written, before the job's last line is logged (a reader of the log finds the API up to date)."""
        self._report = report

    def wake_with(self, wake: Callable[[], None]) -> None:
        """How to make the cycle job run now (the scheduler's ``run_soon``, on the main loop)."""
        self._wake = wake

    def wake(self) -> None:
        """Something waits to be acted on (a webhook delivery stored, an operator's request, a repair the ticket
        poll found): the cycle runs now rather than at its time, or once more right after the one running (which
        may have read the deliveries and requests before this one was stored). Called from the API's worker
        threads: at worst a wake racing the end of a cycle waits for the next interval; nothing is lost, since what
        was stored stays until a cycle acts on it."""
        if self._wake is None or self._stopping:
            return
        if self._cycling:
            self._again = True
        else:
            self._wake()

    def status(self) -> RuntimeStatus:
        return self._status

    # --- the jobs ------------------------------------------------------------------------------------

    async def cycle(self) -> None:
        """The event poll and the engine's cycle (the ticket poll and the full reconcile are jobs of their own)."""
        self._cycling = True
        try:
            # The ticket poll and the outbox are jobs of their own (``jobs``).
            await self._job(CYCLE_JOB, lambda: self.engine.cycle(poll_tickets=False, send_tickets=False), self._cycled)
        finally:
            self._cycling = False
        if self._again:
            self._again = False
            self.wake()

    async def reconcile(self) -> None:
        await self._job(RECONCILE_JOB, self.engine.reconcile, self._reconciled)

    async def poll_tickets(self) -> None:
        await self._job(TICKET_POLL_JOB, self.engine.poll_tickets, self._polled)

    async def send_tickets(self) -> None:
        """The ticket writes due sent, beside whatever job runs on the engine (not ``_alone``: see
        ``fabric.daemon.jobs``); the scheduler's ``max_instances=1`` keeps it to one run at a time. The clock is
        read first only while no other job runs, and no job starts while it is read: a read in the middle of a
        cycle would move the time that cycle is deciding at (the simulator's clock jumps when it is read), and the
        cycle would act on events newer than its own time."""
        if self._stopping or self._status.starting:
            return
        self._sent.clear()  # no job id of its own: the ids number the jobs that run one at a time on the engine
        started = time.monotonic()
        try:
            if not self._one_at_a_time.locked():
                async with self._one_at_a_time:  # taken at once: nothing awaits between the test and the take
                    await self._engine_loop.run(self._read_clock())
            report = await self._engine_loop.run(self.engine.send_tickets())
        except Exception as exc:
            self._failed(TICKET_SEND_JOB, exc, time.monotonic() - started)
        else:
            self.metrics.job_done(TICKET_SEND_JOB, time.monotonic() - started)
            self._sent_tickets(report)
        finally:
            self._sent.set()

    def _sent_tickets(self, report: OutboxReport) -> None:
        self.metrics.outbox(report.figures)
        self.metrics.failures.labels(ErrorKind.TICKET.value).inc(len(report.failed))
        if report.sent or report.failed:
            log.info("ticket outbox: %d sent, %d failed, %d waiting (the oldest for %.0f s)", report.sent,
                     len(report.failed), report.figures.pending, report.figures.oldest_seconds)

    async def reload(self) -> Reload:
        """Re-read the file; apply changed rules, policy and guard settings between two jobs (``RELOADED``:
        ``Engine.reconfigure`` rebuilds the pipeline on them without losing what its windows hold); report a
        change to anything else, which takes a restart. Silences are read at every cycle: a new one needs no
        reload. A file that does not load is not applied at all."""
        if self._status.starting:
            return _said("reload: the engine is still starting: not applied", not_applied=NotApplied.BUSY)
        try:
            fresh = load_config(self.config_path)
        except Exception as exc:
            error = as_fabric_error(exc)
            if error is None:
                raise
            return _said(f"reload: {self.config_path} not applied: {error}", not_applied=NotApplied.INVALID)
        current = self.config
        restart: list[str] = []
        if fresh.policy.dry_run != current.policy.dry_run:
            # Switching between dry run and live is a restart: live starts from what UFM really shows.
            fresh = fresh.model_copy(update={"policy": fresh.policy.model_copy(
                update={"dry_run": current.policy.dry_run})})
            restart.append("policy.dry_run")
        changed = [name for name in ServiceConfig.model_fields if getattr(fresh, name) != getattr(current, name)]
        applied = [name for name in changed if name in RELOADED]
        restart += [name for name in changed if name not in RELOADED]
        if applied:
            update = {name: getattr(fresh, name) for name in applied}
            settings = wiring.engine_settings(current.model_copy(update=update))
            async with self._alone() as running:
                if not running:
                    return _said("reload: the daemon is stopping: not applied", not_applied=NotApplied.BUSY)
                try:
                    await self._engine_loop.run(self._synced(lambda: self.engine.reconfigure(settings))())
                except Exception as exc:
                    error = as_fabric_error(exc)
                    if error is None:
                        raise
                    return _said(f"reload: {', '.join(applied)} not applied: {error}", not_applied=NotApplied.INVALID)
            self.config = current.model_copy(update=update)
        parts = [f"applied {', '.join(applied)}" if applied else f"{self.config_path}: nothing to apply"]
        if restart:
            parts.append(f"not applied, they take a restart: {', '.join(restart)}")
        return _said("reload: " + "; ".join(parts) + "; silences are read at every cycle", warn=bool(restart))

    async def _read_clock(self) -> None:
        await self._sync()

    def _synced(self, work: Callable[[], Coroutine[Any, Any, T]]) -> Callable[[], Coroutine[Any, Any, T]]:
        """``work`` after the clock is read (the simulator's, for the demo and the tests; the system's: nothing)."""
        async def synced() -> T:
            await self._sync()
            return await work()
        return synced

    async def _job(self, name: str, work: Callable[[], Coroutine[Any, Any, T]],
                   done: Callable[[T, float], None]) -> None:
        """``work`` on the engine's loop, alone, after the clock is read, timed and counted, then
        ``done`` with what it returned and how many seconds it took (in the job's log context, as everything the job
        logs). ``done`` runs on the engine's loop too: after a storm it logs a line per decision, thousands, and on
        the API's loop that would hold every request behind it. The time is the work's, not the clock's read: the
        system's clock reads at once, and the simulator's answers only once it has done what it was asked before
        (raising a storm of 100,000 events takes it seconds), which is no part of the daemon's cycle."""
        if self._stopping:
            return
        async with self._alone() as running:
            if not running:
                return
            token = CYCLE_ID.set(next(self._ids))
            started = time.monotonic()

            async def work_then_done() -> None:
                nonlocal started
                await self._sync()
                started = time.monotonic()
                result = await work()
                seconds = time.monotonic() - started
                self.metrics.job_done(name, seconds)
                done(result, seconds)
                release_freed_memory()

            try:
                await self._engine_loop.run(work_then_done())
            except Exception as exc:
                self._failed(name, exc, time.monotonic() - started)
            finally:
                CYCLE_ID.reset(token)

    @contextlib.asynccontextmanager
    async def _alone(self) -> AsyncIterator[bool]:
        """Held while one piece of work (a job, a reload) runs on the engine: nothing else starts on it meanwhile,
        and ``drain`` waits for it. Yields False, and nothing may run, once the daemon is stopping."""
        async with self._one_at_a_time:
            if self._stopping:
                yield False
                return
            self._idle.clear()
            self._running = asyncio.current_task()
            try:
                yield True
            finally:
                self._running = None
                self._idle.set()

    def _cycled(self, report: CycleReport, seconds: float) -> None:
        self._log_decisions(report)
        self.metrics.report_done(report)
        self.metrics.poll_seconds.observe(report.poll_seconds)
        self.metrics.newest_event(report.at, self.engine.cursor.state.last_event_time)
        counters = {name: int(getattr(report, name)) for name in REPORT_COUNTS}
        counters.update(findings=len(report.findings), actions=len(report.actions), failed=len(report.failed),
                        explained=len(report.explained))
        self._status = self._next_status(report.at, error=None, counters=counters, reachable=True,
                                         event_read=report.event_read)
        if report.telemetry is not None:
            self.metrics.telemetry_sample(report.telemetry)
            self._status = replace(self._status, telemetry=report.telemetry)
        self._record_state(report.at)
        self._report()
        log.info("cycle done in %.3f s: %d events, %d findings, %d decisions, %d failed", seconds, report.events,
                 len(report.findings), len(report.actions), len(report.failed))

    def _reconciled(self, report: CycleReport, seconds: float) -> None:
        self._log_decisions(report)
        self.metrics.report_done(report)
        self._record_state(report.at)
        self._report()
        log.info("reconcile done in %.3f s: %d decisions, %d failed", seconds, len(report.actions),
                 len(report.failed))

    def _polled(self, moved: int, seconds: float) -> None:
        log.info("ticket poll done in %.3f s: %d ticket(s) found resolved or closed", seconds, moved)
        if moved:
            self.wake()

    @staticmethod
    def _log_decisions(report: CycleReport) -> None:
        for action in report.actions:
            log.info("%s %s: %s", action.kind.value, action.component or "the fabric", action.reason,
                     extra={"component": str(action.component) if action.component else None, "rule": action.rule,
                            "decision": action.kind.value, "dry_run": action.dry_run})
        for failure in report.failed:
            log.warning("not done: %s", failure)

    def _failed(self, job: str, exc: Exception, seconds: float) -> None:
        error = as_fabric_error(exc)
        kind = error.kind.value if error is not None else "bug"
        self.metrics.job_failed(job, kind, seconds)
        if job == CYCLE_JOB:
            self._status = self._next_status(self.engine.clock(), error=f"{kind}: {error or exc}",
                                             counters=self._status.counters,
                                             reachable=error is None or error.kind is not ErrorKind.UFM,
                                             cycled=False)
        self._report()
        if error is None:
            log.exception("%s failed (a bug): %s", job, exc)
        else:
            log.warning("%s failed (%s): %s", job, kind, error)

    def _next_status(self, at: datetime, *, error: str | None, counters: dict[str, int], reachable: bool,
                     cycled: bool = True, event_read: EventRead | None = None) -> RuntimeStatus:
        """``event_read``: how the cycle took UFM's event list (``None``: it read none, and what the last one that
        did said stands)."""
        before = self._status
        untrusted = before.events_untrusted_since
        if event_read is not None:
            untrusted = None if event_read is EventRead.OK else untrusted or at
        return replace(before, last_poll_at=at if cycled else before.last_poll_at,
                       last_cycle_at=at if cycled else before.last_cycle_at, last_cycle_error=error,
                       ufm_reachable=reachable, view_refused_since=self.engine.view_refused_since,
                       event_read=event_read or before.event_read, events_untrusted_since=untrusted,
                       guard=guard_figures(self.engine.guard, at), counters=counters)

    def _record_state(self, now: datetime) -> None:
        lifecycles = Counter(record.lifecycle for record in self.engine.state.components.values())
        self.metrics.state(lifecycles, self.engine.state.breaker.halted, guard_figures(self.engine.guard, now))

    async def drain(self, wait: float) -> bool:
        """Take no new cycle; wait up to ``wait`` seconds for the running one, then cancel it (before the store and
        the UFM client close under it). False: it did not finish in time."""
        self._stopping = True
        try:
            await asyncio.wait_for(asyncio.gather(self._idle.wait(), self._sent.wait()), wait)
        except TimeoutError:
            if self._running is not None:
                self._running.cancel()
            await self._idle.wait()
            # A ticket write cut short is what a crash leaves: it waits in the outbox, and the claim and the
            # adoption search make the next start's attempt adopt what this one created.
            return False
        return True


def _nothing() -> None:
    """No status record to write (a runtime outside the engine process, as tests build)."""


class InstanceRuntime:
    """What the API sees of this instance: a standby's status until it leads, then its engine's (``running``);
    either way with who leads."""

    def __init__(self, config: ServiceConfig, started_at: datetime, leadership: Callable[[], LeaderView]) -> None:
        self._leadership = leadership
        self.running: DaemonRuntime | None = None
        self._standby = RuntimeStatus(started_at=started_at, dry_run=config.policy.dry_run,
                                      interval_seconds=config.daemon.interval.total_seconds())

    def status(self) -> RuntimeStatus:
        status = self.running.status() if self.running is not None else self._standby
        return replace(status, leadership=self._leadership())

    async def reload(self) -> Reload:
        if self.running is None:
            return _said("reload: this instance stands by and runs no engine: nothing to apply (it "
                         "leads with the configuration it started with)", not_applied=NotApplied.STANDBY)
        return await self.running.reload()

    def wake(self) -> None:
        if self.running is not None:
            self.running.wake()
