"""UFM events -> typed signals on components of the fabric model.

A signal names its component the way the fabric model does (a cable by its two ends, a device by name), so
that findings survive a UFM restart or a GUID change. Events that cannot be placed (unknown GUID, missing
fields, an event id we do not use) are counted by kind and logged once per kind, never acted on.

Where an event lands depends only on how it names its object (``object_name``, ``object_type``,
``object_path``; a link's description only when its path does not name both ends), so a mapper remembers it:
the thousands of events of a storm on the same ports are placed once each, not parsed again and again.
"""

from __future__ import annotations

import logging
import re
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from functools import partial
from typing import NamedTuple, Protocol, TypeVar, overload

from fabric.remediation.domain import ComponentId, ComponentKind
from fabric.remediation.kinds import SignalKind
from fabric.remediation.rules import EVENT_KINDS, QUOTED
from fabric.ufm.objects import PortEnd, link_ends, parse_object_path, path_end_names
from topology.model import End, Fabric, canonical_guid
from topology.numerals import whole_number
from topology.ports import Kind

log = logging.getLogger(__name__)


DEFAULT_EVENT_KINDS: Mapping[int, SignalKind] = EVENT_KINDS
"""UFM's event policy ids and the signal each raises (``fabric.remediation.rules``); configuration may replace
this table."""

DEVICE_KINDS = frozenset({SignalKind.SWITCH_DOWN, SignalKind.SWITCH_UP, SignalKind.ASIC_FAILURE,
                          SignalKind.SWITCH_REBOOTED, SignalKind.NODE_DOWN, SignalKind.NODE_UP,
                          SignalKind.DUPLICATE_GUID})


class EventLike(Protocol):
    """What signals need of a UFM event (``fabric.ufm.models.Event`` has it, REST or event.log)."""

    @property
    def id(self) -> int: ...
    @property
    def event_id(self) -> int: ...
    @property
    def timestamp(self) -> datetime: ...
    @property
    def object_type(self) -> str | None: ...
    @property
    def object_name(self) -> str | None: ...
    @property
    def object_path(self) -> str | None: ...
    @property
    def description(self) -> str | None: ...


class Signal(NamedTuple):
    """One event placed on a component. A named tuple, not a frozen dataclass: a storm makes one per event, and
    a tuple is built in C (``_new_signal``), several times faster than a frozen dataclass's ``__init__``."""

    kind: SignalKind
    component: ComponentId
    at: datetime
    event: int
    """The UFM event's record id (evidence)."""
    reporter: str | None = None
    """For a port-level signal on a cable: the end (``device/port``) that reported it."""
    detail: str = ""
    """The event's description, for a signal a finding quotes it for (``rules.QUOTED``)."""
    devices: tuple[str, ...] = ()
    """Device keys the component sits on (both ends of a cable), for attribution."""
    telemetry: bool = False
    """Read from UFM Telemetry's counters (``fabric.remediation.sampled``), not from UFM's event log: ``event`` is
    then ``NO_EVENT``."""


NO_EVENT = 0
"""The ``event`` of a signal no UFM event raised (UFM Telemetry's): never evidence, UFM's record ids start at 1."""

_new_signal: Callable[[tuple[object, ...]], Signal] = partial(tuple.__new__, Signal)
"""``Signal(*fields)`` built in C: a named tuple's own ``__new__`` is a Python function, and a storm makes one
signal per event."""


def link_id(key: tuple[End, End]) -> ComponentId:
    return ComponentId(ComponentKind.LINK, link_name(key))


def link_name(key: tuple[End, End]) -> str:
    """A cable's component name, ``a/p|b/q`` with its ends in order, without interning a ``ComponentId`` for it
    (an index of every planned cable need not hold 98,304 of them for the process's life)."""
    a, b = key
    if b < a:
        a, b = b, a
    return f"{a.device}/{a.port}|{b.device}/{b.port}"


def end_name(end: End) -> str:
    return f"{end.device}/{end.port}"


_T = TypeVar("_T")


def _numbered(name: str) -> tuple[str, int] | None:
    """A port name as UFM writes it, ``<guid>_<n>``, as the node's GUID and the port's number (its own label on every
    port but a director blade's); ``None`` for a name that is not ``f"{guid}_{n}"`` of a number ``n``."""
    guid, _, port = name.partition("_")
    number = _number(port)
    return None if number is None else (guid, number)


def _number(port: str) -> int | None:
    """``port`` as a number written as ``str`` writes it, up to 9999 (``None``: not one)."""
    if 0 < len(port) <= 4 and port.isascii() and port.isdigit() and (port[0] != "0" or port == "0"):
        return int(port)
    return None


