"""The UFM client against the simulator of the reference fabric, each in its own process, over loopback HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import httpx

from benchmarks.measure import Measurement, run_command
from fabric.simulator.server import free_port


def _wait_ready(url: str, deadline_s: float = 120.0) -> None:
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/ufmRest/app/versioning", auth=("admin", "123456"), timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"simulator at {url} did not come up")


def run(workdir: Path) -> list[Measurement]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    fabricctl = str(Path(sys.executable).with_name("fabricctl"))
    log = (workdir / "simulator.log").open("w")
    simulator = subprocess.Popen([fabricctl, "simulate", "--preset", "h100-4k", "--port", str(port), "--speed", "0"],
                                 stdout=log, stderr=subprocess.STDOUT)
    try:
        _wait_ready(url)
        child = [sys.executable, "-m", "benchmarks.ufm_fetch", url]
        results = [
            run_command("UFM client: systems + ports + links of h100-4k", [*child, "systems,ports,links"],
                        note="832 systems, 24,576 ports, 12,288 links; fetch + pydantic parse; whole process"),
        ]
        httpx.post(f"{url}/simulator/events/bulk", json={"count": 100_000}, timeout=300).raise_for_status()
        results.append(run_command("UFM client: 100,000-event list", [*child, "events"],
                                   note="GET /app/events, 100,000 events; fetch + parse; whole process"))
        return [_with_phases(m) for m in results]
    finally:
        simulator.terminate()
        simulator.wait(timeout=30)
        log.close()


def _with_phases(measurement: Measurement) -> Measurement:
    """Add the child's own fetch+parse time per list (without interpreter start-up) to the note."""
    phases = json.loads(measurement.output.strip().splitlines()[-1])
    timed = ", ".join(f"{k.removesuffix('_s')} {v:.2f} s" for k, v in phases.items() if k.endswith("_s"))
    return replace(measurement, note=f"{measurement.note}; in-process: {timed}")
