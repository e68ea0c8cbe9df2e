"""`fabricctl burnin plan` on the reference fabric, from its plan file, as a whole command."""

from __future__ import annotations

import sys
from pathlib import Path

from benchmarks.measure import Measurement, run_command
from topology.formats.ndt import write_ndt
from topology.generate import PRESETS, fat_tree

TARGET_S = 10.0  # issue 24: the whole command on h100-4k, median wall time


def run(workdir: Path) -> list[Measurement]:
    """The plan parsed every time (``--no-plan-cache``: the worst case), at the default stage size (4 stages) and
    with every host in one stage; the scripts and JSON written each time."""
    plan_path = workdir / "h100-4k.csv"
    with plan_path.open("w", newline="") as handle:
        write_ndt(fat_tree(PRESETS["h100-4k"]), handle)
    fabricctl = str(Path(sys.executable).with_name("fabricctl"))
    results = []
    for stage_size in (64, 256):
        argv = [fabricctl, "burnin", "plan", "--plan", str(plan_path), "--out", str(workdir / f"burnin-{stage_size}"),
                "--stage-size", str(stage_size), "--no-plan-cache"]
        results.append(run_command(f"burnin plan h100-4k, --stage-size {stage_size}", argv, target_s=TARGET_S,
                                   note=f"12,288 cables, 512 hosts, {256 // stage_size} stage(s), files written"))
    return results
