"""The fat-tree picture as SVG text: every switch in its place, every marked cable in its state's colour, each leaf's
paths to core as a bar against its guard minimum.

Three views, all from a ``Layout``, the marks and the leaves' figures:

- ``fabric_svg``: the whole fabric. Up to ``OVERVIEW_PODS`` pods every switch is drawn (core groups, each pod's
  spines and leaves, a leaf's hosts as one box) with each marked cable as a line between its ends; past it
  (h100-32k: 128 pods) one block per pod, filled by its worst leaf and edged in its worst mark's colour, linked to
  ``pod_href(number)`` when given, with the marked spine-core cables drawn to their cores.
- ``pod_svg``: one pod in detail, names written out, with the cores its spines reach.
- ``legend_svg``: the states' colours and the bar's.

Where a mark's end is not a switch drawn: an end hanging off a leaf that is not a planned switch is on the host side
(drawn to the leaf's hosts box); any other end gets a box in the bottom row, "other ends" (an unplanned switch).

Every name is data from outside (a plan, UFM): made visible (``topology.printable``) then escaped for XML, so a
switch named ``<img src=x onerror=alert(1)>`` is text. Elements carry what tests and scripts look for:
``data-device``/``data-place`` on switches, ``data-cable``/``data-state`` on marked cables, ``data-leaf``,
``data-paths``, ``data-minimum``, ``data-planned`` and ``data-health`` on guard bars, ``data-pod``, ``data-health``,
``data-marks`` and ``data-state`` on the overview's pod blocks.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from html import escape

from topology.picture.layout import Layout, Place, Pod
from topology.picture.marks import HEALTH_COLOURS, HEALTH_ORDER, SEVERITY, STYLES, CableMark, CableState, LeafFigures
from topology.printable import visible

OVERVIEW_PODS = 32
"""Past this many pods the whole fabric is drawn one block per pod."""
_LEFT = 70
_FONT = 'font-family="sans-serif"'


def _attr(text: str) -> str:
    """``text`` safe inside a double-quoted attribute or as element text."""
    return escape(visible(text), quote=True)


@dataclass(frozen=True, slots=True)
class _Geometry:
    column: float
    """Horizontal room of a spine or leaf."""
    box: float
    """Width of a switch's box."""
    height: float
    core_step: float
    """Largest horizontal room of a core."""
    labels: bool
    """Names written in the boxes (one pod's detail), else only in their tooltips."""


_WHOLE = _Geometry(column=12, box=9, height=14, core_step=12, labels=False)
_DETAIL = _Geometry(column=84, box=76, height=18, core_step=16, labels=True)
_CORE_Y, _SPINE_Y, _LEAF_Y = 40.0, 170.0, 300.0


class _Canvas:
    """SVG elements in drawing order, and where each drawn device stands."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.anchor: dict[str, tuple[float, float, float]] = {}
        """Device key -> (x of its centre, top, bottom)."""
        self.hosts: dict[str, tuple[float, float, float]] = {}
        """Leaf key -> where its hosts' box stands, the same way."""

    def add(self, part: str) -> None:
        self.parts.append(part)

    def switch(self, key: str, name: str, place: Place, x: float, y: float, width: float, height: float,
               label: bool) -> None:
        self.anchor[key] = (x + width / 2, y, y + height)
        shown = _attr(name)
        self.add(f'<rect x="{x:.1f}" y="{y:.1f}" width="{width:.1f}" height="{height:.1f}" rx="2" fill="#dfe7f2" '
                 f'stroke="#5a6b80" stroke-width="0.6" data-device="{shown}" data-place="{place.value}">'
                 f'<title>{place.value} {shown}</title></rect>')
        if label:
            self.add(f'<text x="{x + width / 2:.1f}" y="{y + height / 2 + 3:.1f}" font-size="8.5" {_FONT} '
                     f'text-anchor="middle" pointer-events="none">{_attr(_cut(name, 16))}</text>')

    def text(self, x: float, y: float, text: str, size: float = 11, anchor: str = "start") -> None:
        self.add(f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" {_FONT} text-anchor="{anchor}" '
                 f'fill="#333">{_attr(text)}</text>')

    def svg(self, width: float, height: float, label: str) -> str:
        head = (f'<svg xmlns="http://www.w3.org/2000/svg" class="fabric-picture" width="{width:.0f}" '
                f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" role="img" '
                f'aria-label="{_attr(label)}"><rect width="100%" height="100%" fill="#ffffff"/>')
        return head + "".join(self.parts) + "</svg>"


