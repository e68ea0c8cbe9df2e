"""The console's fabric page: the planned fat tree (``topology.picture``) with the cables automation holds out of
service, or UFM has down, in their states' colours, and each leaf's paths to core against its guard minimum.

What it draws comes from three places, each the one that knows: the plan's layout and each leaf's planned paths
(``PlanIndex``, read once at start-up), the components' states (the store, in the dry run's would-be scope as the
API's reads), and what only the engine's capacity guard knows: the leaves below their planned paths and the cables
down not by automation (``GuardFigures``, from the engine's status record). A leaf with all its planned paths gets a
full bar, its minimum from the guard's share (``min_leaf_fraction``).
"""

from __future__ import annotations

import math
from typing import Annotated

from fastapi import Query, Request
from fastapi.responses import HTMLResponse

from fabric.api.context import GuardFigures
from fabric.api.deps import ContextDep
from fabric.api.plan_index import PlanIndex
from fabric.console.pages import UI
from fabric.console.render import page, viewer
from fabric.remediation.domain import ComponentId, ComponentKind, ComponentRecord, Lifecycle
from topology.picture.marks import STYLES, CableMark, CableState, LeafFigures
from topology.picture.svg import fabric_svg, legend_svg, pod_svg

DRAWN = {Lifecycle.DISABLED: CableState.DISABLED, Lifecycle.AWAITING_REPAIR: CableState.AWAITING_REPAIR,
         Lifecycle.DEFERRED: CableState.DEFERRED, Lifecycle.PROBATION: CableState.PROBATION,
         Lifecycle.QUARANTINED: CableState.QUARANTINED}
"""The lifecycle states a cable is drawn in, and how. Healthy, reset (in service, watched) and ticketed (in service,
a ticket open) cables are not marked."""


def fabric_page(request: Request, context: ContextDep,
                pod: Annotated[int | None, Query(ge=1, le=100_000)] = None) -> HTMLResponse:
    index, status = context.index, context.runtime.status()
    with context.store.snapshot() as snapshot:
        records = snapshot.state_scope().components(None)
    marks = cable_marks(index, records, status.guard, isolating=context.config.ufm.method == "isolate")
    leaves = leaf_figures(index, status.guard)
    who = viewer(request, context)
    if pod is not None and index.layout.pod(pod) is None:
        return page("fabric.html", who, status_code=404, error=f"pod: no pod {pod} (the fabric has "
                    f"{len(index.layout.pods)})", picture="", legend=legend_svg(), pod=pod, marks=marks)
    picture = (pod_svg(index.layout, pod, marks, leaves) if pod is not None
               else fabric_svg(index.layout, marks, leaves, pod_href=lambda number: f"{UI}/fabric?pod={number}"))
    return page("fabric.html", who, picture=picture, legend=legend_svg(), pod=pod, marks=marks,
                styles=STYLES, guard=status.guard)


def cable_marks(index: PlanIndex, records: dict[ComponentId, ComponentRecord], guard: GuardFigures, *,
                isolating: bool = False) -> list[CableMark]:
    """A mark for each planned cable in a drawn state, then for each cable down in UFM that no record explains.
    ``isolating``: the site takes ports out by isolation (``[ufm] method = "isolate"``), so a cable automation
    took out is drawn isolated: up, and carrying no data."""
    marks = []
    for component, record in records.items():
        state = DRAWN.get(record.lifecycle)
        if isolating and state is CableState.DISABLED:
            state = CableState.ISOLATED
        ends = index.link_devices(component.name) if component.kind is ComponentKind.LINK else None
        if state is not None and ends is not None:
            marks.append(CableMark(ends[0], ends[1], state, component.name))
    for a, b in guard.down_not_ours:
        name = f"{a}|{b}"
        held = records.get(ComponentId(ComponentKind.LINK, name))
        if held is not None and held.lifecycle in DRAWN:
            continue  # automation holds it out: drawn in its state above
        device_a, device_b = index.device_of_port(a), index.device_of_port(b)
        if device_a is not None and device_b is not None:
            marks.append(CableMark(device_a, device_b, CableState.DOWN, name))
    return marks


def leaf_figures(index: PlanIndex, guard: GuardFigures) -> dict[str, LeafFigures]:
    """Every planned leaf's paths to core: those below their plan as the guard counts them, the others whole."""
    share = guard.min_leaf_fraction
    figures = {leaf: LeafFigures(planned, math.ceil(share * planned), planned)
               for leaf, planned in index.planned_paths.items()}
    figures.update((leaf.leaf, LeafFigures(leaf.paths, leaf.minimum, leaf.planned)) for leaf in guard.reduced_leaves)
    return figures
