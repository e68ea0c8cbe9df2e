"""Read an ``ibnetdiscover`` dump (the fabric as the subnet manager's tools see it) into a ``Fabric``.

The text is tolerated as operators capture it: a terminal log with junk before and after the dump, CRLF
(or stray CR) line endings, a shell prompt at the end. Only lines that look like ibnetdiscover records
are read; a record that looks like one but cannot be parsed is an error.

A block describes one node::

    vendid=0x2c9
    sysimgguid=0xc42a10300a9b026
    switchguid=0xc42a10300a9b026(c42a10300a9b026)
    Switch41 "S-0c42a10300a9b026"# "MF0;sat11-0101-0927-20ib0:MQM8700/U1" enhanced port 0 lid 3894 lmc 0
    [1]"H-1c34da03005503dc"[1](1c34da03005503dc) # "SAT111092710053 ibp11s0f0" lid 65535 4xHDR
    [21]"S-0c42a103008b5558"[20]# "MF0;sat11-0101-0903-01ib1-A:MCS8500/L16/U2" lid 175 4xHDR

    caguid=0x1c34da03005503dc
    Ca  1 "H-1c34da03005503dc"# "SAT111092710053 ibp11s0f0"
    [1](1c34da03005503dc) "S-0c42a10300a9b026"[1]# lid 65535 lmc 0 "MF0;sat11-...:MQM8700/U1" lid 3894 4xHDR

Naming follows the wiring plan's conventions:

* a switch is named by its node description, reduced to the name part of ``MF0;<name>:<model>/U1``
  (a description without ``MF0;`` is the name as it stands); its ports are ``switch_port`` labels;
* a director chassis appears as many ASIC nodes, ``MF0;<chassis>:<model>/L<b>/U<u>`` (line cards) and
  ``.../S<s>/U<u>`` (internal spines). They are one device, ``<chassis>``; line-card port ``p`` is
  ``Blade <b>_Port <u>/<p>``, and links between a line card and a spine of the same chassis are inside
  the chassis, so they are dropped;
* a channel adapter (``Ca``) is its own device named by its node description (``SAT111092710053
  ibp11s0f0``), with ``host`` the first word and port label the adapter port number (``"1"``);
* SHARP aggregation nodes (``Mellanox Technologies Aggregation Node``) are not cabling and are dropped;
* when two distinct nodes (different GUIDs) carry the same name (unconfigured node descriptions such as
  ``MT4123 ConnectX6 Mellanox Technologies``), each is named ``<name> (<guid>)`` so that neither is lost,
  and such an adapter has no ``host`` (its description does not say which host it is in);
* a router (``Rt``) is read as a switch-like device named by its node description.

Each cable is listed from both of its ends; it is recorded once, and the two sides must agree. A link to
a node that has no block of its own (a truncated capture) is still recorded, from the one side seen.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from topology.errors import InputError
from topology.formats.nodenamemap import mapped
from topology.inputs import DOCUMENT, read_input
from topology.model import Cable, End, Fabric, canonical_guid
from topology.ports import (
    MAX_PORT_NUMBER,
    DirectorAsic,
    Kind,
    PortLabelError,
    bounded_number,
    director_asic,
    excerpt,
    host_of,
    switch_port,
)
from topology.rates import parse_width_speed

AGGREGATION_NODE = "mellanox technologies aggregation node"

_NODE_START = re.compile(r"^(?:Switch|Ca|Rt)(?:\s|\d)")
_NODE = re.compile(
    r'^(?P<type>Switch|Ca|Rt)\s*(?P<nports>\d+)\s+"(?P<letter>[SHR])-(?P<guid>[0-9A-Fa-f]{1,16})"'
    r'\s*#\s*"(?P<desc>[^"]*)"'
)
_PORT_START = re.compile(r"^\[\s*[-+]?\d+\s*\]")
"""A port line's start: a number in brackets, signed or spaced too, so that ``[-3]`` is a port line that does not
parse (an error naming it), not terminal noise dropped as a truncated line never is."""
_PORT = re.compile(
    r"^\[(?P<port>\d+)\](?:\[ext \d+\])?\s*(?:\([0-9A-Fa-f]+\))?\s*"
    r'"(?P<letter>[SHR])-(?P<guid>[0-9A-Fa-f]{1,16})"\[(?P<rport>\d+)\](?:\[ext \d+\])?'
    r"\s*(?:\([0-9A-Fa-f]+\))?\s*#(?P<tail>.*)$"
)
_QUOTED = re.compile(r'"([^"]*)"')
_WIDTH_SPEED = re.compile(r"\b\d+x[A-Za-z]+\d*\b")
_HEADER = re.compile(r"^(?P<key>vendid|devid|sysimgguid|switchguid|caguid|routerguid)=(?P<value>\S*)")
_GUID_VALUE = re.compile(r"^(?:0x)?([0-9A-Fa-f]{1,16})")
_TYPE_BY_LETTER = {"S": "Switch", "H": "Ca", "R": "Rt"}


@dataclass(slots=True)
class _Port:
    port: int
    remote_guid: str
    remote_type: str
    remote_port: int
    remote_desc: str
    width: int | None
    speed: float | None
    line: int


@dataclass(slots=True)
class _Node:
    type: str
    """``Switch``, ``Ca`` or ``Rt``."""
    guid: str
    desc: str
    sysimgguid: str | None
    line: int
    ports: dict[int, _Port] = field(default_factory=dict)
    seen: bool = True
    """False for a node known only from the far side of a link (it has no block of its own)."""


@dataclass(slots=True)
class _Role:
    """What a node becomes in the fabric."""

    name: str
    kind: Kind
    asic: DirectorAsic | None = None
    skip: bool = False
    ambiguous: bool = False
    """Renamed ``<name> (<guid>)`` because other nodes carry the same description."""

    def label(self, port: int) -> str | None:
        if self.asic is not None:
            return self.asic.port_label(port)
        if self.kind is Kind.ADAPTER:
            return str(port)
        return switch_port(str(port))


def read_ibnetdiscover(path: Path, node_names: Mapping[str, str] | None = None) -> Fabric:
    """Read an ibnetdiscover dump (or a terminal log holding one) from ``path``; ``node_names`` as for
    ``parse_ibnetdiscover``."""
    return parse_ibnetdiscover_bytes(read_input(path, DOCUMENT), str(path), node_names)


def parse_ibnetdiscover_bytes(data: bytes, source: str, node_names: Mapping[str, str] | None = None) -> Fabric:
    """A dump from the bytes of its file; ``source`` names it in errors."""
    text = data.decode("utf-8", errors="replace")
    # Split on LF only, so that line numbers are the ones an editor shows for CRLF text with stray CRs;
    # a file with bare CR line endings has no LF at all.
    lines = text.split("\n") if "\n" in text else text.split("\r")
    return parse_ibnetdiscover(lines, source, node_names)


def parse_ibnetdiscover(lines: Iterable[str], source: str, node_names: Mapping[str, str] | None = None) -> Fabric:
    """Build a ``Fabric`` from the lines of an ibnetdiscover dump; ``source`` names it in errors. ``node_names``
    (GUID -> name, a node-name-map: ``topology.formats.nodenamemap``) names the nodes it holds in place of their
    node descriptions, as ``ibnetdiscover --node-name-map`` prints them."""
    nodes = _scan(lines, source)
    if node_names:
        for node in nodes.values():
            node.desc = mapped(node_names, node.guid, node.desc)
    roles = _assign_roles(nodes, source)
    fabric = Fabric(source)
    for node in nodes.values():
        role = roles[node.guid]
        if role.skip:
            continue
        fabric.add_device(
            role.name,
            role.kind,
            guid=_claimed_guid(node, role),
            host=host_of(role.name) if role.kind is Kind.ADAPTER and not role.ambiguous else None,
            origin=f"{source}:{node.line}",
        )
    _add_cables(fabric, nodes, roles, source)
    return fabric


# --- pass 1: the text --------------------------------------------------------------------------------


def _scan(lines: Iterable[str], source: str) -> dict[str, _Node]:
    nodes: dict[str, _Node] = {}
    current: _Node | None = None
    sysimgguid: str | None = None
    count = 0
    for number, raw in enumerate(lines, start=1):
        count = number
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if _PORT_START.match(line):
            if current is None:
                raise InputError("port line outside a node block (no Switch/Ca line before it)",
                                 source=source, line=number)
            port = _parse_port(line, source, number)
            if (previous := current.ports.get(port.port)) is not None:
                raise InputError(f"port {port.port} of {current.desc!r} is listed twice "
                                 f"(first at line {previous.line})", source=source, line=number)
            current.ports[port.port] = port
        elif header := _HEADER.match(line):
            current = None
            if header["key"] == "vendid":
                sysimgguid = None
            elif header["key"] == "sysimgguid":
                sysimgguid = _header_guid(header["value"], source, number)
        elif _NODE_START.match(line):
            current = _parse_node(line, sysimgguid, source, number)
            sysimgguid = None
            if (previous_node := nodes.get(current.guid)) is not None:
                raise InputError(f"node GUID {current.guid} is described twice "
                                 f"(first at line {previous_node.line})", source=source, line=number)
            nodes[current.guid] = current
        # Anything else is terminal noise around the dump (log banners, prompts, command echo).
    if not nodes:
        raise InputError("no ibnetdiscover node records (Switch/Ca lines) found", source=source,
                         line=max(count, 1))
    _add_unseen_remotes(nodes)
    return nodes


def _header_guid(value: str, source: str, number: int) -> str:
    m = _GUID_VALUE.match(value)
    if not m:
        raise InputError(f"unreadable GUID {excerpt(value)}", source=source, line=number)
    return canonical_guid(m.group(1))


def _parse_node(line: str, sysimgguid: str | None, source: str, number: int) -> _Node:
    m = _NODE.match(line)
    if not m:
        raise InputError(
            'unparseable node line (expected: Switch|Ca <ports> "S-<guid>"# "<node description>" ...)',
            source=source, line=number,
        )
    if _TYPE_BY_LETTER[m["letter"]] != m["type"]:
        raise InputError(f"{m['type']} node with a {m['letter']}- GUID", source=source, line=number)
    return _Node(m["type"], canonical_guid(m["guid"]), m["desc"].strip(), sysimgguid, number)


def _parse_port(line: str, source: str, number: int) -> _Port:
    m = _PORT.match(line)
    if not m:
        raise InputError('unparseable port line (expected: [<port>]"S-<guid>"[<port>]# "<description>" ...)',
                         source=source, line=number)
    tail = m["tail"]
    quoted = _QUOTED.search(tail)
    desc = quoted.group(1).strip() if quoted else ""
    rate = _WIDTH_SPEED.search(tail, quoted.end() if quoted else 0)
    width, speed = _width_speed(rate.group(0)) if rate else (None, None)
    if rate and width is None:
        raise InputError(f"unreadable link width {excerpt(rate.group(0))}", source=source, line=number)
    return _Port(_port_number(m["port"], source, number), canonical_guid(m["guid"]), _TYPE_BY_LETTER[m["letter"]],
                 _port_number(m["rport"], source, number), desc, width, speed, number)


def _port_number(digits: str, source: str, number: int) -> int:
    port = bounded_number(digits)
    if port is None:
        raise InputError(f"port number {excerpt(digits)} is out of range (at most {MAX_PORT_NUMBER})",
                         source=source, line=number)
    return port


@functools.lru_cache(maxsize=64)
def _width_speed(text: str) -> tuple[int | None, float | None]:
    return parse_width_speed(text)


def _add_unseen_remotes(nodes: dict[str, _Node]) -> None:
    """Give nodes seen only as the far end of a link a record of their own, from the link's description."""
    for node in list(nodes.values()):
        for port in node.ports.values():
            if port.remote_guid not in nodes:
                nodes[port.remote_guid] = _Node(port.remote_type, port.remote_guid, port.remote_desc,
                                                None, port.line, seen=False)


