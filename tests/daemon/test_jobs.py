"""The scheduler's cycle job: never two at once, and every run skipped is counted."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from fabric.daemon.jobs import CYCLE_JOB, Job, start_scheduler, stop_taking_cycles
from fabric.daemon.metrics import DaemonMetrics


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
