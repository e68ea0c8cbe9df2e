"""The scheduler's skipped runs in the log: the first of a burst, then one summary a minute while the burst lasts.

A cycle that hangs on UFM, or takes longer than its interval through a storm, makes the scheduler skip a run of
it at every tick: a crash run logged 1,300 to 2,100 such lines and a simulated week 5,654, each twice, burying the
warnings that matter. Every skip is still counted (``fabric_scheduler_misfires``); the log says the first skip of a
job in full, then, as journald's rate limit does, how many more there were each ``window``. A window with none
ends the burst: the next skip of that job is said in full again.

APScheduler says each skip itself too ("Execution of job ... skipped: maximum number of running instances
reached", "Run time of job ... was missed by ..."), on its own loggers, besides the event this module hears: those
two lines are dropped where they are logged (``silence_apscheduler``), and nothing else of APScheduler's is.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable

__all__ = ["SKIP_WINDOW", "SkipLog", "silence_apscheduler"]

log = logging.getLogger(__name__)

SKIP_WINDOW = 60.0
"""Seconds a burst's skips are summed over before the summary is logged."""

WHY = {"missed": "it missed its time", "busy": "the previous run is still going"}
"""What each kind of skip (``fabric_scheduler_misfires``'s ``why``) means, for the log."""

_APSCHEDULER_SKIPS = {
    "apscheduler.scheduler": 'Execution of job "%s" skipped: maximum number of running instances reached (%d)',
    "apscheduler.executors.default": 'Run time of job "%s" was missed by %s',
}
"""APScheduler's loggers and the message templates they say a skip with (APScheduler 3.x)."""


class _DropTemplate(logging.Filter):
    def __init__(self, template: str) -> None:
        super().__init__()
        self.template = template

    def filter(self, record: logging.LogRecord) -> bool:
        return record.msg != self.template


_FILTERS = {name: _DropTemplate(template) for name, template in _APSCHEDULER_SKIPS.items()}


def silence_apscheduler() -> None:
    """APScheduler's own line for each skip dropped (``SkipLog`` says it, once a burst). Idempotent: a logger keeps
    one copy of a filter however often it is added."""
    for name, dropped in _FILTERS.items():
        logging.getLogger(name).addFilter(dropped)


class SkipLog:
    """``skipped`` for every run the scheduler skips; ``later(seconds, callback)`` calls back once that many seconds
    have passed (the loop's ``call_later``), when the window's summary is due."""

    def __init__(self, later: Callable[[float, Callable[[], None]], object], window: float = SKIP_WINDOW) -> None:
        self._later = later
        self.window = window
        self._bursts: dict[str, Counter[str]] = {}
        """The skips since the last line, by job and why, of the jobs whose burst goes on."""

    def skipped(self, job_id: str, why: str) -> None:
        burst = self._bursts.get(job_id)
        if burst is not None:
            burst[why] += 1
            return
        log.warning("scheduler: a run of job %s was skipped (%s); more skips of it are summed up every %.0f s",
                    job_id, WHY[why], self.window)
        self._open(job_id)

    def _open(self, job_id: str) -> None:
        self._bursts[job_id] = Counter()
        self._later(self.window, lambda: self._summed(job_id))

    def _summed(self, job_id: str) -> None:
        burst = self._bursts.pop(job_id)
        if not burst:
            return  # a quiet window: the burst is over
        kinds = ", ".join(f"{count} {why}" for why, count in sorted(burst.items()))
        log.warning("scheduler: %d more runs of job %s skipped in the last %.0f s (%s)", burst.total(), job_id,
                    self.window, kinds)
        self._open(job_id)
