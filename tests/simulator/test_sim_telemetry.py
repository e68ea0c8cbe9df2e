"""UFM Telemetry's CSV as the simulator serves it, over HTTP: counters on the simulated clock, every telemetry step,
port resets and isolation as the counters show them."""

from __future__ import annotations

import csv
import io
import math

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sim_support import PASSWORD, START, USER, Sim, make_state

from fabric.simulator import SimState
from fabric.simulator.counters import COLUMNS
from fabric.simulator.scenario import parse_step

TELEMETRY = "/csv/xcset/low_freq_debug"
NDR_4X = 400e9
PACKETS_A_SECOND = 0.5 * NDR_4X / (8 * 4096)  # the default utilisation and packet size
COUNTERS = ("Symbol_Errors", "PortRcvPktsExtended", "PortRcvErrors", "PortRcvRemotePhysicalErrors", "Link_Down_IB")


def rows_of(body: bytes) -> dict[str, dict[str, str]]:
    """The sample's rows by REST port name (Node_GUID without 0x, and Port_Number), as the PDR plugin names them."""
    rows = list(csv.DictReader(io.StringIO(body.decode())))
    return {f"{row['Node_GUID'].removeprefix('0x')}_{row['Port_Number']}": row for row in rows}


def sample(sim: Sim) -> dict[str, dict[str, str]]:
    response = sim.http.get(TELEMETRY)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/csv")
    return rows_of(response.content)


def count(row: dict[str, str], column: str) -> int:
    return int(row[column])


def test_every_port_has_a_row_and_counters_advance_with_the_simulated_clock(sim: Sim) -> None:
    first = sample(sim)
    assert set(first) == set(sim.state.fabric.ports)
    header = sim.http.get(TELEMETRY).text.splitlines()[0]
    assert tuple(header.split(",")) == COLUMNS
    port = sim.state.resolve_port("pod01-spine01/1")
    assert first[port]["timestamp"] == str(int(START.timestamp()) * 1_000_000)
    assert first[port]["Node_GUID"] == first[port]["port_guid"] == "0x" + port.split("_")[0]
    assert count(first[port], "PortRcvPktsExtended") == 0
    assert sample(sim)[port] == first[port]  # a frozen clock: nothing moves
    sim.advance(300)
    later = sample(sim)
    assert int(later[port]["timestamp"]) - int(first[port]["timestamp"]) == 300_000_000
    assert count(later[port], "PortRcvPktsExtended") == math.floor(PACKETS_A_SECOND * 300)
    assert {count(r, "Symbol_Errors") for r in later.values()} == {0}  # no BER set: healthy ports count none
    assert {r["Module_Temperature"] for r in later.values()} == {"45"}


def test_a_ber_set_on_a_port_shows_as_symbol_errors_in_proportion_to_the_bits_carried(sim: Sim) -> None:
    port = sim.state.resolve_port("core01-01/1")
    sim.inject(fault="ber_ramp", port="core01-01/1", ber=1e-12)
    sim.advance(600)
    rows = sample(sim)
    assert count(rows[port], "Symbol_Errors") == 240  # 1e-12 x 400 Gb/s x 600 s
    assert count(rows[port], "phy_symbol_errors") == 240
    assert count(rows[sim.state.fabric.peer_of(port) or ""], "Symbol_Errors") == 0  # the BER is one receiver's
    # A fraction of an error carries into the next sample: 1e-12 x 400 Gb/s is 0.4 errors a second.
    seen = []
    for _ in range(4):
        sim.advance(1)
        seen.append(count(sample(sim)[port], "Symbol_Errors") - 240)
    assert seen == [0, 0, 1, 1]


