"""What strict JSON costs: ``topology.strictjson`` against ``json.loads``, and against another checkout's decoder.

``python -m benchmarks.bench_strictjson [BASELINE_CHECKOUT] [ROUNDS]``: three inputs, each decoded in a fresh child
process (the same process layout for every variant), the variants taking turns round after round so that a noisy
host's load falls on all of them; the median of ``ROUNDS`` (default 5) is printed, with the runs.

- **the event list, whole**: UFM's ``GET /app/events`` answer of the 100,000-event storm (``bench_pipeline``'s,
  43 MB), one ``loads`` of its bytes, with the daemon's garbage-collector policy;
- **the event list, in pieces**: the same through ``topology.jsonlist.list_items``, as the daemon reads it;
- **the snapshot files**: h100-32k's ``systems``, ``links`` and ``ports.json`` (``bench_verify``'s, 184 MB), each
  read whole by ``topology.inputs`` then decoded, the collector off, as ``verify`` reads them;
- with a baseline, ``fabricctl verify`` on h100-32k as a whole command, with each decoder.

Variants: ``json.loads`` (no strictness: the floor), this checkout's ``strictjson``, and the baseline checkout's
``topology/strictjson.py`` put in its place (the rest of the code is this checkout's).
"""

from __future__ import annotations

import importlib.util
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import bench_pipeline, bench_verify

PRESET = "h100-32k"
DOCUMENTS = ("systems", "links", "ports")


def _install(variant: str) -> None:
    """``topology.strictjson`` as the variant has it: a baseline's module file loaded under the name."""
    if variant in ("plain", "this"):
        return
    spec = importlib.util.spec_from_file_location("topology.strictjson", Path(variant) / "topology/strictjson.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["topology.strictjson"] = module
    spec.loader.exec_module(module)
    import topology

    topology.strictjson = module


def child(variant: str, what: str, source: Path) -> dict[str, Any]:
    """One timed decoding of ``source`` (the storm's list, or the snapshot's directory) by ``variant``."""
    import gc

    _install(variant)
    from fabric.daemon.gcpolicy import apply_gc_policy
    from topology import strictjson
    from topology.inputs import DOCUMENT, read_input
    from topology.jsonlist import list_items

    decode = json.loads if variant == "plain" else strictjson.loads
    report: dict[str, Any] = {"variant": variant, "what": what}
    if what == "snapshot":
        gc.disable()  # as verify runs
        for name in DOCUMENTS:
            data = read_input(source / f"{name}.json", DOCUMENT)
            started = time.perf_counter()
            decode(data)
            report[name] = time.perf_counter() - started
        report["seconds"] = sum(report[name] for name in DOCUMENTS)
        return report
    body = source.read_bytes()
    apply_gc_policy()
    gc.collect()
    started = time.perf_counter()
    events = decode(body) if what == "whole" else list(list_items(body))
    report["seconds"] = time.perf_counter() - started
    report["events"] = len(events)
    return report


def _run(argv: list[str]) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "benchmarks.bench_strictjson", *argv], capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"bench_strictjson {' '.join(argv)}: exit {done.returncode}: {done.stderr[-800:]}")
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def _verify(variant: str, plan: Path, snapshot: Path) -> float:
    """``fabricctl verify`` on the preset with ``variant``'s decoder: the whole command's wall time."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "benchmarks.bench_strictjson", "--verify", variant, str(plan),
                           str(snapshot)], capture_output=True, check=False)
    if done.returncode != 1:  # the planted faults are found
        raise RuntimeError(f"verify with {variant}: exit {done.returncode}: {done.stderr[-800:]!r}")
    return time.perf_counter() - started


def _line(name: str, runs: list[float], extra: str = "") -> str:
    return (f"{name:44s} median {statistics.median(runs) * 1000:7.0f} ms  runs "
            f"{', '.join(f'{run * 1000:.0f}' for run in runs)}{extra}")


def main(argv: list[str]) -> int:
    if argv[:1] == ["--child"]:
        print(json.dumps(child(argv[1], argv[2], Path(argv[3]))))
        return 0
    if argv[:1] == ["--verify"]:
        _install(argv[1])
        from fabric.cli.app import main as fabricctl

        sys.argv = ["fabricctl", "verify", "--plan", argv[2], "--as-built", argv[3], "--format", "json"]
        fabricctl()
        return 0
    baseline = [str(Path(argv[0]).resolve())] if argv and not argv[0].isdigit() else []
    rounds = int(argv[-1]) if argv and argv[-1].isdigit() else 5
    workdir = Path("out/bench-strictjson")
    workdir.mkdir(parents=True, exist_ok=True)
    storm = bench_pipeline.prepare(workdir)
    plan, snapshot = workdir / f"{PRESET}.csv", workdir / f"{PRESET}-as-built"
    if not snapshot.exists():  # written once: 10 s
        plan, snapshot = bench_verify.prepare(PRESET, workdir)
    variants = ["plain", *baseline, "this"]
    found: dict[tuple[str, str], list[dict[str, Any]]] = {}
    verified: dict[str, list[float]] = {}
    for _ in range(rounds):
        for what, source in (("whole", storm), ("pieces", storm), ("snapshot", snapshot)):
            for variant in variants:
                if what == "pieces" and variant == "plain":
                    continue  # the pieces are strictjson's own
                found.setdefault((what, variant), []).append(_run(["--child", variant, what, str(source)]))
        for variant in variants[1:] if baseline else []:
            verified.setdefault(variant, []).append(_verify(variant, plan, snapshot))
    for (what, variant), reports in found.items():
        extra = ""
        if what == "snapshot":
            extra = "  (" + ", ".join(f"{name} {statistics.median(r[name] for r in reports) * 1000:.0f}"
                                      for name in DOCUMENTS) + ")"
        shown = "json.loads" if variant == "plain" else "baseline" if variant != "this" else "this checkout"
        print(_line(f"{what:8s} {shown}", [r["seconds"] for r in reports], extra))
    for variant, runs in verified.items():
        print(_line(f"verify {PRESET} {'baseline' if variant != 'this' else 'this checkout'}", runs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
