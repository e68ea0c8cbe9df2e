"""``fabricctl run``: start-up with its refusals, then the API served here and the engine run in a process of its own.

Start-up refuses, each with one line (a ``FabricError``: the CLI's handler makes it exit 2), before anything is
written or served: a bad configuration (``load_config`` names the file and the key), then the first problem
``fabric.daemon.preflight`` finds (``fabricctl config check`` reports them all): no ``[fabric] plan``, no UFM URL or
secret, no Jira token, a database that is missing, unreachable or not at this version's schema (``fabricctl store
migrate`` creates or migrates it: the daemon never does); its warnings are logged. Then: another daemon on the same
SQLite database (``lock``), a port the API cannot listen on; and, from the engine's process, a plan that does not
read and UFM refusing the credentials (its one line, and this process exits 2 with it). The plan is read once, by
the engine's process, once the SQLite lock is held: it hands this one the index the API reads (host health, the
components' filters: ``plan_handoff``), and the API serves once it has it. Only when the engine process exits before
handing it over does this one read the plan itself, so that it serves and says the engine is not running.

Two processes, one command and one systemd unit: this one serves the API (uvicorn, the store's reads, webhook
receipt, host health from the plan's index) and supervises the engine's (``fabric.daemon.engine_process``:
leadership, the scheduler, the cycles, every UFM and ticket write), started again when it exits unasked
(``fabric.daemon.supervisor``). The API never waits on a cycle: it answers from the store and from the engine
process's status record (``status_record``), and reaches the engine through the store and signals
(``engine_link``). SIGTERM or SIGINT: the engine process is stopped (the running job may finish within ``[daemon]
shutdown_wait``), then the server, the store is closed, exit 0. SIGHUP: passed on to the engine process, which
reloads.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import signal
import socket
import sys
import tempfile
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path

import uvicorn

from fabric import wiring
from fabric.api.context import ApiContext, RuntimeStatus
from fabric.api.plan_index import PlanIndex, plan_index
from fabric.config import ConfigError, ServiceConfig, load_config
from fabric.daemon import lock
from fabric.daemon.api_metrics import ApiMetrics
from fabric.daemon.app import build_app
from fabric.daemon.clock import Clock, ClockKind, SimulatorClock, make_clock
from fabric.daemon.engine_link import EngineClock, EngineLink
from fabric.daemon.gcpolicy import apply_gc_policy, release_freed_memory, widen_young_generation
from fabric.daemon.leader import instance_id
from fabric.daemon.logs import LogFormat
from fabric.daemon.plan_handoff import handed_over
from fabric.daemon.preflight import StartError, preflight, read_plan
from fabric.daemon.sessions import store_session
from fabric.daemon.status_record import RecordReader
from fabric.daemon.supervisor import REFUSED, EngineSupervisor
from fabric.errors import FabricError
from fabric.serving import ServerConfig, bind_listener
from fabric.store import Store, database_errors
from topology.readcaches import forget_read_names

log = logging.getLogger(__name__)

HANDOFF_POLL = 0.05
"""Seconds between two looks for the plan's index the engine process hands over at its start."""
PLAN_REFUSAL_WAIT = 60.0
"""Seconds the API process waits for the engine's to refuse a plan it could not read itself."""
ENGINE_COMMAND = "engine"
"""The ``fabricctl`` command that runs the engine's process (``fabric.cli.run.engine``; not in the help)."""


@dataclass(frozen=True, slots=True)
class RunOptions:
    config_path: Path
    clock: ClockKind = ClockKind.SYSTEM
    log_format: LogFormat = LogFormat.JSON


def run(options: RunOptions) -> None:
    """Start, serve until SIGTERM/SIGINT, stop cleanly; a ``FabricError`` for every refusal to start, exit 2 when
    the engine's process refused (it said why)."""
    widen_young_generation()  # before the plan is read: start-up's objects all live on
    config = load_config(options.config_path)
    # What `fabricctl config check` reports, the plan apart: the first problem is the refusal. The plan is read once
    # the engine's process is started (it reads it too, at the same time).
    checked = preflight(config, plan=False)
    if checked.problems:
        raise ConfigError(checked.problems[:1])
    code = asyncio.run(_serve(config, options))
    if code is not None:
        raise SystemExit(code)


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


async def _plan_index(config: ServiceConfig, run_dir: Path, supervisor: EngineSupervisor,
                      supervising: asyncio.Task[int | None]) -> PlanIndex | None:
    """The plan's index as the engine process hands it over (``plan_handoff``), or read here from the plan when
    the engine process exited before it did (the API then serves meanwhile, and says the engine is not running).
    ``None``: the supervisor ended first (the engine refused to start, or SIGTERM came)."""
    while (index := handed_over(run_dir)) is None:
        if supervising.done():
            return None
        if supervisor.view().restarts:
            return await asyncio.to_thread(_index_of_plan, config)
        await asyncio.wait({supervising}, timeout=HANDOFF_POLL)
    return index


def _index_of_plan(config: ServiceConfig) -> PlanIndex:
    """The plan's index read here, all the API reads of it: the model goes, and the memory it held back to the
    system."""
    plan = read_plan(config)
    index = plan_index(plan)
    del plan
    forget_read_names()
    gc.collect()
    release_freed_memory()
    return index


