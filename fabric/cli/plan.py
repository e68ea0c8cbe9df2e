"""``fabricctl plan``: wiring plans, and any fabric as a graph file for Gephi or yEd."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated

import typer

from fabric.cli.common import command_group, fail, replacing
from topology.errors import InputError

if TYPE_CHECKING:
    import networkx as nx

plan_app = command_group("Wiring plans.")


class GraphFormat(StrEnum):
    GRAPHML = "graphml"
    GEXF = "gexf"
    JSON = "json"
    """networkx's node-link data."""


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
        with replacing(output) as partial, partial.open("w", newline="") as handle:
            write_ndt(fabric, handle)
        typer.echo(f"wrote {output}: {spec.switches} switches, {spec.cables} cables", err=True)


@plan_app.command("export")
def plan_export(
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write the graph ('-' for stdout).")],
    plan: Annotated[Path | None, typer.Option("--plan", "-p", help="A wiring plan (NDT CSV).")] = None,
    as_built: Annotated[Path | None, typer.Option(
        "--as-built", "-a",
        help="An as-built fabric: UFM snapshot directory, ibnetdiscover dump or NDT CSV.")] = None,
    graph_format: Annotated[GraphFormat, typer.Option(
        "--format", "-f", help="graphml (yEd, Gephi), gexf (Gephi) or json (networkx node-link data).")]
    = GraphFormat.GRAPHML,
) -> None:
    """Write a plan or an as-built fabric as a graph: a node per switch and adapter, an edge per cable.

    Nodes carry name, kind, tier and GUID; edges are keyed by their two ports and carry width and speed.
    """
    from topology.formats.asbuilt import load_as_built
    from topology.formats.ndt import read_ndt
    from topology.graph import fabric_graph

    if (plan is None) == (as_built is None):
        fail("give exactly one fabric: --plan PATH or --as-built PATH")
    try:
        if plan is not None:
            fabric = read_ndt(plan)
        else:
            assert as_built is not None
            fabric = load_as_built(as_built)
            # An as-built source names no tiers: rank its switches from the hosts, as the plan reader does.
            fabric.infer_tiers()
    except InputError as exc:
        fail(str(exc))
    graph = fabric_graph(fabric)
    if str(output) == "-":
        _write_graph(graph, graph_format, sys.stdout.buffer)
        sys.stdout.flush()
    else:
        with replacing(output) as partial, partial.open("wb") as handle:
            _write_graph(graph, graph_format, handle)
        typer.echo(f"wrote {output}: {graph.number_of_nodes()} devices, {graph.number_of_edges()} cables", err=True)


def _write_graph(graph: nx.MultiGraph, graph_format: GraphFormat, handle: IO[bytes]) -> None:
    import json

    import networkx as nx

    if graph_format is GraphFormat.GRAPHML:
        nx.write_graphml(graph, handle)
    elif graph_format is GraphFormat.GEXF:
        nx.write_gexf(graph, handle)
    else:
        handle.write(json.dumps(nx.node_link_data(graph, edges="edges"), indent=1).encode())
        handle.write(b"\n")
