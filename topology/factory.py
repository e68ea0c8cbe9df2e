"""A fabric as it comes up before anyone names its switches: each switch under its factory name.

UFM shows a switch nobody has named by what it reports of itself: its model and serial number, or nothing but its
GUID. The names and GUIDs here are drawn from a seeded generator, so one seed always gives one fabric; the planned
names they hide are kept, for the demo and the tests to check ``identify`` against.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from topology.model import Fabric
from topology.relabel import relabelled

_OUI = "b8599f"  # a Mellanox OUI, as topology.formats.ufm_render uses: GUIDs that look like the ones operators see
_MODEL = "MQM9790"


@dataclass(frozen=True, slots=True)
class FactoryNamed:
    fabric: Fabric
    planned: dict[str, str]
    """Factory name (case-folded, the device key) -> the planned name it hides."""


def factory_named(fabric: Fabric, seed: int = 0, *, guid_only: float = 0.25) -> FactoryNamed:
    """``fabric`` with every switch renamed ``MQM9790 MT<serial>``, or (a ``guid_only`` share of them) named by
    nothing but its GUID, which each switch gets fresh; adapters keep their names (the host's, set by its OS)."""
    rng = random.Random(seed)
    names: dict[str, str] = {}
    guids: dict[str, str] = {}
    taken: set[str] = set()
    for switch in fabric.switches():
        guid = _OUI + f"{rng.getrandbits(40):010x}"
        while guid in taken:
            guid = _OUI + f"{rng.getrandbits(40):010x}"
        taken.add(guid)
        guids[switch.key] = guid
        serial = f"MT{rng.randint(2101, 2452)}X{rng.randint(0, 99999):05d}"
        names[switch.key] = guid if rng.random() < guid_only else f"{_MODEL} {serial}"
    if len({name.casefold() for name in names.values()}) < len(names):  # two serials drawn alike: tell them apart
        names = {key: name if name == guids[key] else f"{name}-{guids[key][-4:]}" for key, name in names.items()}
    renamed = relabelled(fabric, names, f"{fabric.source} under factory names (seed {seed})", guids)
    return FactoryNamed(renamed, {names[key].casefold(): fabric.devices[key].name for key in names})
