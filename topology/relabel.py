"""A fabric with some of its devices under other names: the same devices, GUIDs and cables, ends renamed with them.

``identify`` reads an as-built fabric through the names it inferred (so that ``verify`` compares it with the plan),
and ``topology.factory`` hides a plan's switch names behind factory names; both are this one operation.
"""

from __future__ import annotations

from collections.abc import Mapping

from topology.errors import InputError
from topology.model import Cable, End, Fabric


def relabelled(fabric: Fabric, names: Mapping[str, str], source: str,
               guids: Mapping[str, str] | None = None) -> Fabric:
    """``fabric`` with device key ``k`` named ``names[k]`` (others keep theirs) and, where ``guids`` gives one, that
    GUID, as an as-built fabric (what a fabric calls itself, not a plan). Two devices given one name are refused: the
    model would merge them into one."""
    built = Fabric(source)
    keys: dict[str, str] = {}
    for key, device in fabric.devices.items():
        name = names.get(key, device.name)
        if name.casefold() in built.devices:
            raise InputError(f"two devices would be named {name!r}", source=source)
        keys[key] = built.add_device(name, device.kind, tier=device.tier, guid=(guids or {}).get(key, device.guid),
                                     host=device.host, origin=device.origin).key

    def end(old: End) -> End:
        return End(keys[old.device], old.port)

    for cable in fabric.cables:
        built.add_cable(Cable(end(cable.a), end(cable.b), cable.width, cable.speed_gbps, cable.origin))
    built.port_names.update({name: end(old) for name, old in fabric.port_names.items()})
    return built
