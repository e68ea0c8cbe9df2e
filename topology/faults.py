"""Cabling faults planted into a planned fabric, to build an as-built fabric that differs in known ways.

Used by the demo, the tests, the benchmarks and the simulator's miswire scenarios. Each fault is drawn
from a seeded random generator, so the same seed always plants the same faults.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from topology.model import Cable, End, Fabric
from topology.ports import Kind


@dataclass(frozen=True, slots=True)
class FaultCounts:
    missing: int = 0
    swapped: int = 0
    wrong_device: int = 0
    degraded: int = 0
    unexpected: int = 0


@dataclass(slots=True)
class PlantedFaults:
    fabric: Fabric
    missing: list[Cable] = field(default_factory=list)
    swapped: list[tuple[Cable, Cable]] = field(default_factory=list)
    wrong_device: list[Cable] = field(default_factory=list)
    degraded: list[Cable] = field(default_factory=list)
    unexpected: list[Cable] = field(default_factory=list)


def copy_fabric(plan: Fabric, cables: Iterable[Cable], source: str) -> Fabric:
    """A fabric with the plan's devices (and their tiers) and the given cables."""
    built = Fabric(source)
    for device in plan.devices.values():
        built.add_device(device.name, device.kind, tier=device.tier, host=device.host)
    for cable in cables:
        for end in (cable.a, cable.b):
            if end.device not in built.devices:
                # Devices the plan does not have: adapters are named "<host> <adapter>".
                kind = Kind.ADAPTER if " " in end.device else Kind.SWITCH
                built.add_device(end.device, kind, host=end.device.split()[0] if kind is Kind.ADAPTER else None)
        built.add_cable(replace(cable, origin=None))
    return built


def _switch_cables(plan: Fabric) -> list[Cable]:
    switches = {d.key for d in plan.switches()}
    return [c for c in plan.cables if c.a.device in switches and c.b.device in switches]


def plant(plan: Fabric, counts: FaultCounts, seed: int = 0) -> PlantedFaults:
    """Plant ``counts`` faults, each on a distinct cable; swaps and moves stay between switches."""
    rng = random.Random(seed)
    pool = _switch_cables(plan)
    needed = counts.missing + 2 * counts.swapped + counts.wrong_device + counts.degraded
    if needed > len(pool):
        raise ValueError(f"{needed} faults need more switch-switch cables than the plan's {len(pool)}")
    rng.shuffle(pool)
    by_key = {c.key: c for c in plan.cables}
    untouched = {c.key for c in pool}

    def take(candidates: list[Cable]) -> Cable:
        cable = rng.choice([c for c in candidates if c.key in untouched] or [c for c in pool if c.key in untouched])
        untouched.discard(cable.key)
        return by_key.pop(cable.key)

    result = PlantedFaults(plan)
    for _ in range(counts.missing):
        result.missing.append(take(pool))
    for _ in range(counts.swapped):
        first = take(pool)
        # The swap a technician makes: two cables on the same switch, plugged into each other's ports.
        second = take([c for c in pool if c.a.device == first.a.device and c.b.device != first.b.device])
        result.swapped.append((first, second))
        for cable in (Cable(first.a, second.b, first.width, first.speed_gbps),
                      Cable(second.a, first.b, second.width, second.speed_gbps)):
            by_key[cable.key] = cable
    # A wrong-device fault moves one end of a cable onto a switch the plan does not have, so that each
    # planted fault shows up as exactly one finding.
    for i in range(counts.wrong_device):
        cable = take(pool)
        result.wrong_device.append(cable)
        moved = Cable(cable.a, End("unplanned-sw1", str(i + 1)), cable.width, cable.speed_gbps)
        by_key[moved.key] = moved
    for _ in range(counts.degraded):
        cable = take(pool)
        result.degraded.append(cable)
        narrow = replace(cable, width=1, speed_gbps=(cable.speed_gbps or 0) / (cable.width or 4) or None)
        by_key[narrow.key] = narrow
    for i in range(counts.unexpected):
        stray = Cable(End(f"lab-node{i + 1} mlx5_0", "1"), End(f"unplanned-lab-sw{i + 1}", "1"))
        by_key[stray.key] = stray
        result.unexpected.append(stray)

    result.fabric = copy_fabric(plan, by_key.values(), f"plan with planted faults (seed {seed})")
    return result
