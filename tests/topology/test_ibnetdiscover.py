"""The ibnetdiscover reader: hand-written dumps for each rule and error, then the published director dump."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from topology.errors import InputError
from topology.formats.ibnetdiscover import parse_ibnetdiscover, read_ibnetdiscover
from topology.model import Cable, End, Fabric
from topology.ports import DirectorAsic, Kind, blade_port, director_asic, switch_port

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
NDT = SHARED / "conformance" / "ufm_sdk" / "ndt"
DUMP = NDT / "ibnetdiscover_director.txt"

# A leaf switch with two hosts, an uplink to line card 1 of a director and a SHARP aggregation node; the
# director's line card also talks to the chassis' internal spine ASIC.
SMALL = [
    "=~=~=~=~=~=~=~=~=~=~=~= PuTTY log 2021.06.15 12:06:05 =~=~=~=~=~=~=~=~=~=~=~=",  # 1
    "\r",  # 2 (a stray CR, as in the real capture)
    "#",  # 3
    "# Topology file: generated on Tue Jun 15 19:06:08 2021",  # 4
    "",  # 5
    "vendid=0x2c9",  # 6
    "devid=0xd2f0",  # 7
    "sysimgguid=0xa1",  # 8
    "switchguid=0xa1(a1)",  # 9
    'Switch\t41 "S-00000000000000a1"\t\t# "MF0;leaf-1:MQM8700/U1" enhanced port 0 lid 3 lmc 0',  # 10
    '[1]\t"H-00000000000000b1"[1](b1) \t\t# "host1 mlx5_0" lid 4 4xHDR',  # 11
    '[2]\t"H-00000000000000b2"[1](b2) \t\t# "host2 mlx5_0" lid 5 4xHDR',  # 12
    '[21]\t"S-00000000000000d1"[20]\t\t# "MF0;dir-1:MCS8500/L01/U1" lid 6 4xHDR',  # 13
    '[41]\t"H-00000000000000e1"[1](e1) \t\t# "Mellanox Technologies Aggregation Node" lid 7 4xHDR',  # 14
    "",  # 15
    "vendid=0x2c9",  # 16
    "sysimgguid=0xdd",  # 17
    "switchguid=0xd1(d1)",  # 18
    'Switch41 "S-00000000000000d1"# "MF0;dir-1:MCS8500/L01/U1" base port 0 lid 6 lmc 0',  # 19
    '[20]"S-00000000000000a1"[21]# "MF0;leaf-1:MQM8700/U1" lid 3 4xHDR',  # 20
    '[21]"S-00000000000000d2"[1]# "MF0;dir-1:MCS8500/S01/U1" lid 8 4xHDR',  # 21
    "",  # 22
    "vendid=0x2c9",  # 23
    "sysimgguid=0xdd",  # 24
    "switchguid=0xd2(d2)",  # 25
    'Switch41 "S-00000000000000d2"# "MF0;dir-1:MCS8500/S01/U1" base port 0 lid 8 lmc 0',  # 26
    '[1]"S-00000000000000d1"[21]# "MF0;dir-1:MCS8500/L01/U1" lid 6 4xHDR',  # 27
    "",  # 28
    "vendid=0x2c9",  # 29
    "caguid=0xb1",  # 30
    'Ca\t1 "H-00000000000000b1"\t\t# "host1 mlx5_0"',  # 31
    '[1](b1) \t"S-00000000000000a1"[1]\t\t# lid 4 lmc 0 "MF0;leaf-1:MQM8700/U1" lid 3 4xHDR',  # 32
    "",  # 33
    "caguid=0xb2",  # 34
    'Ca  1 "H-00000000000000b2"# "host2 mlx5_0"',  # 35
    '[1](b2) "S-00000000000000a1"[2]# lid 5 lmc 0 "MF0;leaf-1:MQM8700/U1" lid 3 4xHDR',  # 36
    "",  # 37
    "caguid=0xe1",  # 38
    'Ca  1 "H-00000000000000e1"# "Mellanox Technologies Aggregation Node"',  # 39
    '[1](e1) "S-00000000000000a1"[41]# lid 7 lmc 0 "MF0;leaf-1:MQM8700/U1" lid 3 4xHDR',  # 40
    "\rufm-01 [ mgmt-ha-active ] (config) # ",  # 41
]


def write(tmp_path: Path, lines: list[str], newline: str = "\r\n") -> Path:
    path = tmp_path / "ibnetdiscover.txt"
    path.write_bytes(newline.join(lines).encode())
    return path


def cable_between(fabric: Fabric, device: str, port: str) -> Cable:
    return fabric.by_end[End(device.casefold(), port)]


def replaced(lines: list[str], number: int, text: str) -> list[str]:
    """``lines`` with 1-based line ``number`` replaced."""
    out = list(lines)
    out[number - 1] = text
    return out


def error_of(tmp_path: Path, lines: list[str]) -> InputError:
    path = write(tmp_path, lines)
    with pytest.raises(InputError) as info:
        read_ibnetdiscover(path)
    assert info.value.source == str(path)
    return info.value


# --- the small dump ----------------------------------------------------------------------------------


def test_small_dump_devices_and_cables(tmp_path: Path) -> None:
    fabric = read_ibnetdiscover(write(tmp_path, SMALL))

    assert fabric.source == str(tmp_path / "ibnetdiscover.txt")
    assert sorted(d.name for d in fabric.devices.values()) == ["dir-1", "host1 mlx5_0", "host2 mlx5_0", "leaf-1"]
    assert {d.name: d.kind for d in fabric.devices.values()} == {
        "leaf-1": Kind.SWITCH, "dir-1": Kind.SWITCH, "host1 mlx5_0": Kind.ADAPTER, "host2 mlx5_0": Kind.ADAPTER,
    }
    assert fabric.devices["host1 mlx5_0"].host == "host1"
    assert fabric.devices["leaf-1"].host is None
    # Three cables: two host links and the uplink to the director; the aggregation node and the link
    # inside the director chassis are not cables.
    assert sorted(fabric.describe_cable(c) for c in fabric.cables) == [
        "leaf-1/Port 1 - host1 mlx5_0",
        "leaf-1/Port 2 - host2 mlx5_0",
        "leaf-1/Port 21 - dir-1/Blade 1_Port 1/20",
    ]
    uplink = cable_between(fabric, "leaf-1", "21")
    assert uplink.other(End("leaf-1", "21")) == End("dir-1", "Blade 1_Port 1/20")
    assert (uplink.width, uplink.speed_gbps) == (4, 200.0)
    # Recorded once, from the side seen first; line numbers count LF-terminated lines.
    assert uplink.origin == f"{fabric.source}:13"
    assert cable_between(fabric, "host1 mlx5_0", "1").origin == f"{fabric.source}:11"
    assert End("leaf-1", "41") not in fabric.by_end


def test_small_dump_guids(tmp_path: Path) -> None:
    fabric = read_ibnetdiscover(write(tmp_path, SMALL))
    by_guid = {name: fabric.device_by_guid(guid) for name, guid in
               [("leaf", "a1"), ("chassis", "dd"), ("asic", "d1"), ("spine", "d2"), ("hca", "0xB1")]}
    assert by_guid["leaf"] is not None and by_guid["leaf"].name == "leaf-1"
    # The director claims its system image GUID (once, for all its ASICs), not the ASICs' node GUIDs.
    assert by_guid["chassis"] is not None and by_guid["chassis"].name == "dir-1"
    assert by_guid["asic"] is None and by_guid["spine"] is None
    assert by_guid["hca"] is not None and by_guid["hca"].name == "host1 mlx5_0"


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_line_endings(tmp_path: Path, newline: str) -> None:
    fabric = read_ibnetdiscover(write(tmp_path, [line.strip("\r") for line in SMALL], newline))
    assert len(fabric.cables) == 3


def test_parse_takes_lines_with_their_endings() -> None:
    fabric = parse_ibnetdiscover((line + "\r\n" for line in SMALL), "capture.log")
    assert fabric.source == "capture.log"
    assert len(fabric.cables) == 3
    assert cable_between(fabric, "leaf-1", "2").origin == "capture.log:12"


def test_switch_description_without_mf0_is_the_name(tmp_path: Path) -> None:
    lines = replaced(SMALL, 10, 'Switch 41 "S-00000000000000a1" # "Quantum  Mellanox Technologies" enhanced port 0')
    fabric = read_ibnetdiscover(write(tmp_path, lines))
    assert fabric.devices["quantum mellanox technologies"].guid == "00000000000000a1"
    # The hosts' port lines still quote the old description; names come from each node's own block (by
    # GUID), so the leaf is one device under the name its block gives.
    assert "leaf-1" not in fabric.devices
    assert cable_between(fabric, "Quantum Mellanox Technologies", "1").other(
        End("quantum mellanox technologies", "1")) == End("host1 mlx5_0", "1")


def test_adapters_sharing_a_description_are_told_apart_by_guid(tmp_path: Path) -> None:
    lines = replaced(SMALL, 31, 'Ca 1 "H-00000000000000b1" # "MT4123 ConnectX6   Mellanox Technologies"')
    lines = replaced(lines, 35, 'Ca 1 "H-00000000000000b2" # "MT4123 ConnectX6   Mellanox Technologies"')
    fabric = read_ibnetdiscover(write(tmp_path, lines))
    first = fabric.devices["mt4123 connectx6 mellanox technologies (00000000000000b1)"]
    second = fabric.devices["mt4123 connectx6 mellanox technologies (00000000000000b2)"]
    assert (first.guid, second.guid) == ("00000000000000b1", "00000000000000b2")
    assert first.host is None and second.host is None
    assert cable_between(fabric, "leaf-1", "2").other(End("leaf-1", "2")).device == second.key


def test_link_to_a_node_without_a_block_is_kept_from_one_side(tmp_path: Path) -> None:
    lines = [*SMALL[:34], "\r", "ufm-01 # "]  # the capture stops after host1's block
    fabric = read_ibnetdiscover(write(tmp_path, lines))
    host2 = fabric.devices["host2 mlx5_0"]
    assert host2.kind is Kind.ADAPTER and host2.guid is None
    assert cable_between(fabric, "host2 mlx5_0", "1").origin == f"{fabric.source}:12"


def test_second_hca_port_keeps_its_number() -> None:
    lines = [
        'Switch 41 "S-00000000000000a1" # "MF0;leaf-1:MQM8700/U1" enhanced port 0 lid 3 lmc 0',
        '[1] "H-00000000000000b1"[1](b1) # "host1 mlx5_0" lid 4 4xHDR',
        '[2] "H-00000000000000b1"[2](b1) # "host1 mlx5_0" lid 4 4xHDR',
        "",
        'Ca 2 "H-00000000000000b1" # "host1 mlx5_0"',
        '[2](b1) "S-00000000000000a1"[2] # lid 4 lmc 0 "MF0;leaf-1:MQM8700/U1" lid 3 4xHDR',
        '[1](b1) "S-00000000000000a1"[1] # lid 4 lmc 0 "MF0;leaf-1:MQM8700/U1" lid 3 4xHDR',
    ]
    fabric = parse_ibnetdiscover(lines, "dump")
    assert cable_between(fabric, "host1 mlx5_0", "2").other(End("host1 mlx5_0", "2")) == End("leaf-1", "2")
    assert cable_between(fabric, "host1 mlx5_0", "1").other(End("host1 mlx5_0", "1")) == End("leaf-1", "1")
    assert len(fabric.cables) == 2


def test_speed_from_width_and_generation(tmp_path: Path) -> None:
    lines = replaced(SMALL, 11, '[1]\t"H-00000000000000b1"[1](b1) \t\t# "host1 mlx5_0" lid 4 2xNDR')
    lines = replaced(lines, 32, '[1](b1) "S-00000000000000a1"[1]# lid 4 lmc 0 "MF0;leaf-1:MQM8700/U1" lid 3 2xNDR')
    fabric = read_ibnetdiscover(write(tmp_path, lines))
    cable = cable_between(fabric, "leaf-1", "1")
    assert (cable.width, cable.speed_gbps) == (2, 200.0)


@pytest.mark.parametrize(("text", "expected"), [
    ("MCS8500/L16/U2", (DirectorAsic(False, 16, 2), None)),
    ("L06/U1/20", (DirectorAsic(False, 6, 1), 20)),
    ("MCS8500/S01/U1", (DirectorAsic(True, 1, 1), None)),
    ("MQM8700/U1", None),
    ("37", None),
])
def test_director_asic_descriptions(text: str, expected: tuple[DirectorAsic, int | None] | None) -> None:
    assert director_asic(text) == expected


def test_director_port_labels_agree_with_plan_labels() -> None:
    assert DirectorAsic(False, 6, 1).port_label(20) == blade_port(6, 1, 20) == switch_port("Blade 06_Port 1/20")
    assert DirectorAsic(True, 1, 1).port_label(20) is None


# --- errors ------------------------------------------------------------------------------------------


def test_port_line_before_any_node(tmp_path: Path) -> None:
    error = error_of(tmp_path, ["junk", '[1]"S-00000000000000a1"[1]# "x" lid 1 4xHDR', *SMALL])
    assert error.line == 2
    assert "port line outside a node block" in str(error)


def test_port_line_after_a_new_block_header(tmp_path: Path) -> None:
    lines = [*SMALL[:15], "vendid=0x2c9", '[3]"S-00000000000000a1"[9]# "x" lid 1 4xHDR', *SMALL[15:]]
    assert error_of(tmp_path, lines).line == 17


def test_unparseable_node_line(tmp_path: Path) -> None:
    error = error_of(tmp_path, replaced(SMALL, 19, 'Switch 41 S-00000000000000d1 "MF0;dir-1:MCS8500/L01/U1"'))
    assert error.line == 19
    assert "unparseable node line" in error.message


def test_unparseable_port_line(tmp_path: Path) -> None:
    error = error_of(tmp_path, replaced(SMALL, 12, '[2] -> host2'))
    assert error.line == 12
    assert "unparseable port line" in error.message


@pytest.mark.parametrize("line", [
    '[-3]\t"H-00000000000000b2"[1](b2) \t\t# "host2 mlx5_0" lid 5 4xHDR',
    '[+2]\t"H-00000000000000b2"[1](b2) \t\t# "host2 mlx5_0" lid 5 4xHDR',
    '[ 2 ]\t"H-00000000000000b2"[-1](b2) \t\t# "host2 mlx5_0" lid 5 4xHDR',
])
def test_a_signed_or_spaced_port_is_an_unparseable_port_line_not_noise(tmp_path: Path, line: str) -> None:
    """``[-3]`` was taken for terminal noise and dropped (the leaf lost a cable), while a truncated port line is
    an error: both are port lines that do not parse."""
    error = error_of(tmp_path, replaced(SMALL, 12, line))
    assert error.line == 12
    assert "unparseable port line" in error.message


@pytest.mark.parametrize(("number", "line", "name"), [
    (31, 'Ca\t1 "H-00000000000000b1"\t\t# "host1\x00 mlx5_0"', "host1\x00 mlx5_0"),
    (10, 'Switch\t41 "S-00000000000000a1"\t\t# "MF0;leaf\x1b[31m-1:MQM8700/U1" enhanced port 0 lid 3 lmc 0',
     "leaf\x1b[31m-1"),
])
def test_a_control_character_in_a_node_description_is_kept_for_verify_to_flag(tmp_path: Path, number: int,
                                                                              line: str, name: str) -> None:
    """A dump says what the fabric calls itself: the name is read as it is (a plan's is refused: ``Fabric.plan``),
    and ``verify`` shows it escaped, flagged (``tests/test_cli_text.py``)."""
    fabric = read_ibnetdiscover(write(tmp_path, replaced(SMALL, number, line)))
    assert name in {device.name for device in fabric.devices.values()}


@pytest.mark.parametrize("lines", [[], [""], ["=~=~= PuTTY log =~=~=", "ufm-01 # ibnetdiscover", "ufm-01 # "]])
def test_no_nodes(tmp_path: Path, lines: list[str]) -> None:
    error = error_of(tmp_path, lines)
    assert error.line is not None and error.line >= 1
    assert "no ibnetdiscover node records" in error.message


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        read_ibnetdiscover(tmp_path / "absent.txt")
    assert info.value.source == str(tmp_path / "absent.txt")


def test_sides_that_disagree(tmp_path: Path) -> None:
    # host2 says it is on leaf port 3, the leaf says port 2 holds host2.
    error = error_of(tmp_path, replaced(
        SMALL, 36, '[1](b2) "S-00000000000000a1"[3]# lid 5 lmc 0 "MF0;leaf-1:MQM8700/U1" lid 3 4xHDR'))
    assert error.line == 12  # the leaf's port 2, read first
    assert "line 36" in error.message


def test_far_side_does_not_list_the_port(tmp_path: Path) -> None:
    lines = SMALL[:35] + SMALL[36:]  # host2's block loses its port line
    error = error_of(tmp_path, lines)
    assert error.line == 12
    assert "does not list the port" in error.message


def test_sides_disagree_on_speed(tmp_path: Path) -> None:
    error = error_of(tmp_path, replaced(
        SMALL, 32, '[1](b1) "S-00000000000000a1"[1]# lid 4 lmc 0 "MF0;leaf-1:MQM8700/U1" lid 3 4xEDR'))
    assert error.line == 11
    assert "width/speed" in error.message


def test_node_described_twice(tmp_path: Path) -> None:
    lines = [*SMALL[:40], "", "caguid=0xb2", 'Ca 1 "H-00000000000000b2" # "host2 mlx5_0"']
    error = error_of(tmp_path, lines)
    assert error.line == 43
    assert "line 35" in error.message


def test_port_listed_twice_in_a_block(tmp_path: Path) -> None:
    lines = [*SMALL[:12], SMALL[10], *SMALL[12:]]
    assert error_of(tmp_path, lines).line == 13


def test_internal_spine_linked_outside_its_chassis(tmp_path: Path) -> None:
    # The spine ASIC's description names another chassis: its link to dir-1's line card leaves the chassis.
    lines = replaced(SMALL, 26, 'Switch41 "S-00000000000000d2"# "MF0;dir-2:MCS8500/S01/U1" base port 0 lid 8')
    lines = replaced(lines, 24, "sysimgguid=0xee")
    error = error_of(tmp_path, lines)
    assert error.line == 21
    assert "internal spine ASIC" in error.message


def test_two_chassis_with_one_name(tmp_path: Path) -> None:
    lines = replaced(SMALL, 24, "sysimgguid=0xee")
    error = error_of(tmp_path, lines)
    assert "two GUIDs" in error.message
    assert error.line == 26


HUGE = "9" * 5000


@pytest.mark.parametrize(("line", "text", "message"), [
    (11, f'[{HUGE}]\t"H-00000000000000b1"[1](b1) \t\t# "host1 mlx5_0" lid 4 4xHDR', "port number"),
    (11, f'[1]\t"H-00000000000000b1"[{HUGE}](b1) \t\t# "host1 mlx5_0" lid 4 4xHDR', "port number"),
    (11, '[2000]\t"H-00000000000000b1"[1](b1) \t\t# "host1 mlx5_0" lid 4 4xHDR', "port number '2000'"),
    (11, f'[1]\t"H-00000000000000b1"[1](b1) \t\t# "host1 mlx5_0" lid 4 {HUGE}xHDR', "unreadable link width"),
    (19, f'Switch41 "S-00000000000000d1"# "MF0;dir-1:MCS8500/L{HUGE}/U1" base port 0 lid 6 lmc 0', "out of range"),
])
def test_numbers_out_of_range_name_the_line(tmp_path: Path, line: int, text: str, message: str) -> None:
    error = error_of(tmp_path, replaced(SMALL, line, text))
    assert error.line == line and message in error.message
    assert "\n" not in str(error) and len(str(error)) < 400


# --- fuzzing: whatever the text, a fabric or an InputError naming the dump ------------------------------------

ODD_LINES = st.sampled_from([
    f"[{HUGE}]", f'[1]"S-00000000000000a1"[{HUGE}]# "x" lid 1 4xHDR', 'Switch 41 "S-1"# "MF0;x:MQM/L99999/U1"',
    "caguid=0xzz", "sysimgguid=", 'Ca 1 "H-00000000000000b9"# ""', '[1]"H-b9"[1]# "" lid 1 999xHDR', "\x00",
    'Rt 2 "R-00000000000000c1"# "router"', '[1]"S-00000000000000a1"[77]# "leaf-1" lid 3 4xHDR',
])


@st.composite
def mutated_dumps(draw: st.DrawFn) -> list[str]:
    """The small dump with lines replaced, dropped, duplicated or inserted, and bits of them cut off."""
    lines = list(SMALL)
    for _ in range(draw(st.integers(0, 5))):
        at = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["replace", "drop", "duplicate", "cut", "insert"]))
        if action == "replace":
            lines[at] = draw(ODD_LINES | st.text(max_size=40))
        elif action == "drop" and len(lines) > 1:
            del lines[at]
        elif action == "duplicate":
            lines.insert(at, lines[at])
        elif action == "cut":
            lines[at] = lines[at][: draw(st.integers(0, len(lines[at])))]
        else:
            lines.insert(at, draw(ODD_LINES))
    return lines


@settings(max_examples=250, deadline=None)
@given(mutated_dumps() | st.lists(st.text(max_size=60), max_size=12))
def test_any_text_is_a_fabric_or_an_input_error_naming_the_dump(lines: list[str]) -> None:
    try:
        parse_ibnetdiscover(lines, "fuzz.txt")
    except InputError as exc:
        assert str(exc).startswith("fuzz.txt") and "\n" not in str(exc)



# --- the published director dump (UFM NDT plugin test data) ------------------------------------------


@pytest.fixture(scope="module")
def director() -> Fabric:
    if not DUMP.is_file():
        pytest.skip(f"conformance data not found at {DUMP} (the shared checkout is absent)")
    return read_ibnetdiscover(DUMP)


@pytest.mark.conformance
def test_director_dump_loads_whole() -> None:
    """Every cable of NVIDIA's director dump (its load time, ~0.2 s, is for benchmarks, not for a unit test)."""
    if not DUMP.is_file():
        pytest.skip(f"conformance data not found at {DUMP} (the shared checkout is absent)")
    assert len(read_ibnetdiscover(DUMP).cables) == 5523


@pytest.mark.conformance
def test_director_dump_shape(director: Fabric) -> None:
    switches = [d for d in director.devices.values() if d.kind is Kind.SWITCH]
    adapters = [d for d in director.devices.values() if d.kind is Kind.ADAPTER]
    # 160 fixed MQM8700 switches + 4 MCS8500 directors (each 40 line-card and 20 spine ASIC nodes).
    assert len(switches) == 164
    assert len(adapters) == 2328
    assert len(director.cables) == 5523
    host_links = [c for c in director.cables
                  if Kind.ADAPTER in (director.devices[c.a.device].kind, director.devices[c.b.device].kind)]
    assert len(host_links) == 2328
    assert all(c.width == 4 for c in director.cables)
    assert {c.speed_gbps for c in director.cables} == {100.0, 200.0}  # 4 EDR links: the UFM servers

    chassis = director.devices["sat11-0101-0903-01ib1-a"]
    assert chassis.guid == "0c42a10300fbb954"  # the chassis' sysimgguid, shared by its 60 ASIC nodes
    assert director.device_by_guid("0c42a10300e67606") is None  # an ASIC's own node GUID
    cable = director.by_end[End("sat11-0101-0927-20ib0", "21")]
    assert cable.other(End("sat11-0101-0927-20ib0", "21")) == End("sat11-0101-0903-01ib1-a", "Blade 16_Port 2/20")
    assert director.devices["sat111092710053 ibp11s0f0"].host == "SAT111092710053"
    # No port of a chassis is reported as a link to itself (line card <-> internal spine links dropped).
    assert not [c for c in director.cables if c.a.device == c.b.device]
    # 103 adapters left with the factory description "MT4123 ConnectX6   Mellanox Technologies".
    unnamed = [d for d in adapters if d.name.startswith("MT4123 ConnectX6 Mellanox Technologies (")]
    assert len(unnamed) == 103
    assert all(d.host is None for d in unnamed)


def plan_end(device: str, port: str) -> End:
    label = switch_port(port)
    if label is None:  # host rows: SAT111092710053,SAT111092710053 ibp11s0f0,... -> the adapter
        return End(" ".join(port.split()).casefold(), "1")
    return End(device.strip().casefold(), label)


def plan_rows(name: str) -> list[tuple[End, End]]:
    with (NDT / name).open(newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0][:4] == ["#StartDevice", "StartPort", "EndDevice", "EndPort"]
    return [(plan_end(r[0], r[1]), plan_end(r[2], r[3])) for r in rows[1:] if r]


def matches(fabric: Fabric, a: End, b: End) -> bool:
    cable = fabric.by_end.get(a)
    return cable is not None and cable.other(a) == b


@pytest.mark.conformance
def test_plan_files_match_the_dump(director: Fabric) -> None:
    host_rows = plan_rows("switch_to_host_topo1.ndt")
    switch_rows = plan_rows("switch_to_switch_topo2.ndt")

    # Switch-switch plan: 6390 rows, each of its 3195 cables written from both ends; every row matches.
    assert len(switch_rows) == 6390
    assert len({frozenset(row) for row in switch_rows}) == 3195
    assert sum(matches(director, a, b) for a, b in switch_rows) == 6390

    # Host plan: 2223 rows, 2219 match. The 4 that don't are the deliberate faults of NDT's positive test
    # (its expected report: 2 miswired, 2 missing in UFM, 107 missing in NDT):
    assert len(host_rows) == 2223
    assert sum(matches(director, a, b) for a, b in host_rows) == 2219
    unmatched = sorted(f"{a.device}/{a.port} - {b.device}/{b.port}"
                       for a, b in host_rows if not matches(director, a, b))
    assert unmatched == [
        # miswired: the dump has ibp203s0f0 on port 15, and ibp213s0f0 on port 16
        "sat111090201019 ibp203s0f1/1 - sat11-0101-0902-01ib0/15",
        "sat111090201019 ibp213s0f0/1 - sat11-0101-0902-01ib0/17",
        # missing from the dump altogether
        "sat111090201020 ibp213s0f0/1 - sat11-0102-0903-05ib0/9",
        "sat111090201021 ibp213s0f0/1 - sat11-0102-0903-05ib0/10",
    ]

    # Cables in the dump that no plan row names: 103 unnamed MT4123 adapters + 4 UFM-server HCAs (107,
    # NDT's "missing in NDT") + the 2 actual sides of the miswires.
    planned = {frozenset(row) for row in host_rows + switch_rows}
    extra = [c for c in director.cables if frozenset((c.a, c.b)) not in planned]
    assert len(extra) == 109
