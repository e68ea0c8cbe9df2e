"""The ``fabricctl verify`` report as tables for a terminal (every name made visible: ``fabric.terminal``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from rich.console import Console
from rich.text import Text

from fabric.terminal import boxed_table as _table
from fabric.terminal import cell, cell_lines
from topology.model import Cable, End, Fabric
from topology.verify import BandwidthReport, Miswire, OddName, VerifyReport


def _devices_hit(fabric: Fabric, cables: Iterable[Cable]) -> Counter[str]:
    hits: Counter[str] = Counter()
    for cable in cables:
        for end in (cable.a, cable.b):
            device = fabric.devices.get(end.device)
            hits[device.name if device else end.device] += 1
    return hits


def render_verify(report: VerifyReport, console: Console, worst: int = 10) -> None:
    plan, actual = report.plan, report.actual
    summary = report.summary()
    verdict = cell("MATCHES the plan", "green") if report.matches else cell("DOES NOT MATCH the plan", "red")
    console.print(Text.assemble("As-built ", cell(actual.source, "bold"), " ", verdict, " ",
                                cell(f"({plan.source})", "dim")))
    console.print(_table("Summary", ("check", "count"), summary.items()))

    def more(items: Sequence[object]) -> str:
        return f" (worst {worst} of {len(items)})" if len(items) > worst else ""

    if report.missing:
        console.print(_table(f"Missing cables{more(report.missing)}", ("planned cable", "plan line"),
                             ((plan.describe_cable(c), c.origin or "") for c in report.missing[:worst])))
    if report.miswired:
        # A swap is one mistake to undo: show each pair once, with both planned cables.
        shown: list[Miswire] = []
        partners: set[tuple[End, End]] = set()
        for m in sorted(report.miswired, key=lambda m: (m.kind.value, plan.describe_cable(m.expected))):
            if m.expected.key in partners:
                continue
            if m.swapped_with is not None:
                partners.add(m.swapped_with.key)
            shown.append(m)
        console.print(_table(
            f"Miswired cables{more(shown)}", ("kind", "expected", "actual"),
            ((m.kind.value, cell_lines(plan.describe_cable(c) for c in (m.expected, m.swapped_with) if c),
              cell_lines(actual.describe_cable(c) for c in m.actual)) for m in shown[:worst]),
        ))
    if report.unexpected:
        console.print(_table(f"Unexpected cables{more(report.unexpected)}", ("cable",),
                             ((actual.describe_cable(c),) for c in report.unexpected[:worst])))
    if report.degraded:
        console.print(_table(
            f"Degraded cables{more(report.degraded)}", ("cable", "expected", "actual"),
            ((plan.describe_cable(d.planned), rate(d.expected_width, d.expected_speed_gbps),
              rate(d.actual.width, d.actual.speed_gbps)) for d in report.degraded[:worst]),
        ))
    if plan.conflicts:
        console.print(_table(f"Plan conflicts{more(plan.conflicts)}", ("problem",),
                             ((str(error),) for error in plan.conflicts[:worst])))
    if report.unknown_devices or report.absent_devices:
        console.print(_table("Devices", ("state", "devices"), (
            ("not in the plan", ", ".join(actual.devices[k].name for k in report.unknown_devices[:worst])),
            ("planned but absent", ", ".join(plan.devices[k].name for k in report.absent_devices[:worst])),
        )))
    if report.odd_names:
        console.print(_table(f"Names that are not what they look like{more(report.odd_names)}",
                             ("side", "name", "what is odd", "looks like the planned"),
                             (_odd_row(odd) for odd in report.odd_names[:worst])))
    bad_cables = [*report.missing, *(m.expected for m in report.miswired), *(d.planned for d in report.degraded)]
    hits = _devices_hit(plan, bad_cables).most_common(worst)
    if hits and hits[0][1] > 1:  # only worth a table when faults concentrate on some devices
        console.print(_table("Devices with the most cabling faults", ("device", "faulty cables"), hits))
    sizes = ", ".join(str(len(c)) for c in report.components[:worst])
    style = "red" if len(report.components) > report.planned_components else "green"
    console.print(Text.assemble(cell(f"Switch fabric partitions: {len(report.components)}", style),
                                f" (planned {report.planned_components}; switches per partition: {sizes})"))
    _render_paths(report, console, worst)
    if report.bandwidth is not None:
        _render_bandwidth(report, report.bandwidth, console, worst)


def _odd_row(odd: OddName) -> tuple[str, str, str, str]:
    why = odd.why or "plain ASCII: the planned name it looks like is not"
    return odd.side, odd.name, why, "" if odd.looks_like is None else f"{odd.looks_like} (another device)"


def _render_paths(report: VerifyReport, console: Console, worst: int) -> None:
    plan = report.plan
    if not report.tiers_known:
        console.print("[dim]Paths to core: the plan has no host links, so leaves cannot be told apart.[/]")
        return
    below = report.leaves_below_guard
    console.print(f"Paths to core: {len(below)} of {len(report.leaves)} leaves below the guard "
                  f"({report.guard:.0%} of planned)")
    degraded_leaves = [leaf for leaf in report.leaves if leaf.ratio < 1.0][:worst]
    if degraded_leaves:
        console.print(_table(
            "Leaves with the fewest paths to core", ("leaf", "paths", "planned", "cores reached", "planned cores"),
            ((plan.devices[leaf.leaf].name, leaf.actual.paths, leaf.planned.paths, leaf.actual.tops_reached,
              leaf.planned.tops_reached) for leaf in degraded_leaves),
        ))


def _render_bandwidth(report: VerifyReport, bandwidth: BandwidthReport, console: Console, worst: int) -> None:
    plan = report.plan
    if not bandwidth.rates_known:
        console.print("[dim]Bandwidth to core: neither the plan nor the as-built fabric gives a cable rate.[/]")
    elif report.tiers_known:
        below_plan = [leaf for leaf in bandwidth.leaves if leaf.ratio < 1.0]
        console.print(f"Bandwidth to core: {len(below_plan)} of {len(bandwidth.leaves)} leaves below plan, "
                      f"{len(report.leaves_below_bandwidth_guard)} below the guard")
        paths = {leaf.leaf: leaf for leaf in report.leaves}
        if below_plan:
            console.print(_table(
                "Leaves with the least bandwidth to core",
                ("leaf", "Gb/s", "planned Gb/s", "share", "paths", "planned paths"),
                ((plan.devices[leaf.leaf].name, f"{leaf.gbps:g}", f"{leaf.planned_gbps:g}", f"{leaf.ratio:.1%}",
                  paths[leaf.leaf].actual.paths, paths[leaf.leaf].planned.paths) for leaf in below_plan[:worst]),
            ))
    console.print(f"[dim]bandwidth: computed in {bandwidth.seconds:.1f} s[/]")


def rate(width: int | None, speed: float | None) -> str:
    """A cable's width and speed as a person reads them: ``4x 400 Gb/s``; ``?`` when neither is known."""
    parts = [f"{width}x" if width else "", f"{speed:g} Gb/s" if speed else ""]
    return " ".join(p for p in parts if p) or "?"
