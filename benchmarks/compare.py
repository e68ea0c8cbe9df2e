"""This checkout against another one (an earlier commit), side by side in one run, on the same inputs.

    python -m benchmarks.compare /path/to/baseline-checkout [--runs 5] [--workdir DIR] [--only verify] [--cpu]
                                 [--python PYTHON]

The baseline is another checkout of the project with its own ``.venv`` (``git worktree add DIR REV`` then
``make -C DIR .venv/.installed``), or, with ``--python``, a checkout that shares that interpreter's venv: each
side's commands are then ``PYTHON -m fabric.cli`` run from its own directory, where ``-m`` finds its code before the
venv's editable install (the replay and verify benchmarks). Each benchmark runs both sides' whole processes
alternately (ours, theirs, ours, ...), so a shared host's noise falls on both, and reports the medians and their
ratio. ``--cpu`` reports the commands' CPU time (user + system, from ``wait4``) instead of their wall time: on a host
busy with other work a process waits for a core, and the wait is in its wall time but not in its CPU time (the
pipeline's row is its child's own timing either way).

- ``verify`` of h100-4k and h100-32k from files (the benchmark's planted faults), JSON report: with the plan's model
  kept by an untimed first run, then with this checkout keeping none (``FABRIC_PLAN_CACHE=0``);
- ``replay`` of the realistic 1M-line week (``benchmarks.bench_replay``'s generator), JSON report;
- ``Pipeline.step`` over the 100,000-event storm (``benchmarks.bench_pipeline``'s child, in each checkout);
- one engine cycle over the full-fabric storm on h100-32k (``benchmarks.bench_storm32k``'s child of this checkout,
  run on each checkout's code), with its phases and a digest of its decisions, which must be the same.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks import bench_pipeline, bench_replay, bench_storm32k, bench_verify

HERE = Path(__file__).resolve().parents[1]
BENCHMARKS = ("verify", "replay", "pipeline", "storm32k")


def _seconds(argv: list[str], cwd: Path, expect: tuple[int, ...], cpu: bool,
             env: dict[str, str] | None = None) -> float:
    """The command's wall time, or with ``cpu`` its user + system time; ``env``: variables added to ours."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as errors, subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=errors,
                                                              env={**os.environ, **(env or {})}) as child:
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - start
        if child.returncode not in expect:
            errors.seek(0)
            raise RuntimeError(f"{' '.join(argv[:3])}… in {cwd}: exit {child.returncode}: {errors.read()[-400:]!r}")
    return usage.ru_utime + usage.ru_stime if cpu else wall


def _storm_seconds(checkout: Path, storm: Path) -> float:
    """The pipeline child's own timing of the storm (start-up and parsing excluded, as in bench_pipeline)."""
    own = checkout / ".venv" / "bin" / "python"  # else this interpreter (a checkout sharing its venv, as --python)
    python = own if own.exists() else Path(sys.executable)
    done = subprocess.run([str(python), "-m", "benchmarks.bench_pipeline", "pipeline", str(storm)], cwd=checkout,
                          capture_output=True, text=True, check=True)
    return float(json.loads(done.stdout.strip().splitlines()[-1])["seconds"])


def side_by_side(name: str, ours: Callable[[], float], theirs: Callable[[], float], runs: int) -> dict[str, Any]:
    """Alternate ``ours()`` and ``theirs()`` ``runs`` times each; medians and their ratio."""
    mine: list[float] = []
    base: list[float] = []
    for _ in range(runs):
        mine.append(ours())
        base.append(theirs())
    ours_s, base_s = statistics.median(mine), statistics.median(base)
    return {"benchmark": name, "ours_s": ours_s, "baseline_s": base_s, "ratio": ours_s / base_s,
            "ours_runs": mine, "baseline_runs": base}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("baseline", type=Path)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--only", choices=BENCHMARKS, action="append", help="Run only these (repeatable).")
    parser.add_argument("--cpu", action="store_true", help="CPU time (user + system) instead of wall time.")
    parser.add_argument("--python", type=Path, help="One venv's interpreter for both sides: `PYTHON -m fabric.cli` "
                                                    "from each checkout instead of its .venv/bin/fabricctl.")
    args = parser.parse_args(argv)
    wanted = args.only or BENCHMARKS
    baseline = args.baseline.resolve()
    with tempfile.TemporaryDirectory(prefix="fabric-compare-") as tmp:
        work = args.workdir or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        rows = []
        for preset in bench_verify.TARGETS_S if "verify" in wanted else ():
            rows.extend(_verify(work, preset, baseline, args.runs, args.cpu, args.python))
        if "replay" in wanted:
            rows.append(_replay(work, baseline, args.runs, args.cpu, args.python))
        if "pipeline" in wanted:
            storm = bench_pipeline.prepare(work)
            rows.append(side_by_side("Pipeline.step, 100k-event storm", lambda: _storm_seconds(HERE, storm),
                                     lambda: _storm_seconds(baseline, storm), args.runs))
        if "storm32k" in wanted:
            rows.extend(_storm32k(work, baseline, args.runs))
    unit = "CPU s" if args.cpu else "s"
    print(f"| benchmark | this checkout ({unit}) | {baseline.name} ({unit}) | ratio |")
    print("|---|---|---|---|")
    for row in rows:
        print(f"| {row['benchmark']} | {row['ours_s']:.2f} | {row['baseline_s']:.2f} | {row['ratio']:.2f} |")
    print(json.dumps(rows), file=sys.stderr)
    return 0