# --- pass 2: names -----------------------------------------------------------------------------------


def _base_role(node: _Node, source: str) -> _Role:
    desc = " ".join(node.desc.split())
    if node.type == "Ca":
        if desc.casefold() == AGGREGATION_NODE:
            return _Role(desc, Kind.ADAPTER, skip=True)
        return _Role(desc or f"H-{node.guid}", Kind.ADAPTER)
    if not desc:
        return _Role(f"{node.type[0]}-{node.guid}", Kind.SWITCH)
    if desc.casefold() == AGGREGATION_NODE:
        return _Role(desc, Kind.SWITCH, skip=True)
    if node.type == "Switch" and desc.startswith("MF0;"):
        name, _, model = desc[4:].partition(":")
        try:
            parsed = director_asic(model) if model else None
        except PortLabelError as exc:
            raise InputError(f"{exc} in the node description {excerpt(desc)}", source=source, line=node.line) from None
        return _Role(name.strip() or desc, Kind.SWITCH, parsed[0] if parsed else None)
    return _Role(desc, Kind.SWITCH)


def _assign_roles(nodes: dict[str, _Node], source: str) -> dict[str, _Role]:
    """Roles of all nodes, renaming nodes that would otherwise share a name (see the module docstring).

    All ASICs of one director chassis are one identity (the chassis name); any other node is its GUID.
    """
    roles = {guid: _base_role(node, source) for guid, node in nodes.items()}
    identities: dict[str, set[str]] = {}
    for guid, role in roles.items():
        if not role.skip:
            identity = f"chassis:{role.name.casefold()}" if role.asic is not None else guid
            identities.setdefault(role.name.casefold(), set()).add(identity)
    for guid, role in roles.items():
        if not role.skip and role.asic is None and len(identities[role.name.casefold()]) > 1:
            role.name = f"{role.name} ({guid})"
            role.ambiguous = True
    return roles