def test_a_ber_ramp_rises_over_its_duration_then_stays(sim: Sim) -> None:
    port = sim.state.resolve_port("core01-01/2")
    sim.inject(fault="ber_ramp", port=port, ber=1e-12, over="10m")
    sim.advance(600)
    assert count(sample(sim)[port], "Symbol_Errors") == 120  # the ramp's area: 400 Gb/s x 1e-12 x 600 s / 2
    sim.advance(600)
    assert count(sample(sim)[port], "Symbol_Errors") == 360  # then 240 more at 1e-12


def test_a_drop_burst_counts_receive_errors_at_once_or_spread(sim: Sim) -> None:
    first, second = sim.state.resolve_port("pod01-spine01/3"), sim.state.resolve_port("pod01-spine01/4")
    sim.inject(fault="drop_burst", port=first, errors=500, remote_errors=7)
    sim.inject(fault="drop_burst", port=second, errors=600, over="10m")
    sim.advance(300)
    rows = sample(sim)
    assert (count(rows[first], "PortRcvErrors"), count(rows[first], "PortRcvRemotePhysicalErrors")) == (500, 7)
    assert count(rows[second], "PortRcvErrors") == 300
    sim.advance(600)
    assert count(sample(sim)[second], "PortRcvErrors") == 600  # the burst is over


@pytest.mark.parametrize("both_ends", [True, False])
def test_a_link_down_counter_bump_on_one_end_or_both(sim: Sim, both_ends: bool) -> None:
    port = sim.state.resolve_port("pod01-spine01/5")
    peer = sim.state.fabric.peer_of(port) or ""
    sim.inject(fault="link_down_counter", port=port, both_ends=both_ends, count=2)
    rows = sample(sim)
    assert (count(rows[port], "Link_Down_IB"), count(rows[peer], "Link_Down_IB")) == (2, 2 if both_ends else 0)
    assert sim.event_ids() == []  # UFM saw nothing


def test_a_hot_module_to_a_temperature_or_a_rise(sim: Sim) -> None:
    first, second = sim.state.resolve_port("pod01-spine01/6"), sim.state.resolve_port("pod01-spine01/7")
    sim.inject(fault="module_temperature", port=first, temperature=85)
    sim.inject(fault="module_temperature", port=second, rise=12)
    sim.inject(fault="hot_module", port="pod01-spine01/8", temperature=77)
    rows = sample(sim)
    assert [rows[p]["Module_Temperature"] for p in (first, second, sim.state.resolve_port("pod01-spine01/8"))] == [
        "85", "57", "77"]


def test_a_counter_reset_clears_every_port_of_the_switch_and_only_those(sim: Sim) -> None:
    sim.advance(60)
    guid = sim.state.resolve_node("pod01-spine01", switch=True)
    ports = set(sim.state.fabric.system_ports[guid])
    sim.inject(fault="link_down_counter", port="pod01-spine01/1")
    sim.inject(fault="counter_reset", switch="pod01-spine01")
    rows = sample(sim)
    for port, row in rows.items():
        expected = 0 if port in ports else math.floor(PACKETS_A_SECOND * 60)
        assert count(row, "PortRcvPktsExtended") == expected, port
    assert {count(rows[p], "Link_Down_IB") for p in ports} == {0}
    sim.advance(10)
    assert count(sample(sim)[min(ports)], "PortRcvPktsExtended") == math.floor(PACKETS_A_SECOND * 10)


def test_no_traffic_stops_both_ends_packets_for_its_duration_and_the_link_stays_up(sim: Sim) -> None:
    port = sim.state.resolve_port("pod01-leaf01/5")
    peer = sim.state.fabric.peer_of(port) or ""
    sim.advance(60)
    sim.inject(fault="no_traffic", port="pod01-leaf01/5", duration="2m")
    sim.advance(60)
    rows = sample(sim)
    moving = math.floor(PACKETS_A_SECOND * 120)
    assert [count(rows[p], "PortRcvPktsExtended") for p in (port, peer)] == [math.floor(PACKETS_A_SECOND * 60)] * 2
    assert count(rows[sim.state.resolve_port("pod01-leaf01/7")], "PortRcvPktsExtended") == moving
    assert sim.event_ids() == []  # UFM saw nothing: the link is up
    sim.advance(120)  # one minute more without, then a minute with
    assert count(sample(sim)[port], "PortRcvPktsExtended") == moving


