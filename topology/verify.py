"""Compare an as-built fabric with its wiring plan.

Matching is by device name (case-insensitive) and canonical port, and ignores cable direction. Every
planned cable lands in exactly one of ``ok``, ``degraded`` (right ports, below planned width or speed),
``missing`` (nothing on either planned port) or ``miswired`` (its ports are cabled, but not to each other),
so ``planned = ok + degraded + missing + miswired``. Unlike NDT, a cable that landed on a different device
is one miswire (not a missing plus an extra), and two cables whose far ends were exchanged are recognised
as a swap. ``unexpected`` holds as-built cables that touch no planned port at all.

Names are compared as they are, so a switch named with a Cyrillic letter that looks Latin is another device: it is
listed in ``odd_names`` with what is odd about it and the planned device it looks like, as is every name of either
side that holds hidden characters or is not ASCII (``topology.lookalikes``), so a report never shows two
identical-looking names as one missing and one unknown device without saying why.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from topology.capacity import LeafPaths, leaf_paths
from topology.lookalikes import oddity, skeleton
from topology.model import Cable, End, Fabric, Tier, switch_components

DEFAULT_GUARD = 0.75


class MiswireKind(StrEnum):
    SWAPPED = "swapped"
    """Two planned cables whose far ends were exchanged."""
    WRONG_PORT = "wrong_port"
    """Right devices, wrong port on one side."""
    WRONG_DEVICE = "wrong_device"
    """A planned port is cabled to a device the plan does not join it to."""


@dataclass(frozen=True, slots=True)
class Miswire:
    kind: MiswireKind
    expected: Cable
    actual: tuple[Cable, ...]
    swapped_with: Cable | None = None


@dataclass(frozen=True, slots=True)
class Degraded:
    planned: Cable
    actual: Cable
    expected_width: int | None
    expected_speed_gbps: float | None


@dataclass(frozen=True, slots=True)
class OddName:
    """A device name that is not what it looks like."""

    side: str
    """``plan`` or ``as-built``."""
    name: str
    why: str | None
    """What in it is not plain printable ASCII (``topology.lookalikes.oddity``); None for a plain name that looks
    like another."""
    looks_like: str | None = None
    """The planned device an as-built device not in the plan looks like: one is not the other."""


@dataclass(frozen=True, slots=True)
class LeafCapacity:
    leaf: str
    planned: LeafPaths
    actual: LeafPaths

    @property
    def ratio(self) -> float:
        """The worse of the path ratio and the reached-cores ratio (1.0 = as planned)."""
        paths = self.actual.paths / self.planned.paths if self.planned.paths else 1.0
        tops = self.actual.tops_reached / self.planned.tops_reached if self.planned.tops_reached else 1.0
        return min(paths, tops)


@dataclass(frozen=True, slots=True)
class LeafBandwidth:
    leaf: str
    planned_gbps: float
    gbps: float

    @property
    def ratio(self) -> float:
        """Max flow to the top tier against the plan's (1.0 = as planned)."""
        return self.gbps / self.planned_gbps if self.planned_gbps else 1.0


@dataclass(frozen=True, slots=True)
class BandwidthReport:
    """Per-leaf max flow to the top tier (``topology.bandwidth``), as built and as planned."""

    seconds: float
    """What computing it took, graph library import included: it is the price of asking for it."""
    rates_known: bool
    """False when neither side says at what rate any cable runs: there is no Gb/s to report."""
    leaves: list[LeafBandwidth]
    """Worst first."""


