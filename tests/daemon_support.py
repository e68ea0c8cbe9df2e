"""The real daemon (``fabricctl run``) as a subprocess against a simulated UFM served by the test process.

The daemon runs on the simulator's clock (``--clock simulator``: read over HTTP before each cycle), so a test
moves simulated time with ``advance`` and never waits for it; real time only bounds each wait (``wait_for``).
Its API is reached over loopback HTTP on a port picked free for it; its log (JSON lines) goes to a file.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from fabric import wiring
from fabric.simulator import SimClock, SimSettings, SimState, serve
from fabric.simulator.driver import SimulatorDriver
from fabric.simulator.server import free_port
from topology.formats.ndt import read_ndt

START = datetime(2026, 5, 1, 8, 0, tzinfo=UTC)
PASSWORD = "123456"
BOUND = 30.0
"""Real seconds any one wait may take (start-up, a cycle, a shutdown) before the test fails."""
HTTP = httpx.Client(timeout=10, limits=httpx.Limits(max_keepalive_connections=0))
"""What ``Daemon.get`` asks with: ``httpx.get`` makes a client per call, 54 ms of CPU (its TLS context) against 2 ms
for the request, and ``wait_for`` polls ten times a second. No connection is kept, as none was with ``httpx.get``
(``test_daemon_http_limits`` counts the daemon's connections)."""


@contextmanager
def simulator(plan_path: Path) -> Iterator[SimulatorDriver]:
    state = SimState.from_plan(read_ndt(plan_path), clock=SimClock(START), settings=SimSettings(job_seconds=2.0))
    with serve(state) as server:
        yield SimulatorDriver(server.url)


def write_config(tmp_path: Path, ufm_url: str, plan_path: Path, *, port: int, db: Path | None = None,
                 extra: str = "", dry_run: bool = True, max_resets: int = 0) -> Path:
    """``max_resets``: the reset ladder's (0 unless a test asks: the daemon's scenarios are about what follows a
    take-out, so a finding takes its link out at once; the ladder is ``tests/engine/test_resets_engine``'s)."""
    db = db or tmp_path / "fabric.db"
    path = tmp_path / f"daemon-{port}.toml"
    path.write_text(f"""
[fabric]
name = "test"
plan = "{plan_path}"

[policy]
dry_run = {str(dry_run).lower()}

[escalation]
max_resets = {max_resets}

[ufm]
url = "{ufm_url}"

[store]
url = "sqlite:///{db}"

[daemon]
interval = "1s"
shutdown_wait = "20s"
# Level with the tests, which share the cores with the other pytest worker's (the default, 5, is for a host
# where the engine should yield to UFM's own work).
engine_niceness = 0

[api]
port = {port}
{extra}""")
    return path


LEADER_TIMING = '[leader]\nlease = "3s"\nheartbeat = "1s"\n'
"""A short lease, so that a failover test waits seconds, not the default's fifteen."""


def on_postgresql(config: Path, url: str, fabric: str) -> Path:
    """``config`` (from ``write_config``) for ``fabric`` on the PostgreSQL database at ``url``."""
    text = re.sub(r'(?m)^name = "test"$', f'name = "{fabric}"', config.read_text())
    config.write_text(re.sub(r'(?m)^url = "sqlite:///.*"$', f'url = "{url}"', text))
    return config


def migrate(db: Path, fabric: str = "test") -> None:
    wiring.open_store(f"sqlite:///{db}", fabric=fabric).close()


@dataclass
class Daemon:
    process: subprocess.Popen[bytes]
    api: str
    log: Path

    def get(self, path: str) -> httpx.Response:
        return HTTP.get(f"{self.api}/api/v1{path}")

    def metrics(self) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        text = self.get("/metrics").text
        return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
                for family in text_string_to_metric_families(text) for sample in family.samples}

    def metric(self, name: str, **labels: str) -> float:
        return self.metrics().get((name, tuple(sorted(labels.items()))), 0.0)

    def wait_for(self, what: str, check: Callable[[], bool]) -> None:
        deadline = time.monotonic() + BOUND
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"the daemon exited ({self.process.returncode}) waiting for {what}:\n"
                                     f"{self.log.read_text()[-3000:]}")
            try:
                if check():
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise AssertionError(f"no {what} within {BOUND}s:\n{self.log.read_text()[-3000:]}")

    def cycles(self) -> float:
        return self.metric("fabric_job_runs_total", job_name="cycle", outcome="ok")

    def signal(self, sig: signal.Signals) -> int:
        self.process.send_signal(sig)
        return self.process.wait(BOUND)

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.log.read_text().splitlines() if line.strip()]


