"""A fabric rendered as UFM's REST resources: ``/resources/systems``, ``/resources/ports``, ``/resources/links``.

The shapes follow the real payloads in NVIDIA's UFM SDK samples. GUIDs are derived from device names, so the
same plan always renders the same GUIDs; the demo writes these to disk and the UFM simulator serves them.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from topology.model import Cable, Device, End, Fabric, Tier
from topology.numerals import whole_number
from topology.ports import Kind
from topology.rates import LANE_GBPS

SITE = "default"
_OUI = "b8599f"  # a Mellanox OUI, so rendered GUIDs look like the ones operators see
_ROLE = {Tier.LEAF: "tor", Tier.SPINE: "spine", Tier.CORE: "core", Tier.HOST: "endpoint"}
_SWITCH_MODEL = "MQM9790"


def assign_guids(fabric: Fabric) -> dict[str, str]:
    """Device key -> node GUID, deterministic; devices that already have one keep it."""
    taken = {d.guid for d in fabric.devices.values() if d.guid}
    guids: dict[str, str] = {}
    for device in fabric.devices.values():
        if device.guid:
            guids[device.key] = device.guid
            continue
        salt = 0
        while True:
            digest = hashlib.blake2b(f"{device.key}#{salt}".encode(), digest_size=5).hexdigest()
            guid = _OUI + digest
            if guid not in taken:
                break
            salt += 1
        taken.add(guid)
        guids[device.key] = guid
    return guids


def speed_name(cable: Cable) -> str | None:
    """Per-lane generation name of a cable's rate (``NDR`` for 4 x 100 Gb/s)."""
    if not cable.speed_gbps or not cable.width:
        return None
    lane = cable.speed_gbps / cable.width
    return next((name for name, rate in LANE_GBPS.items() if abs(rate - lane) < 1e-6), None)


def port_number(label: str, ordinal: int) -> int:
    number = whole_number(label)
    return ordinal if number is None else number


@dataclass(frozen=True, slots=True)
class PortRef:
    name: str
    """UFM port name, ``<node guid>_<number>``."""
    guid: str
    number: int
    system_guid: str
    system_name: str
    dname: str
    node_description: str
    device: Device

    @property
    def is_switch(self) -> bool:
        return self.device.kind is Kind.SWITCH

    @property
    def kind_word(self) -> str:
        return "Switch" if self.is_switch else "Computer"

    @property
    def path(self) -> str:
        """The port's object path: ``default / Switch: leaf01 / NA / 16``."""
        return f"{SITE} / {self.kind_word}: {self.system_name} / NA / {self.dname}"

    @property
    def peer_info(self) -> str:
        """How UFM's threshold messages name a peer: ``Switch: leaf01 / 16``."""
        return f"{self.kind_word}: {self.system_name} / {self.dname}"

    @property
    def sm_name(self) -> str:
        """How OpenSM messages name a port: ``<node>:<label>`` (``T2-E63-L-U37:1/19/2``)."""
        return f"{self.system_name}:{self.dname}"

    @property
    def link_end(self) -> str:
        """One end as a link message writes it: ``(Switch:leaf01:16)b8599f0000000001:16``."""
        return f"({self.kind_word}:{self.system_name}:{self.dname}){self.guid}:{self.number}"


class UfmView:
    """Addresses of every device and port of a fabric as UFM would show them."""

    def __init__(self, fabric: Fabric) -> None:
        self.fabric = fabric
        self.guids = assign_guids(fabric)
        adapters: dict[str, list[Device]] = defaultdict(list)
        for device in fabric.devices.values():
            if device.kind is Kind.ADAPTER:
                adapters[device.host_name].append(device)
        self.hosts = dict(adapters)
        # A host system takes the GUID of its first adapter, as UFM shows it.
        self.system_of: dict[str, tuple[str, str]] = {}
        for host, devices in self.hosts.items():
            first = self.guids[devices[0].key]
            for device in devices:
                self.system_of[device.key] = (first, host)
        for device in fabric.switches():
            self.system_of[device.key] = (self.guids[device.key], device.name)
        self.ports: dict[End, PortRef] = {}
        ordinals: dict[str, int] = defaultdict(int)
        for cable in fabric.cables:
            for end in (cable.a, cable.b):
                ordinals[end.device] += 1
                self.ports[end] = self._port(end, ordinals[end.device])

    def _port(self, end: End, ordinal: int) -> PortRef:
        device = self.fabric.devices[end.device]
        guid = self.guids[device.key]
        number = port_number(end.port, ordinal)
        system_guid, system_name = self.system_of[device.key]
        if device.kind is Kind.SWITCH:
            description = f"{device.name}:{end.port}"
            dname = end.port
        else:
            description = device.name
            dname = f"HCA-{self._adapter_index(device) + 1}/{number}"
        return PortRef(f"{guid}_{number}", guid, number, system_guid, system_name, dname, description, device)

    def _adapter_index(self, device: Device) -> int:
        return self.hosts[device.host_name].index(device)


