"""The engine's start-up in one process, step by step: its resident memory after each (``VmRSS``, and the peak so far,
``VmHWM``; and its CPU seconds so far), to see where the engine process's peak and its live set are.

``python -m benchmarks.engine_steps --preset h100-32k`` starts the UFM simulator on the preset's plan
(``benchmarks.daemon_harness``), writes a daemon's configuration on it and runs the steps in a child process of their
own: the imports, the plan read as the engine process reads it (``preflight``), the engine built, then ``start``
(UFM's lists read into the as-built model, the view, what is kept of the reading taken out as plain values, the signal
mapper, the rest), then the collector's policy and the allocator's free memory given back, as the engine process does
before its first cycle. ``--trace N`` runs the child under ``tracemalloc`` (N frames; slow, and its own memory
counts) and prints what is still allocated at the end, by file and by line, and what start allocated that is still
held. ``--pools`` prints after each step what Python's allocator holds: its arenas, the bytes of its blocks in use,
and its free pools in arenas something else keeps (resident but free: what a few objects kept among many dropped
cost). ``--checkout DIR`` runs another checkout's code (``git worktree add DIR REV``).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]
_POOLS_ASKED = "ENGINE_STEPS_POOLS"
"""Set in the child's environment by ``--pools``: the step lines are printed before the child parses anything."""


_POOLS = ("arenas allocated current", "bytes in allocated blocks", "unused pools")
"""What ``--pools`` prints of ``sys._debugmallocstats``: Python's allocator's arenas (1 MiB each), the bytes of its
blocks in use, and the free pools (16 KiB each) in arenas that something else in them keeps from the system."""