def _claimed_guid(node: _Node, role: _Role) -> str | None:
    if not node.seen:
        return None
    if role.asic is not None:
        # Every ASIC of a chassis shares its system image GUID: the chassis claims it (repeatedly, which
        # is harmless), and two chassis with one name but different GUIDs are reported by the model.
        return node.sysimgguid
    return node.guid


# --- pass 3: cables ----------------------------------------------------------------------------------


def _add_cables(fabric: Fabric, nodes: dict[str, _Node], roles: dict[str, _Role], source: str) -> None:
    done: set[tuple[tuple[str, int], tuple[str, int]]] = set()
    for node in nodes.values():
        for port in node.ports.values():
            here, there = (node.guid, port.port), (port.remote_guid, port.remote_port)
            key = (here, there) if here <= there else (there, here)
            if key in done:
                continue
            done.add(key)
            remote = nodes[port.remote_guid]
            if remote.seen:
                _check_far_side(node, port, remote, source)
            cable = _cable(node, port, remote, roles, source)
            if cable is not None:
                fabric.add_cable(cable)


def _check_far_side(node: _Node, port: _Port, remote: _Node, source: str) -> None:
    back = remote.ports.get(port.remote_port)
    if back is None:
        raise InputError(
            f"port {port.port} of {node.desc!r} leads to port {port.remote_port} of {remote.desc!r}, "
            f"but that node's block (line {remote.line}) does not list the port",
            source=source, line=port.line,
        )
    if back.remote_guid != node.guid or back.remote_port != port.port:
        raise InputError(
            f"port {port.port} of {node.desc!r} leads to port {port.remote_port} of {remote.desc!r}, "
            f"but line {back.line} says that port leads to port {back.remote_port} of "
            f"{back.remote_desc!r} (GUID {back.remote_guid})",
            source=source, line=port.line,
        )
    if (back.width, back.speed) != (port.width, port.speed):
        raise InputError(
            f"the two ends of one link disagree on its width/speed: line {port.line} says "
            f"{_rate(port)}, line {back.line} says {_rate(back)}",
            source=source, line=port.line,
        )


def _rate(port: _Port) -> str:
    if port.width is None:
        return "nothing"
    return f"{port.width}x at {port.speed} Gb/s" if port.speed is not None else f"{port.width}x"


def _cable(node: _Node, port: _Port, remote: _Node, roles: dict[str, _Role], source: str) -> Cable | None:
    near, far = roles[node.guid], roles[remote.guid]
    if near.skip or far.skip:
        return None
    near_label, far_label = near.label(port.port), far.label(port.remote_port)
    if near_label is None or far_label is None:
        # One end is a spine ASIC inside a director: fine when the other end is in the same chassis.
        if near.name.casefold() == far.name.casefold() and (near.asic is not None and far.asic is not None):
            return None
        raise InputError(
            f"port {port.port} of internal spine ASIC {(node.desc if near_label is None else remote.desc)!r} "
            f"is linked outside its chassis, to {(remote.desc if near_label is None else node.desc)!r}",
            source=source, line=port.line,
        )
    return Cable(
        End(near.name.casefold(), near_label),
        End(far.name.casefold(), far_label),
        width=port.width,
        speed_gbps=port.speed,
        origin=f"{source}:{port.line}",
    )
