"""The simulator's UFM Telemetry sample of h100-32k (196,608 ports): how long one ``GET /csv/xcset/...`` renders.

``python -m benchmarks.bench_sim_telemetry [ROUNDS]``. The counters are computed when a sample is asked for
(``fabric.simulator.telemetry``): untouched ports share one template per rate, so the cost is one string a port;
ports a fault touched are evaluated one by one. Two figures, the median of ``ROUNDS`` (default 5) renders each,
after an hour of simulated time:

- **healthy**: nothing touched;
- **touched**: 10,000 ports with counters of their own (BER ramps, drop bursts), and a switch rebooted.

Target: well under a second (the daemon polls every 5 minutes; the simulator serves its REST API meanwhile).
"""

from __future__ import annotations

import resource
import sys
import time
from datetime import UTC, datetime

from benchmarks.measure import Measurement
from fabric.simulator import SimClock, SimState
from fabric.simulator.scenario import parse_step
from topology.generate import PRESETS, fat_tree

PRESET = "h100-32k"
TOUCHED = 10_000
TARGET_S = 1.0


def _timed(state: SimState, rounds: int) -> tuple[list[float], int]:
    runs, size = [], 0
    for _ in range(rounds):
        start = time.perf_counter()
        size = len(state.telemetry_sample())
        runs.append(time.perf_counter() - start)
    return runs, size


def run(rounds: int = 5) -> list[Measurement]:
    state = SimState.from_plan(fat_tree(PRESETS[PRESET]), clock=SimClock(datetime(2025, 3, 1, tzinfo=UTC)))
    state.advance(3600)
    healthy, size = _timed(state, rounds)
    ports = list(state.fabric.ports)
    for index, port in enumerate(ports[:: len(ports) // TOUCHED][:TOUCHED]):
        step = ({"fault": "ber_ramp", "port": port, "ber": 1e-12, "over": "10m"} if index % 2 else
                {"fault": "drop_burst", "port": port, "errors": 100, "over": "5m"})
        parse_step(step, "bench").step.apply(state)
    parse_step({"fault": "switch_reboot", "switch": "random", "downtime": "1m"}, "bench").step.apply(state)
    state.advance(600)
    touched, _ = _timed(state, rounds)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    note = f"{len(ports):,} rows, {size / 1e6:.0f} MB"
    return [Measurement(f"simulator telemetry sample, {PRESET}, healthy", healthy, rss, TARGET_S, note),
            Measurement(f"simulator telemetry sample, {PRESET}, {TOUCHED:,} ports touched", touched, rss, TARGET_S,
                        f"{len(state.telemetry.touched):,} ports with counters of their own")]


if __name__ == "__main__":
    for m in run(int(sys.argv[1]) if len(sys.argv) > 1 else 5):
        print(f"{m.name}: median {m.median_s:.3f} s ({', '.join(f'{r:.3f}' for r in m.runs)}), "
              f"peak RSS {m.peak_rss_mib:.0f} MiB, {m.note}, {m.verdict}")
