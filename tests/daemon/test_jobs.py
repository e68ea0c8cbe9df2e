"""The scheduler's cycle job: never two at once, every run skipped counted, and logged once a burst."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable
from datetime import timedelta

import pytest

from fabric.daemon.jobs import CYCLE_JOB, Job, start_scheduler, stop_taking_cycles
from fabric.daemon.metrics import DaemonMetrics
from fabric.daemon.skips import SkipLog


def test_a_cycle_longer_than_the_interval_is_not_joined_by_a_second_and_the_skip_is_counted() -> None:
    async def scenario() -> tuple[int, int, float]:
        metrics = DaemonMetrics()
        release = asyncio.Event()
        running = peak = 0
        skipped = 0.0

        async def cycle() -> None:
            nonlocal running, peak
            running += 1
            peak = max(peak, running)
            await release.wait()
            running -= 1

        scheduler = start_scheduler([Job(CYCLE_JOB, cycle, timedelta(seconds=1), at_once=True)], metrics,
                                    asyncio.get_running_loop())
        try:
            for _ in range(100):  # bounded: the second run is due one second after the first started
                skipped = metrics.registry.get_sample_value("fabric_scheduler_misfires_total",
                                                            {"job_name": CYCLE_JOB, "why": "busy"}) or 0.0
                if skipped:
                    break
                await asyncio.sleep(0.05)
            stop_taking_cycles(scheduler)
            release.set()
            await asyncio.sleep(0)
        finally:
            scheduler.shutdown(wait=False)
        return peak, running, skipped

    peak, running, skipped = asyncio.run(scenario())
    assert peak == 1 and running == 0
    assert skipped >= 1


def test_a_burst_of_skipped_runs_is_one_warning_then_a_summary_and_every_skip_is_counted(
        caplog: pytest.LogCaptureFixture) -> None:
    """A cycle hung for many intervals: the counter has every skip, the log the first and then how many more (not
    APScheduler's line besides ours for each)."""
    window = 1.0

    async def scenario() -> float:
        metrics = DaemonMetrics()
        hung = asyncio.Event()

        async def cycle() -> None:
            await hung.wait()

        scheduler = start_scheduler([Job(CYCLE_JOB, cycle, timedelta(seconds=0.1), at_once=True)], metrics,
                                    asyncio.get_running_loop(), skip_window=window)
        try:
            for _ in range(100):  # bounded: a skip every 0.1 s
                if _skips(metrics) >= 8:
                    break
                await asyncio.sleep(0.05)
            stop_taking_cycles(scheduler)
            await asyncio.sleep(window * 2.5)  # the summary of the burst's window, then a quiet window ends it
            hung.set()
        finally:
            scheduler.shutdown(wait=False)
        return _skips(metrics)

    with caplog.at_level(logging.WARNING):
        skips = asyncio.run(scenario())
    lines = [record.getMessage() for record in caplog.records if "job" in record.getMessage()]
    assert skips >= 8
    assert lines[0] == ("scheduler: a run of job cycle was skipped (the previous run is still going); more skips of "
                        "it are summed up every 1 s")
    summary = re.compile(r"scheduler: (\d+) more runs of job cycle skipped in the last 1 s \(\d+ busy\)$")
    summed = [int(match[1]) for line in lines[1:] if (match := summary.match(line))]
    assert len(summed) == len(lines) - 1 >= 1, lines
    assert 1 + sum(summed) == skips


def test_a_skip_after_a_quiet_window_is_said_in_full_again(caplog: pytest.LogCaptureFixture) -> None:
    due: list[Callable[[], None]] = []
    said = SkipLog(lambda _seconds, callback: due.append(callback), window=60)
    with caplog.at_level(logging.WARNING):
        said.skipped("cycle", "busy")
        said.skipped("cycle", "busy")
        said.skipped("cycle", "missed")
        said.skipped("reconcile", "busy")  # a burst of its own
        due.pop(0)()  # cycle's window: two more
        due.pop(0)()  # reconcile's: none, its burst is over
        due.pop(0)()  # cycle's next window: none either
        said.skipped("cycle", "missed")
    assert [record.getMessage() for record in caplog.records] == [
        "scheduler: a run of job cycle was skipped (the previous run is still going); more skips of it are summed up "
        "every 60 s",
        "scheduler: a run of job reconcile was skipped (the previous run is still going); more skips of it are "
        "summed up every 60 s",
        "scheduler: 2 more runs of job cycle skipped in the last 60 s (1 busy, 1 missed)",
        "scheduler: a run of job cycle was skipped (it missed its time); more skips of it are summed up every 60 s",
    ]


def _skips(metrics: DaemonMetrics) -> float:
    return metrics.registry.get_sample_value("fabric_scheduler_misfires_total",
                                             {"job_name": CYCLE_JOB, "why": "busy"}) or 0.0

