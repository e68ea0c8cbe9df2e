"""What ``fabricctl simulate`` does: build the simulated UFM from a plan, load scenarios, serve it.

Kept out of ``fabric/cli.py`` so that the command line starts fast and this can be tested directly.
"""

from __future__ import annotations

import contextlib
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import uvicorn

from fabric.simulator.app import create_app
from fabric.simulator.auth import AuthSettings
from fabric.simulator.clock import SimClock
from fabric.simulator.events import EventRecord, parse_version
from fabric.simulator.scenario import Scenario, load_scenario
from fabric.simulator.server import Ticker, uvicorn_config
from fabric.simulator.state import SimSettings, SimState
from fabric.simulator.tls import self_signed_certificate
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
    seed: int = 0
    event_log: Path | None = None
    offline: float | None = None
    """Instead of serving, run this many simulated seconds at once and stop (writes the event log)."""
    extra_users: dict[str, str] = field(default_factory=dict)


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
    as_built = plant(plan, FaultCounts(swapped=options.miswire), options.seed).fabric if options.miswire else None
    settings = SimSettings(ufm_version=options.ufm_version, job_seconds=options.job_seconds, seed=options.seed)
    state = SimState.from_plan(plan, as_built=as_built, clock=SimClock(rate=0.0), settings=settings)
    scenarios = [load_scenario(path) for path in options.scenarios]
    for scenario in scenarios:
        scenario.schedule(state)
    return state, scenarios


def _log_writer(handle: IO[str]) -> Callable[[EventRecord], None]:
    lock = threading.Lock()

    def write(record: EventRecord) -> None:
        with lock:
            handle.write(record.log_line() + "\n")
            handle.flush()
    return write


def run(options: SimulateOptions, echo: Echo) -> int:
    state, scenarios = build_state(options)
    with contextlib.ExitStack() as stack:
        if options.event_log is not None:
            options.event_log.parent.mkdir(parents=True, exist_ok=True)
            handle = stack.enter_context(options.event_log.open("a", encoding="utf-8"))
            state.events.listeners.append(_log_writer(handle))
        if options.offline is not None:
            state.advance(options.offline)
            summary = state.summary()
            echo(f"simulated {options.offline:g}s: {summary['last_event_id']} events, "
                 f"{summary['links_up']}/{summary['links']} links up, {len(state.errors)} step errors")
            for error in state.errors:
                echo(f"  step error: {error}")
            return 1 if state.errors else 0
        return _serve(state, scenarios, options, stack, echo)


def _serve(state: SimState, scenarios: list[Scenario], options: SimulateOptions, stack: contextlib.ExitStack,
           echo: Echo) -> int:
    users = {options.user: options.password, **options.extra_users}
    app = create_app(state, AuthSettings(users))
    cert = key = None
    if options.tls:
        directory = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="ufm-sim-tls-")))
        cert, key = self_signed_certificate(directory, options.host)
    scheme = "https" if options.tls else "http"
    url = f"{scheme}://{options.host}:{options.port}"
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
    state.clock.set_rate(options.rate)
    ticker = Ticker(state)
    ticker.start()
    try:
        uvicorn.Server(uvicorn_config(app, options.host, options.port, cert, key)).run()
    finally:
        ticker.stop()
    return 0