def _cut(name: str, most: int) -> str:
    return name if len(name) <= most else name[: most - 1] + "\u2026"


def fabric_svg(layout: Layout, marks: Iterable[CableMark], leaves: Mapping[str, LeafFigures], *,
               pod_href: Callable[[int], str | None] | None = None) -> str:
    """The whole fabric: every switch, or past ``OVERVIEW_PODS`` pods one block per pod (``pod_href``: where a pod's
    block or name links, e.g. ``lambda n: f"/ui/fabric?pod={n}"``; None for a pod not linked)."""
    if len(layout.pods) > OVERVIEW_PODS:
        return _overview(layout, list(marks), leaves, pod_href)
    return _tree(layout, layout.pods, list(marks), leaves, _WHOLE, "the fabric", pod_href)


def pod_svg(layout: Layout, number: int, marks: Iterable[CableMark], leaves: Mapping[str, LeafFigures]) -> str:
    """One pod (``Pod.number``) in detail, with the cores; the marks of cables on the pod's switches. KeyError when
    the layout has no such pod."""
    pod = layout.pod(number)
    if pod is None:
        raise KeyError(f"no pod {number} (the fabric has {len(layout.pods)})")
    members = {*pod.spines, *pod.leaves}
    shown = [mark for mark in marks if mark.a in members or mark.b in members]
    return _tree(layout, (pod,), shown, leaves, _DETAIL, f"pod {number}", None)


def _tree(layout: Layout, pods: Sequence[Pod], marks: list[CableMark], leaves: Mapping[str, LeafFigures],
          geometry: _Geometry, label: str, pod_href: Callable[[int], str | None] | None) -> str:
    canvas = _Canvas()
    gap = geometry.column * 1.5
    widths = [max(len(pod.spines), len(pod.leaves), 1) * geometry.column for pod in pods]
    cores = sum(len(group) for group in layout.core_groups)
    groups = max(len(layout.core_groups), 1)
    core_room = max(sum(widths) + gap * max(len(pods) - 1, 0), 4.0 * cores + geometry.core_step * groups)
    for name, y in (("core", _CORE_Y), ("spine", _SPINE_Y), ("leaf", _LEAF_Y), ("hosts", _LEAF_Y + 46)):
        canvas.text(8, y + 11, name)
    _core_row(canvas, layout, _LEFT, core_room, geometry.core_step, geometry.height)
    x = float(_LEFT)
    for pod, width in zip(pods, widths, strict=True):
        _draw_pod(canvas, layout, pod, x, width, geometry, leaves)
        title = f"pod {pod.number}"
        href = pod_href(pod.number) if pod_href is not None else None
        if href is not None:
            canvas.add(f'<a href="{_attr(href)}">')
        canvas.text(x + width / 2, _LEAF_Y + 86, title, 10, "middle")
        if href is not None:
            canvas.add("</a>")
        x += width + gap
    right = max(x - gap, _LEFT + core_room) + 20
    bottom = _LEAF_Y + 100
    if layout.others and len(pods) == len(layout.pods):
        bottom = _row(canvas, layout.others, layout.names, "other switches", bottom, right, geometry)
    ends = {end for mark in marks for end in (mark.a, mark.b)}
    host_side = {end for mark in marks for end, other in ((mark.a, mark.b), (mark.b, mark.a))
                 if end not in layout.names and other in canvas.hosts}
    strays = sorted(end for end in ends if end not in canvas.anchor and end not in host_side)
    if strays:
        bottom = _row(canvas, strays, layout.names, "other ends", bottom, right, geometry)
    _draw_marks(canvas, marks)
    return canvas.svg(max(right, 300), bottom + 10, label)