PortNameValues = tuple[dict[str, bytes], dict[str, int], dict[str, str], list[tuple[int, str]], int]
"""``PortNames`` as plain values: each node's ends by port number (packed ``int`` numbers of ends), the names of
another form, each device's GUID, the ends named otherwise, the count."""


class PortNames(Mapping[str, End]):
    """UFM's port names (``<guid>_<n>``) and the ends they name, held by node GUID and port number rather than by
    name: on h100-32k, 196,608 names and their two maps (name -> end, end -> name) were 30 MiB of the engine's live
    set; held so, 8. A name is rendered when asked for (``name_of``, iteration), as UFM writes it.

    The ends given are kept as given (the view gives the plan's own, so that nothing of the as-built fabric is
    held); a name of another form than ``<guid>_<n>`` is kept as it is, with its end."""

    __slots__ = ("_count", "_guid_of", "_named_otherwise", "_nodes", "_other")

    def __init__(self, names: Iterable[tuple[str, End]]) -> None:
        nodes: dict[str, list[End | None]] = {}
        other: dict[str, End] = {}
        guid_of: dict[str, str] = {}
        """Device -> the GUID of the first name of the form ``f"{guid}_{end.port}"`` naming one of its ends."""
        named_otherwise: dict[End, str] = {}
        """The ends whose name (the last given for them, as a map made of all the names would keep) is not that."""
        for name, end in names:  # 196,608 on h100-32k: ``_numbered`` inlined
            guid, _, port = name.partition("_")
            number = _number(port)
            if number is None:
                other[name] = end
                named_otherwise[end] = name
                continue
            ends = nodes.get(guid)
            if ends is None:
                ends = nodes[guid] = []
            if len(ends) <= number:
                ends.extend([None] * (number + 1 - len(ends)))
            ends[number] = end
            if end.port == port and guid_of.setdefault(end.device, guid) == guid:
                if named_otherwise:
                    named_otherwise.pop(end, None)
            else:
                named_otherwise[end] = name
        self._nodes, self._other, self._guid_of, self._named_otherwise = nodes, other, guid_of, named_otherwise
        self._count = len(other) + sum(end is not None for ends in nodes.values() for end in ends)

    def as_values(self, number_of: Callable[[End], int]) -> PortNameValues:
        """The names as plain values (``marshal``), each end as the number ``number_of`` gives it (``from_values``
        makes them again). A node's ends are packed in one ``bytes``, its port numbers' order kept, ``-1`` where
        UFM named none: made again, a node's ends are one list, with nothing else made and dropped beside it."""
        nodes = {guid: array("i", [-1 if end is None else number_of(end) for end in ends]).tobytes()
                 for guid, ends in self._nodes.items()}
        return (nodes, {name: number_of(end) for name, end in self._other.items()}, self._guid_of,
                [(number_of(end), name) for end, name in self._named_otherwise.items()], self._count)

    @classmethod
    def from_values(cls, values: PortNameValues, ends: Sequence[End]) -> PortNames:
        """The names ``values`` holds, end number ``n`` being ``ends[n]``."""
        nodes, other, guid_of, named_otherwise, count = values
        names = object.__new__(cls)
        names._nodes = {guid: [None if number < 0 else ends[number] for number in array("i", packed)]
                        for guid, packed in nodes.items()}
        names._other = {name: ends[number] for name, number in other.items()}
        names._guid_of = guid_of
        names._named_otherwise = {ends[number]: name for number, name in named_otherwise}
        names._count = count
        return names

    def __getitem__(self, name: str) -> End:
        end = self._end(name)
        if end is None:
            raise KeyError(name)
        return end

    @overload
    def get(self, name: str, /) -> End | None: ...
    @overload
    def get(self, name: str, /, default: End | _T) -> End | _T: ...

    def get(self, name: str, /, default: object = None) -> object:
        """As a map's, without raising and catching ``KeyError`` for a name not listed (events name many)."""
        end = self._end(name)
        return default if end is None else end

    def _end(self, name: str) -> End | None:
        numbered = _numbered(name)
        if numbered is None:
            return self._other.get(name)
        ends = self._nodes.get(numbered[0])
        return ends[numbered[1]] if ends is not None and numbered[1] < len(ends) else None

    def __iter__(self) -> Iterator[str]:
        for guid, ends in self._nodes.items():
            for number, end in enumerate(ends):
                if end is not None:
                    yield f"{guid}_{number}"
        yield from self._other

    def __len__(self) -> int:
        return self._count

    def name_of(self, end: End) -> str | None:
        """UFM's name of the port ``end`` is (``None``: UFM listed none)."""
        name = self._named_otherwise.get(end)
        if name is not None:
            return name
        guid = self._guid_of.get(end.device)
        number = None if guid is None else _number(end.port)
        if guid is None or number is None:
            return None
        ends = self._nodes[guid]
        return f"{guid}_{end.port}" if number < len(ends) and ends[number] == end else None


