"""Whether a reading of UFM's topology can be true, before anything is decided on it.

UFM sometimes answers a list endpoint with an empty or partial list (a restart under way, a proxy cutting a page
short). Taken at face value, ``[]`` for ``/resources/links`` makes every cable look down. A reading is compared,
figure by figure, with the last one the engine accepted: the systems and ports UFM lists, the ports it shows
active and the planned cables it shows up. When more than ``max_drop`` of any of them vanished or went down at
once, the reading cannot be true and is refused. At start-up there is no reading to compare with: one that
shows less than ``min_planned`` of the plan's systems, ports (two per planned cable) or cables is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

from fabric.errors import ErrorKind, FabricError
from topology.model import Fabric
from topology.ports import Kind

if TYPE_CHECKING:  # only named: fabric.config imports this module, and the reader brings httpx (0.1 s) with it
    from fabric.ufm.snapshot import UfmTopology


@dataclass(frozen=True, slots=True)
class PlausibilitySettings:
    max_drop: float = 0.4
    """The largest fraction of a figure of the last reading accepted that may vanish or go down at once."""
    min_planned: float = 0.5
    """At start-up, the smallest fraction of the plan's systems, ports and cables a reading must show."""


@dataclass(frozen=True, slots=True)
class TopologyFigures:
    systems: int
    ports: int
    active_ports: int
    cables: int
    """Planned cables UFM shows up (for the plan: the planned cables)."""

    @classmethod
    def of(cls, reading: UfmTopology, live_cables: int) -> TopologyFigures:
        return cls(reading.systems, reading.ports, reading.active_ports, live_cables)

    @classmethod
    def planned(cls, plan: Fabric) -> TopologyFigures:
        """What UFM shows of a fabric built and up as planned: every switch and host, both ends of every cable."""
        systems = {d.host_name.casefold() if d.kind is Kind.ADAPTER else key for key, d in plan.devices.items()}
        ends = 2 * len(plan.cables)
        return cls(len(systems), ends, ends, len(plan.cables))


_NAMES = {"systems": "systems UFM lists", "ports": "ports UFM lists", "active_ports": "ports UFM shows active",
          "cables": "planned cables UFM shows up"}
_AT_START = ("systems", "ports", "cables")


def refusal(accepted: TopologyFigures, reading: TopologyFigures, settings: PlausibilitySettings) -> str | None:
    """Why ``reading`` cannot follow ``accepted`` (the last reading accepted), or ``None`` when it can."""
    for field in fields(TopologyFigures):
        before, now = getattr(accepted, field.name), getattr(reading, field.name)
        if before - now > settings.max_drop * before:
            return (f"{_NAMES[field.name]}: {now}, against {before} in the last reading accepted (more than "
                    f"{settings.max_drop:.0%} gone at once)")
    return None


def start_refusal(planned: TopologyFigures, reading: TopologyFigures, settings: PlausibilitySettings) -> str | None:
    """Why ``reading``, the first of a start-up, cannot be true of the plan, or ``None`` when it can."""
    for name in _AT_START:
        wanted, now = getattr(planned, name), getattr(reading, name)
        if now < settings.min_planned * wanted:
            return f"{_NAMES[name]}: {now} of {wanted} planned (at least {settings.min_planned:.0%} expected)"
    return None


class ImplausibleTopologyError(FabricError):
    """UFM's topology at start-up cannot be true of the plan: the engine does not start on it."""

    kind = ErrorKind.UFM
