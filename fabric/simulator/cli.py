"""What ``fabricctl simulate`` does: build the simulated UFM from a plan, load scenarios, serve it.

Kept out of ``fabric/cli.py`` so that the command line starts fast and this can be tested directly.
"""

from __future__ import annotations

import contextlib
import socket
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import uvicorn

from fabric.serving import bind_listener, uvicorn_config
from fabric.simulator.app import create_app
from fabric.simulator.auth import AuthSettings
from fabric.simulator.clock import SimClock, check_rate, check_span
from fabric.simulator.events import EventRecord, parse_version
from fabric.simulator.scenario import Scenario, load_scenario
from fabric.simulator.server import Ticker
from fabric.simulator.state import SimSettings, SimState
from fabric.simulator.tls import self_signed_certificate
from fabric.ufm.snapshot import write_snapshot_documents
from topology.factory import factory_named
from topology.faults import FaultCounts, plant
from topology.formats.ndt import read_ndt
from topology.generate import PRESETS, fat_tree
from topology.model import Fabric

Echo = Callable[[str], None]


@dataclass(slots=True)
class SimulateOptions:
    plan: Path | None = None
    preset: str | None = None
    scenarios: Sequence[Path] = ()
    host: str = "127.0.0.1"
    port: int = 8000
    tls: bool = False
    user: str = "admin"
    password: str = "123456"
    ufm_version: str = "6.20.0"
    rate: float = 1.0
    job_seconds: float = 2.0
    miswire: int = 0
    factory_names: bool = False
    """Serve the switches under factory names (model and serial, or the GUID alone): a fabric nobody named yet."""
    seed: int = 0
    max_events: int = 250_000
    """Events the history keeps (``SimSettings.max_events``): a full-fabric storm on h100-32k raises 393,216."""
    event_log: Path | None = None
    append: bool = False
    """Append to an ``event_log`` that holds events already (else such a file is refused)."""
    offline: float | None = None
    """Instead of serving, run this many simulated seconds at once and stop (writes the event log)."""
    snapshot: Path | None = None
    """Write the fabric's systems.json, links.json and ports.json here, as served before the first step runs."""
    extra_users: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Refuse numbers the simulator cannot run with, naming the ``fabricctl simulate`` option."""
        try:
            check_rate(self.rate)
        except ValueError as exc:
            raise ValueError(f"--speed: {exc}") from None
        check_span(self.job_seconds, "--job-seconds")
        if self.offline is not None:
            check_span(self.offline, "--offline")


def load_plan(options: SimulateOptions) -> Fabric:
    if options.plan is not None and options.preset is not None:
        raise ValueError("give --plan or --preset, not both")
    if options.plan is not None:
        plan = read_ndt(options.plan)
        plan.infer_tiers()
        return plan
    name = options.preset or "tiny"
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r} (one of {', '.join(PRESETS)})")
    return fat_tree(PRESETS[name])


def build_state(options: SimulateOptions) -> tuple[SimState, list[Scenario]]:
    """The state to serve and the scenarios scheduled on it (raises ValueError/InputError on bad input)."""
    parse_version(options.ufm_version)
    plan = load_plan(options)
    as_built = _miswired(plan, options.miswire, options.seed) if options.miswire else None
    if options.factory_names:
        as_built = factory_named(as_built or plan, options.seed).fabric
    settings = SimSettings(ufm_version=options.ufm_version, job_seconds=options.job_seconds, seed=options.seed,
                           max_events=options.max_events)
    state = SimState.from_plan(plan, as_built=as_built, clock=SimClock(rate=0.0), settings=settings)
    scenarios = [load_scenario(path) for path in options.scenarios]
    for scenario in scenarios:
        scenario.schedule(state)
    return state, scenarios


def _miswired(plan: Fabric, pairs: int, seed: int) -> Fabric:
    try:
        return plant(plan, FaultCounts(swapped=pairs), seed).fabric
    except ValueError as exc:
        raise ValueError(f"--miswire {pairs}: {exc}") from None


def write_snapshot(state: SimState, directory: Path) -> None:
    """The fabric's ``systems.json``, ``links.json`` and ``ports.json``, as ``GET /resources/…`` serves them now."""
    fabric = state.fabric
    with state.lock:
        documents = {"systems": fabric.systems_json(), "links": fabric.links_json(), "ports": fabric.ports_json()}
    write_snapshot_documents(directory, documents)


