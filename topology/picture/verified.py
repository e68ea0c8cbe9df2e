"""What ``fabricctl verify`` marks on the picture: each planned cable it found missing, miswired or degraded, each
unexpected as-built cable, and each leaf's paths to core against the guard share it was given."""

from __future__ import annotations

from topology.picture.marks import CableMark, CableState, LeafFigures, share_figures
from topology.verify import VerifyReport


def verify_marks(report: VerifyReport) -> list[CableMark]:
    """A miswire marks the planned cable (where it should be); an unexpected cable is the as-built one."""
    plan, actual = report.plan, report.actual
    planned = [
        *((cable, CableState.MISSING) for cable in report.missing),
        *((miswire.expected, CableState.MISWIRED) for miswire in report.miswired),
        *((degraded.planned, CableState.DEGRADED) for degraded in report.degraded),
    ]
    return [
        *(CableMark(cable.a.device, cable.b.device, state, plan.describe_cable(cable)) for cable, state in planned),
        *(CableMark(cable.a.device, cable.b.device, CableState.UNEXPECTED, actual.describe_cable(cable))
          for cable in report.unexpected),
    ]


def verify_figures(report: VerifyReport) -> dict[str, LeafFigures]:
    return {leaf.leaf: share_figures(leaf.actual.paths, leaf.planned.paths, report.guard, leaf.actual.tops_reached,
                                     leaf.planned.tops_reached) for leaf in report.leaves}
