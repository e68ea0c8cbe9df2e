"""Build a ``Fabric`` from UFM REST responses: ``/resources/systems``, ``/resources/links`` and, optionally,
``/resources/ports``, saved as ``systems.json``, ``links.json`` and ``ports.json`` in one directory (or
already decoded, for a live UFM source: ``fabric_from_ufm``).

Each document is a JSON list, or the ``{"data": [...]}`` wrapper UFM returns when paging is used.

Devices and names follow the wiring plan's conventions:

* every system of ``type`` ``switch`` is a switch named by its ``system_name``, claiming its ``guid``;
* a system's ``ports`` (``<node guid>_<n>``) map node GUIDs to systems: a director chassis has one node
  GUID per ASIC, a host one per adapter. Two systems claiming one GUID is an error;
* a link end on a switch is ``(system_name, port label)``. The label comes from the end's
  ``*_port_node_description`` when it names a director ASIC port (``<chassis>:L16/U2/20`` is
  ``Blade 16_Port 2/20``, as NDT maps it), else from ``*_port_dname`` (``37``, ``1/3/1``), else from
  ``*_port``. A link to an internal spine ASIC of a director (``S<n>/U<n>/<p>``) from the same chassis is
  inside the chassis and is dropped;
* a link end on a host is an adapter named by its node description: the ``node_description`` of port
  ``<guid>_<n>`` in ports.json, else the link's ``*_port_node_description``; when neither is known it is
  named ``<system_name> <node guid>`` (unique, and its host is the system). Its port is the adapter port
  number (``"1"``). Adapters are created from links: an adapter with no cable is not in the fabric;
* UFM links describe themselves, so a link end whose GUID no system owns (a partial systems.json) is
  still read from its node description: ``<name>:<port>`` is a switch port (unless ``<name>`` reads as
  ``<host> <adapter>``, e.g. ``node7 mlx5_0:1``), anything else an adapter. Only an end that cannot be
  named at all is an error;
* links to SHARP aggregation nodes (``Mellanox Technologies Aggregation Node``) are dropped, as NDT does;
* as in the ibnetdiscover reader, distinct devices that would share a name (unconfigured node
  descriptions) are each named ``<name> (<guid>)``, and such an adapter has no host;
* the cable's width is the link ``width`` (``4x`` or ``IB_4x``); its speed is lanes x the per-lane rate of
  the ``active_speed`` either end has in ports.json. The same link listed twice is read once; a port on
  two different links is an error.

Errors name the document and the JSON field: ``links.json: field '[3].source_guid': ...``.
"""

from __future__ import annotations

import mmap
import os
import re
import stat
from array import array
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from io import BufferedReader
from pathlib import Path
from typing import Any, NamedTuple

from topology import strictjson
from topology.errors import InputError
from topology.forked import in_child, may_fork
from topology.inputs import DOCUMENT, open_input, read_stream
from topology.jsonlist import bare_list_bounds, file_items, halves, part_items
from topology.model import Cable, End, Fabric, canonical_guid
from topology.ports import (
    MAX_PORT_NUMBER,
    Kind,
    PortLabelError,
    bounded_number,
    checked_switch_port,
    director_asic,
    excerpt,
    host_of,
    is_adapter_name,
    switch_port,
)
from topology.rates import NOT_GIVEN, lane_gbps, parse_width
from topology.readcaches import read_cache
from topology.strictjson import JsonError

AGGREGATION_NODE = "mellanox technologies aggregation node"
DOCUMENTS = ("systems", "links", "ports")
_GUID = re.compile(r"^(?:0x)?[0-9a-fA-F]{1,16}$")
_PORT_NAME = re.compile(r"^(?:0x)?([0-9a-fA-F]{1,16})_(\S+)$")
_CANONICAL_PORT_NAME = re.compile(r"[0-9a-f]{16}_\S+")
"""A port name already in the form ``_PORT_NAME`` reads into (what UFM writes): taken as it is."""
_TRAILING_NUMBER = re.compile(r"(?<!\d)(\d+)$")  # (?<!\d): linear time on a long run of digits
_WITH_PORT = re.compile(r"^(.*\S):(\d+)$")


