"""The running engine as the API and the scheduler see it: one cycle at a time, what the last one saw and did.

``cycle`` is the scheduler's job: the event poll and the engine's cycle, timed, counted in the metrics, logged
with its cycle id on every line, its decisions one line each. A failed cycle (UFM down, the database refusing, a
bug) is logged and counted and the daemon goes on: the next cycle starts again from UFM and the store, which is
what the engine is built for. Shutdown (``drain``) stops new cycles and waits, bounded, for the running one.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from itertools import count

from fabric.api.context import GuardFigures, RuntimeStatus
from fabric.config import ServiceConfig, load_config
from fabric.controller.engine import CycleReport, Engine
from fabric.daemon.logs import CYCLE_ID
from fabric.daemon.metrics import DaemonMetrics
from fabric.errors import ErrorKind, as_fabric_error
from topology.guard import CapacityGuard

log = logging.getLogger(__name__)

REPORT_COUNTS = ("events", "repeated_events", "suspected_restarts", "views_refused", "executed", "writes_pending",
                 "writes_backing_off", "writes_given_up", "switch_faults", "folded", "repairs_backed_out",
                 "deliveries")


def guard_figures(guard: CapacityGuard, now: datetime) -> GuardFigures:
    """The worst leaf (lowest paths-to-core fraction; ties by name, so the answer is stable), the blast radius
    against its cap, the disables of the sliding hour against the limit."""
    worst: tuple[float, str] | None = None
    for leaf, planned in guard.planned.items():
        if planned:
            candidate = (guard.paths[leaf] / planned, guard.names.get(leaf, leaf))
            worst = candidate if worst is None or candidate < worst else worst
    hour_ago = now - timedelta(hours=1)
    return GuardFigures(worst_leaf=worst[1] if worst else None, worst_leaf_fraction=worst[0] if worst else None,
                        disabled=len(guard.disabled), cap=guard.cap,
                        disables_last_hour=sum(1 for at in guard.recent if at > hour_ago),
                        hourly_limit=guard.settings.hourly_limit)


class DaemonRuntime:
    def __init__(self, engine: Engine, config: ServiceConfig, config_path: str,
                 clock_sync: Callable[[], Awaitable[None]], metrics: DaemonMetrics, started_at: datetime) -> None:
        self.engine, self.config, self.config_path, self.metrics = engine, config, config_path, metrics
        self._sync = clock_sync
        self._ids = count(1)
        self._idle = asyncio.Event()
        self._idle.set()
        self._stopping = False
        self._running: asyncio.Task[object] | None = None
        self._status = RuntimeStatus(started_at=started_at, dry_run=engine.dry_run,
                                     interval_seconds=config.daemon.interval.total_seconds(), ufm_reachable=True,
                                     guard=guard_figures(engine.guard, started_at))
        self._record_state(started_at)

    def status(self) -> RuntimeStatus:
        return self._status

    async def reload(self) -> str:
        """Silences are read by the engine at every cycle already: a new one applies at the next cycle. The rules,
        the policy and the guard are built into the pipeline's state (its detectors' windows, the guard's
        counters) at start-up: re-reading the file reports which of them changed and that they take a restart,
        rather than rebuilding a pipeline mid-run and losing what its windows hold."""
        try:
            fresh = load_config(self.config_path)
        except Exception as exc:
            error = as_fabric_error(exc)
            if error is None:
                raise
            message = f"reload: {self.config_path} not applied: {error}"
            log.warning(message)
            return message
        changed = sorted(name for name in ServiceConfig.model_fields
                         if getattr(fresh, name) != getattr(self.config, name))
        message = "reload: silences are read at every cycle; " + (
            f"changed sections {', '.join(changed)} take a restart (not applied)" if changed
            else f"{self.config_path} unchanged")
        log.info(message)
        return message

    async def cycle(self) -> None:
        """One cycle (the scheduler's job; ``max_instances=1`` keeps them from overlapping)."""
        if self._stopping:
            return
        self._idle.clear()
        self._running = asyncio.current_task()
        token = CYCLE_ID.set(next(self._ids))
        started = time.monotonic()
        try:
            await self._sync()
            report = await self.engine.cycle()
        except Exception as exc:
            self._failed(exc, time.monotonic() - started)
        else:
            self._done(report, time.monotonic() - started)
        finally:
            CYCLE_ID.reset(token)
            self._running = None
            self._idle.set()

    def _done(self, report: CycleReport, seconds: float) -> None:
        for action in report.actions:
            log.info("%s %s: %s", action.kind.value, action.component or "the fabric", action.reason,
                     extra={"component": str(action.component) if action.component else None, "rule": action.rule,
                            "decision": action.kind.value, "dry_run": action.dry_run})
        for failure in report.failed:
            log.warning("not done: %s", failure)
        self.metrics.cycle_done(report, seconds)
        counters = {name: int(getattr(report, name)) for name in REPORT_COUNTS}
        counters.update(findings=len(report.findings), actions=len(report.actions), failed=len(report.failed))
        self._status = self._next_status(report.at, error=None, counters=counters, reachable=True)
        self._record_state(report.at)
        log.info("cycle done in %.3f s: %d events, %d findings, %d decisions, %d failed", seconds, report.events,
                 len(report.findings), len(report.actions), len(report.failed))

    def _failed(self, exc: Exception, seconds: float) -> None:
        error = as_fabric_error(exc)
        kind = error.kind.value if error is not None else "bug"
        if error is None:
            log.exception("cycle failed (a bug): %s", exc)
        else:
            log.warning("cycle failed (%s): %s", kind, error)
        self.metrics.cycle_failed(kind, seconds)
        now = self.engine.clock()
        self._status = self._next_status(now, error=f"{kind}: {error or exc}", counters=self._status.counters,
                                         reachable=error is None or error.kind is not ErrorKind.UFM, cycled=False)

    def _next_status(self, at: datetime, *, error: str | None, counters: dict[str, int], reachable: bool,
                     cycled: bool = True) -> RuntimeStatus:
        before = self._status
        return RuntimeStatus(started_at=before.started_at, dry_run=before.dry_run,
                             interval_seconds=before.interval_seconds,
                             last_poll_at=at if cycled else before.last_poll_at,
                             last_cycle_at=at if cycled else before.last_cycle_at, last_cycle_error=error,
                             ufm_reachable=reachable, view_refused_since=self.engine.view_refused_since,
                             guard=guard_figures(self.engine.guard, at), counters=counters)

    def _record_state(self, now: datetime) -> None:
        lifecycles = Counter(record.lifecycle for record in self.engine.state.components.values())
        self.metrics.state(lifecycles, self.engine.state.breaker.halted, guard_figures(self.engine.guard, now))

    async def drain(self, wait: float) -> bool:
        """Take no new cycle; wait up to ``wait`` seconds for the running one, then cancel it (before the store and
        the UFM client close under it). False: it did not finish in time."""
        self._stopping = True
        try:
            await asyncio.wait_for(self._idle.wait(), wait)
        except TimeoutError:
            if self._running is not None:
                self._running.cancel()
            await self._idle.wait()
            return False
        return True