class Resolver:
    """Places UFM objects (GUIDs, ports, names) on the fabric model.

    ``fabric`` is the model the service manages (plan names, checked against UFM); ``guids`` maps UFM node
    GUIDs to device keys and ``ports`` UFM port names (``<guid>_<n>``) to ends, both read from UFM.
    """

    def __init__(self, fabric: Fabric, guids: Mapping[str, str], ports: Mapping[str, End] | None = None, *,
                 canonical: bool = False) -> None:
        """``canonical``: the GUIDs are written as ``canonical_guid`` writes them already (a view made again from
        plain values: no cache entry made for each)."""
        self.fabric = fabric
        self.guids = dict(guids) if canonical else {canonical_guid(g): key for g, key in guids.items()}
        self.ports = ports if isinstance(ports, PortNames) else PortNames((ports or {}).items())
        self.hosts = {d.host_name.casefold()
                      for d in fabric.devices.values() if d.kind is Kind.ADAPTER}

    def device(self, guid: str | None = None, name: str | None = None) -> str | None:
        if guid:
            try:
                key = self.guids.get(canonical_guid(guid))
            except (TypeError, ValueError):
                key = None
            if key is not None:
                return key
        if name and name.casefold() in self.fabric.devices:
            return name.casefold()
        return None

    def end(self, guid: str, port: int | str) -> End | None:
        try:
            name = f"{canonical_guid(guid)}_{int(port)}"
        except (TypeError, ValueError):
            return None
        if (end := self.ports.get(name)) is not None:
            return end
        device = self.guids.get(name.partition("_")[0])
        # Without UFM's port list, a port number is its label (true of every port but director blades).
        return End(device, str(int(port))) if device is not None else None

    def cable_at(self, end: End) -> tuple[End, End] | None:
        cable = self.fabric.by_end.get(end)
        return cable.key if cable else None


_TRAILING_NUMBER = re.compile(r"(\d+)\s*$")
_Placement = tuple[ComponentId, str | None, tuple[str, ...]] | str
"""Where an event lands (component, reporting end, devices), or why it cannot be placed."""
_PLACES_KEPT = 1 << 17
_LINK_KINDS = frozenset({SignalKind.LINK_DOWN, SignalKind.LINK_UP})


