"""`fabricctl identify` (issue 24) on the reference fabric and at 8x scale: a fresh fabric, every switch under a
factory name, 1% of its cables miswired, read from a UFM snapshot, as a whole command."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

from benchmarks.measure import Measurement, run_command
from topology.factory import factory_named
from topology.faults import FaultCounts, plant
from topology.formats.ndt import write_ndt
from topology.formats.ufm_render import write_ufm_snapshot
from topology.generate import PRESETS, fat_tree

TARGETS_S = {"h100-4k": 5.0, "h100-32k": 60.0}  # issue 24: the whole command, median wall time


def prepare(preset: str, workdir: Path) -> tuple[Path, Path]:
    """The plan as an NDT CSV, and a UFM snapshot of the fabric as built: 1% of the cables in swapped pairs (two
    cables of one switch plugged into each other's ports), every switch under a factory name or its GUID."""
    plan = fat_tree(PRESETS[preset])
    plan_path = workdir / f"{preset}.csv"
    with plan_path.open("w", newline="") as handle:
        write_ndt(plan, handle)
    pairs = len(plan.cables) // 200
    built = factory_named(plant(plan, FaultCounts(swapped=pairs), seed=random.Random(preset).randint(0, 999)).fabric)
    snapshot = workdir / f"{preset}-factory"
    write_ufm_snapshot(built.fabric, snapshot)
    return plan_path, snapshot


def run(workdir: Path) -> list[Measurement]:
    """Each fabric identified as an operator runs it, the plan's model kept by a first, untimed run (as verify's
    benchmark does: the plan is read once and identify run again as cabling is fixed)."""
    results = []
    fabricctl = str(Path(sys.executable).with_name("fabricctl"))
    cache = {"XDG_CACHE_HOME": str(workdir / "xdg-cache")}
    for preset, target in TARGETS_S.items():
        plan_path, snapshot = prepare(preset, workdir)
        argv = [fabricctl, "identify", "--plan", str(plan_path), "--as-built", str(snapshot), "--format", "json",
                "--node-name-map", str(workdir / f"{preset}.map"), "--rename-plan", str(workdir / f"{preset}.csv.rn")]
        subprocess.run(argv, env={**os.environ, **cache}, stdout=subprocess.DEVNULL, check=False)  # keeps the model
        note = (f"UFM snapshot, {len(list(fat_tree(PRESETS[preset]).switches()))} switches under factory names, "
                f"1% of cables miswired; JSON, node-name-map and rename plan written")
        results.append(run_command(f"identify {preset} ({PRESETS[preset].cables:,} cables)", argv, target_s=target,
                                   expect_codes=(1,), note=note, env=cache))
    return results