@dataclass(slots=True)
class VerifyReport:
    plan: Fabric
    actual: Fabric
    guard: float
    ok: list[Cable] = field(default_factory=list)
    missing: list[Cable] = field(default_factory=list)
    miswired: list[Miswire] = field(default_factory=list)
    unexpected: list[Cable] = field(default_factory=list)
    degraded: list[Degraded] = field(default_factory=list)
    unknown_devices: list[str] = field(default_factory=list)
    absent_devices: list[str] = field(default_factory=list)
    odd_names: list[OddName] = field(default_factory=list)
    components: list[list[str]] = field(default_factory=list)
    planned_components: int = 1
    leaves: list[LeafCapacity] = field(default_factory=list)
    tiers_known: bool = True
    bandwidth: BandwidthReport | None = None
    """Only when asked for: it costs a graph library and a max flow per leaf."""

    @property
    def leaves_below_bandwidth_guard(self) -> list[LeafBandwidth]:
        leaves = self.bandwidth.leaves if self.bandwidth is not None else []
        return [leaf for leaf in leaves if leaf.gbps < self.guard * leaf.planned_gbps]

    @property
    def leaves_below_guard(self) -> list[LeafCapacity]:
        return [leaf for leaf in self.leaves if leaf.actual.paths < math.ceil(self.guard * leaf.planned.paths)]

    @property
    def matches(self) -> bool:
        return not (self.missing or self.miswired or self.unexpected or self.degraded or self.unknown_devices
                    or self.plan.conflicts or len(self.components) > self.planned_components)

    def summary(self) -> dict[str, int]:
        return {
            "planned": len(self.plan.cables),
            "actual": len(self.actual.cables),
            "ok": len(self.ok),
            "missing": len(self.missing),
            "miswired": len(self.miswired),
            "unexpected": len(self.unexpected),
            "degraded": len(self.degraded),
            "partitions": len(self.components),
            "planned_partitions": self.planned_components,
            "unknown_devices": len(self.unknown_devices),
            "absent_devices": len(self.absent_devices),
            "odd_names": len(self.odd_names),
            "leaves_below_guard": len(self.leaves_below_guard),
            "plan_conflicts": len(self.plan.conflicts),
        }

    def to_dict(self, worst: int = 20) -> dict[str, Any]:
        plan, actual = self.plan, self.actual

        def cable(c: Cable, side: Fabric) -> dict[str, Any]:
            entry: dict[str, Any] = {
                "cable": side.describe_cable(c), "a": _end(side, c.a), "b": _end(side, c.b),
            }
            if c.origin:
                entry["origin"] = c.origin
            return entry

        def rate(width: int | None, speed: float | None) -> dict[str, Any]:
            return {"width": f"{width}x" if width else None, "speed_gbps": speed}

        report: dict[str, Any] = {
            "summary": self.summary(),
            "matches": self.matches,
            "plan": plan.source,
            "as_built": actual.source,
            "missing": [cable(c, plan) for c in self.missing],
            "miswired": [
                {
                    "kind": m.kind.value,
                    "expected": plan.describe_cable(m.expected),
                    "actual": [actual.describe_cable(c) for c in m.actual],
                    **({"swapped_with": plan.describe_cable(m.swapped_with)} if m.swapped_with else {}),
                    **({"origin": m.expected.origin} if m.expected.origin else {}),
                }
                for m in self.miswired
            ],
            "unexpected": [cable(c, actual) for c in self.unexpected],
            "degraded": [
                {
                    **cable(d.planned, plan),
                    "expected": rate(d.expected_width, d.expected_speed_gbps),
                    "actual": rate(d.actual.width, d.actual.speed_gbps),
                }
                for d in self.degraded
            ],
            "plan_conflicts": [str(error) for error in plan.conflicts],
            "unknown_devices": [actual.devices[k].name for k in self.unknown_devices],
            "absent_devices": [plan.devices[k].name for k in self.absent_devices],
            "odd_names": [
                {"side": odd.side, "name": odd.name, "why": odd.why, "looks_like": odd.looks_like}
                for odd in self.odd_names
            ],
            "partitions": {
                "count": len(self.components),
                "planned": self.planned_components,
                "sizes": [len(c) for c in self.components],
                "members": [[plan.devices[k].name for k in comp] for comp in self.components[:worst]],
            },
            "paths_to_core": {
                "tiers_known": self.tiers_known,
                "guard": self.guard,
                "leaves": len(self.leaves),
                "below_guard": len(self.leaves_below_guard),
                "worst": [
                    {
                        "leaf": plan.devices[leaf.leaf].name,
                        "planned_paths": leaf.planned.paths,
                        "paths": leaf.actual.paths,
                        "planned_cores": leaf.planned.tops_reached,
                        "cores": leaf.actual.tops_reached,
                        "ratio": round(leaf.ratio, 4),
                    }
                    for leaf in self.leaves[:worst]
                ],
            },
        }
        if self.bandwidth is not None:
            report["bandwidth"] = self._bandwidth_dict(self.bandwidth, worst)
        return report

    def _bandwidth_dict(self, bandwidth: BandwidthReport, worst: int) -> dict[str, Any]:
        paths = {leaf.leaf: leaf for leaf in self.leaves}
        return {
            "seconds": round(bandwidth.seconds, 3),
            "rates_known": bandwidth.rates_known,
            "guard": self.guard,
            "leaves": len(bandwidth.leaves),
            "below_plan": sum(1 for leaf in bandwidth.leaves if leaf.ratio < 1.0),
            "below_guard": len(self.leaves_below_bandwidth_guard),
            "worst": [
                {
                    "leaf": self.plan.devices[leaf.leaf].name,
                    "planned_gbps": leaf.planned_gbps,
                    "gbps": leaf.gbps,
                    "ratio": round(leaf.ratio, 4),
                    "planned_paths": paths[leaf.leaf].planned.paths,
                    "paths": paths[leaf.leaf].actual.paths,
                }
                for leaf in bandwidth.leaves[:worst]
            ],
        }