def read_ufm_snapshot(directory: Path) -> Fabric:
    """Read ``systems.json``, ``links.json`` and (if present) ``ports.json`` from ``directory``.

    Each is folded into the fabric an element at a time as ``topology.jsonlist.file_items`` decodes it (ports,
    systems, then links, as ``UfmFabricBuilder`` takes them): none is held whole, in bytes or in objects. A
    document in another form (UFM's ``{"data": [...]}``, not UTF-8, not a regular file) is decoded whole. Each fault
    is refused and told as decoding the document whole tells it; only which of two faults is told first may differ
    (a port's field before a text fault further on, or in another document).
    """
    if not directory.is_dir():
        raise InputError("not a directory holding a UFM snapshot (systems.json, links.json)",
                         source=str(directory))
    paths = {name: directory / f"{name}.json" for name in DOCUMENTS}
    builder = UfmFabricBuilder(str(directory), documents={name: str(path) for name, path in paths.items()})
    with ExitStack() as stack:
        # All opened first, in this order: a missing or unreadable file is named before any is read.
        opened = {name: stack.enter_context(open_input(path)) for name, path in paths.items()
                  if name != "ports" or path.exists()}
        for name, add in (("ports", builder.add_port), ("systems", builder.add_system),
                          ("links", builder.add_link)):
            if name == "ports" and name in opened and _ports_in_two(builder, opened[name]):
                continue
            if name in opened:
                for index, entry in _document_entries(builder.documents[name], paths[name], opened[name]):
                    add(entry, index)
    return builder.build()


SPLIT_BYTES = 4 << 20
"""ports.json from this size on (h100-4k's is 18 MB) is decoded by two processes, a half each (``_ports_in_two``)."""


def _ports_in_two(builder: UfmFabricBuilder, stream: BufferedReader) -> bool:
    """Whether ports.json was read into ``builder`` by this process and a child forked for it
    (``topology.forked``): the first half here, the second there at the same time, the child's ports added after
    this half's, so in the document's order as one process reads them. ``False``, nothing read, where that is not
    done: a small document, no second CPU, a list the pieces do not decode to its end, anything the child could not
    do; ``_document_entries`` then reads the whole, and says what is wrong with it. A port this half refuses is
    said here, as one process would say it: it is the document's first fault."""
    status = os.fstat(stream.fileno())
    if not stat.S_ISREG(status.st_mode) or not SPLIT_BYTES <= status.st_size <= DOCUMENT.limit or not may_fork():
        return False
    with mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ) as body:
        bounds = bare_list_bounds(body)
        parts = None if bounds is None else halves(body, bounds)
        if parts is None:
            return False
        first, second = parts
        theirs = in_child(lambda: _port_fields_of(builder, body, second))
        try:
            whole = _each_port(body, first, builder.add_port)
        finally:
            fields = theirs()
    if not whole or not isinstance(fields, list):
        builder.ports.clear()
        return False
    for one in fields:
        builder.keep_port(one)
    return True


def _each_port(body: mmap.mmap, part: tuple[int, int], take: Callable[[dict[str, Any], int], object]) -> bool:
    """``take(entry, index)`` for each entry of ``part`` of ports.json, counted from the part's start; whether the
    part was decoded whole and held objects only (else the whole document's reading says what it holds)."""
    items = part_items(body, part)
    index = 0
    while True:
        try:
            entry = next(items)
        except StopIteration as end:
            return bool(end.value)
        if type(entry) is not dict:
            return False
        take(entry, index)
        index += 1


def _port_fields_of(builder: UfmFabricBuilder, body: mmap.mmap, part: tuple[int, int]) -> list[PortFields] | None:
    """The child's half: its ports' fields, or ``None`` (the parent reads the whole document then). A port it
    refuses ends the child: the parent names the entry, counted from the document's start."""
    found: list[PortFields] = []
    whole = _each_port(body, part, lambda entry, index: found.append(builder.port_fields(entry, index)))
    return found if whole else None


