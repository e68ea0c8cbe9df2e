"""``fabricctl run``: start-up with its refusals, then one asyncio loop serving the API and running the cycles.

Start-up refuses, each with one line (a ``FabricError``: the CLI's handler makes it exit 2), before anything is
written or served: a bad configuration (``load_config`` names the file and the key), then the first problem
``fabric.daemon.preflight`` finds (``fabricctl config check`` reports them all): no ``[fabric] plan``, no UFM URL or
secret, no Jira token, a database that is missing, unreachable or not at this version's schema (``fabricctl store
migrate`` creates or migrates it: the daemon never does); its warnings are logged. Then: another daemon on the same
SQLite database (``lock``), UFM refusing the credentials (the engine's first read), a port the API cannot listen on.

Then: the API served at once; on PostgreSQL a standby until this instance leads (``fabric.daemon.leader``); the
engine started on the fenced store of its epoch (settling what a crash left pending), the garbage collector's
policy applied, the scheduler's jobs (``fabric.daemon.jobs``). A lost leadership stops the jobs at once, drops the
engine and stands by again. SIGTERM or SIGINT: no new job starts, the running one may
finish within ``[daemon] shutdown_wait``, the server stops, the store is closed, exit 0 (a job cut short is what a
crash would leave, and ``start`` settles it at the next start). SIGHUP: ``DaemonRuntime.reload``.

Two loops: the API's and the scheduler's on the main thread, the engine's (its cycles, the UFM client, the
simulator's clock, its store writes) on a thread of its own (``EngineLoop``), so a long cycle never holds a request;
the ticket backends run in worker threads of the engine's loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
from collections.abc import Callable, Generator
from dataclasses import dataclass
from pathlib import Path

import uvicorn
from fastapi import FastAPI

from fabric import wiring
from fabric.api.context import ApiContext, Reload
from fabric.api.plan_index import plan_index
from fabric.config import ConfigError, ServiceConfig, load_config
from fabric.daemon import lock
from fabric.daemon.app import build_app
from fabric.daemon.clock import Clock, ClockKind, make_clock
from fabric.daemon.gcpolicy import apply_gc_policy, widen_young_generation
from fabric.daemon.jobs import CYCLE_JOB, run_soon, start_scheduler, stop_taking_cycles
from fabric.daemon.leader import Leadership, instance_id
from fabric.daemon.metrics import DaemonMetrics
from fabric.daemon.preflight import preflight, warnings
from fabric.daemon.runtime import DaemonRuntime, InstanceRuntime
from fabric.daemon.sessions import store_session
from fabric.daemon.worker import EngineLoop
from fabric.errors import ErrorKind, FabricError
from fabric.serving import ServerConfig, bind_listener
from fabric.store import StaleEpochError, Store, database_errors
from fabric.ufm.client import JobPollPolicy, RetryPolicy
from fabric.ufm.connect import UfmTarget
from fabric.ufm.errors import UfmAuthError
from topology.model import Fabric
from topology.redact import redacted_url

log = logging.getLogger(__name__)



class StartError(FabricError):
    """The daemon cannot start as configured."""

    kind = ErrorKind.CONFIG


@dataclass(frozen=True, slots=True)
class RunOptions:
    config_path: Path
    clock: ClockKind = ClockKind.SYSTEM


def run(options: RunOptions) -> None:
    """Start, serve until SIGTERM/SIGINT, stop cleanly; a ``FabricError`` for every refusal to start."""
    widen_young_generation()  # before the plan is read: start-up's objects all live on
    config = load_config(options.config_path)
    checked = preflight(config)  # what `fabricctl config check` reports: the first problem is the refusal
    if checked.problems or checked.plan is None:
        raise ConfigError(checked.problems[:1] or ["fabric.plan: does not read"])
    asyncio.run(_serve(config, checked.plan, options))


def _listen(config: ServiceConfig) -> socket.socket:
    """The API's socket, bound before anything starts (uvicorn would exit 1 on its own, after the engine)."""
    host, port = config.api.host, config.api.port
    try:
        # Made with IPPROTO_TCP, so that asyncio sets TCP_NODELAY on each accepted connection: without it, an
        # answer written in two parts waits for the client's delayed ACK, 40 ms on every keep-alive request.
        sock = bind_listener(host, port)
    except ValueError as exc:
        raise StartError(f"api.host/api.port: {exc}") from None
    sock.listen()
    sock.setblocking(False)
    return sock


async def _serve(config: ServiceConfig, plan: Fabric, options: RunOptions) -> None:
    target = config.ufm.target()
    with EngineLoop() as engine_loop:
        clock = make_clock(options.clock, target.url)  # read and moved on the engine's loop only
        try:
            await engine_loop.run(clock.sync())
            await _serve_with(config, plan, options, target, clock, engine_loop)
        finally:
            await engine_loop.run(clock.aclose())


async def _serve_with(config: ServiceConfig, plan: Fabric, options: RunOptions, target: UfmTarget,
                      clock: Clock, engine_loop: EngineLoop) -> None:
    url, instance = config.store.url, instance_id()
    with database_errors(url):
        # Its sessions named after the instance: a standby ends them all if this one hangs while leading.
        store = wiring.open_existing_store(url, fabric=config.fabric.name, read_only=False, clock=clock.now,
                                           application_name=store_session(config.fabric.name, instance))
    held = leadership = None
    try:
        held = lock.hold(store)
        with database_errors(url):
            leadership = Leadership.for_store(store, config.leader, instance)
        with _listen(config) as sock:
            await _start_and_serve(config, plan, options, target, clock, store, sock, engine_loop, leadership)
    finally:
        if leadership is not None:
            leadership.close()
        if held is not None:
            held.release()
        store.close()


