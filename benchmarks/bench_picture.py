"""The fat-tree picture (issue 25: under 1 s for either preset): the SVG of the whole fabric and of one pod, as the
console draws them on a request, and the page ``verify --html`` adds to verify's work. In one process, each the
median of five: what is timed is the picture's own code, not a command's start or a plan's parsing."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from benchmarks.bench_verify import FAULTS
from benchmarks.measure import Measurement, run_callable
from fabric.cli.verify_html import render_verify_html
from topology.faults import plant
from topology.generate import PRESETS, fat_tree
from topology.guard import CapacityGuard
from topology.picture import CONSOLE_STATES, CableMark, fabric_svg, guard_figures, layout_of, pod_svg
from topology.verify import verify

TARGET_S = 1.0
MARKED = 500
"""Cables marked in the console's picture: a bad day (the blast-radius cap of h100-32k is 327)."""


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
        results.append(run_callable(f"picture {preset}: layout of the plan", partial(layout_of, plan), target_s=None,
                              note=f"{layout.switch_count:,} switches; once per plan (the daemon's start)"))
        results.append(run_callable(
            f"picture {preset}: the whole fabric",
            partial(fabric_svg, layout, marks, figures, pod_href=lambda n: f"/ui/fabric?pod={n}"),
            target_s=TARGET_S, note=f"{view}; {len(marks)} cables marked, the guard's figures of every leaf"))
        results.append(run_callable(f"picture {preset}: one pod", partial(pod_svg, layout, 1, marks, figures),
                              target_s=TARGET_S, note=f"{len(marks)} cables marked (those of pod 1 drawn)"))
        report = verify(plan, plant(plan, FAULTS, seed=1).fabric)
        faulty = len(report.missing) + len(report.miswired) + len(report.degraded) + len(report.unexpected)
        results.append(run_callable(f"picture {preset}: verify --html's page", partial(render_verify_html, report),
                              target_s=None, note=f"bench_verify's {faulty} faulty cables: layout, SVG, the page"))
    return results
