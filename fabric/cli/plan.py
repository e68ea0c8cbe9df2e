"""``fabricctl plan``: wiring plans."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from fabric.cli.common import fail

plan_app = typer.Typer(help="Wiring plans.", no_args_is_help=True)


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
