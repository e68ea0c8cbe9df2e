"""Real UFM payloads from NVIDIA's UFM SDK (../shared/conformance) must parse into the models."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fabric.ufm.models import Link, Port, System, Versioning, parse_list
from fabric.ufm.objects import PortEnd

REPO_ROOT = Path(__file__).resolve().parents[2]
SAMPLES = (REPO_ROOT / ".." / "shared" / "conformance" / "ufm_sdk" / "ufm_samples").resolve()

pytestmark = pytest.mark.conformance


def load(name: str) -> Any:
    if not SAMPLES.is_dir():
        pytest.skip(f"UFM sample payloads not found at {SAMPLES} (../shared exists only on project machines)")
    return json.loads((SAMPLES / name).read_text())


def test_ports_sample() -> None:
    ports = parse_list(Port, load("ports.json"))
    assert [p.name for p in ports] == ["1c34da0300728606_1", "0c42a10300280000_1"]
    switch_port, host_port = ports
    assert switch_port.system_guid == "1c34da0300728606"
    assert switch_port.is_switch_port and not host_port.is_switch_port
    assert switch_port.physical_state == "Link Up" and not switch_port.is_disabled
    assert switch_port.peer == "0c42a103001b8256_1"
    assert host_port.dname == "HCA-1/1"
    assert "disable" in switch_port.capabilities
    # fields the model does not declare are kept
    assert switch_port.model_extra is not None
    assert switch_port.model_extra["system_capabilities"] == ["burn_cables_transceivers"]


def test_systems_sample() -> None:
    systems = parse_list(System, load("systems.json"))
    switch, host = systems
    assert switch.is_switch and switch.model == "MQM8700" and switch.system_name == "SLG01-02"
    assert not host.is_switch and host.type == "host"
    assert "1c34da0300728606_1" in switch.ports
    assert switch.known_ip is None


def test_links_sample() -> None:
    (link,) = parse_list(Link, load("links.json"))
    assert link.lanes == 4
    assert link.source == PortEnd("1c34da0300728606", 37)
    assert link.destination == PortEnd("1c34da0300728a06", 2)
    assert link.name == f"{link.source.name}:{link.destination.name}"


def test_versioning_sample() -> None:
    versioning = Versioning.model_validate(load("versioning.json"))
    assert versioning.ports_version == 272899
    versions = versioning.versions()
    assert versions["links_version"] == 121792
    assert versions["traps_version"] == 3572788  # an undeclared counter is kept


def test_samples_wrapped_in_data_parse_the_same() -> None:
    raw = load("ports.json")
    assert parse_list(Port, {"data": raw}) == parse_list(Port, raw)