def _end(fabric: Fabric, end: End) -> dict[str, str]:
    return {"device": fabric.devices[end.device].name, "port": end.port}


def _modal(values: list[Any]) -> Any:
    counts = Counter(v for v in values if v)
    return counts.most_common(1)[0][0] if counts else None


def verify(plan: Fabric, actual: Fabric, guard: float = DEFAULT_GUARD, *, bandwidth: bool = False) -> VerifyReport:
    """Compare ``actual`` with ``plan``; ``bandwidth`` adds the per-leaf max flow to the top tier."""
    report = VerifyReport(plan, actual, guard)
    planned_keys = {c.key for c in plan.cables}
    # Where the plan gives no rate, a cable is held to what most cables of the as-built fabric run at,
    # which is how a 1x straggler among 4x links is caught without a per-cable speed in the plan.
    default_width = _modal([c.width for c in actual.cables])
    default_speed = _modal([c.speed_gbps for c in actual.cables])

    for planned in plan.cables:
        a, b = planned.key
        at_a, at_b = actual.by_end.get(a), actual.by_end.get(b)
        if at_a is not None and at_a.key == planned.key:
            _check_rate(report, planned, at_a, default_width, default_speed)
        elif at_a is None and at_b is None:
            report.missing.append(planned)
        else:
            report.miswired.append(_classify(plan, planned, at_a, at_b))

    for cable in actual.cables:
        if cable.key not in planned_keys and cable.a not in plan.by_end and cable.b not in plan.by_end:
            report.unexpected.append(cable)

    report.unknown_devices = sorted(k for k in actual.devices if k not in plan.devices)
    report.absent_devices = sorted(k for k in plan.devices if k not in actual.devices)
    report.odd_names = _odd_names(plan, actual, report.unknown_devices)
    _check_structure(report)
    if bandwidth:
        report.bandwidth = _check_bandwidth(report, default_speed or _modal([c.speed_gbps for c in plan.cables]))
    return report


def _odd_names(plan: Fabric, actual: Fabric, unknown: list[str]) -> list[OddName]:
    """Names of either side that are not plain printable ASCII, and as-built devices not in the plan that look like
    a planned one (with what makes them differ, or, both names plain, that they differ only in look-alikes)."""
    planned_looks = {skeleton(device.name): device.name for device in plan.devices.values()} if unknown else {}
    twins = {key: planned_looks.get(skeleton(actual.devices[key].name)) for key in unknown}
    odd: list[OddName] = []
    for side, fabric in (("plan", plan), ("as-built", actual)):
        for key, device in fabric.devices.items():
            why = oddity(device.name)
            twin = twins.get(key) if fabric is actual else None
            if why is not None or twin is not None:
                odd.append(OddName(side, device.name, why, twin))
    return odd


