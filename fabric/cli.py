"""``fabricctl``: the command line. Commands import their machinery lazily so that one-shot tools start fast.

Exit codes everywhere: 0 ok, 1 findings (the fabric does not match, something needs attention), 2 unusable
input or a usage error.
"""

from __future__ import annotations

import gc
import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from topology.errors import InputError

EXIT_OK, EXIT_FINDINGS, EXIT_BAD_INPUT = 0, 1, 2

app = typer.Typer(
    name="fabricctl",
    help="Safe, explainable remediation of InfiniBand fat-tree fabrics under NVIDIA UFM.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
plan_app = typer.Typer(help="Wiring plans.", no_args_is_help=True)
app.add_typer(plan_app, name="plan")


class OutputFormat(StrEnum):
    TABLE = "table"
    JSON = "json"


FormatOption = Annotated[OutputFormat, typer.Option("--format", "-f", help="Report format.")]


def fail(message: str) -> NoReturn:
    typer.echo(f"fabricctl: error: {message}", err=True)
    raise typer.Exit(EXIT_BAD_INPUT)


def print_json(payload: Any) -> None:
    sys.stdout.write(json.dumps(payload, indent=2))
    sys.stdout.write("\n")


@plan_app.command("generate")
def plan_generate(
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write the NDT CSV ('-' for stdout).")],
    preset: Annotated[str, typer.Option(help="Starting point: h100-4k, h100-32k (8x) or tiny.")] = "h100-4k",
    pods: Annotated[int | None, typer.Option(help="Pods.")] = None,
    hosts_per_pod: Annotated[int | None, typer.Option(help="Hosts per pod.")] = None,
    rails: Annotated[int | None, typer.Option(help="Adapters per host = leaves per pod.")] = None,
    spines_per_pod: Annotated[int | None, typer.Option(help="Spines per pod = core groups.")] = None,
    cores_per_group: Annotated[int | None, typer.Option(help="Cores in each core group.")] = None,
    leaf_spine_cables: Annotated[int | None, typer.Option(help="Cables between each leaf and spine.")] = None,
    spine_core_cables: Annotated[int | None, typer.Option(help="Cables between each spine and core.")] = None,
    radix: Annotated[int | None, typer.Option(help="Ports per switch.")] = None,
    speed: Annotated[str | None, typer.Option(help="Link generation: HDR, NDR, XDR...")] = None,
) -> None:
    """Write the wiring plan of a rail-optimised three-tier fat tree as an NDT CSV."""
    from topology.formats.ndt import write_ndt
    from topology.generate import fat_tree
    from topology.generate import preset as get_preset

    overrides = {k: v for k, v in {
        "pods": pods, "hosts_per_pod": hosts_per_pod, "rails": rails, "spines_per_pod": spines_per_pod,
        "cores_per_group": cores_per_group, "leaf_spine_cables": leaf_spine_cables,
        "spine_core_cables": spine_core_cables, "radix": radix, "speed": speed.upper() if speed else None,
    }.items() if v is not None}
    try:
        spec = get_preset(preset, **overrides)
        fabric = fat_tree(spec)
    except (KeyError, ValueError) as exc:
        fail(str(exc).strip("'\""))
    if str(output) == "-":
        write_ndt(fabric, sys.stdout)
    else:
        output.parent.mkdir(parents=True, exist_ok=True)
        with output.open("w", newline="") as handle:
            write_ndt(fabric, handle)
        typer.echo(f"wrote {output}: {spec.switches} switches, {spec.cables} cables", err=True)


@app.command()
def verify(
    plan: Annotated[Path, typer.Option("--plan", "-p", help="The wiring plan (NDT CSV).")],
    as_built: Annotated[Path, typer.Option(
        "--as-built", "-a",
        help="UFM snapshot directory (systems.json, links.json, optional ports.json), an ibnetdiscover dump, "
             "or another NDT CSV.")],
    output_format: FormatOption = OutputFormat.TABLE,
    guard: Annotated[float, typer.Option(min=0.0, max=1.0, help="Share of planned paths to core a leaf needs.")]
    = 0.75,
    worst: Annotated[int, typer.Option(min=1, help="How many worst offenders to list per category.")] = 10,
    lenient_plan: Annotated[bool, typer.Option(
        help="Load a plan that cables a port twice: keep the first cable, report the conflict.")] = False,
) -> None:
    """Check the as-built cabling against the wiring plan. Exit 0 when it matches, 1 when not, 2 on bad input."""
    from fabric.asbuilt import load_as_built
    from topology.formats.ndt import read_ndt
    from topology.verify import verify as run_verify

    # A one-shot command that builds ~100k objects and frees them at exit: the cyclic collector would only
    # rescan them over and over (a fifth of the run time on the reference fabric).
    gc.disable()
    try:
        planned = read_ndt(plan, lenient=lenient_plan)
        actual = load_as_built(as_built)
    except InputError as exc:
        fail(str(exc))
    report = run_verify(planned, actual, guard)
    if output_format is OutputFormat.JSON:
        print_json(report.to_dict(worst))
    else:
        from rich.console import Console

        from fabric.verify_view import render_verify

        render_verify(report, Console(), worst)
    raise typer.Exit(EXIT_OK if report.matches else EXIT_FINDINGS)


@app.command()
def demo(
    workdir: Annotated[Path, typer.Option(help="Where the demo writes its plan and as-built files.")] = Path(
        "out/demo"),
    seed: Annotated[int, typer.Option(help="Seed for the planted faults.")] = 7,
) -> None:
    """Generate the reference plan, build an as-built fabric with planted cabling faults, and verify it."""
    from fabric.demo import run_demo

    raise typer.Exit(run_demo(workdir, seed))


def main() -> None:  # pragma: no cover - console-script shim
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
