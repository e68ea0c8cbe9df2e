"""``fabricctl demo``: the product end to end on embedded defaults, with nothing to set up."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from rich.console import Console

from topology.faults import FaultCounts, PlantedFaults, plant
from topology.formats.ndt import write_ndt
from topology.formats.ufm_render import write_ufm_snapshot
from topology.generate import PRESETS, fat_tree
from topology.model import Fabric

DEMO_FAULTS = FaultCounts(missing=3, swapped=2, wrong_device=2, degraded=2, unexpected=1)


def _fabricctl(*args: str) -> int:
    """Run the real command, so the demo shows exactly what an operator would type and see."""
    return subprocess.call([sys.executable, "-m", "fabric.cli", *args])


def run_demo(workdir: Path, seed: int, *, verbose: bool = False, jira: bool = False) -> int:
    """``jira``: the loop's tickets go to a fake Jira (its webhooks signed to the daemon), not the local backend."""
    from fabric.demo.loop import Loop

    console = Console()
    workdir.mkdir(parents=True, exist_ok=True)
    plan_path = workdir / "plan.csv"
    spec = PRESETS["h100-4k"]
    plan = fat_tree(spec)
    with plan_path.open("w", newline="") as handle:
        write_ndt(plan, handle)
    console.rule("1. The wiring plan")
    console.print(f"h100-4k reference fabric: {spec.switches} switches, {spec.cables} cables -> {plan_path}")

    with Loop(plan, workdir, jira=jira) as loop:  # the simulator and the daemon start while verify runs
        first, second = _verify(console, plan, plan_path, workdir, seed)
        console.rule("5. The remediation loop: fabricctl run, live, against a simulated UFM over HTTP")
        loop_ok = loop.run(console, verbose=verbose)
    console.rule("Done")
    # Both fabrics are built to fail verification, and the loop to tell its story as promised; anything else
    # means the demo itself is broken.
    return 0 if first == 1 and second == 1 and loop_ok else 2


def planted_snapshot(plan: Fabric, workdir: Path, seed: int) -> tuple[PlantedFaults, Path]:
    """The demo's faulty as-built fabric (``DEMO_FAULTS`` planted by ``seed``) as a UFM REST snapshot in
    ``workdir``."""
    planted = plant(plan, DEMO_FAULTS, seed)
    directory = workdir / "as-built-faulty"
    write_ufm_snapshot(planted.fabric, directory)
    return planted, directory


def _verify(console: Console, plan: Fabric, plan_path: Path, workdir: Path, seed: int) -> tuple[int, int]:
    """Parts 2 to 4: ``fabricctl verify`` on two as-built fabrics that do not match the plan; its exit codes."""
    spec = PRESETS["h100-4k"]
    console.rule("2. An as-built fabric with planted cabling faults")
    planted, faulty_dir = planted_snapshot(plan, workdir, seed)
    console.print(f"UFM REST snapshot (systems/ports/links.json) -> {faulty_dir}")
    console.print(f"planted: {len(planted.missing)} missing, {len(planted.swapped)} swapped pairs, "
                  f"{len(planted.wrong_device)} on a wrong device, {len(planted.degraded)} at 1x width, "
                  f"{len(planted.unexpected)} unexpected")

    report = workdir / "report.html"
    console.rule(f"3. fabricctl verify --plan {plan_path} --as-built {faulty_dir}")
    first = _fabricctl("verify", "--plan", str(plan_path), "--as-built", str(faulty_dir), "--html", str(report))
    console.print(f"--html {report}: the report as one page, the faulty cables drawn on the fat tree")

    console.rule("4. The top layer cabled as eight disjoint networks (the published build's mistake)")
    split_dir = workdir / "as-built-eight-networks"
    write_ufm_snapshot(fat_tree(spec, disjoint_top=True), split_dir)
    second = _fabricctl("verify", "--plan", str(plan_path), "--as-built", str(split_dir), "--worst", "3")
    console.print(f"verify exit codes: {first} and {second} (1 = the fabric does not match its plan)")

    return first, second
