"""The fabric graph: switches and host adapters joined by cables, each cable keyed by its two ends.

Nodes are looked up case-insensitively by name (UFM ``system_name``, the node description of an adapter).
Each port holds at most one cable, so the graph is indexed by end; parallel leaf-spine cables are simply
distinct ends on the same pair of devices.
"""

from __future__ import annotations

import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, NamedTuple

from topology.errors import InputError
from topology.numerals import whole_number
from topology.ports import Kind, display_port, excerpt, host_of
from topology.readcaches import read_cache


class Tier(StrEnum):
    HOST = "host"
    LEAF = "leaf"
    SPINE = "spine"
    CORE = "core"
    UNKNOWN = "unknown"


TIER_RANK = {Tier.HOST: 0, Tier.LEAF: 1, Tier.SPINE: 2, Tier.CORE: 3}


@dataclass(slots=True)
class Device:
    name: str
    kind: Kind
    tier: Tier = Tier.UNKNOWN
    guid: str | None = None
    host: str | None = None
    origin: str | None = None

    @property
    def key(self) -> str:
        return self.name.casefold()

    @property
    def host_name(self) -> str:
        """The host an adapter sits in: as given, else the first word of its node description."""
        return self.host or host_of(self.name)


class End(NamedTuple):
    """One end of a cable. A named tuple: hashing, equality and order (device, then port) are the tuple's,
    in C; every lookup of the graph, the guard and the signal mapper hashes ends."""

    device: str
    """Device key (case-folded name)."""
    port: str
    """Canonical port label (see ``topology.ports``)."""


