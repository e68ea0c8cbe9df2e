"""The scheduler: APScheduler 3.x's ``AsyncIOScheduler`` on the daemon's loop, running the cycle job.

The cycle job (the event poll and the engine's cycle, one coroutine) runs every ``[daemon] interval``, the first
at once. ``max_instances=1``: a cycle longer than the interval is never joined by a second one; ``coalesce``: runs
missed meanwhile become one. Every run skipped (missed its time by more than the grace period, or found the
previous run still going) is logged and counted (``fabric_scheduler_misfires``). The issue's other jobs (state
reconcile, probation checks, the ticket fallback poll, guard re-optimisation) are parts of the engine's cycle
today; they get jobs of their own when they leave it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

from apscheduler.events import EVENT_JOB_MAX_INSTANCES, EVENT_JOB_MISSED, JobEvent
from apscheduler.schedulers.asyncio import AsyncIOScheduler

from fabric.daemon.metrics import DaemonMetrics

log = logging.getLogger(__name__)

CYCLE_JOB = "cycle"


def start_scheduler(cycle: Callable[[], Awaitable[None]], interval: timedelta, metrics: DaemonMetrics,
                    loop: asyncio.AbstractEventLoop) -> AsyncIOScheduler:
    """The scheduler started on ``loop``, ``cycle`` (``DaemonRuntime.cycle``) due at once."""
    scheduler = AsyncIOScheduler(event_loop=loop, timezone=UTC)

    def skipped(event: JobEvent) -> None:
        why = "missed" if event.code == EVENT_JOB_MISSED else "busy"
        metrics.misfires.labels(event.job_id, why).inc()
        log.warning("scheduler: a run of job %s was skipped (%s)", event.job_id,
                    "it missed its time" if why == "missed" else "the previous run is still going")

    scheduler.add_listener(skipped, EVENT_JOB_MISSED | EVENT_JOB_MAX_INSTANCES)
    scheduler.add_job(cycle, "interval", seconds=interval.total_seconds(), id=CYCLE_JOB,
                      max_instances=1, coalesce=True, misfire_grace_time=max(1, int(interval.total_seconds() / 2)),
                      next_run_time=datetime.now(UTC))
    scheduler.start()
    return scheduler


def stop_taking_cycles(scheduler: AsyncIOScheduler) -> None:
    """No new run of any job starts; one running goes on (``DaemonRuntime.drain`` waits for it)."""
    scheduler.pause()
