"""`fabricctl verify` on the reference fabric and at 8x scale, from files, as a whole command."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from benchmarks.measure import Measurement, run_command
from topology.faults import FaultCounts, plant
from topology.formats.ndt import write_ndt
from topology.formats.ufm_render import write_ufm_snapshot
from topology.generate import PRESETS, fat_tree

TARGETS_S = {"h100-4k": 0.5, "h100-32k": 4.0}  # issues 12 and 23: the whole command, median wall time
FAULTS = FaultCounts(missing=5, swapped=3, wrong_device=2, degraded=4, unexpected=1)


def prepare(preset: str, workdir: Path) -> tuple[Path, Path]:
    plan = fat_tree(PRESETS[preset])
    plan_path = workdir / f"{preset}.csv"
    with plan_path.open("w", newline="") as handle:
        write_ndt(plan, handle)
    snapshot = workdir / f"{preset}-as-built"
    write_ufm_snapshot(plant(plan, FAULTS, seed=1).fabric, snapshot)
    return plan_path, snapshot


def run(workdir: Path) -> list[Measurement]:
    """Each fabric verified as an operator verifies it again against one plan (its model kept by a first, untimed
    run, in a cache directory of the benchmark's own), and with the plan parsed every time (``--no-plan-cache``)."""
    results = []
    fabricctl = str(Path(sys.executable).with_name("fabricctl"))
    cache = {"XDG_CACHE_HOME": str(workdir / "xdg-cache")}
    for preset, target in TARGETS_S.items():
        plan_path, snapshot = prepare(preset, workdir)
        size_mib = sum(p.stat().st_size for p in snapshot.iterdir()) / 2**20
        argv = [fabricctl, "verify", "--plan", str(plan_path), "--as-built", str(snapshot), "--format", "json"]
        note = f"UFM snapshot systems+ports+links.json, {size_mib:.0f} MiB; JSON report"
        subprocess.run(argv, env={**os.environ, **cache}, stdout=subprocess.DEVNULL, check=False)  # keeps the model
        results.append(run_command(f"verify {preset} ({PRESETS[preset].cables:,} cables)", argv, target_s=target,
                                   expect_codes=(1,), note=note + "; the plan's model kept", env=cache))
        results.append(run_command(f"verify {preset}, --no-plan-cache", [*argv, "--no-plan-cache"],
                                   expect_codes=(1,), note=note + "; the plan parsed", env=cache))
    return results