def _document_entries(doc: _Document, path: Path, stream: BufferedReader) -> Iterator[tuple[int, dict[str, Any]]]:
    """The objects of one saved UFM list response, with their positions, decoded as they are asked for when the
    document is a bare list in a regular UTF-8 file, else decoded whole."""
    if not _bare_list_file(stream):
        yield from _entries(doc, _decoded(read_stream(stream, DOCUMENT, str(path)), path))
        return
    try:
        for index, entry in enumerate(file_items(stream)):
            if type(entry) is not dict:
                raise doc.error(index, None, f"expected an object, found {type(entry).__name__}")
            yield index, entry
    except JsonError as exc:  # said as the whole document's decoding says it: the element's field, or the line
        raise _json_input_error(exc, path) from None  # and column in the file (``file_items`` places it so)


def _bare_list_file(stream: BufferedReader) -> bool:
    """Whether ``stream`` is a regular file within the bound of a document holding a bare JSON list in UTF-8."""
    status = os.fstat(stream.fileno())
    if not stat.S_ISREG(status.st_mode) or not 0 < status.st_size <= DOCUMENT.limit:
        return False
    with mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ) as body:
        return bare_list_bounds(body) is not None


def _decoded(data: bytes, path: Path) -> Any:
    """One saved UFM response decoded whole (``topology.strictjson``: a key given twice, NaN, Infinity are refused);
    errors name the file, and the field or the line and column."""
    try:
        return strictjson.loads(data)
    except JsonError as exc:
        raise _json_input_error(exc, path) from None


def _json_input_error(exc: JsonError, path: Path) -> InputError:
    if exc.path is not None:  # JSON, but not what a UFM document may hold
        return InputError(exc.msg, source=str(path), column=exc.path)
    where = f" (column {exc.colno})" if exc.colno is not None else ""
    return InputError(f"invalid JSON: {exc.msg}{where}", source=str(path), line=exc.lineno)


def fabric_from_ufm(
    systems: list[dict[str, Any]],
    links: list[dict[str, Any]],
    ports: list[dict[str, Any]] | None,
    source: str,
    *,
    documents: Mapping[str, str] | None = None,
) -> Fabric:
    """Build the as-built fabric from decoded UFM ``systems``, ``links`` and optional ``ports`` responses.

    Each may also be the ``{"data": [...]}`` wrapper. ``source`` names the snapshot (a directory or the
    UFM URL); ``documents`` maps ``systems``/``links``/``ports`` to the names errors cite, by default
    ``<source>/systems.json`` and so on.
    """
    builder = UfmFabricBuilder(source, documents=documents)
    if ports is not None:
        for index, entry in _entries(builder.documents["ports"], ports):
            builder.add_port(entry, index)
    for index, entry in _entries(builder.documents["systems"], systems):
        builder.add_system(entry, index)
    for index, entry in _entries(builder.documents["links"], links):
        builder.add_link(entry, index)
    return builder.build()


# --- documents and fields ----------------------------------------------------------------------------


def _entries(doc: _Document, value: object) -> Iterator[tuple[int, dict[str, Any]]]:
    """The objects of a decoded UFM list response (bare, or the ``data`` of its wrapper: ``doc`` then names its
    fields ``data[3].name``), with their positions."""
    if isinstance(value, dict) and "data" in value:
        doc.prefix = "data"
        value = value["data"]
        if not isinstance(value, list):
            raise InputError("expected a list", source=doc.name, column="data")
    if not isinstance(value, list):
        raise InputError('expected a JSON list of objects, or an object {"data": [...]}', source=doc.name)
    if not all(isinstance(entry, dict) for entry in value):
        index, entry = next((i, e) for i, e in enumerate(value) if not isinstance(e, dict))
        raise doc.error(index, None, f"expected an object, found {type(entry).__name__}")
    return enumerate(value)