async def _start_and_serve(config: ServiceConfig, plan: Fabric, options: RunOptions, target: UfmTarget,
                           clock: Clock, store: Store, sock: socket.socket, engine_loop: EngineLoop,
                           leadership: Leadership) -> None:
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
        return DaemonRuntime(engine, config, str(options.config_path), engine_loop, clock.sync, metrics, clock.now())

    # The API's index of the plan, built now, before start-up's state is frozen (``apply_gc_policy``): no request
    # waits for it (0.4 s on h100-32k), and the collector never walks its hundreds of thousands of entries.
    plan_index(plan)
    try:
        context = ApiContext(config=config, plan=plan, store=store, runtime=instance, clock=clock.now)
        await _run_loop(config, instance, lead, leadership, build_app(context, metrics), sock, metrics, target)
    finally:
        await engine_loop.run(client.aclose())
        if telemetry is not None:
            await engine_loop.run(telemetry.aclose())


class _Server(uvicorn.Server):
    """uvicorn without its own signal handling: the daemon's handlers stop the cycles first, then the server
    (uvicorn's would stop serving at once, then raise the signal again once done, killing the process)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


async def _run_loop(config: ServiceConfig, instance: InstanceRuntime, lead: Callable[[], DaemonRuntime],
                    leadership: Leadership, app: FastAPI, sock: socket.socket, metrics: DaemonMetrics,
                    target: UfmTarget) -> None:
    """Serve at once; stand by until this instance leads; start the engine meanwhile (settling a crash's pending
    writes may wait for UFM's jobs up to ``[ufm] job_deadline``, and a health check must not find the process dead
    meanwhile); then run the jobs until SIGTERM or SIGINT, or until the leadership is lost."""
    loop = asyncio.get_running_loop()
    server = _Server(ServerConfig(app, config.api.server_limits(), log_config=None, access_log=False, lifespan="off"))
    stop = asyncio.Event()
    reloads: set[asyncio.Task[Reload]] = set()

    def reload() -> None:
        task = loop.create_task(instance.reload())
        reloads.add(task)
        task.add_done_callback(reloads.discard)

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    loop.add_signal_handler(signal.SIGHUP, reload)
    serving = loop.create_task(server.serve(sockets=[sock]))
    stopping = loop.create_task(stop.wait())
    try:
        while await _leads(leadership, stop, serving):
            if not await _term(config, instance, lead(), leadership, sock, metrics, serving, stopping, target):
                leadership.let_go()
                break
            epoch, instance.running = leadership.epoch, None
            leadership.stand_by()
            log.warning("fabric %s: this instance (%s) stopped acting for epoch %s: it stands by again",
                        config.fabric.name, leadership.instance, epoch)
    finally:
        server.should_exit = True
        await serving
        stopping.cancel()
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            loop.remove_signal_handler(sig)
    log.info("stopped")


async def _term(config: ServiceConfig, instance: InstanceRuntime, runtime: DaemonRuntime, leadership: Leadership,
                sock: socket.socket, metrics: DaemonMetrics, serving: asyncio.Task[None], stopping: asyncio.Task[bool],
                target: UfmTarget) -> bool:
    """One term of leadership: the engine started and its jobs run until SIGTERM, the server ending, or the
    leadership lost. True: lost (its store refused the engine's writes from the moment the lease ran out)."""
    instance.running = runtime
    lost = asyncio.ensure_future(leadership.watch())
    try:
        if await _started(runtime, serving, stopping, target):
            await _run_jobs(config, runtime, sock, metrics, serving, stopping, lost)
    except StaleEpochError as exc:  # start-up refused by the fence: deposed before the heartbeat said so
        log.error("the engine's start-up was refused: %s", exc)
        return True
    finally:
        lost.cancel()
    return lost.done() and not lost.cancelled()


async def _leads(leadership: Leadership, stop: asyncio.Event, serving: asyncio.Task[None]) -> bool:
    """This instance leads (a standby serves meanwhile); False: SIGTERM, or the server ending, came first."""
    acquiring = asyncio.ensure_future(leadership.acquire(stop))
    await asyncio.wait({serving, acquiring}, return_when=asyncio.FIRST_COMPLETED)
    if not acquiring.done():
        acquiring.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await acquiring
        return False
    return acquiring.result()


async def _started(runtime: DaemonRuntime, serving: asyncio.Task[None], stopping: asyncio.Task[bool],
                   target: UfmTarget) -> bool:
    """The engine started while the API serves; False when SIGTERM (or the server ending) came first: nothing was
    decided yet, and what start-up left unsettled the next start settles."""
    starting = asyncio.ensure_future(runtime.start())
    await asyncio.wait({serving, stopping, starting}, return_when=asyncio.FIRST_COMPLETED)
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
    return True


async def _run_jobs(config: ServiceConfig, runtime: DaemonRuntime, sock: socket.socket, metrics: DaemonMetrics,
                    serving: asyncio.Task[None], stopping: asyncio.Task[bool], lost: asyncio.Task[str]) -> None:
    loop = asyncio.get_running_loop()
    scheduler = start_scheduler(runtime.jobs(), metrics, loop)

    def wake() -> None:
        loop.call_soon_threadsafe(run_soon, scheduler, CYCLE_JOB)

    runtime.wake_with(wake)
    host, port = sock.getsockname()[:2]
    log.info("fabric %s: serving http://%s:%d/api/v1, a cycle every %gs, %s", config.fabric.name, host, port,
             config.daemon.interval.total_seconds(), "dry run" if config.policy.dry_run else "live")
    for warning in warnings(config, runtime.engine.plan):  # `fabricctl config check` prints them too
        log.warning("%s", warning)
    await asyncio.wait({serving, stopping, lost}, return_when=asyncio.FIRST_COMPLETED)
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