def test_a_rebooted_switch_is_absent_while_down_and_counts_from_zero_when_back(sim: Sim) -> None:
    guid = sim.state.resolve_node("pod01-spine02", switch=True)
    ports = set(sim.state.fabric.system_ports[guid])
    peers = {sim.state.fabric.peer_of(p) or "" for p in ports}
    sim.advance(60)
    sim.inject(fault="switch_reboot", switch="pod01-spine02", downtime="2m")
    assert not ports & set(sample(sim))
    sim.advance(120)
    rows = sample(sim)
    assert {count(rows[p], "PortRcvPktsExtended") for p in ports} == {0}
    assert {count(rows[p], "Link_Down_IB") for p in ports} == {0}
    assert {count(rows[p], "Link_Down_IB") for p in peers} == {1}  # the far ends saw their links go down
    assert {count(rows[p], "PortRcvPktsExtended") for p in peers} == {math.floor(PACKETS_A_SECOND * 60)}


def test_a_disabled_port_and_a_link_down_carry_no_packets(sim: Sim) -> None:
    cut = sim.state.resolve_port("core01-01/3")
    sim.inject(fault="link_down", link="core01-01/3")
    disabled = sim.state.resolve_port("pod01-spine01/2")
    guid = sim.state.port_name(disabled).system_guid
    sim.http.post("/ufmRest/actions", auth=(USER, PASSWORD), json={
        "action": "disable", "object_ids": [guid], "object_type": "System", "identifier": "id",
        "params": {"port_id": disabled}})
    sim.advance(1)  # the job completes: the port is disabled from here
    before = sample(sim)
    sim.advance(100)
    after = sample(sim)
    for port in (cut, sim.state.fabric.peer_of(cut), disabled, sim.state.fabric.peer_of(disabled)):
        assert after[port or ""]["PortRcvPktsExtended"] == before[port or ""]["PortRcvPktsExtended"], port
    # A link that goes down counts on both ends, but never on the end disabled by hand.
    assert (count(after[cut], "Link_Down_IB"), count(after[sim.state.fabric.peer_of(cut) or ""], "Link_Down_IB")) \
        == (1, 1)
    peer = sim.state.fabric.peer_of(disabled) or ""
    assert (count(after[disabled], "Link_Down_IB"), count(after[peer], "Link_Down_IB")) == (0, 1)


def _reset(sim: Sim, port: str) -> None:
    guid = sim.state.port_name(port).system_guid
    response = sim.http.post("/ufmRest/actions", auth=(USER, PASSWORD), json={
        "params": {"port_id": port}, "action": "reset", "object_ids": [guid], "object_type": "System",
        "identifier": "id", "description": ""})
    assert response.status_code == 202
    sim.advance(1)  # the job's time (make_state: 1 s)


@pytest.mark.parametrize("cured", [True, False])
def test_a_reset_bumps_both_ends_downs_the_link_a_moment_and_cures_only_a_curable_ber(sim: Sim, cured: bool) -> None:
    port = sim.state.resolve_port("core01-01/4")
    peer = sim.state.fabric.peer_of(port) or ""
    sim.inject(fault="ber_ramp", port=port, ber=1e-12, cured_by_reset=cured)
    sim.advance(100)
    _reset(sim, port)
    rows = sample(sim)
    assert (count(rows[port], "Link_Down_IB"), count(rows[peer], "Link_Down_IB")) == (1, 1)
    assert sim.event_ids() == [336, 329]  # down while it retrains
    errors = count(rows[port], "Symbol_Errors")
    packets = count(rows[port], "PortRcvPktsExtended")
    sim.advance(sim.state.settings.reset_seconds)
    assert sim.event_ids() == [336, 329, 328]
    assert count(sample(sim)[port], "PortRcvPktsExtended") == packets  # nothing crossed while it was down
    sim.advance(100)
    rows = sample(sim)
    assert count(rows[port], "PortRcvPktsExtended") > packets
    assert (count(rows[port], "Symbol_Errors") == errors) is cured