def _open_event_log(path: Path, *, append: bool) -> IO[str]:
    """``path`` to write the event log to. One that holds an earlier run's events is refused unless ``append``:
    appended to, the two runs read back as one history (times going back, ids starting again) that ``replay`` would
    take for one UFM's; truncated, it could be a recording someone meant to keep. Refusing costs a re-run with
    another name, ``--append`` or the file removed; either other choice could cost the data or the analysis."""
    try:
        held = path.stat().st_size if path.exists() else 0
        if held and not append:
            raise ValueError(f"--event-log {path}: holds {held} bytes of an earlier run, which replay would read as "
                             "one history with this one: remove it, name another file, or add --append")
        path.parent.mkdir(parents=True, exist_ok=True)
        return path.open("a", encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"--event-log {path}: cannot open: {exc.strerror or exc}") from None


def _log_writer(handle: IO[str]) -> Callable[[EventRecord], None]:
    lock = threading.Lock()

    def write(record: EventRecord) -> None:
        with lock:
            handle.write(record.log_line() + "\n")
            handle.flush()
    return write


def run(options: SimulateOptions, echo: Echo) -> int:
    """Everything that can be refused (plan, scenarios, the address to listen on) is, before any output."""
    state, scenarios = build_state(options)
    with contextlib.ExitStack() as stack:
        listener = None
        if options.offline is None:
            listener = stack.enter_context(bind_listener(options.host, options.port))
        if options.event_log is not None:
            handle = stack.enter_context(_open_event_log(options.event_log, append=options.append))
            state.events.listeners.append(_log_writer(handle))
        if options.snapshot is not None:
            try:
                write_snapshot(state, options.snapshot)
            except OSError as exc:
                raise ValueError(f"--snapshot {options.snapshot}: cannot write: {exc.strerror or exc}") from None
        if listener is None:
            assert options.offline is not None
            return _offline(state, options.offline, options.snapshot, echo)
        return _serve(state, scenarios, options, listener, stack, echo)


def _offline(state: SimState, seconds: float, snapshot: Path | None, echo: Echo) -> int:
    state.advance(seconds)
    summary = state.summary()  # the last event id is no count: a UFM restart starts ids again at 1
    echo(f"simulated {seconds:g}s: {state.events.emitted} events, "
         f"{summary['links_up']}/{summary['links']} links up, {len(state.errors)} step errors")
    if snapshot is not None:
        echo(f"  UFM snapshot (as at the start) in {snapshot}")
    for error in state.errors:
        echo(f"  step error: {error}")
    return 1 if state.errors else 0


def _serve(state: SimState, scenarios: list[Scenario], options: SimulateOptions, listener: socket.socket,
           stack: contextlib.ExitStack, echo: Echo) -> int:
    users = {options.user: options.password, **options.extra_users}
    app = create_app(state, AuthSettings(users))
    cert = key = None
    if options.tls:
        directory = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="ufm-sim-tls-")))
        cert, key = self_signed_certificate(directory, options.host)
    scheme = "https" if options.tls else "http"
    shown = f"[{options.host}]" if ":" in options.host else options.host
    url = f"{scheme}://{shown}:{listener.getsockname()[1]}"
    fabric = state.fabric
    echo(f"UFM simulator on {url} (UFM {options.ufm_version}, {state.shape.value} event shape)")
    echo(f"  fabric: {len(fabric.systems)} systems, {len(fabric.ports)} ports, {len(fabric.links)} links")
    echo(f"  auth: {options.user} / {'*' * len(options.password)} on /ufmRest (basic), /ufmRestV2 (POST /dologin), "
         "/ufmRestV3 (token from POST /ufmRest/app/tokens)")
    if cert is not None:
        echo(f"  TLS: self-signed certificate {cert} (made with openssl)")
    for scenario in scenarios:
        echo(f"  scenario {scenario.name!r}: {len(scenario.steps)} steps over {scenario.length:g}s")
    echo(f"  clock: {options.rate:g} simulated seconds per second; admin API at {url}/simulator/state")
    if options.event_log is not None:
        echo(f"  event.log lines appended to {options.event_log}")
    if options.snapshot is not None:
        echo(f"  UFM snapshot (as at the start) in {options.snapshot}")
    state.clock.set_rate(options.rate)
    ticker = Ticker(state)
    ticker.start()
    try:
        uvicorn.Server(uvicorn_config(app, options.host, options.port, cert, key)).run(sockets=[listener])
    finally:
        ticker.stop()
    return 0
