"""The UFM REST snapshot reader: small hand-written snapshots for each rule and error, then UFM's samples."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from topology.errors import InputError
from topology.formats.ufm_render import write_ufm_snapshot
from topology.formats.ufm_snapshot import fabric_from_ufm, read_ufm_snapshot
from topology.generate import PRESETS, fat_tree
from topology.model import Cable, End, Fabric
from topology.ports import Kind
from topology.strictjson import JsonError, loads

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
SAMPLES = SHARED / "conformance" / "ufm_sdk" / "ufm_samples"

LEAF, CHASSIS, LINE_CARD, SPINE_ASIC = "00000000000000a1", "00000000000000dd", "00000000000000d1", "00000000000000d2"
HCA0, HCA1, SHARP, STRANGER = "00000000000000b1", "00000000000000b2", "00000000000000e1", "00000000000000f1"


def system(guid: str, name: str, kind: str, ports: list[str]) -> dict[str, Any]:
    return {"guid": guid, "name": guid, "system_guid": guid, "system_name": name, "type": kind,
            "model": "MQM8700" if kind == "switch" else "Computer", "ports": ports, "state": "active"}


def link(src: str, sport: str, dst: str, dport: str, width: str | None = "4x", *,
         src_desc: str | None = None, dst_desc: str | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": f"{src}_{sport}:{dst}_{dport}",
        "source_guid": src, "source_port": sport, "source_port_dname": sport,
        "destination_guid": dst, "destination_port": dport, "destination_port_dname": dport,
        "severity": "Info", "capabilities": [], "cable_info": {},
    }
    if width is not None:
        entry["width"] = width
    if src_desc is not None:
        entry["source_port_node_description"] = src_desc
    if dst_desc is not None:
        entry["destination_port_node_description"] = dst_desc
    return entry


SYSTEMS = [
    system(LEAF, "leaf-1", "switch", [f"{LEAF}_1", f"{LEAF}_2", f"{LEAF}_21"]),
    system(CHASSIS, "dir-1", "switch", [f"{LINE_CARD}_20", f"{LINE_CARD}_21", f"{SPINE_ASIC}_1"]),
    system(HCA0, "host1", "host", [f"{HCA0}_1", f"{HCA1}_1"]),
]
LINKS = [
    # 0: host adapter named from ports.json (the link's description is ignored for it)
    link(LEAF, "1", HCA0, "1", "4x", src_desc="leaf-1:1", dst_desc="host1 HCA-1"),
    # 1: an adapter neither ports.json nor the link describes
    link(LEAF, "2", HCA1, "1", "4x", src_desc="leaf-1:2"),
    # 2: leaf -> line card 1, ASIC 1, port 20 of the director (older "IB_4x" width)
    link(LEAF, "21", LINE_CARD, "20", "IB_4x", src_desc="leaf-1:21", dst_desc="dir-1:L01/U1/20"),
    # 3: line card <-> internal spine ASIC: inside the chassis
    link(LINE_CARD, "21", SPINE_ASIC, "1", "4x", src_desc="dir-1:L01/U1/21", dst_desc="dir-1:S01/U1/1"),
    # 4: SHARP aggregation node: not cabling
    link(LEAF, "41", SHARP, "1", "4x", src_desc="leaf-1:41", dst_desc="Mellanox Technologies Aggregation Node"),
    # 5: a switch systems.json does not list, self-described by the link
    link(LEAF, "30", STRANGER, "5", None, src_desc="leaf-1:30", dst_desc="spine-9:5"),
]
PORTS = [
    {"name": f"{LEAF}_1", "guid": LEAF, "number": 1, "dname": "1", "node_description": "leaf-1:1",
     "active_speed": "HDR", "active_width": "4x", "description": "Switch IB Port", "system_name": "leaf-1"},
    {"name": f"{HCA0}_1", "guid": HCA0, "number": 1, "dname": "HCA-1/1", "node_description": "host1 mlx5_0",
     "active_speed": "HDR", "active_width": "4x", "description": "Computer IB Port", "system_name": "host1"},
    {"name": f"{LINE_CARD}_20", "guid": LINE_CARD, "number": 20, "dname": "20",
     "node_description": "dir-1:L01/U1/20", "active_speed": "NDR", "active_width": "4x"},
    {"name": f"{STRANGER}_5", "guid": STRANGER, "number": 5, "active_width": "2x"},
]


def snapshot(
    directory: Path,
    systems: Any = None,
    links: Any = None,
    ports: Any = None,
    *,
    with_ports: bool = True,
) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    documents = {"systems": SYSTEMS if systems is None else systems, "links": LINKS if links is None else links}
    if with_ports:
        documents["ports"] = PORTS if ports is None else ports
    for name, value in documents.items():
        (directory / f"{name}.json").write_text(value if isinstance(value, str) else json.dumps(value, indent=2))
    return directory


def cable_at(fabric: Fabric, device: str, port: str) -> Cable:
    return fabric.by_end[End(device.casefold(), port)]


def error_of(directory: Path) -> InputError:
    with pytest.raises(InputError) as info:
        read_ufm_snapshot(directory)
    return info.value


# --- the small snapshot ------------------------------------------------------------------------------


def test_devices_and_cables(tmp_path: Path) -> None:
    fabric = read_ufm_snapshot(snapshot(tmp_path / "snap"))

    assert fabric.source == str(tmp_path / "snap")
    assert {d.name: d.kind for d in fabric.devices.values()} == {
        "leaf-1": Kind.SWITCH,
        "dir-1": Kind.SWITCH,
        "spine-9": Kind.SWITCH,
        "host1 mlx5_0": Kind.ADAPTER,
        f"host1 {HCA1}": Kind.ADAPTER,
    }
    assert sorted(fabric.describe_cable(c) for c in fabric.cables) == [
        "leaf-1/Port 1 - host1 mlx5_0",
        f"leaf-1/Port 2 - host1 {HCA1}",
        "leaf-1/Port 21 - dir-1/Blade 1_Port 1/20",
        "leaf-1/Port 30 - spine-9/Port 5",
    ]
    assert End("leaf-1", "41") not in fabric.by_end  # the aggregation node's link is dropped
    assert cable_at(fabric, "leaf-1", "1").origin == f"{LEAF}_1:{HCA0}_1"


def test_guids_and_hosts(tmp_path: Path) -> None:
    fabric = read_ufm_snapshot(snapshot(tmp_path / "snap"))
    found = {guid: fabric.device_by_guid(guid) for guid in (LEAF, CHASSIS, LINE_CARD, HCA0, HCA1, STRANGER)}
    names = {guid: device.name if device else None for guid, device in found.items()}
    assert names == {
        LEAF: "leaf-1",
        CHASSIS: "dir-1",  # the director system's GUID; its ASICs' node GUIDs only map to it
        LINE_CARD: None,
        HCA0: "host1 mlx5_0",
        HCA1: f"host1 {HCA1}",
        STRANGER: "spine-9",
    }
    assert fabric.devices["host1 mlx5_0"].host == "host1"
    assert fabric.devices[f"host1 {HCA1}".casefold()].host == "host1"


def test_width_forms_and_speed_from_either_end(tmp_path: Path) -> None:
    fabric = read_ufm_snapshot(snapshot(tmp_path / "snap"))
    host = cable_at(fabric, "leaf-1", "1")  # "4x"; HDR on both ends in ports.json
    uplink = cable_at(fabric, "leaf-1", "21")  # "IB_4x"; only the director's end is in ports.json (NDR)
    unlisted = cable_at(fabric, "leaf-1", "2")  # "4x"; neither end in ports.json
    stranger = cable_at(fabric, "leaf-1", "30")  # no width: ports.json's active_width, no speed
    assert (host.width, host.speed_gbps) == (4, 200.0)
    assert (uplink.width, uplink.speed_gbps) == (4, 400.0)
    assert (unlisted.width, unlisted.speed_gbps) == (4, None)
    assert (stranger.width, stranger.speed_gbps) == (2, None)


def test_without_ports_json(tmp_path: Path) -> None:
    fabric = read_ufm_snapshot(snapshot(tmp_path / "snap", with_ports=False))
    # The adapter is now named by the link's own node description.
    assert cable_at(fabric, "leaf-1", "1").other(End("leaf-1", "1")) == End("host1 hca-1", "1")
    assert all(c.speed_gbps is None for c in fabric.cables)
    assert cable_at(fabric, "leaf-1", "21").width == 4


@pytest.mark.parametrize("wrapped", [(), ("systems",), ("links",), ("ports",), ("systems", "links", "ports")])
def test_data_wrapper_or_bare_list(tmp_path: Path, wrapped: tuple[str, ...]) -> None:
    documents: dict[str, Any] = {"systems": SYSTEMS, "links": LINKS, "ports": PORTS}
    for name in wrapped:
        documents[name] = {"data": documents[name]}
    fabric = read_ufm_snapshot(snapshot(tmp_path / "snap", **documents))
    bare = read_ufm_snapshot(snapshot(tmp_path / "bare"))
    assert sorted(c.key for c in fabric.cables) == sorted(c.key for c in bare.cables)
    assert len(fabric.cables) == 4


def test_fabric_from_decoded_json() -> None:
    fabric = fabric_from_ufm(copy.deepcopy(SYSTEMS), copy.deepcopy(LINKS), None, "https://ufm.example/ufmRest",
                             documents={"links": "GET /resources/links"})
    assert fabric.source == "https://ufm.example/ufmRest"
    assert len(fabric.cables) == 4
    bad = copy.deepcopy(LINKS)
    del bad[2]["destination_port"]
    with pytest.raises(InputError) as info:
        fabric_from_ufm(SYSTEMS, bad, None, "https://ufm.example/ufmRest",
                        documents={"links": "GET /resources/links"})
    assert str(info.value).startswith("GET /resources/links: field '[2].destination_port': ")
    with pytest.raises(InputError) as info:
        fabric_from_ufm([{"type": "switch"}], [], None, "https://ufm.example/ufmRest")
    assert info.value.source == "https://ufm.example/ufmRest/systems.json"


def test_same_link_listed_twice_is_read_once(tmp_path: Path) -> None:
    reverse = link(HCA0, "1", LEAF, "1", "4x", src_desc="host1 mlx5_0", dst_desc="leaf-1:1")
    fabric = read_ufm_snapshot(snapshot(tmp_path / "snap", links=[*LINKS, copy.deepcopy(LINKS[0]), reverse]))
    assert len(fabric.cables) == 4


def test_devices_sharing_a_name_are_told_apart(tmp_path: Path) -> None:
    other = "00000000000000a2"
    systems = [*SYSTEMS, system(other, "leaf-1", "switch", [f"{other}_1"])]
    links = [*LINKS, link(other, "1", HCA1, "2", src_desc="leaf-1:1")]
    fabric = read_ufm_snapshot(snapshot(tmp_path / "snap", systems, links))
    assert f"leaf-1 ({LEAF})" in [d.name for d in fabric.devices.values()]
    assert fabric.device_by_guid(other) is fabric.devices[f"leaf-1 ({other})"]
    assert cable_at(fabric, f"leaf-1 ({other})", "1").other(End(f"leaf-1 ({other})", "1")) == End(
        f"host1 {HCA1}".casefold(), "2")


def test_unknown_guid_adapter_from_its_description(tmp_path: Path) -> None:
    links = [*LINKS,
             link(LEAF, "31", "00000000000000f2", "1", src_desc="leaf-1:31", dst_desc="node7  mlx5_0"),
             link(LEAF, "32", "00000000000000f3", "1", src_desc="leaf-1:32", dst_desc="node8 mlx5_0:1")]
    fabric = read_ufm_snapshot(snapshot(tmp_path / "snap", links=links))
    node7, node8 = fabric.devices["node7 mlx5_0"], fabric.devices["node8 mlx5_0"]
    assert (node7.kind, node7.host, node7.guid) == (Kind.ADAPTER, "node7", "00000000000000f2")
    assert (node8.kind, node8.host) == (Kind.ADAPTER, "node8")
    assert cable_at(fabric, "leaf-1", "32").other(End("leaf-1", "32")) == End("node8 mlx5_0", "1")


def test_director_port_from_dname_when_description_has_no_asic(tmp_path: Path) -> None:
    links = [link(LEAF, "21", LINE_CARD, "20", dst_desc="dir-1:20")]
    links[0]["destination_port_dname"] = "Blade 1_Port 1/20"
    fabric = read_ufm_snapshot(snapshot(tmp_path / "snap", links=links))
    assert cable_at(fabric, "leaf-1", "21").other(End("leaf-1", "21")) == End("dir-1", "Blade 1_Port 1/20")


# --- errors ------------------------------------------------------------------------------------------


def test_missing_documents(tmp_path: Path) -> None:
    directory = snapshot(tmp_path / "snap")
    (directory / "links.json").unlink()
    assert error_of(directory).source == str(directory / "links.json")
    (directory / "systems.json").unlink()
    assert error_of(directory).source == str(directory / "systems.json")
    error = error_of(tmp_path / "nowhere")
    assert error.source == str(tmp_path / "nowhere")
    assert "not a directory" in error.message


def test_invalid_json_names_line_and_column(tmp_path: Path) -> None:
    directory = snapshot(tmp_path / "snap", links='[\n  {"name": "x",\n   "width": 4x}\n]')
    error = error_of(directory)
    assert error.source == str(directory / "links.json")
    assert error.line == 3
    assert "invalid JSON" in error.message and "column 14" in error.message


@pytest.mark.parametrize(("document", "value", "column", "text"), [
    ("systems", {"systems": []}, None, "expected a JSON list"),
    ("systems", "42", None, "expected a JSON list"),
    ("links", {"data": {"0": {}}}, "data", "expected a list"),
    ("links", [LINKS[0], "oops"], "[1]", "expected an object"),
    ("ports", [{"guid": LEAF}], "[0].name", "missing required field"),
    ("ports", [{"name": "leaf-1 port 1"}], "[0].name", "not a UFM port name"),
    # Sixteen lower-case letters that are not hex, and a port with a space: not taken as already canonical.
    ("ports", [{"name": "ghijklmnopqrstuv_1"}], "[0].name", "not a UFM port name"),
    ("ports", [{"name": "0123456789abcdef_1 2"}], "[0].name", "not a UFM port name"),
])
def test_document_shape_errors(tmp_path: Path, document: str, value: Any, column: str | None, text: str) -> None:
    directory = snapshot(tmp_path / "snap", **{document: value})
    error = error_of(directory)
    assert error.source == str(directory / f"{document}.json")
    assert error.column == column
    assert text in error.message


def without(entries: list[dict[str, Any]], index: int, field: str) -> list[dict[str, Any]]:
    copied = copy.deepcopy(entries)
    del copied[index][field]
    return copied


def changed(entries: list[dict[str, Any]], index: int, **fields: Any) -> list[dict[str, Any]]:
    copied = copy.deepcopy(entries)
    copied[index].update(fields)
    return copied


@pytest.mark.parametrize(("document", "value", "column", "text"), [
    ("systems", without(SYSTEMS, 2, "guid"), "[2].guid", "missing required field"),
    ("systems", without(SYSTEMS, 0, "system_name"), "[0].system_name", "missing required field"),
    ("systems", without(SYSTEMS, 1, "type"), "[1].type", "missing required field"),
    ("systems", changed(SYSTEMS, 1, system_name="  "), "[1].system_name", "empty required field"),
    ("systems", changed(SYSTEMS, 0, guid="leaf-1"), "[0].guid", "not a GUID"),
    ("systems", changed(SYSTEMS, 0, guid=161), "[0].guid", "found a number"),
    ("systems", changed(SYSTEMS, 0, ports="all"), "[0].ports", "expected a list"),
    ("systems", changed(SYSTEMS, 0, ports=[f"{LEAF}_1", 7]), "[0].ports[1]", "not a UFM port name"),
    ("links", without(LINKS, 0, "source_guid"), "[0].source_guid", "missing required field"),
    ("links", without(LINKS, 3, "destination_port"), "[3].destination_port", "missing required field"),
    ("links", changed(LINKS, 1, destination_port=[1]), "[1].destination_port", "expected a string"),
    ("links", changed(LINKS, 0, width="wide"), "[0].width", "unreadable link width"),
    ("links", changed(LINKS, 2, source_port="x", source_port_dname="y", source_port_node_description="leaf-1:z"),
     "[2].source_port",
     "cannot read a switch port label"),
])
def test_field_errors(tmp_path: Path, document: str, value: Any, column: str, text: str) -> None:
    directory = snapshot(tmp_path / "snap", **{document: value})
    error = error_of(directory)
    assert error.source == str(directory / f"{document}.json")
    assert error.column == column
    assert text in error.message
    assert str(error).startswith(f"{directory / document}.json: field '{column}': ")


def test_field_path_inside_the_data_wrapper(tmp_path: Path) -> None:
    directory = snapshot(tmp_path / "snap", systems={"data": without(SYSTEMS, 1, "guid")})
    assert error_of(directory).column == "data[1].guid"


def test_guid_claimed_by_two_systems(tmp_path: Path) -> None:
    systems = [*SYSTEMS, system(LEAF, "leaf-2", "switch", [])]
    error = error_of(snapshot(tmp_path / "a", systems))
    assert error.column == "[3].guid"
    assert f"GUID {LEAF} is claimed by two systems: 'leaf-1' ([0].guid) and 'leaf-2'" in error.message
    # An adapter (node) GUID listed in the ports of two systems.
    systems = [*SYSTEMS, system("00000000000000c1", "host2", "host", [f"{HCA1}_1"])]
    error = error_of(snapshot(tmp_path / "b", systems))
    assert error.column == "[3].ports[0]"
    assert "[2].ports[1]" in error.message


def test_link_to_an_unknown_guid_without_a_description(tmp_path: Path) -> None:
    links = [*LINKS, link(LEAF, "31", "00000000000000f2", "1")]
    error = error_of(snapshot(tmp_path / "snap", links=links))
    assert error.column == "[6].destination_guid"
    assert "belongs to no system" in error.message


def test_unknown_guid_described_as_a_switch_and_as_an_adapter(tmp_path: Path) -> None:
    links = [*LINKS, link(LEAF, "31", STRANGER, "6", src_desc="leaf-1:31", dst_desc="node7 mlx5_0")]
    error = error_of(snapshot(tmp_path / "snap", links=links))
    assert error.column == "[6].destination_port_node_description"


def test_unknown_guid_described_as_an_adapter_then_a_switch(tmp_path: Path) -> None:
    links = [*LINKS,
             link(LEAF, "31", "00000000000000f2", "1", src_desc="leaf-1:31", dst_desc="node7 mlx5_0"),
             link(LEAF, "32", "00000000000000f2", "2", src_desc="leaf-1:32", dst_desc="node7:2")]
    error = error_of(snapshot(tmp_path / "snap", links=links))
    assert error.column == "[7].destination_port_node_description"


def test_port_cabled_twice(tmp_path: Path) -> None:
    links = [*LINKS, link(LEAF, "1", LINE_CARD, "5", src_desc="leaf-1:1", dst_desc="dir-1:L01/U1/5")]
    error = error_of(snapshot(tmp_path / "snap", links=links))
    assert error.source == str(tmp_path / "snap" / "links.json")
    assert error.column == "[6]"
    assert "leaf-1/Port 1 is cabled twice" in error.message and "[0]" in error.message


def test_port_cabled_twice_names_the_first_link_though_listed_again(tmp_path: Path) -> None:
    again = link(HCA0, "1", LEAF, "1", dst_desc="leaf-1:1")  # link [0] from its other end: read once
    links = [*LINKS, again, link(LEAF, "1", LINE_CARD, "5", src_desc="leaf-1:1", dst_desc="dir-1:L01/U1/5")]
    error = error_of(snapshot(tmp_path / "snap", links=links))
    assert error.column == "[7]"
    assert "is cabled twice (also on link [0] " in error.message


def test_internal_spine_asic_linked_outside_its_chassis(tmp_path: Path) -> None:
    links = [*LINKS, link(LEAF, "40", SPINE_ASIC, "2", src_desc="leaf-1:40", dst_desc="dir-1:S01/U1/2")]
    error = error_of(snapshot(tmp_path / "snap", links=links))
    assert error.column == "[6]"
    assert "internal spine ASIC" in error.message


# --- input that used to crash the reader -------------------------------------------------------------------

HUGE = "9" * 5000


@pytest.mark.parametrize("document", ["systems", "links", "ports"])
def test_json_nested_too_deeply_or_with_too_long_a_number(tmp_path: Path, document: str) -> None:
    error = error_of(snapshot(tmp_path / "deep", **{document: "[" * 100_000}))
    assert error.source == str(tmp_path / "deep" / f"{document}.json")
    assert error.message == "invalid JSON: nested deeper than 100 levels"
    error = error_of(snapshot(tmp_path / "long", **{document: f"[{HUGE}]"}))
    assert error.source == str(tmp_path / "long" / f"{document}.json")
    assert error.message == "invalid JSON: a number of more than 4300 digits"


def test_a_key_given_twice_nan_or_infinity_is_refused_naming_the_document_and_field(tmp_path: Path) -> None:
    """Read last-wins, a link end's port given twice was the second one's: a false wrong_port."""
    text = json.dumps(LINKS, indent=2)
    twice = text.replace('"source_port": "21",', '"source_port": "21", "source_port": "22",', 1)
    assert twice != text
    error = error_of(snapshot(tmp_path / "twice", links=twice))
    assert str(error) == f"{tmp_path / 'twice' / 'links.json'}: field '[2].source_port': duplicate key 'source_port'"
    nan = json.dumps(PORTS).replace('"number": 20', '"number": NaN', 1)
    error = error_of(snapshot(tmp_path / "nan", ports=nan))
    assert (error.column, error.message) == ("[2].number", "NaN is not a number JSON has")
    infinite = json.dumps(PORTS).replace('"number": 20', '"number": 1e999', 1)
    assert error_of(snapshot(tmp_path / "inf", ports=infinite)).column == "[2].number"


def test_a_control_character_in_a_system_name_is_kept_for_verify_to_flag(tmp_path: Path) -> None:
    """UFM says what the fabric calls itself: the name is read as it is (a plan's is refused: ``Fabric.plan``)."""
    systems = json.dumps(SYSTEMS).replace('"leaf-1"', '"leaf\\u0000-1"', 1)
    fabric = read_ufm_snapshot(snapshot(tmp_path / "nul", systems=systems))
    assert "leaf\x00-1" in {device.name for device in fabric.devices.values()}


@pytest.mark.parametrize(("value", "column", "text"), [
    (changed(LINKS, 0, source_port_dname=HUGE), "[0].source_port_dname", "port number '9999"),  # leaf end
    (changed(LINKS, 0, source_port_dname="x", source_port=HUGE), "[0].source_port", "port number '9999"),
    (changed(LINKS, 0, destination_port=HUGE), "[0].destination_port", "port number '9999"),  # adapter end
    (changed(LINKS, 1, destination_port="x", destination_port_dname="HCA-1/" + HUGE), "[1].destination_port",
     "out of range"),
    (changed(LINKS, 2, destination_port_node_description=f"dir-1:L{HUGE}/U1/20"),
     "[2].destination_port_node_description", "out of range"),
    (changed(LINKS, 5, destination_port_node_description=f"spine-9:{HUGE}"), "[5].destination_port_node_description",
     "out of range"),
    (changed(LINKS, 0, width=f"{HUGE}x"), "[0].width", "unreadable link width"),
    (changed(LINKS, 0, width="16x"), "[0].width", "unreadable link width"),
])
def test_numbers_out_of_range_name_the_field(tmp_path: Path, value: Any, column: str, text: str) -> None:
    error = error_of(snapshot(tmp_path / "snap", links=value))
    assert (error.source, error.column) == (str(tmp_path / "snap" / "links.json"), column)
    assert text in error.message and "\n" not in str(error) and len(str(error)) < 400


# --- fuzzing: whatever the documents hold, a fabric or an InputError naming one of them -----------------------

ODD_VALUES = st.sampled_from([HUGE, f"Port {HUGE}", "-4x", "16x", "N/A", f"dir-1:L{HUGE}/U1/2", f"{LEAF}_{HUGE}",
                              LEAF, "²", f"HCA-1/{HUGE}", f"leaf-1:{HUGE}"])
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20) | ODD_VALUES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)
FIELDS = sorted({key for entries in (SYSTEMS, LINKS, PORTS) for entry in entries for key in entry})
PORT_FIELDS = sorted(key for key in FIELDS if "port" in key or key in ("dname", "width"))