@dataclass(frozen=True, slots=True)
class Cable:
    a: End
    b: End
    width: int | None = None
    """Lanes: planned width in a plan, active width in an as-built fabric."""
    speed_gbps: float | None = None
    """Total link rate in Gb/s (lanes x per-lane rate)."""
    origin: str | None = None
    """Where the cable was read from, ``file:line`` or a UFM link name."""
    key: tuple[End, End] = field(init=False, repr=False, compare=False)
    """The two ends in order: the cable whichever way round it was read. Made once: verify asks for it of
    every cable of both fabrics, several times."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", (self.a, self.b) if self.a <= self.b else (self.b, self.a))

    def other(self, end: End) -> End:
        return self.b if end == self.a else self.a


@read_cache(maxsize=1 << 16)
def canonical_guid(text: str) -> str:
    """GUIDs as UFM prints them: 16 lower-case hex digits, no ``0x``."""
    value = text.strip().lower()
    value = value.removeprefix("0x")
    return value.rjust(16, "0")


def _control_character(name: str) -> str | None:
    """The first control character (C0, DEL, C1: a NUL, an escape, a line break) in ``name``, if any. A plan's
    reader adds its devices through ``Fabric.add_device``, so a planned name with one is refused whatever reads it;
    bidi controls and look-alike letters are not control characters, and are left to where names are compared."""
    return next((char for char in name if unicodedata.category(char) == "Cc"), None)


class Fabric:
    """A set of devices and cables, built by a plan reader or an as-built source."""

    def __init__(self, source: str, *, plan: bool = False) -> None:
        self.source = source
        self.plan = plan
        """Built from a wiring plan: the intent, written by people, where a control character in a device name is
        damage and refused. An as-built source reports what the fabric calls itself, such a name included:
        ``verify`` shows it escaped and flags it (``topology.lookalikes``)."""
        self.devices: dict[str, Device] = {}
        self.cables: list[Cable] = []
        self.by_end: dict[End, Cable] = {}
        self._guids: dict[str, str] = {}
        self.conflicts: list[InputError] = []
        """Problems a lenient reader stepped over (a port cabled twice); see ``add_cable``."""
        self.port_names: dict[str, End] = {}
        """The names a source gives cabled ports (UFM's ``<guid>_<port>``), where it has any."""

    # --- building -------------------------------------------------------------------------------------

    def add_device(
        self,
        name: str,
        kind: Kind,
        *,
        tier: Tier = Tier.UNKNOWN,
        guid: str | None = None,
        host: str | None = None,
        origin: str | None = None,
    ) -> Device:
        key = name.casefold()
        device = self.devices.get(key)
        if device is None:
            if self.plan and not name.isprintable() and (control := _control_character(name)) is not None:
                raise self._error(f"device name {excerpt(name)} holds the control character U+{ord(control):04X}: "
                                  "no device is named so (a damaged file?)", origin)
            device = Device(name, kind, tier, None, host, origin)
            self.devices[key] = device
        elif device.kind is not kind:
            raise self._error(
                f"device {name!r} is used as a {kind.value} but was first seen as a {device.kind.value}"
                + (f" at {device.origin}" if device.origin else ""),
                origin,
            )
        if tier is not Tier.UNKNOWN:
            device.tier = tier
        if guid:
            self._claim_guid(device, canonical_guid(guid), origin)
        return device

    def _claim_guid(self, device: Device, guid: str, origin: str | None) -> None:
        owner = self._guids.get(guid)
        if owner is not None and owner != device.key:
            raise self._error(
                f"GUID {guid} is claimed by both {self.devices[owner].name!r} and {device.name!r}", origin
            )
        if device.guid is not None and device.guid != guid:
            raise self._error(f"device {device.name!r} has two GUIDs: {device.guid} and {guid}", origin)
        self._guids[guid] = device.key
        device.guid = guid

    def add_cable(self, cable: Cable, *, lenient: bool = False) -> bool:
        """Add ``cable``; False when it was not added.

        A row that repeats a cable already present (plans often list each cable from both ends) is merged.
        A port cabled twice is an error, unless ``lenient``: then the first cable stays, the conflict is
        kept in ``conflicts`` for the report, and the second is left out.
        """
        if cable.a == cable.b:
            raise self._error(f"cable joins port {self.describe(cable.a)} to itself", cable.origin)
        for end in (cable.a, cable.b):
            if end.device not in self.devices:
                raise self._error(f"cable end on unknown device {end.device!r}", cable.origin)
            existing = self.by_end.get(end)
            if existing is None:
                continue
            if existing.key == cable.key:
                return False
            error = self._error(
                f"port {self.describe(end)} is cabled twice"
                + (f" (first at {existing.origin})" if existing.origin else ""),
                cable.origin,
            )
            if not lenient:
                raise error
            self.conflicts.append(error)
            return False
        self.cables.append(cable)
        self.by_end[cable.a] = cable
        self.by_end[cable.b] = cable
        return True

    def _error(self, message: str, origin: str | None) -> InputError:
        if origin and ":" in origin:
            source, _, line = origin.rpartition(":")
            number = whole_number(line)
            if number is not None:
                return InputError(message, source=source, line=number)
        return InputError(message, source=origin or self.source)

    @classmethod
    def restored(cls, source: str, *, plan: bool, devices: Iterable[Device], cables: Iterable[Cable],
                 port_names: Iterable[tuple[str, End]]) -> Fabric:
        """A fabric rebuilt from the parts of one built before (``topology.plancache``), in their order, without
        ``add_device`` and ``add_cable``'s checks: the parts passed them when that fabric was built."""
        fabric = cls(source, plan=plan)
        for device in devices:
            fabric.devices[device.key] = device
            if device.guid is not None:
                fabric._guids[device.guid] = device.key
        by_end = fabric.by_end
        for cable in cables:
            fabric.cables.append(cable)
            by_end[cable.a] = cable
            by_end[cable.b] = cable
        fabric.port_names.update(port_names)
        return fabric

    def values(self) -> tuple[Any, ...]:
        """The fabric as plain values (strings, numbers, lists and tuples), for ``marshal``: what ``from_values``
        builds it again from. Problems a lenient reader stepped over (``conflicts``) are not among them."""
        return (
            self.source,
            self.plan,
            [(d.name, d.kind.value, d.tier.value, d.guid, d.host, d.origin) for d in self.devices.values()],
            [(c.a.device, c.a.port, c.b.device, c.b.port, c.width, c.speed_gbps, c.origin) for c in self.cables],
            [(name, end.device, end.port) for name, end in self.port_names.items()],
        )

    @classmethod
    def from_values(cls, values: tuple[Any, ...]) -> Fabric:
        """The fabric ``values`` describes (``values()``); a ``values`` of another shape raises ``ValueError``,
        ``TypeError``, ``KeyError`` or ``IndexError``."""
        source, plan, devices, cables, port_names = values
        kinds, tiers = {kind.value: kind for kind in Kind}, {tier.value: tier for tier in Tier}
        return cls.restored(
            source, plan=plan,
            devices=(Device(name, kinds[kind], tiers[tier], guid, host, origin)
                     for name, kind, tier, guid, host, origin in devices),
            cables=(Cable(End(a_device, a_port), End(b_device, b_port), width, speed, origin)
                    for a_device, a_port, b_device, b_port, width, speed, origin in cables),
            port_names=((name, End(device, port)) for name, device, port in port_names),
        )

    # --- queries --------------------------------------------------------------------------------------

    def device_by_guid(self, guid: str) -> Device | None:
        key = self._guids.get(canonical_guid(guid))
        return self.devices[key] if key is not None else None

    def describe(self, end: End) -> str:
        device = self.devices.get(end.device)
        name = device.name if device else end.device
        if device is not None and device.kind is Kind.ADAPTER and end.port == "1":
            return name
        return f"{name}/{display_port(end.port)}"

    def describe_cable(self, cable: Cable) -> str:
        return f"{self.describe(cable.a)} - {self.describe(cable.b)}"

    def switches(self) -> Iterator[Device]:
        return (d for d in self.devices.values() if d.kind is Kind.SWITCH)

    def adjacency(self) -> dict[str, list[Cable]]:
        """Cables by device key."""
        table: dict[str, list[Cable]] = defaultdict(list)
        for cable in self.cables:
            table[cable.a.device].append(cable)
            table[cable.b.device].append(cable)
        return table

    def infer_tiers(self) -> bool:
        """Rank switches by distance from host adapters: leaf, spine, core (and above: core).

        Tiers already set (a generated plan names them) are kept. Returns False when the fabric has no
        host links, so tiers cannot be known.
        """
        adjacency = self.adjacency()
        frontier = [d.key for d in self.devices.values() if d.kind is Kind.ADAPTER]
        if not frontier:
            return any(d.tier is not Tier.UNKNOWN for d in self.switches())
        for key in frontier:
            self.devices[key].tier = Tier.HOST
        ranked = set(frontier)
        tiers = (Tier.LEAF, Tier.SPINE, Tier.CORE)
        rank = 0
        while frontier:
            tier = tiers[min(rank, len(tiers) - 1)]
            nxt: list[str] = []
            for key in frontier:
                for cable in adjacency.get(key, ()):
                    for end in (cable.a, cable.b):
                        if end.device not in ranked and self.devices[end.device].kind is Kind.SWITCH:
                            ranked.add(end.device)
                            nxt.append(end.device)
                            if self.devices[end.device].tier is Tier.UNKNOWN:
                                self.devices[end.device].tier = tier
            frontier = nxt
            rank += 1
        return True


def switch_components(devices: Iterable[str], cables: Iterable[Cable]) -> list[list[str]]:
    """Connected components (largest first) of the given switches over switch-switch cables."""
    parent: dict[str, str] = {key: key for key in devices}

    def find(key: str) -> str:
        root = key
        while parent[root] != root:
            root = parent[root]
        while parent[key] != root:
            parent[key], key = root, parent[key]
        return root

    for cable in cables:
        a, b = cable.a.device, cable.b.device
        if a in parent and b in parent:
            ra, rb = find(a), find(b)
            if ra != rb:
                parent[ra] = rb
    groups: dict[str, list[str]] = defaultdict(list)
    for key in parent:
        groups[find(key)].append(key)
    return sorted((sorted(g) for g in groups.values()), key=lambda g: (-len(g), g[0]))
