"""Waking the cycle: at once when idle; once more right after the running cycle, never into it (a skipped run).
Where a job's report is handled: on the engine's thread. And the ticket sender, which runs beside the cycle, never
reads the clock in the middle of one."""

from __future__ import annotations

import asyncio
import logging
import threading
from datetime import UTC, datetime

import pytest

from fabric.config import ServiceConfig
from fabric.controller.engine import CycleReport
from fabric.controller.outbox import OutboxReport
from fabric.daemon.metrics import DaemonMetrics
from fabric.daemon.runtime import DaemonRuntime
from fabric.daemon.worker import EngineLoop
from fabric.remediation.policy import PolicyState
from fabric.ufm.cursor import EventCursor
from topology.generate import PRESETS, fat_tree
from topology.guard import CapacityGuard

NOW = datetime(2026, 5, 1, 8, 0, tzinfo=UTC)


class HeldEngine:
    """An engine whose first cycle runs until released (its coroutines run on the engine's loop, in a thread)."""

    dry_run = True
    view_refused_since = None
    cursor = EventCursor()

    def __init__(self) -> None:
        self.guard = CapacityGuard(fat_tree(PRESETS["tiny"]))
        self.state = PolicyState()
        self.entered, self.release = threading.Event(), threading.Event()
        self.cycles = 0

    def clock(self) -> datetime:
        return NOW

    async def cycle(self, *, poll_tickets: bool, send_tickets: bool) -> CycleReport:
        self.cycles += 1
        if self.cycles == 1:
            self.entered.set()
            await asyncio.to_thread(self.release.wait, 10)
        return CycleReport(NOW)

    async def start(self) -> None:
        return None

    async def send_tickets(self) -> OutboxReport:
        return OutboxReport()


def test_a_wake_during_a_cycle_runs_the_cycle_again_after_it_and_a_wake_when_idle_at_once() -> None:
    async def scenario() -> list[str]:
        engine = HeldEngine()
        woken: list[str] = []

        async def synced() -> None:
            return None

        with EngineLoop() as loop:
            runtime = DaemonRuntime(engine, ServiceConfig(), "test.toml", loop, synced,  # type: ignore[arg-type]
                                    DaemonMetrics(), NOW)
            runtime.wake_with(lambda: woken.append("cycle now"))
            running = asyncio.ensure_future(runtime.cycle())
            await asyncio.to_thread(engine.entered.wait, 10)
            runtime.wake()  # a delivery stored while the cycle runs
            woken.append("during")
            engine.release.set()
            await running
            woken.append("after")
            runtime.wake()
        return woken

    assert asyncio.run(scenario()) == ["during", "cycle now", "after", "cycle now"]


def test_what_a_job_reports_is_logged_from_the_engines_thread_never_the_apis(caplog: pytest.LogCaptureFixture) -> None:
    """After a storm the cycle's report is thousands of decision lines: logged on the API's loop, they would hold
    every request behind them (``benchmarks/bench_daemon.py``). The job's summary comes from the engine's thread."""
    async def scenario() -> None:
        engine = HeldEngine()
        engine.release.set()

        async def synced() -> None:
            return None

        with EngineLoop() as loop:
            runtime = DaemonRuntime(engine, ServiceConfig(), "test.toml", loop, synced,  # type: ignore[arg-type]
                                    DaemonMetrics(), NOW)
            await runtime.cycle()

    with caplog.at_level(logging.INFO, logger="fabric.daemon.runtime"):
        asyncio.run(scenario())
    done = [record for record in caplog.records if record.getMessage().startswith("cycle done in")]
    assert [record.threadName for record in done] == ["engine"]


def test_the_ticket_sender_reads_the_clock_only_between_jobs() -> None:
    """A read of the simulator's clock makes a pending jump (``at_next_read``): read by the ticket sender in the
    middle of a cycle, it moved the time under that cycle, which then acted on events newer than its own time, and
    the chaos run's decisions landed a tick apart from its control's."""
    async def scenario() -> list[str]:
        engine = HeldEngine()
        reads: list[str] = []

        async def synced() -> None:
            held = engine.entered.is_set() and not engine.release.is_set()
            reads.append(f"clock read, cycle {'running' if held else 'not running'}")

        with EngineLoop() as loop:
            runtime = DaemonRuntime(engine, ServiceConfig(), "test.toml", loop, synced,  # type: ignore[arg-type]
                                    DaemonMetrics(), NOW)
            runtime.wake_with(lambda: None)
            await runtime.start()  # the sender waits for the start-up
            running = asyncio.ensure_future(runtime.cycle())
            await asyncio.to_thread(engine.entered.wait, 10)
            await runtime.send_tickets()  # beside the cycle: sends, reads no clock
            engine.release.set()
            await running
            await runtime.send_tickets()  # between jobs: reads it
        return reads

    assert asyncio.run(scenario()) == ["clock read, cycle not running", "clock read, cycle not running"]