@st.composite
def mutated_documents(draw: st.DrawFn) -> dict[str, Any]:
    """The small snapshot's documents with fields set to odd JSON, deleted, entries replaced or dropped."""
    documents = {"systems": copy.deepcopy(SYSTEMS), "links": copy.deepcopy(LINKS), "ports": copy.deepcopy(PORTS)}
    for _ in range(draw(st.integers(1, 4))):
        entries = documents[draw(st.sampled_from(sorted(documents)))]
        if not entries:
            continue
        at = draw(st.integers(0, len(entries) - 1))
        action = draw(st.sampled_from(["set", "set", "delete", "replace", "drop"]))
        entry = entries[at]
        if action == "set" and isinstance(entry, dict):
            entry[draw(st.sampled_from(PORT_FIELDS) | st.sampled_from(FIELDS))] = draw(ODD_VALUES | JSON_VALUES)
        elif action == "delete" and isinstance(entry, dict) and entry:
            del entry[draw(st.sampled_from(sorted(entry)))]
        elif action == "replace":
            entries[at] = draw(JSON_VALUES)
        else:
            del entries[at]
    if draw(st.booleans()):
        name = draw(st.sampled_from(sorted(documents)))
        documents[name] = draw(JSON_VALUES)
    return documents


@settings(max_examples=300, deadline=None)
@given(mutated_documents())
def test_any_documents_are_a_fabric_or_an_input_error_naming_one(documents: dict[str, Any]) -> None:
    names = {name: f"snap/{name}.json" for name in documents}
    try:
        fabric_from_ufm(documents["systems"], documents["links"], documents["ports"], "snap", documents=names)
    except InputError as exc:
        assert exc.source in (*names.values(), "snap"), str(exc)
        assert "\n" not in str(exc)