def _fabricctl(checkout: Path, python: Path | None) -> list[str]:
    """The command line of ``checkout``'s fabricctl: its own venv's script, or ``python -m fabric.cli`` (run from the
    checkout, which is what makes it that checkout's)."""
    return [str(python), "-m", "fabric.cli"] if python else [str(checkout / ".venv" / "bin" / "fabricctl")]


def _verify(work: Path, preset: str, baseline: Path, runs: int, cpu: bool,
            python: Path | None) -> list[dict[str, Any]]:
    """``verify`` of ``preset``, both checkouts taking turns: as an operator runs it again on one plan (the plan's
    model kept by a first run of each side, untimed, whose reports must be the same), then with this checkout told
    to keep none (``FABRIC_PLAN_CACHE=0``, which the baseline may not know: it then runs as before)."""
    plan, snapshot = bench_verify.prepare(preset, work)
    kept = {"XDG_CACHE_HOME": str(work / "xdg-cache")}  # not the user's: both sides start with nothing kept
    unkept = {**kept, "FABRIC_PLAN_CACHE": "0"}

    def argv(checkout: Path) -> list[str]:
        return [*_fabricctl(checkout, python), "verify", "--plan", str(plan), "--as-built", str(snapshot),
                "--format", "json"]

    reports = {subprocess.run(argv(checkout), cwd=checkout, env={**os.environ, **env}, capture_output=True,
                              check=False).stdout for checkout, env in ((HERE, kept), (baseline, kept), (HERE, unkept))}
    if len(reports) != 1:
        raise RuntimeError(f"verify {preset}: the two checkouts' reports differ")
    return [side_by_side(f"verify {preset}", lambda: _seconds(argv(HERE), HERE, (1,), cpu, kept),
                         lambda: _seconds(argv(baseline), baseline, (1,), cpu, kept), runs),
            side_by_side(f"verify {preset}, no plan cache", lambda: _seconds(argv(HERE), HERE, (1,), cpu, unkept),
                         lambda: _seconds(argv(baseline), baseline, (1,), cpu, unkept), runs)]


def _replay(work: Path, baseline: Path, runs: int, cpu: bool, python: Path | None) -> dict[str, Any]:
    as_built, log, _, _ = bench_replay.prepare(work)

    def replay(checkout: Path) -> float:
        return _seconds([*_fabricctl(checkout, python), "replay", "--as-built", str(as_built), "--events", str(log),
                         "--format", "json"], checkout, (0, 1), cpu)
    return side_by_side("replay 1M lines", lambda: replay(HERE), lambda: replay(baseline), runs)


def _storm32k(work: Path, baseline: Path, runs: int) -> list[dict[str, Any]]:
    """The cycle and its phases, both checkouts taking turns; refused if they decided differently."""
    storm = bench_storm32k.prepare(work)
    ours: list[dict[str, Any]] = []
    theirs: list[dict[str, Any]] = []
    for _ in range(runs):
        ours.append(bench_storm32k.run_child(HERE, storm, work))
        theirs.append(bench_storm32k.run_child(baseline, storm, work))
    digests = {r["decisions_sha256"] for r in [*ours, *theirs]} | {str(r["halted"]) for r in [*ours, *theirs]}
    if len(digests) != 2:
        raise RuntimeError(f"the two checkouts decided the storm differently: {digests}")
    rows = [side_by_side("storm32k: the cycle", iter(r["seconds"] for r in ours).__next__,
                         iter(r["seconds"] for r in theirs).__next__, runs)]
    for phase in sorted({p for r in [*ours, *theirs] for p in r["phases"]}):
        rows.append(side_by_side(f"storm32k: {phase}", iter(r["phases"].get(phase, 0.0) for r in ours).__next__,
                                 iter(r["phases"].get(phase, 0.0) for r in theirs).__next__, runs))
    rows.append(side_by_side("storm32k: the next cycle (settled)", iter(r["settled_seconds"] for r in ours).__next__,
                             iter(r["settled_seconds"] for r in theirs).__next__, runs))
    return rows


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