def test_an_isolation_takes_effect_at_the_sweep_and_healthy_undoes_it_at_the_next(sim: Sim) -> None:
    port = sim.state.resolve_port("pod01-spine01/5")
    peer = sim.state.fabric.peer_of(port) or ""
    sweep = sim.state.settings.sweep_seconds

    def mark(policy: str) -> None:
        body = {"ports": [port], "ports_policy": policy, **({"action": "isolate"} if policy == "UNHEALTHY" else {})}
        assert sim.http.put("/ufmRest/app/unhealthy_ports", auth=(USER, PASSWORD), json=body).status_code == 200

    def packets() -> tuple[int, int]:
        rows = sample(sim)
        return count(rows[port], "PortRcvPktsExtended"), count(rows[peer], "PortRcvPktsExtended")

    mark("UNHEALTHY")
    assert [e["PeerPort"] for e in sim.get("/ufmRest/app/unhealthy_ports")] == [port]  # listed at once
    sim.advance(sweep - 1)
    assert sim.get("/ufmRest/resources/isolated_ports")["isolated_ports"] == []
    assert sim.get(f"/ufmRest/resources/ports/{port}")[0]["logical_state"] == "Active"
    sim.advance(1)
    assert sim.get("/ufmRest/resources/isolated_ports")["isolated_ports"] == [f"0x{port}"]
    state = sim.get(f"/ufmRest/resources/ports/{port}")[0]
    assert (state["logical_state"], state["physical_state"]) == ("Armed", "Link Up")
    link = sim.state.fabric.link_at(port)
    assert link is not None and link.name in {k["name"] for k in sim.get("/ufmRest/resources/links")}  # still up
    isolated = packets()
    sim.advance(100)
    assert packets() == isolated  # no data crosses an isolated link, either way
    mark("HEALTHY")
    assert sim.get("/ufmRest/app/unhealthy_ports") == []
    sim.advance(sweep)
    assert sim.get("/ufmRest/resources/isolated_ports")["isolated_ports"] == []
    assert sim.get(f"/ufmRest/resources/ports/{port}")[0]["logical_state"] == "Active"
    sim.advance(100)
    assert packets()[0] > isolated[0]


# ---------------------------------------------------------------------------------------------- the feed itself


def test_stale_telemetry_serves_one_frozen_sample_for_its_duration(sim: Sim) -> None:
    sim.advance(10)
    frozen = sim.http.get(TELEMETRY).content
    sim.inject(fault="telemetry_stale", duration="10m")
    sim.advance(300)
    assert sim.http.get(TELEMETRY).content == frozen
    sim.advance(300)
    assert sim.http.get(TELEMETRY).content != frozen


def test_missing_ports_are_left_out_for_the_requests_asked(sim: Sim) -> None:
    port = sim.state.resolve_port("pod01-spine01/1")
    sim.inject(fault="telemetry_missing", ports=[port], count=3, requests=2)
    for _ in range(2):
        rows = sample(sim)
        assert port not in rows and len(rows) == len(sim.state.fabric.ports) - 4
    assert len(sample(sim)) == len(sim.state.fabric.ports)


def test_a_bad_header_lacks_the_port_guid_column() -> None:
    body = _malformed("bad_header")
    header, first = body.decode().splitlines()[:2]
    assert "port_guid" not in header.split(",") and len(header.split(",")) == len(first.split(",")) - 1


def test_text_in_a_number_column() -> None:
    rows = list(csv.DictReader(io.StringIO(_malformed("text_in_number").decode())))
    assert rows[0]["Symbol_Errors"] == "N/A" and all(r["Symbol_Errors"].isdigit() for r in rows[1:])