class _Document:
    """One of UFM's list responses, as errors name it and its fields (JSON paths)."""

    __slots__ = ("name", "prefix")

    def __init__(self, name: str) -> None:
        self.name = name
        self.prefix = ""

    def path(self, index: int, name: str | None) -> str:
        return f"{self.prefix}[{index}]" + (f".{name}" if name else "")

    def error(self, index: int, name: str | None, message: str) -> InputError:
        return InputError(message, source=self.name, column=self.path(index, name))

    def text(self, entry: Mapping[str, Any], index: int, name: str, *, required: bool = True) -> str | None:
        """A string field (numbers are accepted and turned into text)."""
        value = entry.get(name)
        if type(value) is str:  # the common case, checked first: this runs for every field of every link
            text = value.strip()
            if text or not required:
                return text
        if value is None:
            if required:
                raise self.error(index, name, "missing required field")
            return None
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise self.error(index, name, f"expected a string, found {type(value).__name__}")
        text = str(value).strip()
        if required and not text:
            raise self.error(index, name, "empty required field")
        return text

    def required(self, entry: Mapping[str, Any], index: int, name: str) -> str:
        value = self.text(entry, index, name)
        assert value is not None
        return value

    def guid(self, entry: Mapping[str, Any], index: int, name: str) -> str:
        raw = entry.get(name)
        if type(raw) is str and (known := _checked_guid(raw)) is not None:
            return known
        if isinstance(raw, int):
            raise self.error(index, name, "expected a GUID string, found a number")
        value = self.required(entry, index, name)
        raise self.error(index, name, f"not a GUID: {excerpt(value)}")


@read_cache(maxsize=1 << 16)
def _checked_guid(text: str) -> str | None:
    """The canonical form of a GUID string, None when it is not one (cached: GUIDs repeat across links)."""
    value = text.strip()
    return canonical_guid(value) if _GUID.match(value) else None


class _Side(NamedTuple):
    """The fields of one end of a UFM link."""

    side: str
    guid: str
    port: str
    dname: str
    description: str


_SOURCE, _DESTINATION = (
    _Side(side, f"{side}_guid", f"{side}_port", f"{side}_port_dname", f"{side}_port_node_description")
    for side in ("source", "destination")
)


@dataclass(slots=True)
class _System:
    index: int
    guid: str
    name: str
    switch: bool
    device: _Device | None = None
    """A switch's device."""


@dataclass(slots=True)
class _Device:
    """A device to be: one per identity (a system, a chassis, an adapter's node GUID)."""

    identity: str
    name: str
    kind: Kind
    guid: str | None
    """The GUID the device claims in the fabric, if any."""
    display_guid: str
    origin: str
    host: str | None = None


@dataclass(slots=True)
class _End:
    device: _Device
    port: str | None
    """Canonical port label; None for a port of an internal spine ASIC of a director."""
    name: str
    """UFM's name of the port, ``<guid>_<port>``."""


@dataclass(slots=True)
class _Link:
    index: int
    a: _End
    b: _End
    width: int | None
    speed: float | None
    origin: str


# --- building ----------------------------------------------------------------------------------------


PortFields = tuple[str, object, object, object, object, object]
"""An entry of ports.json as the fabric is built from it (``UfmFabricBuilder.port_fields``): its canonical name,
``node_description``, ``active_width``, ``active_speed``, ``dname``, ``number``; plain values, as a child process
hands them back (``_ports_in_two``)."""


class _PortSeen(NamedTuple):
    """What the fabric is built from of an entry of ports.json: a few of its fields, as given (a tuple, its repeated
    texts shared: 196,608 ports on h100-32k, where the entries themselves took hundreds of MB)."""

    name: str
    """The port's name, the one copy a link's end names it by too (``add_link``)."""
    node_description: object
    active_width: object
    active_speed: object
    dname: object
    number: object