def command(config: Path) -> list[str]:
    return [sys.executable, "-m", "fabric.cli", "run", "--config", str(config), "--clock", "simulator"]


def daemon_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FABRIC_")}
    return {**env, "FABRIC_UFM_PASSWORD": PASSWORD, **extra}


@contextmanager
def daemon(config: Path, port: int, log: Path, **env: str) -> Iterator[Daemon]:
    """The daemon started and answering ``/healthz``; killed at the end if the test did not stop it."""
    with daemons([(config, port, log)], **env) as (running,):
        yield running


@contextmanager
def daemons(each: list[tuple[Path, int, Path]], **env: str) -> Iterator[list[Daemon]]:
    """Daemons (config, port, log) started at the same instant, each answering ``/healthz`` before the block
    runs; killed at the end if the test did not stop them."""
    started: list[Daemon] = []
    try:
        for config, port, log in each:
            with log.open("wb") as sink:
                process = subprocess.Popen(command(config), stdout=subprocess.DEVNULL, stderr=sink,
                                           env=daemon_env(**env))
            started.append(Daemon(process, f"http://127.0.0.1:{port}", log))
        for running in started:
            running.wait_for("answer on /healthz", _answers(running))
        yield started
    finally:
        for running in started:
            if running.process.poll() is None:
                running.process.kill()
                running.process.wait(BOUND)


@contextmanager
def ready_daemon(plan_path: Path, tmp_path: Path, *, extra: str = "", **env: str) -> Iterator[Daemon]:
    """A dry-run daemon of ``plan_path`` on a fresh SQLite store and simulator, ready (``/readyz`` 200)."""
    migrate(tmp_path / "fabric.db")
    port = free_port()
    with simulator(plan_path) as sim:
        config = write_config(tmp_path, sim.url, plan_path, port=port, extra=extra)
        with daemon(config, port, tmp_path / "daemon.log", **env) as running:
            running.wait_for("ready", lambda: running.get("/readyz").status_code == 200)
            yield running


def _answers(running: Daemon) -> Callable[[], bool]:
    return lambda: running.get("/healthz").status_code == 200


@dataclass(frozen=True)
class LiveSetup:
    """A migrated SQLite store, a simulator of the plan, and a live daemon's configuration on both (``live``)."""

    sim: SimulatorDriver
    config: Path
    db: Path
    port: int


@contextmanager
def live(plan_path: Path, tmp_path: Path, *, extra: str = "",
         telemetry_every: int | None = None) -> Iterator[LiveSetup]:
    """What a test that starts (and kills) live daemons of one fabric needs; it starts them with ``daemon``.
    ``telemetry_every``: the daemon reads the simulator's UFM Telemetry every that many seconds."""
    db = tmp_path / "fabric.db"
    migrate(db)
    port = free_port()
    with simulator(plan_path) as sim:
        if telemetry_every is not None:
            extra += telemetry_section(sim.url, telemetry_every)
        yield LiveSetup(sim, write_config(tmp_path, sim.url, plan_path, port=port, dry_run=False, extra=extra), db,
                        port)


def telemetry_section(url: str, every: int) -> str:
    """The configuration that has the daemon read UFM Telemetry at ``url`` every ``every`` seconds."""
    return f'[telemetry]\nenabled = true\nurl = "{url}"\ninterval = "{every}s"\n'



def refused(config: Path, **env: str) -> tuple[int, str]:
    """A daemon that must refuse to start: its exit code and its stderr."""
    done = subprocess.run(command(config), capture_output=True, env=daemon_env(**env), timeout=BOUND, check=False)
    return done.returncode, done.stderr.decode()