def built(documents: dict[str, Any]) -> object:
    try:
        fabric = fabric_from_ufm(documents["systems"], documents["links"], documents["ports"], "snap")
    except InputError as exc:
        return str(exc)
    devices = [(d.name, d.kind, d.guid, d.host, d.origin, d.tier) for d in fabric.devices.values()]
    return devices, fabric.cables, fabric.port_names


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["systems", "links", "ports"]),
       st.sampled_from([b"[" * 100_000, b"[" + HUGE.encode() + b"]", b'{"data": ' + b"{" * 50_000])
       | st.binary(max_size=200))
def test_any_bytes_in_a_document_are_an_input_error_naming_it(tmp_path_factory: pytest.TempPathFactory,
                                                             document: str, data: bytes) -> None:
    directory = tmp_path_factory.getbasetemp() / "fuzz-snapshot"
    if not directory.exists():
        snapshot(directory)
    original = (directory / f"{document}.json").read_bytes()
    (directory / f"{document}.json").write_bytes(data)
    try:
        read_ufm_snapshot(directory)
    except InputError as exc:
        assert exc.source is not None and exc.source.startswith(str(directory))
    finally:
        (directory / f"{document}.json").write_bytes(original)


# --- UFM's own samples (Mellanox/ufm_sdk_3.0, NDT plugin) --------------------------------------------