def _core_row(canvas: _Canvas, layout: Layout, left: float, room: float, most: float, height: float) -> None:
    """The core groups side by side across ``room``, each centred in its share of it, a core at most ``most``
    wide."""
    slot = room / max(len(layout.core_groups), 1)
    for index, group in enumerate(layout.core_groups):
        step = min(most, slot * 0.9 / len(group))
        x = left + index * slot + (slot - step * len(group)) / 2
        for key in group:
            canvas.switch(key, layout.names[key], Place.CORE, x, _CORE_Y, max(step - 1.5, step * 0.6), height, False)
            x += step


def _draw_pod(canvas: _Canvas, layout: Layout, pod: Pod, left: float, width: float, geometry: _Geometry,
              leaves: Mapping[str, LeafFigures]) -> None:
    canvas.add(f'<g data-pod="{pod.number}">')
    canvas.add(f'<rect x="{left - 3:.1f}" y="{_SPINE_Y - 8:.1f}" width="{width + 6:.1f}" '
               f'height="{_LEAF_Y - _SPINE_Y + 76:.1f}" rx="4" fill="#f6f8fb" stroke="#c9d3df" stroke-width="0.6"/>')
    inset = (geometry.column - geometry.box) / 2
    for row, keys, place in ((_SPINE_Y, pod.spines, Place.SPINE), (_LEAF_Y, pod.leaves, Place.LEAF)):
        step = width / max(len(keys), 1)
        for index, key in enumerate(keys):
            x = left + index * step + (step - geometry.column) / 2 + inset
            canvas.switch(key, layout.names[key], place, x, row, geometry.box, geometry.height, geometry.labels)
    if geometry.labels:  # one pod: its leaf-spine bundles, faint, to show the pod's shape
        for leaf in pod.leaves:
            for spine in pod.spines:
                lx, ltop, _ = canvas.anchor[leaf]
                sx, _, sbottom = canvas.anchor[spine]
                canvas.add(f'<line x1="{lx:.1f}" y1="{ltop:.1f}" x2="{sx:.1f}" y2="{sbottom:.1f}" stroke="#d5dce5" '
                           'stroke-width="0.5"/>')
    for key, hosts in zip(pod.leaves, pod.hosts, strict=True):
        x, _, bottom = canvas.anchor[key]
        figures = leaves.get(key)
        if figures is not None:
            _bar(canvas, layout.names[key], figures, x - geometry.box / 2, bottom + 4, geometry.box)
        name = _attr(layout.names[key])
        top = bottom + 28
        canvas.hosts[key] = (x, top, top + 10)
        canvas.add(f'<rect x="{x - geometry.box / 2:.1f}" y="{top:.1f}" width="{geometry.box:.1f}" height="10" '
                   f'fill="#eef0e6" stroke="#8a9070" stroke-width="0.5" data-hosts="{hosts}" data-leaf="{name}">'
                   f'<title>{hosts} hosts on {name}</title></rect>')
        if geometry.labels:
            canvas.text(x, top + 8.5, f"{hosts} hosts", 8, "middle")
    canvas.add("</g>")


def _bar(canvas: _Canvas, name: str, figures: LeafFigures, x: float, y: float, width: float) -> None:
    """Paths to core as a share of the planned, a tick at the guard's minimum."""
    health = figures.health
    shown = _attr(name)
    cores = "" if figures.cores is None else f", {figures.cores} of {figures.planned_cores} cores reached"
    tick = x + width * (figures.minimum / figures.planned if figures.planned else 0.0)
    canvas.add(
        f'<g data-leaf="{shown}" data-paths="{figures.paths}" data-minimum="{figures.minimum}" '
        f'data-planned="{figures.planned}" data-health="{health}"><title>{shown}: {figures.paths} of '
        f'{figures.planned} planned paths to core, guard minimum {figures.minimum}{cores}</title>'
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{width:.1f}" height="5" fill="#e3e3e3"/>'
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{width * figures.share:.1f}" height="5" '
        f'fill="{HEALTH_COLOURS[health]}"/>'
        f'<line x1="{tick:.1f}" y1="{y - 1.5:.1f}" x2="{tick:.1f}" y2="{y + 6.5:.1f}" stroke="#222" '
        'stroke-width="0.8"/></g>')