class SignalMapper:
    """Turns events into signals; counts what it had to skip."""

    def __init__(self, resolver: Resolver, kinds: Mapping[int, SignalKind] | None = None) -> None:
        self.resolver = resolver
        self.kinds = dict(kinds or DEFAULT_EVENT_KINDS)
        self.skipped: Counter[str] = Counter()
        self._places: dict[tuple[str, object, object, object], _Placement] = {}
        """Placements by (route, how the event names its object); the resolver never changes under a mapper."""
        self._ports: dict[str, _Placement] = {}
        """Placements of UFM's port names (``<guid>_<n>``), as most port events name their object, each made the first
        time the name is asked for and kept (``_named``): a storm over thousands of ports places each once. Not made
        for every port up front: on h100-32k that was 196,608 placements and a link's for each (60 MiB), held from
        the start by the engine's pipeline (and a burn-in window's), most never asked for."""

    def _remember(self, key: tuple[str, object, object, object], placement: _Placement) -> None:
        if len(self._places) >= _PLACES_KEPT:
            self._places.clear()
        self._places[key] = placement

    def _skip(self, why: str, event: EventLike) -> None:
        if self.skipped[why] == 0:
            log.warning("skipping UFM event %s (type %s): %s; further events like it are only counted",
                        getattr(event, "id", "?"), getattr(event, "event_id", "?"), why)
        self.skipped[why] += 1

    def map(self, events: Iterable[EventLike]) -> list[Signal]:
        signals: list[Signal] = []
        for event in events:
            signal = self.one(event)
            if signal is not None:
                signals.append(signal)
        return signals

    def one(self, event: EventLike) -> Signal | None:
        try:
            kind = self.kinds.get(event.event_id)
        except (AttributeError, TypeError):
            self._skip("malformed event", event)
            return None
        if kind is None:
            self.skipped["event type not used"] += 1
            return None
        object_type = event.object_type
        if object_type == "Link" or kind in _LINK_KINDS:
            placement = self._link_placement(event)
        elif kind not in DEVICE_KINDS and (named := self._named(event.object_name)) is not None:
            placement = named  # a UFM port name, placed the first time it was named
        else:
            route = "device" if kind in DEVICE_KINDS else "port"
            key = (route, event.object_name, object_type, event.object_path)
            found = self._places.get(key)
            if found is None:
                found = self._place_device(event) if route == "device" else self._place_port(event)
                self._remember(key, found)
            placement = found
        if isinstance(placement, str):
            self._skip(placement, event)
            return None
        component, reporter, devices = placement
        detail = (event.description or "") if kind in QUOTED else ""
        return _new_signal((kind, component, event.timestamp, event.id, reporter, detail, devices, False))

    def place_port(self, name: str) -> tuple[ComponentId, str, tuple[str, ...]] | None:
        """Where a UFM port name (``<guid>_<n>``, as UFM lists its ports) lands: the cable it is an end of (or the
        port, uncabled), the end's name and the devices; ``None`` for a port UFM did not list."""
        placement = self._named(name)
        if placement is None or isinstance(placement, str):
            return None
        component, reporter, devices = placement
        assert reporter is not None  # a port's placement always names its end
        return component, reporter, devices

    def _link_placement(self, event: EventLike) -> _Placement:
        path = event.object_path
        key = ("link", event.object_name, None, path)
        placement = self._places.get(key)
        if placement is None:
            if path and (names := path_end_names(path)) is not None \
                    and (known := self._known_link(names)) is not None:
                return known
            from_path = link_ends(path, None) if path else None
            placement = self._place_link(from_path or link_ends(None, event.description)
                                         or link_ends(event.object_name, None))
            if from_path is not None:  # else the description named the ends: it is not part of the key
                self._remember(key, placement)
        return placement

    def _named(self, name: str | None) -> _Placement | None:
        """The placement of a port UFM's port list names ``name`` (``None``: it lists no such port)."""
        if name is None:
            return None
        placement = self._ports.get(name)
        if placement is None:
            end = self.resolver.ports.get(name)
            if end is None:
                return None
            placement = self._ports[name] = self._port_placement(end)
        return placement

    def _known_link(self, names: tuple[str, str]) -> _Placement | None:
        """``_place_link`` of two ends named as UFM's port list names them (``None`` unless it lists both): the
        placement of the first end that has a cable."""
        first, second = self._named(names[0]), self._named(names[1])
        if first is None or second is None:
            return None
        for placement in (first, second):
            if not isinstance(placement, str) and placement[0].kind is ComponentKind.LINK:
                return placement[0], None, placement[2]
        return "link ends not in the fabric model"

    def _place_link(self, ends: tuple[PortEnd, PortEnd] | None) -> _Placement:
        if ends is None:
            return "link event without two port ends"
        resolved = [self.resolver.end(e.guid, e.port) for e in ends]
        known = [e for e in resolved if e is not None]
        cable = next((c for e in known if (c := self.resolver.cable_at(e)) is not None), None)
        if cable is None:
            return "link ends not in the fabric model"
        return link_id(cable), None, (cable[0].device, cable[1].device)

    def _place_port(self, event: EventLike) -> _Placement:
        end: End | None = None
        if event.object_name:
            try:
                port = PortEnd.parse(event.object_name)
            except ValueError:
                port = None
            if port is not None:
                end = self.resolver.end(port.guid, port.port)
            elif event.object_path:
                # event.log names the node by its GUID (dev_id) and the port only at the end of the path
                # (``... / Computer: node01 / NA / HCA-1/1``, the same for Module events): GUID + port number.
                number = _TRAILING_NUMBER.search(event.object_path.rsplit(" / ", 1)[-1])
                if number is not None:
                    end = self.resolver.end(event.object_name, number.group(1))
        if end is None:
            ref = parse_object_path(event.object_type, event.object_path, event.description)
            device = self.resolver.device(name=ref.device_name)
            label = ref.port_label.rsplit("/", 1)[-1] if ref.port_label else None
            port_number = whole_number(label) if label else None
            if device is not None and port_number is not None:
                end = End(device, str(port_number))
        if end is None:
            return "port not in the fabric model"
        return self._port_placement(end)

    def _port_placement(self, end: End) -> _Placement:
        cable = self.resolver.cable_at(end)
        component = link_id(cable) if cable else ComponentId(ComponentKind.PORT, end_name(end))
        devices = (cable[0].device, cable[1].device) if cable else (end.device,)
        return component, end_name(end), devices

    def _place_device(self, event: EventLike) -> _Placement:
        guid = (event.object_name or "").partition("_")[0] or None
        ref = parse_object_path(event.object_type, event.object_path, event.description)
        device = self.resolver.device(guid=guid, name=ref.device_name)
        if device is None and ref.device_name and ref.device_name.casefold() in self.resolver.hosts:
            # UFM names a host system (``Computer: node01``); the model has its adapters.
            host = ref.device_name.casefold()
            return ComponentId(ComponentKind.HOST, host), None, (host,)
        if device is None:
            return "device not in the fabric model"
        info = self.resolver.fabric.devices[device]
        if info.kind is Kind.ADAPTER:
            host = info.host_name
            component = ComponentId(ComponentKind.HOST, host.casefold())
        else:
            component = ComponentId(ComponentKind.SWITCH, device)
        return component, None, ()