def require_samples() -> None:
    if not (SAMPLES / "systems.json").is_file():
        pytest.skip(f"conformance data not found at {SAMPLES} (the shared checkout is absent)")


@pytest.mark.conformance
def test_ufm_samples_load() -> None:
    require_samples()
    fabric = read_ufm_snapshot(SAMPLES)
    # systems.json lists SLG01-02 and the host luna-0218; links.json holds one link, SLG01-02 port 37 to
    # SSPINE1-13 port 2, whose GUID no system owns: the switch is built from the link's own description.
    assert sorted(d.name for d in fabric.devices.values()) == ["SLG01-02", "SSPINE1-13"]
    assert fabric.devices["slg01-02"].guid == "1c34da0300728606"
    assert fabric.devices["sspine1-13"].guid == "1c34da0300728a06"
    assert [fabric.describe_cable(c) for c in fabric.cables] == ["SLG01-02/Port 37 - SSPINE1-13/Port 2"]
    cable = fabric.cables[0]
    # ports.json holds neither end of this link: width from the link, speed unknown.
    assert (cable.width, cable.speed_gbps) == (4, None)
    assert cable.origin == "1c34da0300728606_37:1c34da0300728a06_2"


@pytest.mark.conformance
def test_ufm_samples_wrapped_with_speed(tmp_path: Path) -> None:
    require_samples()
    directory = tmp_path / "snap"
    shutil.copytree(SAMPLES, directory)
    links = json.loads((directory / "links.json").read_text())
    links[0]["width"] = "IB_4x"
    (directory / "links.json").write_text(json.dumps({"data": links}))
    ports = json.loads((directory / "ports.json").read_text())
    ports[0] = {**ports[0], "name": "1c34da0300728606_37", "number": 37, "dname": "37"}
    (directory / "ports.json").write_text(json.dumps({"data": ports}))
    cable = read_ufm_snapshot(directory).cables[0]
    assert (cable.width, cable.speed_gbps) == (4, 200.0)  # 4 lanes of HDR


def test_ufm_port_names_map_to_ends(tmp_path: Path) -> None:
    plan = fat_tree(PRESETS["tiny"])
    view = write_ufm_snapshot(plan, tmp_path)
    fabric = read_ufm_snapshot(tmp_path)
    assert len(fabric.port_names) == 2 * len(plan.cables)
    assert all(fabric.port_names[ref.name] == end for end, ref in view.ports.items())


def test_an_uncabled_switch_port_keeps_its_name_from_dname_or_number(tmp_path: Path) -> None:
    """Read from disk: dname first, then number, then the name."""
    ports = [*PORTS, {"name": f"{LEAF}_9", "dname": "1/2/1", "number": 9, "system_name": "leaf-1"},
             {"name": f"{LEAF}_10", "number": 12, "system_name": "leaf-1"}, {"name": f"{LEAF}_11"}]
    fabric = read_ufm_snapshot(snapshot(tmp_path, ports=ports))
    assert fabric.port_names[f"{LEAF}_9"] == End("leaf-1", "1/2/1")
    assert fabric.port_names[f"{LEAF}_10"] == End("leaf-1", "12")
    assert fabric.port_names[f"{LEAF}_11"] == End("leaf-1", "11")


# A port that is no port of the small snapshot's cables, repeated past the first pieces of ``file_items``.
_FILLER = json.dumps({"name": f"{STRANGER}_1", "guid": STRANGER, "number": 1, "dname": "1",
                      "node_description": "x" * 200})