def _row(canvas: _Canvas, keys: Sequence[str], names: Mapping[str, str], title: str, top: float, right: float,
         geometry: _Geometry) -> float:
    """Switches drawn apart from the tree (of no known tier, or not in the plan), in rows as wide as the tree."""
    canvas.text(8, top + 11, title)
    step = geometry.box + 16
    per_row = max(int((right - _LEFT) // step), 1)
    for index, key in enumerate(keys):
        row, column = divmod(index, per_row)
        canvas.switch(key, names.get(key, key), Place.OTHER, _LEFT + column * step, top + row * (geometry.height + 12),
                      geometry.box, geometry.height, geometry.labels)
    return top + ((len(keys) - 1) // per_row + 1) * (geometry.height + 12) + 18


def _draw_marks(canvas: _Canvas, marks: Sequence[CableMark]) -> None:
    """Each mark a line between its ends' boxes, the lower end's top to the upper's bottom; cables between the same
    two boxes side by side."""
    seen: Counter[tuple[str, str]] = Counter()
    for mark in sorted(marks, key=lambda mark: -SEVERITY[mark.state]):  # the most severe drawn last, on top
        a, b = _anchor(canvas, mark.a, mark.b), _anchor(canvas, mark.b, mark.a)
        if a is None or b is None:
            continue
        (x1, top1, _), (x2, top2, bottom2) = (a, b) if a[1] >= b[1] else (b, a)  # the lower end first
        pair = (mark.a, mark.b) if mark.a <= mark.b else (mark.b, mark.a)
        shift = _spread(seen[pair])
        seen[pair] += 1
        style = STYLES[mark.state]
        dash = ' stroke-dasharray="4 2"' if style.dashed else ""
        y2 = bottom2 if bottom2 <= top1 else top2  # side by side (the bottom row): top to top
        cable = _attr(mark.cable)
        canvas.add(f'<line x1="{x1 + shift:.1f}" y1="{top1:.1f}" x2="{x2 + shift:.1f}" y2="{y2:.1f}" '
                   f'stroke="{style.colour}" stroke-width="2.2"{dash} stroke-linecap="round" '
                   f'data-cable="{cable}" data-state="{mark.state.value}">'
                   f'<title>{style.label}: {cable}</title></line>')


def _anchor(canvas: _Canvas, end: str, other: str) -> tuple[float, float, float] | None:
    """Where a mark's ``end`` is drawn: its box, else the hosts box of the leaf at its ``other`` end."""
    return canvas.anchor.get(end) or canvas.hosts.get(other)


def _spread(index: int) -> float:
    """0, +2, -2, +4, -4...: the offset of the ``index``-th cable between the same two boxes."""
    return 0.0 if index == 0 else (1 if index % 2 else -1) * 2.0 * ((index + 1) // 2)


def marks_by_pod(layout: Layout, marks: Iterable[CableMark],
                 places: Mapping[str, tuple[Place, int]] | None = None) -> dict[int, list[CableMark]]:
    """The marks on each pod's switches, by pod number (a spine-core cable is its spine's pod's)."""
    where = layout.places() if places is None else places
    by_pod: dict[int, list[CableMark]] = defaultdict(list)
    for mark in marks:
        for number in {where[end][1] for end in (mark.a, mark.b) if end in where and where[end][1]}:
            by_pod[number].append(mark)
    return dict(by_pod)


def _overview(layout: Layout, marks: list[CableMark], leaves: Mapping[str, LeafFigures],
              pod_href: Callable[[int], str | None] | None) -> str:
    canvas = _Canvas()
    per_row, block, gap = 32, 34.0, 8.0
    width = per_row * (block + gap) - gap
    canvas.text(8, _CORE_Y + 11, "core")
    canvas.text(8, _CORE_Y + 111, "pods")
    _core_row(canvas, layout, _LEFT, width, 12.0, 14.0)
    places = layout.places()
    by_pod = marks_by_pod(layout, marks, places)
    top = _CORE_Y + 100
    spine_cores: list[CableMark] = []
    for index, pod in enumerate(layout.pods):
        x = _LEFT + (index % per_row) * (block + gap)
        y = top + (index // per_row) * (block + gap)
        _pod_block(canvas, pod, by_pod.get(pod.number, []), leaves, layout.names, x, y, block, pod_href)
        for key in pod.spines:
            canvas.anchor[key] = (x + block / 2, y, y + block)
    for mark in marks:
        a, b = places.get(mark.a), places.get(mark.b)
        if a is not None and b is not None and {a[0], b[0]} == {Place.CORE, Place.SPINE}:
            spine_cores.append(mark)
    _draw_marks(canvas, spine_cores)
    rows = (len(layout.pods) + per_row - 1) // per_row
    return canvas.svg(_LEFT + width + 20, top + rows * (block + gap) + 20, "the fabric, one block per pod")


def _pod_block(canvas: _Canvas, pod: Pod, marks: list[CableMark], leaves: Mapping[str, LeafFigures],
               names: Mapping[str, str], x: float, y: float, size: float,
               pod_href: Callable[[int], str | None] | None) -> None:
    """One pod as a block: filled by its worst leaf's health, edged in its most severe mark's colour."""
    figures = [leaves[key] for key in pod.leaves if key in leaves]
    health = min((f.health for f in figures), key=HEALTH_ORDER.index, default="planned")
    counts = Counter(mark.state for mark in marks)
    worst = min(counts, key=SEVERITY.__getitem__, default=None)
    edge = f'stroke="{STYLES[worst].colour}" stroke-width="3"' if worst else 'stroke="#5a6b80" stroke-width="0.6"'
    first = names[pod.leaves[0]] if pod.leaves else names[pod.spines[0]] if pod.spines else ""
    described = ", ".join(f"{count} {STYLES[state].label}" for state, count in
                          sorted(counts.items(), key=lambda item: SEVERITY[item[0]])) or "no marked cable"
    below = sum(1 for f in figures if f.health == "below")
    state = f' data-state="{worst.value}"' if worst else ""
    href = pod_href(pod.number) if pod_href is not None else None
    if href is not None:
        canvas.add(f'<a href="{_attr(href)}">')
    canvas.add(f'<g data-pod="{pod.number}" data-health="{health}" data-marks="{len(marks)}"{state}>'
               f'<title>pod {pod.number} ({_attr(first)}\u2026): {len(pod.leaves)} leaves, {below} below the guard; '
               f'{_attr(described)}</title>'
               f'<rect x="{x:.1f}" y="{y:.1f}" width="{size:.1f}" height="{size:.1f}" rx="3" '
               f'fill="{HEALTH_COLOURS[health]}" fill-opacity="0.55" {edge}/>'
               f'<text x="{x + size / 2:.1f}" y="{y + size / 2 + 4:.1f}" font-size="11" {_FONT} '
               f'text-anchor="middle">{pod.number}</text></g>')
    if href is not None:
        canvas.add("</a>")


def legend_svg(states: Iterable[CableState] = tuple(STYLES), *, pods: bool = False) -> str:
    """The colours of ``states`` (``marks.CONSOLE_STATES``, ``marks.VERIFY_STATES``) and of the guard bar; ``pods``:
    and what a pod's block says (the whole fabric past ``OVERVIEW_PODS`` pods)."""
    canvas = _Canvas()
    y = 14.0
    for state in states:
        style = STYLES[state]
        dash = ' stroke-dasharray="4 2"' if style.dashed else ""
        canvas.add(f'<line x1="8" y1="{y - 4:.1f}" x2="38" y2="{y - 4:.1f}" stroke="{style.colour}" '
                   f'stroke-width="3"{dash} data-legend="{state.value}"/>')
        canvas.text(46, y, f"{style.label}: {style.meaning}")
        y += 18
    for health, meaning in (("planned", "every planned path to core"), ("reduced", "fewer, at or above the guard"),
                            ("below", "below the guard's minimum")):
        canvas.add(f'<rect x="8" y="{y - 9:.1f}" width="30" height="6" fill="{HEALTH_COLOURS[health]}"/>')
        canvas.text(46, y, f"leaf bar: {meaning} (tick: the minimum)")
        y += 18
    if pods:
        canvas.add(f'<rect x="14" y="{y - 12:.1f}" width="16" height="14" rx="2" fill="{HEALTH_COLOURS["reduced"]}" '
                   f'fill-opacity="0.55" stroke="{STYLES[CableState.MISSING].colour}" stroke-width="2.5"/>')
        canvas.text(46, y, "pod: filled as its worst leaf's bar, edged in its most severe cable's colour")
        y += 18
    return canvas.svg(520, y, "legend")
