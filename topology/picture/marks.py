"""What the picture marks: cables in a state, each in its colour, and each leaf's paths to core against its guard.

The states are those of the daemon's console (what automation or UFM holds out of service) and those of
``fabricctl verify`` (how the as-built cabling differs from the plan). Colours are told apart by people with the
common colour-vision deficiencies as well as they can be across eleven states; the states that mean "not there"
(missing, down) are drawn dashed besides, so they do not rest on colour alone.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from topology.guard import GuardReading


class CableState(StrEnum):
    # The console's: what holds a cable out of service.
    DISABLED = "disabled"
    ISOLATED = "isolated"
    QUARANTINED = "quarantined"
    DEFERRED = "deferred"
    AWAITING_REPAIR = "awaiting_repair"
    PROBATION = "probation"
    DOWN = "down"
    """Down in UFM, and not by this service's doing."""
    # verify's: how the as-built cabling differs from the plan.
    MISSING = "missing"
    MISWIRED = "miswired"
    DEGRADED = "degraded"
    UNEXPECTED = "unexpected"


@dataclass(frozen=True, slots=True)
class Style:
    colour: str
    dashed: bool
    label: str
    meaning: str


STYLES: Mapping[CableState, Style] = {
    CableState.DISABLED: Style("#d62728", False, "disabled", "disabled by automation"),
    CableState.ISOLATED: Style("#ff7f0e", False, "isolated", "isolated by automation (UFM's unhealthy ports)"),
    CableState.QUARANTINED: Style("#e377c2", False, "quarantined", "out of service until an operator releases it"),
    CableState.DEFERRED: Style("#9467bd", False, "deferred", "should go out, but the capacity guard refused"),
    CableState.AWAITING_REPAIR: Style("#8c564b", False, "awaiting repair", "out, a ticket open for its repair"),
    CableState.PROBATION: Style("#17becf", False, "probation", "back in service, watched after a repair"),
    CableState.DOWN: Style("#7f7f7f", True, "down, not ours", "down in UFM, not taken out by this service"),
    CableState.MISSING: Style("#d62728", True, "missing", "planned, nothing on either planned port"),
    CableState.MISWIRED: Style("#ff7f0e", False, "miswired", "its planned ports are cabled elsewhere"),
    CableState.DEGRADED: Style("#bcbd22", False, "degraded", "right ports, below the planned width or speed"),
    CableState.UNEXPECTED: Style("#1f77b4", False, "unexpected", "cabled, on no planned port"),
}
"""Every state's look and what it means, in the order of severity the picture uses when one cable or pod has
several: the first listed wins."""

SEVERITY = {state: rank for rank, state in enumerate(STYLES)}
CONSOLE_STATES = tuple(STYLES)[:7]
VERIFY_STATES = tuple(STYLES)[7:]


@dataclass(frozen=True, slots=True)
class CableMark:
    a: str
    """One end's device key (case-folded name): a planned switch, or anything else (a host, an unplanned switch)."""
    b: str
    state: CableState
    cable: str
    """The cable as a person reads it (``leaf01/33 - spine01/1``, or a link component's name): its ``data-cable``."""


@dataclass(frozen=True, slots=True)
class LeafFigures:
    """One leaf's paths to core: as it stands, the guard's minimum, as planned."""

    paths: int
    minimum: int
    planned: int
    cores: int | None = None
    """Cores reached, where known (verify counts them; the guard does not)."""
    planned_cores: int | None = None

    @property
    def health(self) -> str:
        """``planned`` (all paths), ``reduced`` (fewer, at or above the minimum) or ``below`` the minimum."""
        if self.paths < self.minimum:
            return "below"
        fewer_cores = self.cores is not None and self.planned_cores is not None and self.cores < self.planned_cores
        if self.paths < self.planned or fewer_cores:
            return "reduced"
        return "planned"

    @property
    def share(self) -> float:
        return min(1.0, self.paths / self.planned) if self.planned else 1.0


HEALTH_COLOURS = {"planned": "#2ca02c", "reduced": "#e6a700", "below": "#d62728"}
HEALTH_ORDER = ("below", "reduced", "planned")


def guard_figures(guard: GuardReading) -> dict[str, LeafFigures]:
    """Each leaf's figures as the capacity guard holds them (the daemon's status)."""
    return {leaf: LeafFigures(guard.paths.get(leaf, 0), guard.minimum[leaf], planned)
            for leaf, planned in guard.planned.items()}


def share_figures(paths: int, planned: int, share: float, cores: int | None = None,
                  planned_cores: int | None = None) -> LeafFigures:
    """A leaf's figures against a guard given as a share of its planned paths (``verify --guard``)."""
    return LeafFigures(paths, math.ceil(share * planned), planned, cores, planned_cores)