def test_a_truncated_body_ends_in_the_middle_of_a_row() -> None:
    body = _malformed("truncated").decode()
    assert not body.endswith("\n")
    rows = list(csv.reader(io.StringIO(body)))
    assert len(rows[-1]) < len(COLUMNS) and all(len(r) == len(COLUMNS) for r in rows[:-1])


def _malformed(how: str) -> bytes:
    state = make_state()
    parse_step({"fault": "telemetry_malformed", "how": how, "requests": 1}, "test").step.apply(state)
    body = state.telemetry_sample()
    assert state.telemetry_sample() != body  # for one answer only
    return body


def test_another_instance_is_not_found_and_feed_faults_can_be_cleared(sim: Sim) -> None:
    assert sim.http.get("/csv/xcset/high_freq").status_code == 404
    sim.inject(fault="telemetry_malformed", how="bad_header")
    assert b"port_guid" not in sim.http.get(TELEMETRY).content.splitlines()[0]
    assert sim.http.delete("/simulator/telemetry_faults").status_code == 200
    assert b"port_guid" in sim.http.get(TELEMETRY).content.splitlines()[0]


def test_an_api_fault_on_the_telemetry_path_answers_errors(sim: Sim) -> None:
    sim.inject(fault="api", endpoint=TELEMETRY, status=503, requests=1)
    assert sim.http.get(TELEMETRY).status_code == 503
    assert httpx.get(sim.url + TELEMETRY).status_code == 200


# ---------------------------------------------------------------------------------------------- invariant

_SWITCHES = ("pod01-spine01", "pod01-leaf01", "core01-01")
_STEPS = st.one_of(
    st.builds(lambda ber: {"fault": "ber_ramp", "port": "random:switch", "ber": ber, "over": "5m"},
              st.floats(0, 1e-9)),
    st.just({"fault": "drop_burst", "port": "random", "errors": 50, "over": "1m"}),
    st.just({"fault": "link_down_counter", "port": "random", "both_ends": False}),
    st.just({"fault": "flap", "link": "random", "cycles": 2, "period": "1m"}),
    st.builds(lambda name: {"fault": "switch_reboot", "switch": name, "downtime": "2m"}, st.sampled_from(_SWITCHES)),
    st.just({"fault": "host_reboot", "count": 1, "downtime": "1m"}),
    st.just({"fault": "unhealthy", "port": "random"}),
    st.builds(lambda name: {"fault": "counter_reset", "switch": name}, st.sampled_from(_SWITCHES)),
    st.just({"fault": "no_traffic", "port": "random", "duration": "3m"}),
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.floats(0, 900), st.none() | _STEPS), min_size=1, max_size=12), st.integers(0, 99))
def test_counters_never_decrease_but_on_a_counter_reset(moves: list[tuple[float, dict[str, object] | None]],
                                                        seed: int) -> None:
    state = make_state(seed=seed)
    cleared: set[str] = set()
    """Ports whose counters may start again from zero: those of a switch reset or of a system that rebooted."""
    last = _counters(state)
    for seconds, step in moves:
        if step is not None:
            parse_step(step, "hypothesis").step.apply(state)
            if step["fault"] == "counter_reset":
                cleared.update(state.fabric.system_ports[state.resolve_node(str(step["switch"]), switch=True)])
            for guid in state.fabric.down_systems:
                cleared.update(state.fabric.system_ports[guid])
        state.advance(seconds)
        now = _counters(state)
        for port, values in now.items():
            before = last.get(port)
            if before is not None and port not in cleared:
                assert all(a >= b for a, b in zip(values, before, strict=True)), (port, before, values, step)
        last = {**last, **now}


def _counters(state: SimState) -> dict[str, tuple[int, ...]]:
    return {port: tuple(int(row[c]) for c in COUNTERS) for port, row in rows_of(state.telemetry_sample()).items()}
