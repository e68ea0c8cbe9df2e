"""``fabricctl verify --html`` of the demo's planted faults: the browser test's report and the screenshots'."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from fabric.demo.story import DEMO_FAULTS
from topology.faults import PlantedFaults, plant
from topology.formats.ndt import write_ndt
from topology.formats.ufm_render import write_ufm_snapshot
from topology.generate import PRESETS, fat_tree
from topology.model import Fabric

DEMO_SEED = 7
"""``fabricctl demo``'s default seed: the faults its part 2 plants."""


def write_demo_report(workdir: Path) -> tuple[Path, Fabric, PlantedFaults]:
    """The demo's h100-4k plan and faulty as-built snapshot in ``workdir``, and the report the real command writes
    of them."""
    plan = fat_tree(PRESETS["h100-4k"])
    with (workdir / "plan.csv").open("w", newline="") as handle:
        write_ndt(plan, handle)
    planted = plant(plan, DEMO_FAULTS, DEMO_SEED)
    write_ufm_snapshot(planted.fabric, workdir / "as-built")
    report = workdir / "report.html"
    done = subprocess.run([sys.executable, "-m", "fabric.cli", "verify", "-p", str(workdir / "plan.csv"),
                           "-a", str(workdir / "as-built"), "--no-plan-cache", "--html", str(report)],
                          check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr  # 1: the fabric does not match its plan
    return report, plan, planted