def named_as_ufm(fabric: Fabric) -> UfmView:
    """Set on ``fabric`` the GUIDs and port names UFM shows of it (``UfmView``), so that the plan stands for UFM's
    reading of itself (tests and benchmarks join it with itself as the engine joins the plan with UFM's reading);
    the view, for the names it gave."""
    view = UfmView(fabric)
    for key, guid in view.guids.items():
        fabric.devices[key].guid = guid
    fabric.port_names.update({ref.name: end for end, ref in view.ports.items()})
    return view


def render_systems(view: UfmView) -> list[dict[str, Any]]:
    ports_of: dict[str, list[str]] = defaultdict(list)
    for ref in sorted(view.ports.values(), key=lambda r: (r.system_guid, r.guid, r.number)):
        ports_of[ref.system_guid].append(ref.name)
    systems: list[dict[str, Any]] = []
    for device in view.fabric.switches():
        guid = view.guids[device.key]
        systems.append(_system(guid, device.name, "switch", _SWITCH_MODEL, _ROLE.get(device.tier, "switch"),
                               ports_of.get(guid, []), "NDR"))
    for host, adapters in view.hosts.items():
        guid = view.guids[adapters[0].key]
        systems.append(_system(guid, host, "host", "Computer", "endpoint", ports_of.get(guid, []), "Computer"))
    return systems


def _system(guid: str, name: str, kind: str, model: str, role: str, ports: list[str], tech: str) -> dict[str, Any]:
    return {
        "guid": guid, "system_guid": guid, "name": guid, "system_name": name, "type": kind,
        "model": model, "description": model if kind == "switch" else "server", "role": role,
        "ports": ports, "modules": [], "ip": "0.0.0.0", "state": "active", "severity": "Info",
        "technology": tech, "vendor": "Mellanox", "is_managed": True, "total_alarms": 0,
        "capabilities": ["burn_cables_transceivers"] if kind == "switch" else [],
        "fw_version": "N/A", "sw_version": "N/A", "psid": "N/A", "groups": [], "temperature": "N/A",
    }


def render_ports(view: UfmView) -> list[dict[str, Any]]:
    ports: list[dict[str, Any]] = []
    for end, ref in view.ports.items():
        cable = view.fabric.by_end[end]
        peer = view.ports[cable.other(end)]
        switch = ref.device.kind is Kind.SWITCH
        ports.append({
            "name": ref.name, "guid": ref.guid, "systemID": ref.system_guid, "system_name": ref.system_name,
            "number": ref.number, "external_number": ref.number, "dname": ref.dname,
            "node_description": ref.node_description,
            "description": "Switch IB Port" if switch else "Computer IB Port",
            "peer": peer.name, "peer_guid": peer.guid, "peer_node_guid": peer.guid,
            "peer_node_name": peer.system_name, "peer_node_description": peer.node_description,
            "peer_port_dname": peer.dname, "logical_state": "Active", "physical_state": "Link Up",
            "active_speed": speed_name(cable) or "N/A", "active_width": f"{cable.width}x" if cable.width else "N/A",
            "severity": "Info", "high_ber_severity": "N/A", "mtu": 4096, "module": "N/A", "mirror": "disable",
            "capabilities": ["healthy_operations", "reset", "disable", "get_cables_info"],
            "tier": {Tier.LEAF: 1, Tier.SPINE: 2, Tier.CORE: 3}.get(ref.device.tier, 0) if switch else 0,
            "path": ref.path,
        })
    return ports


def render_links(view: UfmView) -> list[dict[str, Any]]:
    links: list[dict[str, Any]] = []
    for cable in view.fabric.cables:
        src, dst = view.ports[cable.a], view.ports[cable.b]
        links.append({
            "name": f"{src.name}:{dst.name}",
            "source_guid": src.guid, "source_port": str(src.number), "source_port_dname": src.dname,
            "source_port_node_description": src.node_description,
            "destination_guid": dst.guid, "destination_port": str(dst.number),
            "destination_port_dname": dst.dname, "destination_port_node_description": dst.node_description,
            "width": f"{cable.width}x" if cable.width else "N/A",
            "severity": "Info", "capabilities": [], "cable_info": {},
        })
    return links


def write_ufm_snapshot(fabric: Fabric, directory: Path) -> UfmView:
    """Write ``systems.json``, ``ports.json`` and ``links.json`` as UFM's REST API returns them (compact)."""
    view = UfmView(fabric)
    directory.mkdir(parents=True, exist_ok=True)
    for name, payload in (("systems", render_systems(view)), ("ports", render_ports(view)),
                          ("links", render_links(view))):
        (directory / f"{name}.json").write_text(json.dumps(payload, separators=(",", ":")))
    return view