async def _serve(config: ServiceConfig, options: RunOptions) -> int | None:
    clock = make_clock(options.clock, config.ufm.target().url)
    try:
        await clock.sync()
    finally:
        await clock.aclose()
    # The simulator's time is read once, then followed as the engine reports it: a read of it here could make an
    # advance meant for the engine's next read (``at_next_read``).
    followed = EngineClock(clock.now()) if isinstance(clock, SimulatorClock) else None
    return await _serve_with(config, options, clock if followed is None else followed, followed)


async def _serve_with(config: ServiceConfig, options: RunOptions, clock: Clock | EngineClock,
                      followed: EngineClock | None) -> int | None:
    url, instance = config.store.url, instance_id()
    with database_errors(url):
        # Named as the engine process's sessions: a standby that ends a hung leader's ends this instance's.
        store = wiring.open_existing_store(url, fabric=config.fabric.name, read_only=False, clock=clock.now,
                                           application_name=store_session(config.fabric.name, instance))
    held = None
    try:
        held = lock.hold(store)  # for the process's life: the engine process's restarts stay within it
        with _listen(config) as sock, _run_directory() as run_dir:
            return await _run(config, options, clock, store, sock, run_dir, instance, followed)
    finally:
        if held is not None:
            held.release()
        store.close()


@contextlib.contextmanager
def _run_directory() -> Generator[Path, None, None]:
    """Where the engine process writes its status record: private to this instance (mode 0700), under systemd's
    ``RuntimeDirectory`` when the unit has one."""
    with tempfile.TemporaryDirectory(prefix="fabric-run-", dir=os.environ.get("RUNTIME_DIRECTORY")) as path:
        yield Path(path)


def engine_command(options: RunOptions, run_dir: Path, instance: str, api: str) -> list[str]:
    return [sys.executable, "-m", "fabric.cli", ENGINE_COMMAND, "--config", str(options.config_path),
            "--clock", options.clock.value, "--log-format", options.log_format.value, "--run-dir", str(run_dir),
            "--instance", instance, "--parent", str(os.getpid()), "--api", api]


async def _run(config: ServiceConfig, options: RunOptions, clock: Clock | EngineClock, store: Store,
               sock: socket.socket, run_dir: Path, instance: str, followed: EngineClock | None) -> int | None:
    """Start the engine's process; serve once it has handed over the plan's index, until SIGTERM or SIGINT (or the
    engine's refusal to start); then stop the engine's process, and the server."""
    loop = asyncio.get_running_loop()
    host, port = sock.getsockname()[:2]
    api = f"http://{host}:{port}/api/v1"  # the engine process says it with its first cycle, as it did in this one
    supervisor = EngineSupervisor(engine_command(options, run_dir, instance, api),
                                  shutdown_wait=config.daemon.shutdown_wait.total_seconds(), now=clock.now)
    before = RuntimeStatus(started_at=clock.now(), dry_run=config.policy.dry_run,
                           interval_seconds=config.daemon.interval.total_seconds())
    link = EngineLink(supervisor, RecordReader(run_dir), store, instance, before)
    if followed is not None:
        followed.link = link
    metrics = ApiMetrics()
    metrics.watch_engine(link.process)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    loop.add_signal_handler(signal.SIGHUP, supervisor.signal, signal.SIGHUP)
    supervising = loop.create_task(supervisor.run(stop))
    server: _Server | None = None
    serving: asyncio.Task[None] | None = None
    refused = None
    try:
        try:
            index = await _plan_index(config, run_dir, supervisor, supervising)
        except FabricError:
            refused = await _refused_too(supervising, stop)
            if refused is None:
                raise
            return refused
        if index is None:  # the engine process refused to start (it said why), or SIGTERM came first
            refused = supervising.result()
            return refused
        apply_gc_policy()  # the index, start-up's, out of the collector's sight
        context = ApiContext(config=config, index=index, store=store, runtime=link, clock=clock.now)
        metrics.watch_golden(lambda: context.golden.count(store, clock.now(), config.golden.clean_for))
        app = build_app(context, metrics, link.engine_metrics)
        server = _Server(ServerConfig(app, config.api.server_limits(), log_config=None, access_log=False,
                                      lifespan="off"))
        serving = loop.create_task(server.serve(sockets=[sock]))
        await asyncio.wait({serving, supervising}, return_when=asyncio.FIRST_COMPLETED)
        if not supervising.done():
            log.info("stopping: the engine process first")
        stop.set()
        refused = await supervising
        return refused
    finally:
        stop.set()
        if not supervising.done():
            await supervising
        if server is not None and serving is not None:
            server.should_exit = True
            await serving
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            loop.remove_signal_handler(sig)
        if serving is not None and refused is None:  # a refusal is one line, and the last
            log.info("stopped")


async def _refused_too(supervising: asyncio.Task[int | None], stop: asyncio.Event) -> int | None:
    """The plan does not read here: the engine's process, reading the same file, refuses it too, in the one line
    of a refusal (``REFUSED``). ``None``: it did not within ``PLAN_REFUSAL_WAIT`` (it is stopped; this process then
    says why itself)."""
    done, _ = await asyncio.wait({supervising}, timeout=PLAN_REFUSAL_WAIT)
    if done and supervising.result() == REFUSED:
        return REFUSED
    stop.set()
    await supervising
    return None


class _Server(uvicorn.Server):
    """uvicorn without its own signal handling: the daemon's handlers stop the cycles first, then the server
    (uvicorn's would stop serving at once, then raise the signal again once done, killing the process)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield
