"""The real daemon and the UFM simulator, each as its own process on loopback, for the daemon's benchmarks.

``fabricctl simulate --plan PLAN --speed 0`` serves UFM with its clock frozen (the benchmark moves it); the daemon
is ``fabricctl run --config FILE --clock simulator`` (or on the wall clock) on a migrated SQLite database, in dry run
(the default), with the garbage-collector policy it applies itself (``fabric.daemon.gcpolicy``). Its log (JSON
lines) goes to a file.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from fabric.simulator.server import free_port
from topology.formats.ndt import write_ndt
from topology.generate import PRESETS, FatTreeSpec, fat_tree

PASSWORD = "123456"
START_BOUND = 300.0
"""Real seconds the simulator or the daemon may take to start (h100-4k's model and first reading)."""


def plan_file(workdir: Path, preset: str, spec: FatTreeSpec | None = None) -> Path:
    """The wiring plan of ``spec`` (the preset's when none) as an NDT CSV named after ``preset``, written once."""
    path = workdir / f"plan-{preset}.csv"
    if not path.exists():
        with path.open("w", newline="") as handle:
            write_ndt(fat_tree(spec or PRESETS[preset]), handle)
    return path


def _wait(what: str, check: Any, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_BOUND
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what}: exited {process.returncode}: {log.read_text()[-1500:]}")
        try:
            if check():
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{what}: not within {START_BOUND:g} s: {log.read_text()[-1500:]}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(30)


@contextmanager
def simulator(plan: Path, workdir: Path, *, speed: float = 0.0, max_events: int = 250_000) -> Iterator[str]:
    """``fabricctl simulate`` on ``plan``, its clock frozen (the benchmark moves it) or running ``speed`` simulated
    seconds a real second, its event history ``max_events`` long; yields its URL."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = workdir / f"simulator-{port}.log"
    with log.open("wb") as sink:
        process = subprocess.Popen([sys.executable, "-m", "fabric.cli", "simulate", "--plan", str(plan), "--port",
                                    str(port), "--speed", f"{speed:g}", "--password", PASSWORD,
                                    "--max-events", str(max_events)],
                                   stdout=sink, stderr=subprocess.STDOUT)
    try:
        _wait("the simulator", lambda: httpx.get(f"{url}/ufmRest/app/versioning", auth=("admin", PASSWORD),
                                                 timeout=10).status_code == 200, process, log)
        yield url
    finally:
        _stop(process)


@dataclass
class Daemon:
    process: subprocess.Popen[bytes]
    api: str
    log: Path

    def metrics(self) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        from prometheus_client.parser import text_string_to_metric_families

        text = httpx.get(f"{self.api}/api/v1/metrics", timeout=120).text
        return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
                for family in text_string_to_metric_families(text) for sample in family.samples}

    def cycles(self) -> float:
        return self.metrics().get(("fabric_job_runs_total", (("job_name", "cycle"), ("outcome", "ok"))), 0.0)

    def next_cycle(self, before: float, bound: float) -> float:
        """Wait until one more cycle than ``before`` has completed (at most ``bound`` real seconds); the count of
        cycles then. (It may have started before the benchmark's last step: then that step's events go to the
        cycle after it, as a slow cycle's would in a real daemon.)"""
        deadline = time.monotonic() + bound
        while (cycles := self.cycles()) < before + 1:
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError(f"the daemon did not complete a cycle: {self.log.read_text()[-1500:]}")
            time.sleep(0.1)
        return cycles

    def lines(self) -> list[dict[str, Any]]:
        """The log's complete lines (the last may be half written)."""
        text = self.log.read_text()
        return [json.loads(line) for line in text[:text.rfind("\n") + 1].splitlines() if line.startswith("{")]

    def memory_mib(self, field: str = "VmRSS") -> float:
        """``VmRSS`` (now) or ``VmHWM`` (each process's own peak: their sum bounds the peak of the whole) summed over
        the daemon's processes (the API's and the engine's)."""
        return tree_kib(self.process.pid, field) / 1024


def tree_kib(root: int, field: str = "VmRSS") -> int:
    """``field`` of ``/proc/PID/status`` summed over ``root`` and every process under it, in KiB."""
    return sum(status_kib(pid, field) for pid in _tree(root))


def tree_sched_s(root: int) -> dict[str, tuple[float, float]]:
    """Seconds on a CPU and seconds waiting for one (runnable, not run: ``schedstat``) so far, of ``root`` and every
    process under it, all their threads (the engine's cycle runs in one of its own), summed by what each runs: its
    ``fabricctl`` command (``simulate``, ``run``: the daemon's API, ``engine``), else ``other``."""
    found: dict[str, tuple[float, float]] = {}
    for pid in _tree(root):
        try:
            command = _command(pid)
            threads = [(task / "schedstat").read_text().split() for task in Path(f"/proc/{pid}/task").iterdir()]
        except OSError:
            continue
        cpu, wait = found.get(command, (0.0, 0.0))
        found[command] = (cpu + sum(int(ran) for ran, _, _ in threads) / 1e9,
                          wait + sum(int(waited) for _, waited, _ in threads) / 1e9)
    return found


def tree_by_command_mib(root: int, field: str = "VmHWM") -> dict[str, float]:
    """The peak resident memory (``VmHWM``; or ``VmRSS``, now) of ``root`` and every process under it, in MiB,
    summed by what each runs (as ``tree_sched_s`` names them): where a daemon's memory is, the API's process or the
    engine's."""
    found: dict[str, float] = {}
    for pid in _tree(root):
        try:
            command = _command(pid)
        except OSError:
            continue
        found[command] = found.get(command, 0.0) + status_kib(pid, field) / 1024
    return found


def _command(pid: int) -> str:
    """The ``fabricctl`` command process ``pid`` runs, else ``other``."""
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    return argv[argv.index(b"fabric.cli") + 1].decode() if b"fabric.cli" in argv else "other"


def _tree(root: int) -> list[int]:
    """``root`` and every process under it."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parent = int(stat.rpartition(")")[2].split()[1])
            children.setdefault(parent, []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, ()))
        found.append(pid)
    return found


def status_kib(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def write_config(workdir: Path, ufm_url: str, plan: Path, *, interval: str, port: int, name: str,
                 extra: str = "", checkout: Path | None = None) -> Path:
    """The daemon's configuration over a fresh SQLite database, migrated (``fabricctl store migrate``: the daemon
    never migrates) by ``checkout``'s code (``None``: this one's), to the schema that code reads; ``extra`` is more
    TOML, keys of ``[daemon]`` first."""
    db = workdir / f"daemon-{port}.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith("FABRIC_")}
    if checkout is not None:
        env["PYTHONPATH"] = str(checkout)
    subprocess.run([sys.executable, "-m", "fabric.cli", "store", "migrate", "--store", f"sqlite:///{db}",
                    "--fabric", name], cwd=checkout, env=env, check=True, capture_output=True)
    config = workdir / f"daemon-{port}.toml"
    config.write_text(f'[fabric]\nname = "{name}"\nplan = "{plan}"\n\n[ufm]\nurl = "{ufm_url}"\n\n'
                      f'[store]\nurl = "sqlite:///{db}"\n\n[daemon]\ninterval = "{interval}"\n'
                      f'shutdown_wait = "120s"\n{extra}\n[api]\nport = {port}\n')
    return config


@contextmanager
def daemon(workdir: Path, ufm_url: str, plan: Path, *, interval: str, name: str = "bench",
           extra: str = "", checkout: Path | None = None, clock: str = "simulator",
           nice: int = 0) -> Iterator[Daemon]:
    """``fabricctl run`` against ``ufm_url`` on a fresh, migrated SQLite database, answering and past its first
    cycle; stopped with SIGTERM at the end. Its clock is the simulator's (read over HTTP before each job and each
    API request), or with ``clock="system"`` the wall clock. With ``checkout``, another checkout's daemon (run from
    its directory with it first on ``PYTHONPATH``, on this interpreter), the configuration written by this one.
    ``nice``: started at that niceness, as the shipped systemd unit starts it (``Nice=-5``; below 0 takes root or
    CAP_SYS_NICE, else ``nice`` says so and it runs at 0)."""
    port = free_port()
    config = write_config(workdir, ufm_url, plan, interval=interval, port=port, name=name, extra=extra,
                          checkout=checkout)
    env = {k: v for k, v in os.environ.items() if not k.startswith("FABRIC_")}
    if checkout is not None:
        env["PYTHONPATH"] = str(checkout)
    log = workdir / f"daemon-{port}.log"
    with log.open("wb") as sink:
        niced = ["nice", "-n", str(nice)] if nice else []
        process = subprocess.Popen([*niced, sys.executable, "-m", "fabric.cli", "run", "--config", str(config),
                                    "--clock", clock], stdout=subprocess.DEVNULL, stderr=sink, cwd=checkout,
                                   env={**env, "FABRIC_UFM_PASSWORD": PASSWORD})
    running = Daemon(process, f"http://127.0.0.1:{port}", log)
    try:
        _wait("the daemon's first cycle", lambda: running.cycles() >= 1, process, log)
        yield running
    finally:
        _stop(process)
