"""The fabric as a networkx ``MultiGraph``: for graph algorithms and for the tools that draw graphs (Gephi, yEd).

The port-indexed ``Fabric`` stays the model every hot path walks; this is a view built on demand, and
networkx is imported only when one is built, so ``verify``, ``replay`` and the engine never pay for it.

Nodes are device keys (case-folded names) carrying ``name``, ``kind`` and ``tier``, plus ``guid`` and, for an
adapter, ``host`` when known. Each cable is one edge keyed by its two ports (``cable_key``), so parallel cables
between two switches stay distinct edges; it carries what the model holds per cable: ``width`` (lanes),
``speed_gbps`` (total rate) and ``origin`` (where it was read), each when known. The model has no per-cable
state: a cable a ``Fabric`` lists is one its plan or as-built source says is there.

GraphML and GEXF accept only scalar attributes, so every attribute is a str, int, float or bool and an
unknown one is left out rather than written as None.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from topology.model import Cable, Fabric
from topology.ports import Kind

if TYPE_CHECKING:
    import networkx as nx

Scalar = str | int | float | bool


def cable_key(fabric: Fabric, cable: Cable) -> str:
    """A cable's edge key: its two ports as reports write them, in the model's order of ends (stable)."""
    a, b = cable.key
    return f"{fabric.describe(a)} - {fabric.describe(b)}"


def _present(**attributes: Scalar | None) -> dict[str, Scalar]:
    return {name: value for name, value in attributes.items() if value is not None}


def fabric_graph(fabric: Fabric) -> nx.MultiGraph:
    """The devices and cables of ``fabric`` as a networkx ``MultiGraph`` (see the module docstring)."""
    import networkx as nx

    graph = nx.MultiGraph(source=fabric.source)
    for key, device in fabric.devices.items():
        graph.add_node(key, **_present(
            name=device.name, kind=device.kind.value, tier=device.tier.value, guid=device.guid,
            host=device.host_name if device.kind is Kind.ADAPTER else None,
        ))
    for cable in fabric.cables:
        graph.add_edge(cable.a.device, cable.b.device, key=cable_key(fabric, cable), **_present(
            width=cable.width, origin=cable.origin,
            # One type per attribute: GraphML declares each attribute's type once, for every edge.
            speed_gbps=float(cable.speed_gbps) if cable.speed_gbps is not None else None,
        ))
    return graph