@pytest.mark.parametrize(("fault", "told"), [
    (f'{{"name": "{STRANGER}_2", "number": NaN}}', ": field '[3000].number': NaN is not a number JSON has"),
    (f'{{"name": "{STRANGER}_2", "name": "{STRANGER}_3"}}', ": field '[3000].name': duplicate key 'name'"),
    ("17", ": field '[3000]': expected an object, found int"),
    (f'{{"name": "{STRANGER}_2", "number": 4x}}', ":1: invalid JSON: Expecting ',' delimiter (column 930044)"),
    ('{"name": "\xe9"}', None),
])
def test_a_fault_far_into_a_document_read_in_pieces_is_told_as_the_whole_documents_decoding_tells_it(
        tmp_path: Path, fault: str, told: str | None) -> None:
    """ports.json, some 0.9 MB, is decoded a piece at a time; the element after the 3,000th is faulty."""
    directory = snapshot(tmp_path / "snap")
    data = ("[" + ",".join([_FILLER] * 3000 + [fault] + [_FILLER] * 10) + "]").encode("latin-1")
    (directory / "ports.json").write_bytes(data)
    if told is None:  # not UTF-8: said as the whole document's decoding says it
        whole = strictjson_error(data)
        told = f": invalid JSON: {whole.msg}"
    assert str(error_of(directory)) == f"{directory / 'ports.json'}{told}"


def strictjson_error(body: bytes) -> JsonError:
    with pytest.raises(JsonError) as info:
        loads(body)
    return info.value
