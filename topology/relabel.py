"""A fabric with some of its devices under other names: the same devices, GUIDs and cables, ends renamed with them.

``identify`` reads an as-built fabric through the names it inferred (so that ``verify`` compares it with the plan),
and ``topology.factory`` hides a plan's switch names behind factory names; both are this one operation.
"""

from __future__ import annotations

from collections.abc import Mapping

from topology.errors import InputError
from topology.model import Cable, Device, End, Fabric


def relabelled(fabric: Fabric, names: Mapping[str, str], source: str,
               guids: Mapping[str, str] | None = None) -> Fabric:
    """``fabric`` with device key ``k`` named ``names[k]`` (others keep theirs) and, where ``guids`` gives one, that
    GUID (canonical, and none given twice: the caller's to keep), as an as-built fabric (what a fabric calls itself,
    not a plan). Two devices given one name are refused: the model would take them for one. The cables passed the
    model's checks when ``fabric`` was built, and a rename one to one keeps them true, so the fabric is rebuilt
    without them (``Fabric.restored``): on h100-32k that is most of the time a rename took."""
    keys: dict[str, str] = {}
    devices: dict[str, Device] = {}
    for key, device in fabric.devices.items():
        name = names.get(key, device.name)
        renamed = Device(name, device.kind, device.tier, (guids or {}).get(key, device.guid), device.host,
                         device.origin)
        if renamed.key in devices:
            raise InputError(f"two devices would be named {name!r}", source=source)
        keys[key] = renamed.key
        devices[renamed.key] = renamed

    def end(old: End) -> End:
        return End(keys[old.device], old.port)

    cables = [Cable(end(c.a), end(c.b), c.width, c.speed_gbps, c.origin) for c in fabric.cables]
    return Fabric.restored(source, plan=False, devices=devices.values(), cables=cables,
                           port_names=((name, end(old)) for name, old in fabric.port_names.items()))
