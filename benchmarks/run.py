"""`make bench`: every benchmark, with its target, printed as a Markdown table."""

from __future__ import annotations

import json
import platform
import sys
import tempfile
from pathlib import Path

from benchmarks import bench_pipeline, bench_replay, bench_ufm, bench_verify
from benchmarks.measure import Measurement

SUITES = {"verify": bench_verify.run, "ufm": bench_ufm.run, "pipeline": bench_pipeline.run,
          "replay": bench_replay.run}


def main(argv: list[str]) -> int:
    wanted = argv or list(SUITES)
    results: list[Measurement] = []
    with tempfile.TemporaryDirectory(prefix="fabric-bench-") as tmp:
        for name in wanted:
            results.extend(SUITES[name](Path(tmp)))
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
