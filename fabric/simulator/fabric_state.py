"""Ports, links and systems as UFM currently sees them, and their encoded REST payloads.

Built on ``topology.formats.ufm_render`` (the same GUIDs, port names and payload fields as every other
rendering of a plan).  A link is listed in ``/resources/links`` only while it is up: no end is
administratively disabled, neither end's node is down and no fault holds it down.  Its ports read
``Active``/``Link Up`` then; otherwise ``Down`` and ``Polling`` (``Disabled`` for a disabled port).  A port the
subnet manager isolated (``isolated``, set at a sweep after ``PUT /app/unhealthy_ports``) keeps its link up and
listed, and reads ``Armed``/``Link Up``: the SM does not make it Active, so no data crosses it (OpenSM's wording for
an isolated port in UFM's REST answer is UNCONFIRMED).

Nothing here emits events or takes locks: :mod:`fabric.simulator.state` does both.  Every mutator returns
what changed so the caller can raise the matching events.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from topology.formats.ufm_render import PortRef, UfmView, render_links, render_ports, render_systems
from topology.model import End, Fabric

_COMPACT = (",", ":")
_PEER_FIELDS = ("peer", "peer_guid", "peer_node_guid", "peer_node_name", "peer_node_description",
                "peer_port_dname")
# Keys of UFM's /app/versioning answer (the SDK's captured versioning.json).
VERSION_KEYS = ("event_policies_version", "sites_version", "alarms_version", "traps_version", "templates_version",
                "users_version", "servers_version", "switches_version", "ports_version", "links_version",
                "modules_version", "submodules_version", "mirror_template_version", "saps_version",
                "groups_version", "objects_groups_version", "smconfs_version", "events_version")
"""``events_version`` is not in the SDK's captured answer, but its fluentd topology plugin reads it: it moves with
every event."""


class Versioning:
    """``/app/versioning`` counters; each moves when its class of objects changes."""

    def __init__(self) -> None:
        self.counters: dict[str, int] = dict.fromkeys(VERSION_KEYS, 1)

    def bump(self, *names: str) -> None:
        for name in names:
            self.counters[f"{name}_version"] += 1

    def __getitem__(self, name: str) -> int:
        return self.counters[f"{name}_version"]


@dataclass(slots=True)
class LinkState:
    """One cable as UFM sees it (``a`` is the ``source`` end)."""

    a: str
    b: str
    payload: dict[str, Any]
    holds: set[str] = field(default_factory=set)
    """Faults holding the link down (``"cable"``, ``"flap"``…); empty when nothing does."""

    @property
    def name(self) -> str:
        return f"{self.a}:{self.b}"


@dataclass(frozen=True, slots=True)
class Transition:
    """Links that went down and came up through one change (each a ``(source, destination)`` pair)."""

    down: tuple[tuple[str, str], ...] = ()
    up: tuple[tuple[str, str], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.down or self.up)


class FabricState:
    def __init__(self, fabric: Fabric) -> None:
        self.fabric = fabric
        self.view = UfmView(fabric)
        self.versions = Versioning()
        self.ports: dict[str, dict[str, Any]] = {p["name"]: p for p in render_ports(self.view)}
        self.names: dict[str, PortRef] = {}
        self.port_at: dict[End, str] = {}
        for end, ref in self.view.ports.items():
            self.names[ref.name] = ref
            self.port_at[end] = ref.name
        self.links: dict[str, LinkState] = {}
        self.link_of: dict[str, str] = {}
        for payload in render_links(self.view):
            a, _, b = payload["name"].partition(":")
            self._add_link(LinkState(a, b, payload))
        self.systems: dict[str, dict[str, Any]] = {s["guid"]: s for s in render_systems(self.view)}
        self.system_ports: dict[str, list[str]] = {guid: list(s["ports"]) for guid, s in self.systems.items()}
        self.system_by_name: dict[str, str] = {s["system_name"].casefold(): g for g, s in self.systems.items()}
        self.disabled: set[str] = set()
        self.down_systems: set[str] = set()
        self.isolated: dict[str, None] = {}
        """Ports the subnet manager isolates, in the order it isolated them (``/resources/isolated_ports``)."""
        self._port_bytes: dict[str, bytes] = {}
        self._link_bytes: dict[str, bytes] = {}
        self._system_bytes: dict[str, bytes] = {}
        self._lists: dict[str, tuple[int, bytes]] = {}

    # ------------------------------------------------------------------------------------------ queries

    def link_up(self, link: LinkState) -> bool:
        if link.holds or link.a in self.disabled or link.b in self.disabled:
            return False
        return self.names[link.a].system_guid not in self.down_systems and \
            self.names[link.b].system_guid not in self.down_systems

    def link_at(self, port: str) -> LinkState | None:
        name = self.link_of.get(port)
        return self.links[name] if name is not None else None

    def peer_of(self, port: str) -> str | None:
        link = self.link_at(port)
        if link is None:
            return None
        return link.b if link.a == port else link.a

    def up_links(self) -> list[LinkState]:
        return [link for link in self.links.values() if self.link_up(link)]

    # ------------------------------------------------------------------------------------------ mutators

    def _add_link(self, link: LinkState) -> None:
        self.links[link.name] = link
        self.link_of[link.a] = link.name
        self.link_of[link.b] = link.name

    def _snapshot(self, links: Iterable[LinkState]) -> dict[str, bool]:
        return {link.name: self.link_up(link) for link in links}

    def _settle(self, before: dict[str, bool], touched_ports: Iterable[str] = ()) -> Transition:
        """Refresh port states of the links in ``before``; report the ones whose up-state changed."""
        down: list[tuple[str, str]] = []
        up: list[tuple[str, str]] = []
        ports = set(touched_ports)
        for name, was_up in before.items():
            link = self.links[name]
            now_up = self.link_up(link)
            ports.update((link.a, link.b))
            if was_up and not now_up:
                down.append((link.a, link.b))
            elif now_up and not was_up:
                up.append((link.a, link.b))
        changed_ports = [p for p in ports if self._refresh_port(p)]
        if changed_ports:
            self.versions.bump("ports")
        if down or up:
            self.versions.bump("links")
        return Transition(tuple(down), tuple(up))

    def _refresh_port(self, port: str) -> bool:
        payload = self.ports[port]
        link = self.link_at(port)
        if port in self.disabled:
            logical, physical = "Down", "Disabled"
        elif link is not None and self.link_up(link):
            logical, physical = ("Armed" if port in self.isolated else "Active"), "Link Up"
        else:
            logical, physical = "Down", "Polling"
        if payload["logical_state"] == logical and payload["physical_state"] == physical:
            return False
        payload["logical_state"], payload["physical_state"] = logical, physical
        self._port_bytes.pop(port, None)
        return True

    def set_hold(self, link: LinkState, reason: str, on: bool) -> Transition:
        before = self._snapshot([link])
        if on:
            link.holds.add(reason)
        else:
            link.holds.discard(reason)
        return self._settle(before)

    def set_disabled(self, port: str, disabled: bool) -> Transition:
        link = self.link_at(port)
        before = self._snapshot([link] if link else [])
        if disabled:
            self.disabled.add(port)
        else:
            self.disabled.discard(port)
        return self._settle(before, [port])

    def set_isolated(self, ports: Iterable[str]) -> list[str]:
        """The subnet manager isolates exactly ``ports`` from now; returns the ports whose isolation changed."""
        wanted = dict.fromkeys(ports)
        changed = [p for p in self.isolated if p not in wanted] + [p for p in wanted if p not in self.isolated]
        self.isolated = {**{p: None for p in self.isolated if p in wanted}, **wanted}
        refreshed = [self._refresh_port(p) for p in changed]  # every one, not up to the first that changed
        if any(refreshed):
            self.versions.bump("ports")
        return changed

    def set_system_down(self, guid: str, down: bool) -> Transition:
        links = [self.links[self.link_of[p]] for p in self.system_ports.get(guid, ()) if p in self.link_of]
        before = self._snapshot(links)
        if down:
            self.down_systems.add(guid)
        else:
            self.down_systems.discard(guid)
        system = self.systems[guid]
        state = "inactive" if down else "active"
        if system["state"] != state:
            system["state"] = state
            self._system_bytes.pop(guid, None)
            self.versions.bump("switches" if system["type"] == "switch" else "servers")
        return self._settle(before)

    def swap_far_ends(self, first: LinkState, second: LinkState) -> tuple[LinkState, LinkState]:
        """Re-cable ``first`` and ``second`` so each source meets the other's destination (a miswire)."""
        for old in (first, second):
            del self.links[old.name]
            self._link_bytes.pop(old.name, None)
        new_first = self._relinked(first, second)
        new_second = self._relinked(second, first)
        for link in (new_first, new_second):
            self._add_link(link)
            for port in (link.a, link.b):
                self._set_peer(port, link.b if port == link.a else link.a)
        self.versions.bump("links", "ports")
        return new_first, new_second

    def _relinked(self, source: LinkState, other: LinkState) -> LinkState:
        payload = dict(source.payload)
        for key, value in other.payload.items():
            if key.startswith("destination_"):
                payload[key] = value
        payload["name"] = f"{source.a}:{other.b}"
        return LinkState(source.a, other.b, payload, source.holds | other.holds)

    def _set_peer(self, port: str, peer: str) -> None:
        payload, peer_payload = self.ports[port], self.ports[peer]
        values = (peer_payload["name"], peer_payload["guid"], peer_payload["guid"], peer_payload["system_name"],
                  peer_payload["node_description"], peer_payload["dname"])
        payload.update(zip(_PEER_FIELDS, values, strict=True))
        self._port_bytes.pop(port, None)

    def set_port_fields(self, ports: Iterable[str], **values: Any) -> bool:
        changed = False
        for port in ports:
            payload = self.ports[port]
            for key, value in values.items():
                if payload.get(key) != value:
                    payload[key] = value
                    changed = True
                    self._port_bytes.pop(port, None)
        if changed:
            self.versions.bump("ports")
        return changed

    def set_link_width(self, link: LinkState, width: str) -> bool:
        changed = self.set_port_fields((link.a, link.b), active_width=width)
        if link.payload.get("width") != width:
            link.payload["width"] = width
            self._link_bytes.pop(link.name, None)
            self.versions.bump("links")
            changed = True
        return changed

    # ------------------------------------------------------------------------------------------ payloads

    def port_bytes(self, port: str) -> bytes:
        return _encoded(self._port_bytes, port, self.ports[port])

    def link_bytes(self, link: LinkState) -> bytes:
        return _encoded(self._link_bytes, link.name, link.payload)

    def system_bytes(self, guid: str) -> bytes:
        return _encoded(self._system_bytes, guid, self.systems[guid])

    def _cached(self, key: str, version: int, build: Iterable[bytes]) -> bytes:
        cached = self._lists.get(key)
        if cached is not None and cached[0] == version:
            return cached[1]
        data = b"[" + b",".join(build) + b"]"
        self._lists[key] = (version, data)
        return data

    def ports_json(self, system: str | None = None, active: bool = False, show_disabled: bool = True) -> bytes:
        if system is None and not active and show_disabled:
            return self._cached("ports", self.versions["ports"], (self.port_bytes(p) for p in self.ports))
        names: Iterable[str] = self.ports
        if system is not None:
            guid = self.resolve_system(system)
            names = self.system_ports.get(guid, []) if guid else []
        return b"[" + b",".join(
            self.port_bytes(p) for p in names
            if (not active or self.ports[p]["logical_state"] == "Active")
            and (show_disabled or p not in self.disabled)
        ) + b"]"

    def links_json(self, system: str | None = None) -> bytes:
        if system is None:
            return self._cached("links", self.versions["links"], (self.link_bytes(k) for k in self.up_links()))
        guid = self.resolve_system(system)
        ports = set(self.system_ports.get(guid, [])) if guid else set()
        return b"[" + b",".join(self.link_bytes(k) for k in self.up_links() if k.a in ports or k.b in ports) + b"]"

    def links_page(self, system: str | None, page: int, per_page: int) -> bytes:
        """One page (from 1) of the up links, as a bare JSON list."""
        links = self.up_links()
        if system is not None:
            guid = self.resolve_system(system)
            ports = set(self.system_ports.get(guid, [])) if guid else set()
            links = [k for k in links if k.a in ports or k.b in ports]
        chosen = links[(page - 1) * per_page: page * per_page]
        return b"[" + b",".join(self.link_bytes(k) for k in chosen) + b"]"

    def warm(self) -> None:
        """Encode every port, link and system once, so the first list request is as quick as the next."""
        self.ports_json()
        self.links_json()
        self.systems_json()

    def systems_json(self, kind: str | None = None) -> bytes:
        if kind is None:
            version = self.versions["switches"] * 1_000_003 + self.versions["servers"]
            return self._cached("systems", version, (self.system_bytes(g) for g in self.systems))
        wanted = kind.strip().lower()
        return b"[" + b",".join(self.system_bytes(g) for g, s in self.systems.items() if s["type"] == wanted) + b"]"

    def resolve_system(self, text: str) -> str | None:
        """A system GUID from a GUID (``0x`` and case tolerated) or a system name."""
        value = text.strip()
        guid = value.lower().removeprefix("0x")
        if guid in self.systems:
            return guid
        return self.system_by_name.get(value.casefold())


def _encoded(cache: dict[str, bytes], key: str, payload: object) -> bytes:
    """``payload`` as compact JSON, encoded once and kept in ``cache`` until the caller drops ``key``."""
    data = cache.get(key)
    if data is None:
        data = cache[key] = json.dumps(payload, separators=_COMPACT).encode()
    return data