def below_plan(actual: Cable, width: int | None, speed_gbps: float | None) -> bool:
    """``actual`` runs narrower or slower than ``width`` lanes at ``speed_gbps`` (a figure not known is not
    judged)."""
    narrow = width is not None and actual.width is not None and actual.width < width
    slow = speed_gbps is not None and actual.speed_gbps is not None and actual.speed_gbps < speed_gbps
    return narrow or slow


def _check_rate(
    report: VerifyReport, planned: Cable, actual: Cable, default_width: int | None, default_speed: float | None
) -> None:
    width = planned.width or default_width
    speed = planned.speed_gbps or default_speed
    if below_plan(actual, width, speed):
        report.degraded.append(Degraded(planned, actual, width, speed))
    else:
        report.ok.append(planned)


def _classify(plan: Fabric, planned: Cable, at_a: Cable | None, at_b: Cable | None) -> Miswire:
    a, b = planned.key
    seen = tuple(dict.fromkeys(c for c in (at_a, at_b) if c is not None))
    if at_a is not None and at_b is not None:
        far_a, far_b = at_a.other(a), at_b.other(b)
        partner = plan.by_end.get(far_a)
        if partner is not None and partner.key == _pair(far_a, far_b):
            return Miswire(MiswireKind.SWAPPED, planned, seen, partner)
    for end, found in ((a, at_a), (b, at_b)):
        if found is not None and found.other(end).device == planned.other(end).device:
            return Miswire(MiswireKind.WRONG_PORT, planned, seen)
    return Miswire(MiswireKind.WRONG_DEVICE, planned, seen)


def _pair(x: End, y: End) -> tuple[End, End]:
    return (x, y) if x <= y else (y, x)


def _check_structure(report: VerifyReport) -> None:
    plan, actual = report.plan, report.actual
    plan_switches = {d.key for d in plan.switches()}
    switches = [d.key for d in actual.switches()]
    switch_set = set(switches)
    # Unplanned switches carry paths between planned ones, but a stray lab switch on its own is not a
    # partition of the fabric: only components holding a planned switch count, sized by planned switches.
    report.components = sorted((
        planned for planned in (
            [key for key in comp if key in plan_switches]
            for comp in switch_components(
                switches, (c for c in actual.cables if c.a.device in switch_set and c.b.device in switch_set)
            )
        ) if planned
    ), key=lambda comp: (-len(comp), comp[0]))
    report.planned_components = len(switch_components(
        plan_switches, (c for c in plan.cables if c.a.device in plan_switches and c.b.device in plan_switches)
    ))
    tiers = {d.key: d.tier for d in plan.devices.values() if d.tier is not Tier.UNKNOWN}
    report.tiers_known = any(t is Tier.LEAF for t in tiers.values())
    if not report.tiers_known:
        return
    planned_paths = leaf_paths(tiers, plan.cables)
    actual_paths = leaf_paths(tiers, actual.cables)
    empty = LeafPaths("", 0, 0)
    report.leaves = sorted(
        (LeafCapacity(key, planned_paths[key], actual_paths.get(key, empty)) for key in planned_paths),
        key=lambda leaf: (leaf.ratio, leaf.leaf),
    )


def _check_bandwidth(report: VerifyReport, default_gbps: float | None) -> BandwidthReport:
    """Max flow per planned leaf, as built and as planned; a cable of unknown rate runs at ``default_gbps``."""
    started = time.perf_counter()
    if not report.tiers_known:
        return BandwidthReport(time.perf_counter() - started, True, [])
    from topology.bandwidth import leaf_bandwidth

    tiers = {d.key: d.tier for d in report.plan.devices.values() if d.tier is not Tier.UNKNOWN}
    planned = leaf_bandwidth(report.plan, tiers, default_gbps)
    actual = leaf_bandwidth(report.actual, tiers, default_gbps)
    if planned is None or actual is None:
        return BandwidthReport(time.perf_counter() - started, False, [])
    leaves = sorted((LeafBandwidth(key, planned[key], actual[key]) for key in planned),
                    key=lambda leaf: (leaf.ratio, leaf.leaf))
    return BandwidthReport(time.perf_counter() - started, True, leaves)
