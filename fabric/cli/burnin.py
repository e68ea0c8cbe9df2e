"""``fabricctl burnin``: plan a burn-in workload that loads every cable of a fabric."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from fabric.cli.common import EXIT_FINDINGS, EXIT_OK, command_group, fail, replacing
from topology.errors import InputError

if TYPE_CHECKING:
    from topology.burnin import BurninPlan

burnin_app = command_group("Burn-in: load every cable, then keep what survived.")

PLAN_FILE = "burnin-plan.json"


@burnin_app.command("plan")
def burnin_plan(
    plan: Annotated[Path, typer.Option("--plan", "-p", help="The wiring plan (NDT CSV).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory for stage-NN.sh and burnin-plan.json.")],
    stage_size: Annotated[int, typer.Option(
        "--stage-size", help="Most host pairs in one stage (each pair: one stream per rail).")] = 64,
    duration: Annotated[str, typer.Option(
        help="How long each stream runs (90s, 10m, 1h): the scripts' default, DURATION overrides it.")] = "10m",
    plan_cache: Annotated[bool, typer.Option(
        "--plan-cache/--no-plan-cache", envvar="FABRIC_PLAN_CACHE",
        help="Keep the plan's model in $XDG_CACHE_HOME/fabric-remediation, as verify does.")] = True,
) -> None:
    """Stages of host pairs running ib_write_bw, rails matched, under which every cable carries traffic.

    Writes a shell script per stage and burnin-plan.json (each cable's expected load per stage under even
    spreading over shortest paths) into --out. Exit 0 when every cable is loaded, 1 when some cannot be, 2 on bad
    input.
    """
    import json

    from fabric.cli.burnin_files import plan_json, script_name, stage_script
    from fabric.durations import parse_duration
    from topology.burnin import plan_burnin
    from topology.plancache import default_directory, read_plan

    if stage_size < 1:
        fail(f"--stage-size must be at least 1 host pair, not {stage_size}")
    try:
        seconds = round(parse_duration(duration).total_seconds())
    except ValueError as exc:
        fail(f"--duration: {exc}")
    if seconds < 1:
        fail(f"--duration must be at least a second (ib_write_bw -D counts whole seconds), not {duration!r}")
    if out.exists() and not out.is_dir():
        fail(f"--out {out}: not a directory")
    gc.disable()  # a one-shot command building ~100k objects: see verify
    try:
        fabric = read_plan(plan, directory=default_directory() if plan_cache else None)
    except InputError as exc:
        fail(str(exc))
    burnin = plan_burnin(fabric, stage_size)
    if not burnin.hosts:
        fail(f"{plan}: no host adapter is cabled to a switch: nothing to run a burn-in from")
    for number in range(1, len(burnin.stages) + 1):
        with replacing(out / script_name(number)) as partial:
            partial.write_text(stage_script(burnin, number, seconds))
            partial.chmod(0o755)
    with replacing(out / PLAN_FILE) as partial:
        partial.write_text(json.dumps(plan_json(burnin, str(plan)), indent=1) + "\n")
    _print_summary(burnin, out)
    raise typer.Exit(EXIT_FINDINGS if burnin.uncovered else EXIT_OK)


def _print_summary(burnin: BurninPlan, out: Path) -> None:
    from fabric.terminal import LineTable, console

    terminal = console()
    table = LineTable(terminal, f"burn-in plan: {len(burnin.hosts)} hosts, {len(burnin.stages)} stages, in {out}",
                      "stage", "pairs", "streams", "cables loaded", "load min", "load max")
    for number, stage in enumerate(burnin.stages, start=1):
        loads = stage.load.values()
        table.add(number, len(stage.pairs), sum(len(pair.rails) for pair in stage.pairs), len(stage.load),
                  f"{min(loads, default=0.0):.2f}", f"{max(loads, default=0.0):.2f}")
    terminal.print(table)
    covered = len(burnin.fabric.cables) - len(burnin.uncovered)
    typer.echo(f"{covered} of {len(burnin.fabric.cables)} cables carry traffic in some stage")
    for index in burnin.uncovered[:10]:
        typer.echo(f"not loaded: {burnin.fabric.describe_cable(burnin.fabric.cables[index])}")