class UfmFabricBuilder:
    """The as-built fabric, built from UFM's list responses an entry at a time (none of the three is held whole):
    every port and every system first (in either order), then the links, then ``build``. Errors name the document
    and the field: ``documents`` maps ``systems``/``links``/``ports`` to the names errors cite, by default
    ``<source>/systems.json`` and so on."""

    def __init__(self, source: str, *, documents: Mapping[str, str] | None = None) -> None:
        names = {name: f"{source}/{name}.json" for name in DOCUMENTS}
        names.update(documents or {})
        self.source = source
        self.names = names
        self.documents = {name: _Document(names[name]) for name in DOCUMENTS}
        self.ports: dict[str, _PortSeen] = {}
        self._shared: dict[str, str] = {}
        """One copy of each text that repeats across ports (widths, speeds, port labels)."""
        self.systems: list[_System] = []
        self.owner: dict[str, tuple[_System, str]] = {}
        """Node (and system) GUID -> the system that lists it, and the field that does."""
        self.switch_by_name: dict[str, _Device] = {}
        self.devices: dict[str, _Device] = {}
        self.links: list[_Link] = []

    def add_port(self, entry: Mapping[str, Any], index: int) -> None:
        """Entry ``index`` of ports.json."""
        self.keep_port(self.port_fields(entry, index))

    def port_fields(self, entry: Mapping[str, Any], index: int) -> PortFields:
        """What the fabric is built from of entry ``index`` of ports.json, its name canonical (an ``InputError``
        naming the field where it has none)."""
        name = entry.get("name")
        if type(name) is not str or _CANONICAL_PORT_NAME.fullmatch(name) is None:  # else <16 hex>_<port> already
            doc = self.documents["ports"]
            name = doc.required(entry, index, "name")
            m = _PORT_NAME.match(name)
            if not m:
                raise doc.error(index, "name", f"not a UFM port name (<guid>_<port>): {excerpt(name)}")
            name = f"{canonical_guid(m.group(1))}_{m.group(2)}"
        get = entry.get
        return name, get("node_description"), get("active_width"), get("active_speed"), get("dname"), get("number")

    def keep_port(self, fields: PortFields) -> None:
        """A port of ports.json (``port_fields``), read in the document's order."""
        name, description, width, speed, dname, number = fields
        share = self._shared.setdefault
        # One copy of each repeated text, inlined rather than a method: this runs for each of 196,608 ports at 32k.
        self.ports[name] = _PortSeen(name, description, share(width, width) if type(width) is str else width,
                                     share(speed, speed) if type(speed) is str else speed,
                                     share(dname, dname) if type(dname) is str else dname, number)

    def add_system(self, entry: Mapping[str, Any], index: int) -> None:
        """Entry ``index`` of systems.json."""
        doc = self.documents["systems"]
        guid = doc.guid(entry, index, "guid")
        name = " ".join(doc.required(entry, index, "system_name").split())
        kind = doc.required(entry, index, "type")
        system = _System(index, guid, name, kind.casefold() == "switch")
        self.systems.append(system)
        self._own(doc, system, guid, doc.path(index, "guid"))
        listed = entry.get("ports", [])
        if not isinstance(listed, list):
            raise doc.error(index, "ports", "expected a list of port names")
        claimed = {guid}  # a system lists each node GUID once per port: the first claim is the one to check
        for k, port in enumerate(listed):
            if type(port) is str and _CANONICAL_PORT_NAME.fullmatch(port) is not None:
                node_guid = port[:16]  # already canonical, as UFM writes it: no group, no cache look-up
            else:
                m = _PORT_NAME.match(port) if isinstance(port, str) else None
                if m is None:
                    raise doc.error(index, f"ports[{k}]",
                                    f"not a UFM port name (<guid>_<port>): {excerpt(str(port))}")
                node_guid = canonical_guid(m.group(1))
            if node_guid not in claimed:
                claimed.add(node_guid)
                self._own(doc, system, node_guid, doc.path(index, f"ports[{k}]"))
        if system.switch:
            system.device = self._device(f"system:{guid}", name, Kind.SWITCH, guid, guid,
                                         f"{doc.name}:{doc.path(index, None)}")
            self.switch_by_name.setdefault(name.casefold(), system.device)

    def _own(self, doc: _Document, system: _System, guid: str, where: str) -> None:
        previous = self.owner.get(guid)
        if previous is not None and previous[0] is not system:
            other, other_where = previous
            raise InputError(
                f"GUID {guid} is claimed by two systems: {other.name!r} ({other_where}) and {system.name!r}",
                source=doc.name, column=where,
            )
        self.owner.setdefault(guid, (system, where))

    def _device(self, identity: str, name: str, kind: Kind, guid: str | None, display_guid: str,
                origin: str, host: str | None = None) -> _Device:
        device = self.devices.get(identity)
        if device is None:
            device = _Device(identity, name, kind, guid, display_guid, origin, host)
            self.devices[identity] = device
        return device

    # --- links --------------------------------------------------------------------------------------

    def add_link(self, entry: Mapping[str, Any], index: int) -> None:
        """Entry ``index`` of links.json (once every port and system is added)."""
        doc = self.documents["links"]
        if _aggregation_node(entry.get(_SOURCE.description)) or _aggregation_node(
                entry.get(_DESTINATION.description)):
            return
        a = self._end(doc, entry, index, _SOURCE)
        b = self._end(doc, entry, index, _DESTINATION)
        seen_a, seen_b = self.ports.get(a.name), self.ports.get(b.name)
        port_entries = [found for found in (seen_a, seen_b) if found is not None]
        for end, seen in ((a, seen_a), (b, seen_b)):
            if seen is not None:
                end.name = seen.name  # one copy of each name (196,608 at 32k): ports.json's
        width = self._width(doc, entry, index, port_entries)
        name = (value.strip() if type(value := entry.get("name")) is str
                else doc.text(entry, index, "name", required=False))
        origin = name or f"{doc.name}:{doc.path(index, None)}"
        if a.port is None or b.port is None:
            if a.device is b.device:
                return  # line card <-> spine ASIC inside one director chassis
            raise doc.error(index, None, "an internal spine ASIC port of a director is linked outside "
                            f"its chassis ({a.device.name!r} - {b.device.name!r})")
        self.links.append(_Link(index, a, b, width, self._speed(width, port_entries), origin))

    def _end(self, doc: _Document, entry: Mapping[str, Any], index: int, fields: _Side) -> _End:
        side = fields.side
        # ``doc.guid`` and ``doc.text`` inlined for the common case of a string: this runs for every end of every link.
        guid = _checked_guid(raw) if type(raw := entry.get(fields.guid)) is str else None
        guid = guid or doc.guid(entry, index, fields.guid)
        port = value.strip() if type(value := entry.get(fields.port)) is str else None
        port = port or doc.required(entry, index, fields.port)
        dname = (value.strip() if type(value := entry.get(fields.dname)) is str
                 else doc.text(entry, index, fields.dname, required=False))
        description = (value.strip() if type(value := entry.get(fields.description)) is str
                       else doc.text(entry, index, fields.description, required=False))
        known = self.owner.get(guid)
        if known is not None and known[0].device is not None:
            return _End(known[0].device, self._switch_label(doc, index, fields, description, dname, port),
                        f"{guid}_{port}")
        if known is not None:
            system = known[0]
            name = self._adapter_name(guid, port, description)
            host = host_of(name) if name else system.name
            origin = f"{doc.name}:{doc.path(index, side + '_guid')}"
            device = self._device(f"node:{guid}", name or f"{system.name} {guid}", Kind.ADAPTER, guid, guid,
                                  origin, host)
            return _End(device, self._adapter_port(doc, index, side, port, dname), f"{guid}_{port}")
        return self._unowned_end(doc, index, fields, guid, port, dname, description)

    def _unowned_end(self, doc: _Document, index: int, fields: _Side, guid: str, port: str, dname: str | None,
                     description: str | None) -> _End:
        """An end whose GUID no system lists: name it from its own node description."""
        side = fields.side
        origin = f"{doc.name}:{doc.path(index, side + '_guid')}"
        if not description:
            raise doc.error(index, f"{side}_guid", f"GUID {guid} belongs to no system in "
                            f"{self.names['systems']} and the link has no {side}_port_node_description "
                            "to name the device by")
        try:
            name, asic_suffix = _switch_description(description)
        except PortLabelError as exc:
            raise doc.error(index, f"{side}_port_node_description", str(exc)) from None
        if name is not None:
            device = self.switch_by_name.get(name.casefold())
            if device is None:
                identity = f"chassis:{name.casefold()}" if asic_suffix else f"node:{guid}"
                claimed = None if asic_suffix else guid  # a chassis' ASIC GUIDs are not the chassis' own
                device = self._device(identity, name, Kind.SWITCH, claimed, guid, origin)
                self.switch_by_name[name.casefold()] = device
            if device.kind is not Kind.SWITCH:
                raise doc.error(index, f"{side}_port_node_description", f"GUID {guid} is an adapter "
                                f"({device.name!r}) at {device.origin}, but this link describes a switch port")
            return _End(device, self._switch_label(doc, index, fields, description, dname, port), f"{guid}_{port}")
        name = self._adapter_name(guid, port, description) or " ".join(description.split())
        device = self._device(f"node:{guid}", name, Kind.ADAPTER, guid, guid, origin, host_of(name))
        if device.kind is not Kind.ADAPTER:
            raise doc.error(index, f"{side}_port_node_description", f"GUID {guid} is a switch "
                            f"({device.name!r}) at {device.origin}, but this link describes it as {name!r}")
        return _End(device, self._adapter_port(doc, index, side, port, dname), f"{guid}_{port}")

    def _adapter_name(self, guid: str, port: str, description: str | None) -> str | None:
        seen = self.ports.get(f"{guid}_{port}")
        from_ports = seen.node_description if seen else None
        for text in (from_ports, description):
            if isinstance(text, str) and text.strip():
                name = " ".join(text.split())
                # ``<host> <adapter>:<port>``, should UFM ever append the port as it does for switches.
                if (m := _WITH_PORT.match(name)) and is_adapter_name(m.group(1)):
                    return m.group(1)
                return name
        return None

    def _switch_label(self, doc: _Document, index: int, fields: _Side, description: str | None,
                      dname: str | None, port: str) -> str | None:
        if dname and (description is None or "/" not in description):  # no director ASIC: the common case, first
            try:
                label = checked_switch_port(dname)
            except PortLabelError:
                label = None  # said below, naming the field
            if label is not None:
                return label
        side = fields.side
        suffix = description.partition(":")[2] if description and ":" in description else ""
        try:
            parsed = director_asic(suffix.replace(":", "/")) if "/" in suffix else None
        except PortLabelError as exc:
            raise doc.error(index, fields.description, str(exc)) from None
        if parsed is not None and parsed[1] is not None:
            return parsed[0].port_label(parsed[1])
        for field, text in ((fields.dname, dname), (fields.port, port),
                            (fields.description, suffix.rpartition(":")[2])):
            try:
                if text and (label := checked_switch_port(text)) is not None:
                    return label
            except PortLabelError as exc:
                raise doc.error(index, field, str(exc)) from None
        raise doc.error(index, f"{side}_port", f"cannot read a switch port label from {side}_port {excerpt(port)}"
                        + (f", {side}_port_dname {excerpt(dname)}" if dname else ""))

    def _adapter_port(self, doc: _Document, index: int, side: str, port: str, dname: str | None) -> str:
        if port.isdecimal():
            number = bounded_number(port)
        elif dname and (m := _TRAILING_NUMBER.search(dname)):
            number = bounded_number(m.group(1))
        else:
            raise doc.error(index, f"{side}_port", f"not an adapter port number: {excerpt(port)}")
        if number is None:
            raise doc.error(index, f"{side}_port", f"port number {excerpt(port if port.isdecimal() else dname or '')} "
                            f"is out of range (at most {MAX_PORT_NUMBER})")
        return str(number)

    def _width(self, doc: _Document, entry: Mapping[str, Any], index: int, port_entries: list[_PortSeen]) -> int | None:
        text = doc.text(entry, index, "width", required=False)
        if text is not None and text.casefold() not in NOT_GIVEN:
            width = parse_width(text)
            if width is None:
                raise doc.error(index, "width",
                                f"unreadable link width {excerpt(text)} (expected e.g. '4x' or 'IB_4x')")
            return width
        for seen in port_entries:
            if isinstance(value := seen.active_width, str) and (width := parse_width(value)):
                return width
        return None

    @staticmethod
    def _speed(width: int | None, port_entries: list[_PortSeen]) -> float | None:
        if width is None:
            return None
        for seen in port_entries:
            value = seen.active_speed
            if isinstance(value, str) and (rate := lane_gbps(value)) is not None:
                return rate * width
        return None

    # --- the fabric ---------------------------------------------------------------------------------

    def build(self) -> Fabric:
        """The as-built fabric; the builder's records are let go as they are folded into it (build once)."""
        # The ports' records serve the links, read already: only the switch ports' names and labels are needed
        # further (``_name_switch_ports``). Let go first, they and the cables made below never coexist: on h100-32k
        # the records of 196,608 ports, the links' and the cables at once were the peak of an as-built read.
        switch_ports = self._switch_ports()
        self.ports = {}
        self._disambiguate()
        fabric = Fabric(self.source)
        for device in self.devices.values():
            try:
                fabric.add_device(device.name, device.kind, guid=device.guid, host=device.host,
                                  origin=device.origin)
            except InputError as exc:  # named by the document and field the device was read from
                document, _, field = device.origin.rpartition(":")
                raise InputError(exc.message, source=document or self.source, column=field or None) from exc
        links_doc = self.names["links"]
        by_end = fabric.by_end  # the cables placed so far, by end: no set or map of its own (a million entries at 32k)
        # Each link's record is let go once folded (its cable is what lives on): they and the cables never all
        # coexist, which is the peak of an as-built read (98,304 records at 32k). The entry each cable came from,
        # by its place in ``fabric.cables``, for an error naming it.
        links, self.links = self.links, []
        links.reverse()
        entries = array("q")
        while links:
            link = links.pop()
            cable = self._cable(link)
            if (placed := by_end.get(cable.a)) is not None and placed.key == cable.key:
                continue  # the same link listed twice (or from both directions)
            for end in (cable.a, cable.b):
                if (first := by_end.get(end)) is not None:
                    at = next(i for i, other in enumerate(fabric.cables) if other is first)
                    raise InputError(f"port {fabric.describe(end)} is cabled twice (also on link "
                                     f"[{entries[at]}] {first.origin})", source=links_doc,
                                     column=f"[{link.index}]")
            try:
                fabric.add_cable(cable)
            except InputError as exc:
                raise InputError(exc.message, source=links_doc, column=f"[{link.index}]") from exc
            entries.append(link.index)
            fabric.port_names[link.a.name] = cable.a
            fabric.port_names[link.b.name] = cable.b
        self._name_switch_ports(fabric, switch_ports)
        return fabric

    @staticmethod
    def _cable(link: _Link) -> Cable:
        assert link.a.port is not None and link.b.port is not None
        return Cable(End(link.a.device.name.casefold(), link.a.port), End(link.b.device.name.casefold(), link.b.port),
                     width=link.width, speed_gbps=link.speed, origin=link.origin)

    def _switch_ports(self) -> list[tuple[str, str, object, object]]:
        """Each port of ports.json on a switch: its name, its switch's GUID and what its label is read from (``dname``,
        ``number``), for ``_name_switch_ports``."""
        found: list[tuple[str, str, object, object]] = []
        for name, seen in self.ports.items():
            known = self.owner.get(name.partition("_")[0])
            if known is not None and known[0].switch:
                found.append((name, known[0].guid, seen.dname, seen.number))
        return found

    def _name_switch_ports(self, fabric: Fabric, switch_ports: list[tuple[str, str, object, object]]) -> None:
        """Switch ports with no cable UFM reports (a disabled link leaves /resources/links) keep their UFM
        name, from ports.json, so that a port taken out of service can be found again to put it back."""
        for name, guid, dname, number in switch_ports:
            if name in fabric.port_names:
                continue
            label = next((found for text in (dname, number, name.partition("_")[2])
                          if text is not None and (found := switch_port(str(text))) is not None), None)
            if label is not None:
                device = self.devices[f"system:{guid}"]
                fabric.port_names[name] = End(device.name.casefold(), label)

    def _disambiguate(self) -> None:
        by_name: dict[str, list[_Device]] = {}
        for device in self.devices.values():
            by_name.setdefault(device.name.casefold(), []).append(device)
        for group in by_name.values():
            if len(group) > 1:
                for device in group:
                    device.name = f"{device.name} ({device.display_guid})"
                    device.host = None


def _aggregation_node(description: object) -> bool:
    return isinstance(description, str) and AGGREGATION_NODE in description.casefold()


def _switch_description(description: str) -> tuple[str | None, bool]:
    """``SSPINE1-13:2`` -> (``SSPINE1-13``, False); ``X:L16/U2/20`` -> (``X``, True); an adapter's
    description (``luna-0001 mlx5_10``, no ``:<port>`` or a ``<host> <adapter>`` name) -> (None, False).
    Raises ``PortLabelError`` for a port number out of range."""
    body = description.strip().removeprefix("MF0;")
    name, sep, rest = body.partition(":")
    if not sep or not name.strip() or not rest or is_adapter_name(" ".join(name.split())):
        return None, False
    if director_asic(rest.replace(":", "/")) is not None:
        return " ".join(name.split()), True
    if checked_switch_port(rest.rpartition(":")[2]) is not None:
        return " ".join(name.split()), False
    return None, False
