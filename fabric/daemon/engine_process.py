"""The engine's process of ``fabricctl run``: leadership, the scheduler and the engine's cycles, apart from the API.

Started by the daemon's API process (``fabric.daemon.supervisor``) as ``fabricctl engine`` (a command not shown in
the help), it ends with it (``PR_SET_PDEATHSIG``). On PostgreSQL it stands by until this instance leads
(``fabric.daemon.leader``); then it starts the engine on the fenced store of its epoch (settling what a crash left
pending), applies the garbage collector's policy and runs the scheduler's jobs (``fabric.daemon.jobs``). A lost
leadership stops the jobs at once, drops the engine and stands by again.

It tells the API process what it does through its status record (``status_record``: its status and metrics, every
``WRITE_EVERY`` seconds), and takes its requests through the store and a signal: SIGUSR1, something waits to be acted
on (the cycle runs now); SIGHUP, the reloads asked of this instance (``reload_requests``), or a reload of its own
when none is waiting. SIGTERM or SIGINT: no new job starts, the running one may finish within ``[daemon]
shutdown_wait``, the store is closed, exit 0 (a job cut short is what a crash would leave, and ``start`` settles it
at the next start).

Two loops, as before the API moved out: the scheduler's, the leadership's and the status record's on the main
thread, the engine's (its cycles, the UFM client, the simulator's clock, its store writes) on a thread of its own
(``EngineLoop``), so that a long cycle holds no heartbeat and no status record.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import os
import signal
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabric import wiring
from fabric.api.context import Reload
from fabric.config import ConfigError, ServiceConfig, load_config
from fabric.daemon.clock import Clock, ClockKind, make_clock
from fabric.daemon.gcpolicy import apply_gc_policy, release_freed_memory, widen_young_generation
from fabric.daemon.jobs import CYCLE_JOB, run_soon, start_scheduler, stop_taking_cycles
from fabric.daemon.leader import Leadership
from fabric.daemon.metrics import DaemonMetrics
from fabric.daemon.plan_handoff import hand_over
from fabric.daemon.preflight import StartError, preflight, warnings
from fabric.daemon.reload_requests import outcome_text
from fabric.daemon.runtime import DaemonRuntime, InstanceRuntime
from fabric.daemon.sessions import store_session
from fabric.daemon.status_record import WRITE_EVERY, StatusRecord, write_record
from fabric.daemon.worker import EngineLoop
from fabric.errors import ErrorKind, FabricError
from fabric.store import StaleEpochError, Store, database_errors
from fabric.ufm.client import JobPollPolicy, RetryPolicy
from fabric.ufm.connect import UfmTarget
from fabric.ufm.errors import UfmAuthError
from topology.model import Fabric
from topology.redact import redacted_url

log = logging.getLogger(__name__)

_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True, slots=True)
class EngineOptions:
    config_path: Path
    run_dir: Path
    """Where the status record is written (the API process's run directory)."""
    instance: str
    """This daemon instance (its API process's ``host:pid``): the leadership's and the reload requests' name."""
    parent: int
    """The API process's pid: this process ends with it."""
    api: str
    """Where the API process serves (for the log line that says the daemon runs)."""
    clock: ClockKind = ClockKind.SYSTEM


def run_engine(options: EngineOptions) -> None:
    """Run until SIGTERM/SIGINT or the API process's end; a ``FabricError`` for every refusal to start."""
    _end_with_parent(options.parent)
    widen_young_generation()  # before the plan is read: start-up's objects all live on
    config = load_config(options.config_path)
    if config.daemon.engine_niceness:
        # Always allowed: a process may lower its own priority (``[daemon] engine_niceness``).
        os.nice(config.daemon.engine_niceness)
    checked = preflight(config)
    if checked.problems or checked.plan is None:
        raise ConfigError(checked.problems[:1] or ["fabric.plan: does not read"])
    hand_over(options.run_dir, checked.plan)  # the API process serves once it has the plan's index
    asyncio.run(_serve(config, checked.plan, options))


def _end_with_parent(parent: int) -> None:
    """SIGKILL from the kernel when the API process ends: an engine acting for a daemon that is gone would act
    for nobody's API, and keep the SQLite lock's promise of one instance only by chance."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # it ended before the request took effect
        raise SystemExit(0)


async def _serve(config: ServiceConfig, plan: Fabric, options: EngineOptions) -> None:
    target = config.ufm.target()
    with EngineLoop() as engine_loop:
        clock = make_clock(options.clock, target.url)  # read and moved on the engine's loop only
        try:
            await engine_loop.run(clock.sync())
            await _serve_with(config, plan, options, target, clock, engine_loop)
        finally:
            await engine_loop.run(clock.aclose())


async def _serve_with(config: ServiceConfig, plan: Fabric, options: EngineOptions, target: UfmTarget,
                      clock: Clock, engine_loop: EngineLoop) -> None:
    url = config.store.url
    with database_errors(url):
        # Its sessions named after the instance: a standby ends them all if this one hangs while leading.
        store = wiring.open_existing_store(url, fabric=config.fabric.name, read_only=False, clock=clock.now,
                                           application_name=store_session(config.fabric.name, options.instance))
    leadership = None
    try:
        with database_errors(url):
            leadership = Leadership.for_store(store, config.leader, options.instance)
        await _start(config, plan, options, target, clock, store, engine_loop, leadership)
    finally:
        if leadership is not None:
            leadership.close()
        store.close()


async def _start(config: ServiceConfig, plan: Fabric, options: EngineOptions, target: UfmTarget, clock: Clock,
                 store: Store, engine_loop: EngineLoop, leadership: Leadership) -> None:
    auth = target.auth()
    tickets = wiring.ticket_backend(store, clock=clock.now, config=config)
    client = wiring.ufm_client(target.url, auth, retry=RetryPolicy(), job_poll=JobPollPolicy(), sleep=clock.sleep,
                               verify=not target.insecure, ca_bundle=target.ca_bundle)
    telemetry = wiring.telemetry_feed(config)
    metrics = DaemonMetrics()
    metrics.watch_leadership(leadership.status)
    instance = InstanceRuntime(config, clock.now(), leadership.status)

    def lead() -> DaemonRuntime:
        """The engine of this instance's epoch, every write of it fenced by the epoch and the lease."""
        fence = leadership.fence()
        engine = wiring.build_engine(plan, client, store.fenced(fence), tickets,
                                     wiring.engine_settings(config, fence.epoch), clock.now, telemetry)
        running = DaemonRuntime(engine, config, str(options.config_path), engine_loop, clock.sync, metrics,
                                clock.now())
        running.report_with(record)
        return running

    def record() -> None:
        if instance.running is None and not leadership.tried:
            return  # no role yet: the API process reports the engine as starting meanwhile
        write_record(options.run_dir, StatusRecord(os.getpid(), time.monotonic(), clock.now(), instance.status(),
                                                   metrics.render().decode()))

    try:
        await _run_loop(config, instance, lead, leadership, Requests(store, instance, options), record, target,
                        options.api)
    finally:
        await engine_loop.run(client.aclose())
        if telemetry is not None:
            await engine_loop.run(telemetry.aclose())


@dataclass(slots=True)
class Requests:
    """What the API process asks of this engine process: reloads through the store, wake-ups by signal."""

    store: Store
    instance: InstanceRuntime
    options: EngineOptions
    reloading: asyncio.Lock = field(default_factory=asyncio.Lock)
    """One reload at a time: each compares the file with the configuration the one before applied."""

    async def settle_left(self) -> None:
        """Reloads asked of a previous engine process of this instance that it did not answer: this one read the
        file at its start, which is what they asked."""
        for request in await asyncio.to_thread(self.store.pending_reloads, self.options.instance):
            said = Reload(f"reload: the engine process started again and read {self.options.config_path} at its "
                          "start")
            await asyncio.to_thread(self.store.handle_request, request.id, outcome_text(said))

    async def reload(self) -> None:
        """The reloads waiting for this instance, each answered in its row; a reload of its own when none waits
        (SIGHUP sent by an operator or systemd's ``ExecReload``)."""
        async with self.reloading:
            waiting = await asyncio.to_thread(self.store.pending_reloads, self.options.instance)
            if not waiting:
                await self.instance.reload()  # it logs what came of it
                return
            for request in waiting:
                outcome = await self.instance.reload()
                await asyncio.to_thread(self.store.handle_request, request.id, outcome_text(outcome))


async def _record_every(record: Callable[[], None]) -> None:
    """The status record written every ``WRITE_EVERY`` seconds, for as long as the process runs."""
    while True:
        try:
            record()
        except OSError as exc:  # the run directory gone (the API process ended): the kernel ends this one too
            log.warning("the status record cannot be written: %s", exc)
        await asyncio.sleep(WRITE_EVERY)


async def _run_loop(config: ServiceConfig, instance: InstanceRuntime, lead: Callable[[], DaemonRuntime],
                    leadership: Leadership, requests: Requests, record: Callable[[], None], target: UfmTarget,
                    api: str) -> None:
    """Stand by until this instance leads; start the engine; then run the jobs until SIGTERM or SIGINT, or until
    the leadership is lost."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    tasks: set[asyncio.Task[None]] = set()

    def later(work: Callable[[], Coroutine[Any, Any, None]]) -> Callable[[], None]:
        def start() -> None:
            task = loop.create_task(work())
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        return start

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    loop.add_signal_handler(signal.SIGHUP, later(requests.reload))
    loop.add_signal_handler(signal.SIGUSR1, instance.wake)
    recording = loop.create_task(_record_every(record))
    stopping = loop.create_task(stop.wait())
    try:
        await requests.settle_left()
        while await leadership.acquire(stop):  # standing by meanwhile; False: SIGTERM came first
            if not await _term(config, instance, lead(), leadership, stopping, target, api):
                leadership.let_go()
                break
            epoch, instance.running = leadership.epoch, None
            leadership.stand_by()
            log.warning("fabric %s: this instance (%s) stopped acting for epoch %s: it stands by again",
                        config.fabric.name, leadership.instance, epoch)
    finally:
        stopping.cancel()
        recording.cancel()
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR1):
            loop.remove_signal_handler(sig)
    log.info("the engine process stopped")


async def _term(config: ServiceConfig, instance: InstanceRuntime, runtime: DaemonRuntime, leadership: Leadership,
                stopping: asyncio.Task[bool], target: UfmTarget, api: str) -> bool:
    """One term of leadership: the engine started and its jobs run until SIGTERM or the leadership lost. True:
    lost (its store refused the engine's writes from the moment the lease ran out)."""
    instance.running = runtime
    lost = asyncio.ensure_future(leadership.watch())
    try:
        if await _started(runtime, stopping, target):
            await _run_jobs(config, runtime, stopping, lost, api)
    except StaleEpochError as exc:  # start-up refused by the fence: deposed before the heartbeat said so
        log.error("the engine's start-up was refused: %s", exc)
        return True
    finally:
        lost.cancel()
    return lost.done() and not lost.cancelled()


async def _started(runtime: DaemonRuntime, stopping: asyncio.Task[bool], target: UfmTarget) -> bool:
    """The engine started; False when SIGTERM came first: nothing was decided yet, and what start-up left unsettled
    the next start settles."""
    starting = asyncio.ensure_future(runtime.start())
    await asyncio.wait({stopping, starting}, return_when=asyncio.FIRST_COMPLETED)
    if not starting.done():
        log.info("stopping during start-up")
        starting.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await starting
        return False
    try:
        starting.result()
    except UfmAuthError as exc:
        raise StartError(f"UFM at {redacted_url(target.url)} refused the credentials of user {target.user!r} "
                         f"({exc.status_code or 'login failed'}): check [ufm] user and auth and the "
                         "password or token (FABRIC_UFM__PASSWORD, FABRIC_UFM__TOKEN, ufm.secret_file)") from None
    except FabricError as exc:
        if exc.kind is not ErrorKind.UFM:
            raise
        # Which UFM: a daemon's configuration may come from a file, the environment and a credential at once.
        raise StartError(f"UFM at {redacted_url(target.url)}: {exc}") from None
    apply_gc_policy()
    # What start-up read and built for itself alone (UFM's lists, the as-built model) is free now: given back before
    # the first cycle rather than after it, when the API process's memory and the engine's are at their largest.
    release_freed_memory()
    return True


async def _run_jobs(config: ServiceConfig, runtime: DaemonRuntime, stopping: asyncio.Task[bool],
                    lost: asyncio.Task[str], api: str) -> None:
    loop = asyncio.get_running_loop()
    scheduler = start_scheduler(runtime.jobs(), runtime.metrics, loop)

    def wake() -> None:
        loop.call_soon_threadsafe(run_soon, scheduler, CYCLE_JOB)

    runtime.wake_with(wake)
    log.info("fabric %s: serving %s, a cycle every %gs, %s", config.fabric.name, api,
             config.daemon.interval.total_seconds(), "dry run" if config.policy.dry_run else "live")
    for warning in warnings(config, runtime.engine.plan):  # `fabricctl config check` prints them too
        log.warning("%s", warning)
    await asyncio.wait({stopping, lost}, return_when=asyncio.FIRST_COMPLETED)
    stop_taking_cycles(scheduler)
    if lost.done():
        # Its store refuses every write already (the fence); the running job is cut short, not waited for.
        log.error("the leadership is lost (%s): no job runs any more", lost.result())
        await runtime.drain(0)
    else:
        log.info("stopping: no new cycle starts")
        wait = config.daemon.shutdown_wait.total_seconds()
        if not await runtime.drain(wait):
            log.warning("the running cycle did not finish within %gs: stopping anyway (the next start settles what "
                        "it left pending)", wait)
    scheduler.shutdown(wait=False)
