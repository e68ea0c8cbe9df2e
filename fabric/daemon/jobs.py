"""The scheduler: APScheduler 3.x's ``AsyncIOScheduler`` on the daemon's main loop, running the engine's jobs.

- ``cycle`` (``[daemon] interval``, the first at once): the event poll and the engine's cycle. It also runs at
  once when there is something to act on before its time: a webhook delivery stored, an operator's request, the
  ticket poll finding a repair (``run_soon``), so a repair is re-enabled, and the capacity it returns lets the
  guard reconsider deferred links, within seconds rather than an interval.
- ``reconcile`` (``[daemon] reconcile_interval``): UFM read again whatever its change counters say, and converged.
- ``ticket_poll`` (``[daemon] ticket_poll_interval``): the ticket backend asked for every open ticket, which heals
  a lost webhook delivery.
- ``ticket_send`` (``[daemon] ticket_send_interval``): the ticket writes due in the store's outbox sent. It runs
  beside the others, not after them: it touches only the tickets and the outbox, and a ticket system that takes
  its timeout to answer must hold no cycle (and no disable) behind it.

Probation and the guard's reconsideration of deferred links are decisions of the pure policy, taken by the cycle
from the state and the time it is given; as jobs of their own they would decide on a state a concurrent cycle is
changing. The runtime runs one job at a time on the engine (``DaemonRuntime``); each job also has
``max_instances=1`` and coalesces the runs it missed into one. Every run skipped (missed its time by more than the
grace period, or found its previous run still going) is counted (``fabric_scheduler_misfires``) and logged once a
burst, then summed up once a minute while the burst lasts (``fabric.daemon.skips``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from apscheduler.events import EVENT_JOB_MAX_INSTANCES, EVENT_JOB_MISSED, JobEvent
from apscheduler.schedulers.asyncio import AsyncIOScheduler

from fabric.daemon.metrics import DaemonMetrics
from fabric.daemon.skips import SKIP_WINDOW, SkipLog, silence_apscheduler

CYCLE_JOB, RECONCILE_JOB, TICKET_POLL_JOB, TICKET_SEND_JOB = "cycle", "reconcile", "ticket_poll", "ticket_send"


@dataclass(frozen=True, slots=True)
class Job:
    id: str
    run: Callable[[], Awaitable[None]]
    interval: timedelta
    at_once: bool = False
    """The first run at start-up rather than one interval after it."""


def start_scheduler(jobs: Sequence[Job], metrics: DaemonMetrics, loop: asyncio.AbstractEventLoop, *,
                    skip_window: float = SKIP_WINDOW) -> AsyncIOScheduler:
    """The scheduler started on ``loop`` with ``jobs``; its skipped runs summed up in the log every
    ``skip_window`` seconds while they go on."""
    scheduler = AsyncIOScheduler(event_loop=loop, timezone=UTC)
    silence_apscheduler()
    said = SkipLog(loop.call_later, skip_window)

    def skipped(event: JobEvent) -> None:
        # APScheduler calls its listeners on the loop it runs on (the executor's callbacks, its wake-ups).
        why = "missed" if event.code == EVENT_JOB_MISSED else "busy"
        metrics.misfires.labels(event.job_id, why).inc()
        said.skipped(event.job_id, why)

    scheduler.add_listener(skipped, EVENT_JOB_MISSED | EVENT_JOB_MAX_INSTANCES)
    now = datetime.now(UTC)
    for job in jobs:
        seconds = job.interval.total_seconds()
        scheduler.add_job(job.run, "interval", seconds=seconds, id=job.id, max_instances=1, coalesce=True,
                          misfire_grace_time=max(1, int(seconds / 2)),
                          next_run_time=now if job.at_once else now + job.interval)
    scheduler.start()
    return scheduler


def run_soon(scheduler: AsyncIOScheduler, job_id: str) -> None:
    """Run ``job_id`` now rather than at its time (its interval then counts from now). Thread-safe."""
    scheduler.modify_job(job_id, next_run_time=datetime.now(UTC))


def stop_taking_cycles(scheduler: AsyncIOScheduler) -> None:
    """No new run of any job starts; one running goes on (``DaemonRuntime.drain`` waits for it)."""
    scheduler.pause()
