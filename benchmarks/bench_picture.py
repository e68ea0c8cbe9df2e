"""The fat-tree picture (issue 25: under 1 s for either preset): the SVG of the whole fabric and of one pod, as the
console draws them on a request, and ``verify --html`` as a whole command against ``verify`` alone."""

from __future__ import annotations

import resource
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from benchmarks.bench_verify import prepare
from benchmarks.measure import Measurement, run_command
from topology.generate import PRESETS, fat_tree
from topology.guard import CapacityGuard
from topology.picture import CONSOLE_STATES, CableMark, fabric_svg, guard_figures, layout_of, pod_svg

TARGET_S = 1.0
MARKED = 500
"""Cables marked in the console's picture: a bad day (the blast-radius cap of h100-32k is 327)."""


def _timed(name: str, work: Callable[[], object], *, target_s: float | None, note: str,
           repeat: int = 5) -> Measurement:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        runs.append(time.perf_counter() - start)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return Measurement(name, runs, peak_mib, target_s, note)


def run(workdir: Path) -> list[Measurement]:
    results = []
    for preset in ("h100-4k", "h100-32k"):
        plan = fat_tree(PRESETS[preset])
        layout = layout_of(plan)
        guard = CapacityGuard(plan)
        switches = [cable for cable in plan.cables if cable.a.device in layout.names
                    and cable.b.device in layout.names]
        step = max(len(switches) // MARKED, 1)
        marks = [CableMark(cable.a.device, cable.b.device, CONSOLE_STATES[index % len(CONSOLE_STATES)],
                           plan.describe_cable(cable)) for index, cable in enumerate(switches[::step][:MARKED])]
        view = "one block per pod" if len(layout.pods) > 32 else "every switch"
        figures = guard_figures(guard)
        results.append(_timed(f"picture {preset}: layout of the plan", partial(layout_of, plan), target_s=None,
                              note=f"{layout.switch_count:,} switches; once per plan (the daemon's start)"))
        results.append(_timed(
            f"picture {preset}: the whole fabric",
            partial(fabric_svg, layout, marks, figures, pod_href=lambda n: f"/ui/fabric?pod={n}"),
            target_s=TARGET_S, note=f"{view}; {len(marks)} cables marked, the guard's figures of every leaf"))
        results.append(_timed(f"picture {preset}: one pod", partial(pod_svg, layout, 1, marks, figures),
                              target_s=TARGET_S, note=f"{len(marks)} cables marked (those of pod 1 drawn)"))
    fabricctl = str(Path(sys.executable).with_name("fabricctl"))
    cache = {"XDG_CACHE_HOME": str(workdir / "xdg-cache")}
    for preset in ("h100-4k", "h100-32k"):
        plan_path, snapshot = prepare(preset, workdir)
        argv = [fabricctl, "verify", "--plan", str(plan_path), "--as-built", str(snapshot), "--format", "json"]
        run_command("warm the plan cache", argv, repeat=1, expect_codes=(1,), env=cache)
        # taking turns, so that a busy host weighs on both alike
        html_argv = [*argv, "--html", str(workdir / f"{preset}.html")]
        turns = [(run_command("", argv, repeat=1, expect_codes=(1,), env=cache),
                  run_command("", html_argv, repeat=1, expect_codes=(1,), env=cache)) for _ in range(3)]
        plain = Measurement(f"verify {preset}", [p.runs[0] for p, _ in turns], max(p.peak_rss_mib for p, _ in turns),
                            note="JSON report")
        html = Measurement(f"verify {preset} --html", [h.runs[0] for _, h in turns],
                           max(h.peak_rss_mib for _, h in turns),
                           note=f"JSON and HTML reports; verify alone {statistics.median(plain.runs):.2f} s")
        results += [plain, html]
    return results
