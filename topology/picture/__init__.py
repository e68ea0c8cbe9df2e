"""The fat-tree picture: the planned switches in their tiers and pods, cables marked by state, leaves' paths to core.

Used by ``fabricctl verify --html`` (the cabling report) and the daemon's console. The interface:

- ``layout_of(plan) -> Layout``: where each planned switch stands (core groups; each pod's spines, leaves and hosts
  per leaf). Small (names and counts, no cable): the daemon's API process keeps it in its ``PlanIndex``.
- ``CableMark(a, b, state, cable)``: one cable to mark, by its two ends' device keys (case-folded names), its
  ``CableState`` and its name as shown. ``STYLES`` holds each state's colour and meaning; ``CONSOLE_STATES`` and
  ``VERIFY_STATES`` the two sets.
- ``LeafFigures(paths, minimum, planned, cores=None, planned_cores=None)`` per leaf key: ``guard_figures(guard)``
  builds them from the capacity guard (``GuardReading``), ``share_figures`` from verify's share.
- ``fabric_svg(layout, marks, leaves, pod_href=None) -> str``: the whole fabric; past ``OVERVIEW_PODS`` pods one block
  per pod, each linked to ``pod_href(number)`` (the console: ``/ui/fabric?pod=N``).
- ``pod_svg(layout, number, marks, leaves) -> str``: one pod in detail (KeyError for a pod the layout lacks).
- ``legend_svg(states, pods=False) -> str``: the colours of ``states`` and of the leaves' bars (``pods``: and of
  the pods' blocks, for the view past ``OVERVIEW_PODS``).
- ``marks_by_pod(layout, marks) -> {pod number: marks}``: which pods hold marked cables (to list or open them).

The console's use, from the API process's ``PlanIndex`` (``index.layout``) and the components out of service::

    marks = []
    for record in disabled_links:  # link components out of service
        a, b = ...  # the link's two device keys, from the index (PlanIndex's link devices)
        marks.append(CableMark(a, b, CableState.DISABLED, record.component.name))
    svg = fabric_svg(index.layout, marks, leaves, pod_href=lambda n: f"/ui/fabric?pod={n}")
    detail = pod_svg(index.layout, n, marks, leaves)  # for /ui/fabric?pod=n; KeyError -> 404

with ``leaves`` from the guard's figures per leaf key (``guard_figures`` on a ``GuardReading``, or ``LeafFigures``
built from the status the engine process publishes).

Every SVG is a string holding one ``<svg>`` element, every name in it escaped: safe to put in a page as it is (in
Jinja2, ``Markup(svg)``). See ``topology.picture.svg`` for the data attributes tests can find elements by.
"""

from topology.picture.layout import Layout, Pod, layout_of
from topology.picture.marks import (
    CONSOLE_STATES,
    STYLES,
    VERIFY_STATES,
    CableMark,
    CableState,
    LeafFigures,
    guard_figures,
    share_figures,
)
from topology.picture.svg import OVERVIEW_PODS, fabric_svg, legend_svg, marks_by_pod, pod_svg

__all__ = [
    "CONSOLE_STATES", "OVERVIEW_PODS", "STYLES", "VERIFY_STATES", "CableMark", "CableState", "Layout",
    "LeafFigures", "Pod", "fabric_svg", "guard_figures", "layout_of", "legend_svg", "marks_by_pod", "pod_svg",
    "share_figures",
]
