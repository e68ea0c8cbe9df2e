"""`make bench`: every benchmark, with its target, printed as a Markdown table."""

from __future__ import annotations

import json
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks import (
    bench_burnin,
    bench_cadence,
    bench_daemon,
    bench_golden,
    bench_history,
    bench_hosts,
    bench_identify,
    bench_picture,
    bench_pipeline,
    bench_replay,
    bench_sim_telemetry,
    bench_start,
    bench_storm32k,
    bench_telemetry,
    bench_ufm,
    bench_verify,
    bench_webhooks,
    bench_week,
)
from benchmarks.measure import Measurement

SUITES = {"verify": bench_verify.run, "ufm": bench_ufm.run, "pipeline": bench_pipeline.run,
          "replay": bench_replay.run, "daemon": bench_daemon.run,
          "daemon32k": bench_daemon.run_32k, "breaker32k": bench_daemon.run_breaker_32k, "webhooks": bench_webhooks.run,
          "week": bench_week.run, "cadence": bench_cadence.run, "simtelemetry": bench_sim_telemetry.run,
          "telemetry": bench_telemetry.run, "start": bench_start.run, "storm32k": bench_storm32k.run,
          "hosts": bench_hosts.run, "picture": bench_picture.run, "identify": bench_identify.run,
          "burnin": bench_burnin.run, "golden": bench_golden.run, "history": bench_history.run}

def _suite_in_child(name: str, workdir: Path) -> list[Measurement]:
    """One suite in a process of its own: a child's ``ru_maxrss`` counts the parent it was forked from, so a
    parent grown by an earlier suite (verify builds a 98,304-cable plan) would inflate every later figure."""
    report = workdir / f"{name}.json"
    subprocess.run([sys.executable, "-m", "benchmarks.run", "--suite", name, str(workdir), str(report)], check=True)
    return [Measurement(**fields) for fields in json.loads(report.read_text())]


def main(argv: list[str]) -> int:
    if argv[:1] == ["--suite"]:
        name, workdir, report = argv[1], Path(argv[2]), Path(argv[3])
        report.write_text(json.dumps([m.__dict__ for m in SUITES[name](workdir)]))
        return 0
    if argv[:1] in (["-h"], ["--help"]):
        print(f"usage: python -m benchmarks.run [SUITE ...]  (suites: {', '.join(SUITES)}; all when none is named)")
        return 0
    unknown = [name for name in argv if name not in SUITES]
    if unknown:
        print(f"benchmarks.run: no suite {unknown[0]!r} (suites: {', '.join(SUITES)})", file=sys.stderr)
        return 2
    wanted = argv or list(SUITES)
    results: list[Measurement] = []
    with tempfile.TemporaryDirectory(prefix="fabric-bench-") as tmp:
        for name in wanted:
            results.extend(_suite_in_child(name, Path(tmp)))
    print(f"Python {platform.python_version()} on {platform.machine()}, {platform.node()}\n")
    print("| benchmark | median wall (s) | runs (s) | peak RSS (MiB) | target | verdict | setup |")
    print("|---|---|---|---|---|---|---|")
    for m in results:
        runs = ", ".join(f"{r:.2f}" for r in m.runs)
        target = f"< {m.target_s:g} s" if m.target_s else ""
        print(f"| {m.name} | {m.median_s:.3f} | {runs} | {m.peak_rss_mib:.0f} | {target} | {m.verdict} | {m.note} |")
    out = Path("out")
    out.mkdir(exist_ok=True)
    (out / "benchmarks.json").write_text(json.dumps(
        [{k: v for k, v in m.__dict__.items() if k != "output"} | {"median_s": m.median_s} for m in results], indent=1))
    return 1 if any(m.verdict == "MISSED" for m in results) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