def pool_figures() -> dict[str, int]:
    """``_POOLS`` from ``sys._debugmallocstats`` (which writes to the C library's stderr, file descriptor 2), as
    numbers."""
    with tempfile.TemporaryFile() as captured:
        sys.stderr.flush()
        stderr = os.dup(2)
        os.dup2(captured.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(stderr, 2)
            os.close(stderr)
        captured.seek(0)
        lines = captured.read().decode().splitlines()
    return {name: int(line.rpartition("=")[2].strip().replace(",", "")) for line in lines for name in _POOLS
            if name in line}


def pools(figures: dict[str, int] | None = None) -> str:
    """``pool_figures`` (read now when not given) as a line."""
    figures = pool_figures() if figures is None else figures
    return (f"{'':34s} pymalloc: {figures.get(_POOLS[0], 0):,} arenas, {figures.get(_POOLS[1], 0):,} bytes in use, "
            f"free pools {figures.get(_POOLS[2], 0):,} bytes")


def free_in_arenas_mib(figures: dict[str, int]) -> float:
    """What Python's allocator holds and does not use: its arenas (1 MiB each) less the bytes of its blocks in
    use. The resident memory less this is what the process would hold if no arena had free space (the floor)."""
    return figures.get(_POOLS[0], 0) - figures.get(_POOLS[1], 0) / 2**20


def _said(step: str) -> None:
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    rss, hwm = (int(fields[name].split()[0]) / 1024 for name in ("VmRSS", "VmHWM"))
    print(f"{step:34s} VmRSS {rss:5.0f} MiB   VmHWM {hwm:5.0f} MiB   CPU {time.process_time():6.1f} s", flush=True)
    if os.environ.get(_POOLS_ASKED):
        print(pools(), flush=True)


def _wrapped(module: Any, name: str, step: str) -> None:
    """``module.name`` made to say the memory once it returns."""
    inner = getattr(module, name)

    def said(*args: Any, **kwargs: Any) -> Any:
        result = inner(*args, **kwargs)
        _said(step)
        return result

    setattr(module, name, said)


def child(config_path: Path, frames: int, rereads: int) -> None:
    if frames:
        tracemalloc.start(frames)
    import fabric.controller.engine as engine_module
    import fabric.controller.reading as reading_module
    import fabric.remediation.pipeline as pipeline_module
    from fabric import wiring
    from fabric.config import load_config
    from fabric.daemon.gcpolicy import apply_gc_policy, release_freed_memory, widen_young_generation
    from fabric.daemon.preflight import preflight
    from fabric.ufm.client import JobPollPolicy, RetryPolicy

    _said("imports")
    widen_young_generation()
    config = load_config(config_path)
    plan = preflight(config).plan
    assert plan is not None
    _said("plan")
    _wrapped(engine_module, "read_topology", "UFM's lists read (as-built model)")
    _wrapped(reading_module, "build_view", "the view")
    _wrapped(engine_module, "kept_of", "what is kept taken out, the reading gone")
    _wrapped(pipeline_module, "SignalMapper", "the signal mapper")

    async def start() -> None:
        target = config.ufm.target()
        store = wiring.open_existing_store(config.store.url, fabric=config.fabric.name, read_only=False)
        client = wiring.ufm_client(target.url, target.auth(), retry=RetryPolicy(), job_poll=JobPollPolicy(),
                                   sleep=asyncio.sleep, verify=False, ca_bundle=None)
        engine = wiring.build_engine(plan, client, store, wiring.ticket_backend(store, config=config),
                                     wiring.engine_settings(config), lambda: datetime.now(UTC), None)
        _said("the engine built")
        before = tracemalloc.take_snapshot() if frames else None
        try:
            await engine.start()
            _said("started")
            apply_gc_policy()
            release_freed_memory()
            _said("collected, memory released")
            from fabric.controller.effects import CycleReport
            for n in range(rereads):  # as a cycle after UFM's counters moved: the old view lives through the read
                await engine._refresh_fabric(CycleReport(datetime.now(UTC)), whatever_the_counters=True)
                gc.collect()
                release_freed_memory()
                _said(f"read again ({n + 1}), collected, released")
            if frames:
                _traced()
                assert before is not None
                print("allocated by start and still held, by line:")
                for stat in tracemalloc.take_snapshot().compare_to(before, "lineno")[:25]:
                    print(f"  {stat}")
        finally:
            await client.aclose()
            store.close()

    asyncio.run(start())


def _traced() -> None:
    now, peak = tracemalloc.get_traced_memory()
    print(f"traced: {now / 2**20:.1f} MiB still allocated, {peak / 2**20:.1f} MiB at most")
    snapshot = tracemalloc.take_snapshot()
    for stat in snapshot.statistics("filename")[:15]:
        print(f"{stat.size / 2**20:7.1f} MiB {stat.count:9d}  {stat.traceback[0].filename}")
    for stat in snapshot.statistics("lineno")[:30]:
        print(f"{stat.size / 2**20:7.1f} MiB {stat.count:9d}  {stat.traceback[0]}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="h100-32k")
    parser.add_argument("--checkout", type=Path, default=HERE)
    parser.add_argument("--trace", type=int, default=0, metavar="FRAMES")
    parser.add_argument("--rereads", type=int, default=0, metavar="N",
                        help="after start, UFM's topology read again N times (the daemon's cycle after a change)")
    parser.add_argument("--pools", action="store_true",
                        help="after each step, Python's allocator's arenas, bytes in use and free pools")
    parser.add_argument("--config", type=Path, help=argparse.SUPPRESS)  # the child's
    args = parser.parse_args(argv)
    if args.config is not None:
        child(args.config, args.trace, args.rereads)
        return 0
    # Here, not at the top: the child's imports are the engine's alone.
    from benchmarks.daemon_harness import PASSWORD, plan_file, simulator, write_config
    from fabric.simulator.server import free_port

    checkout = args.checkout.resolve()
    with tempfile.TemporaryDirectory(prefix="fabric-engine-steps-") as tmp:
        workdir = Path(tmp)
        plan = plan_file(workdir, args.preset)
        with simulator(plan, workdir) as url:
            config = write_config(workdir, url, plan, interval="60s", port=free_port(), name="bench",
                                  checkout=checkout)
            env = {k: v for k, v in os.environ.items() if not k.startswith("FABRIC_")}
            env.update(FABRIC_UFM_PASSWORD=PASSWORD, PYTHONPATH=str(checkout))
            if args.pools:
                env[_POOLS_ASKED] = "1"
            # This file run by its path: the checkout measured may not have it.
            return subprocess.run([sys.executable, __file__, "--config", str(config), "--trace", str(args.trace),
                                   "--rereads", str(args.rereads)],
                                  cwd=checkout, env=env, check=False).returncode


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
