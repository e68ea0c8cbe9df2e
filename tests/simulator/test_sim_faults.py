"""Each fault a scenario can inject produces UFM's events and changes what the REST API shows."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from sim_support import START, Sim, run

from fabric.simulator import SimClock, SimState
from fabric.ufm import Event, EventCursor, Link, Port
from topology.faults import FaultCounts, plant
from topology.formats.ufm_snapshot import fabric_from_ufm
from topology.generate import PRESETS, fat_tree
from topology.model import Cable, End
from topology.verify import verify


def _events(sim: Sim) -> list[Event]:
    async def read() -> list[Event]:
        async with sim.client() as ufm:
            return await ufm.events()
    return run(read())


def _ports(sim: Sim, *names: str) -> dict[str, Port]:
    async def read() -> dict[str, Port]:
        async with sim.client() as ufm:
            return {name: await ufm.port(name) for name in names}
    return run(read())


def _links(sim: Sim) -> dict[str, Link]:
    async def read() -> dict[str, Link]:
        async with sim.client() as ufm:
            return {f"{k.source.name}:{k.destination.name}": k for k in await ufm.links()}
    return run(read())


def test_flap_is_down_up_cycles_naming_both_ends(sim: Sim) -> None:
    link = sim.state.resolve_link("pod01-spine01/1")
    sim.inject(fault="flap", link="pod01-spine01/1", cycles=3, period="20s", down_for="5s")
    assert [e.event_id for e in _events(sim)] == [329]
    assert link.name not in _links(sim)
    sim.advance(60)
    events = _events(sim)
    assert [e.event_id for e in events] == [329, 328] * 3
    assert [e.timestamp - START for e in events] == [timedelta(seconds=s) for s in (0, 5, 20, 25, 40, 45)]
    assert [e.id for e in events] == sorted(e.id for e in events)
    for event in events:
        assert event.object_type == "Link"
        assert event.link_ends is not None
        assert {end.name for end in event.link_ends} == {link.a, link.b}
        assert "pod01-leaf01" in (event.description or "") and "pod01-spine01" in (event.description or "")
    assert link.name in _links(sim)


def test_ber_warns_then_goes_critical(sim: Sim) -> None:
    port = sim.state.resolve_port("pod01-spine01/2")
    sim.inject(fault="ber", port="pod01-spine01/2", escalate_after="10m")
    assert [e.event_id for e in _events(sim)] == [918, 916]
    assert _ports(sim, port)[port].high_ber_severity == "Warning"
    sim.advance(599)
    assert len(_events(sim)) == 2
    sim.advance(1)
    events = _events(sim)
    assert [e.event_id for e in events] == [918, 916, 917, 915]
    assert [e.severity for e in events] == ["Warning", "Warning", "Critical", "Critical"]
    assert {e.object_name for e in events} == {port} and {e.object_type for e in events} == {"IBPort"}
    assert _ports(sim, port)[port].high_ber_severity == "Critical"


def test_link_down_changes_ports_links_and_versions_then_recovers(sim: Sim) -> None:
    link = sim.state.resolve_link("core01-01/1")
    before = sim.get("/ufmRest/app/versioning")
    sim.inject(fault="link_down", link="core01-01/1", duration="5m")
    after = sim.get("/ufmRest/app/versioning")
    assert after["ports_version"] > before["ports_version"] and after["links_version"] > before["links_version"]
    assert after["switches_version"] == before["switches_version"]
    ports = _ports(sim, link.a, link.b)
    assert {(p.logical_state, p.physical_state) for p in ports.values()} == {("Down", "Polling")}
    assert link.name not in _links(sim) and len(_links(sim)) == 47
    event = _events(sim)[0]
    assert event.event_id == 329 and event.object_name == link.name
    sim.advance(300)
    assert [e.event_id for e in _events(sim)] == [329, 328]
    assert link.name in _links(sim)
    assert {p.physical_state for p in _ports(sim, link.a, link.b).values()} == {"Link Up"}


def test_width_and_speed_degradation(sim: Sim) -> None:
    narrow = sim.state.resolve_link("pod01-spine01/3")
    slow = sim.state.resolve_link("core01-01/2")
    sim.inject(fault="degrade", link="pod01-spine01/3", width="1x")
    sim.inject(fault="degrade", link="core01-01/2", speed="HDR")
    events = _events(sim)
    assert [e.event_id for e in events] == [130, 130, 701, 701]
    assert [e.object_name for e in events] == [narrow.a, narrow.b, slow.a, slow.b]
    assert events[0].description == "Found a 4x link that operates in 1x width mode."
    ports = _ports(sim, narrow.a, narrow.b, slow.a)
    assert ports[narrow.a].active_width == ports[narrow.b].active_width == "1x"
    assert ports[slow.a].active_speed == "HDR" and ports[slow.a].active_width == "4x"
    links = _links(sim)
    assert links[narrow.name].lanes == 1 and links[slow.name].lanes == 4


def test_hot_module_and_module_fault_raise_events_and_alarms(sim: Sim) -> None:
    port = sim.state.resolve_port("pod01-spine01/1")
    guid = sim.state.port_name(port).system_guid
    sim.inject(fault="hot_module", port="pod01-spine01/1", temperature=90, module_fault=True)
    events = _events(sim)
    assert [(e.event_id, e.object_type) for e in events] == [
        (919, "IBPort"), (392, "Module"), (911, "Module"), (394, "Switch")]
    assert events[1].description == "Module Temperature threshold was exceeded. Threshold is 70, received value is 90."
    assert events[3].object_name == guid and "FAULT" in (events[3].description or "")
    alarms = sim.get("/ufmRest/app/alarms")
    assert sorted(a["event_type"] for a in alarms) == [392, 394, 911, 919]
    fault = next(a for a in alarms if a["event_type"] == 394)
    assert fault["type"] == 55 and fault["duration"] == 420 and fault["related_object_name"] == guid


def test_switch_reboot_link_events_are_attributable(sim: Sim) -> None:
    guid = sim.state.resolve_node("pod01-spine02", switch=True)
    sim.inject(fault="switch_reboot", switch="pod01-spine02", downtime="3m")
    down = _events(sim)
    assert down[0].event_id == 907 and down[0].object_name == guid and down[0].object_type == "Switch"
    link_downs = down[1:]
    assert len(link_downs) == 8 and {e.event_id for e in link_downs} == {329}
    for event in link_downs:
        assert event.timestamp == down[0].timestamp and event.id > down[0].id
        assert event.link_ends is not None and guid in {end.guid for end in event.link_ends}
    assert sim.get(f"/ufmRest/resources/systems/{guid}")[0]["state"] == "inactive"
    assert len(_links(sim)) == 40
    sim.advance(180)
    after = _events(sim)[len(down):]
    assert [e.event_id for e in after[:2]] == [908, 1312]
    assert after[1].description == f"Switch was rebooted: NODE_GUID = {guid}."
    assert [e.event_id for e in after[2:]] == [328] * 8
    assert len(_links(sim)) == 48
    assert 907 not in {a["event_type"] for a in sim.get("/ufmRest/app/alarms")}


def test_a_switch_reboot_without_907_reports_1312_after_its_links_are_back(sim: Sim) -> None:
    """UFM's real order when it did not see the switch go: link-downs, link-ups, then 1312 minutes later."""
    guid = sim.state.resolve_node("pod01-spine02", switch=True)
    sim.inject(fault="switch_reboot", switch="pod01-spine02", downtime="3m", down_event=False,
               rebooted_after="90s")
    assert [e.event_id for e in _events(sim)] == [329] * 8
    sim.advance(180)
    assert [e.event_id for e in _events(sim)] == [329] * 8 + [328] * 8
    sim.advance(90)
    events = _events(sim)
    assert [e.event_id for e in events] == [329] * 8 + [328] * 8 + [1312]
    assert events[-1].object_name == guid and events[-1].timestamp - events[0].timestamp == timedelta(seconds=270)


def test_a_host_reboot_without_331(sim: Sim) -> None:
    sim.inject(fault="host_reboot", hosts=["pod01-node01"], downtime="4m", down_event=False)
    assert [e.event_id for e in _events(sim)] == [329, 329]
    sim.advance(240)
    assert [e.event_id for e in _events(sim)] == [329, 329, 332, 328, 328]


def test_mass_host_reboot(sim: Sim) -> None:
    sim.inject(fault="host_reboot", hosts=["pod01-node01"], count=3, downtime="4m")
    events = _events(sim)
    assert [e.event_id for e in events].count(331) == 4
    assert [e.event_id for e in events].count(329) == 8  # two rails per host
    first = sim.state.resolve_node("pod01-node01", switch=False)
    assert events[0].event_id == 331 and events[0].object_name == first and events[0].object_type == "Computer"
    assert "pod01-node01 node is Down" in (events[0].description or "")
    assert len(_links(sim)) == 40
    sim.advance(240)
    ids = [e.event_id for e in _events(sim)]
    assert ids.count(332) == 4 and ids.count(328) == 8 and len(_links(sim)) == 48


def test_ufm_restart_resets_ids_and_the_cursor_notices(sim: Sim) -> None:
    sim.inject(fault="flap", link="pod01-spine01/1", cycles=2, period="20s")
    sim.advance(40)
    cursor = EventCursor()
    first = cursor.advance(_events(sim))
    assert [e.id for e in first] == [1, 2, 3, 4]
    sim.inject(fault="ufm_restart")
    assert _events(sim) == []
    sim.advance(10)
    sim.inject(fault="link_down", link="pod01-spine01/2")
    after = _events(sim)
    assert [(e.id, e.event_id) for e in after] == [(1, 329)]
    assert cursor.is_restart(after)
    assert [e.id for e in cursor.advance(after)] == [1]
    assert cursor.state.restart_count == 1
    log_ids = [line.split()[2] for line in sim.http.get("/simulator/event.log").text.splitlines()]
    assert log_ids == ["[1]", "[2]", "[3]", "[4]", "[1]"]  # the log file keeps its lines


def test_miswire_shows_in_links_and_in_cabling_verification(sim: Sim) -> None:
    first = sim.state.resolve_link("pod01-spine01/1")
    second = sim.state.resolve_link("pod01-spine02/3")
    sim.inject(fault="miswire", links=["pod01-spine01/1", "pod01-spine02/3"])
    links = _links(sim)
    assert first.name not in links and second.name not in links
    assert f"{first.a}:{second.b}" in links and f"{second.a}:{first.b}" in links
    assert [e.event_id for e in _events(sim)] == [329, 329, 328, 328]
    peer = _ports(sim, first.a)[first.a]
    assert peer.peer == second.b and peer.peer_node_name == "pod01-spine02"
    systems = sim.get("/ufmRest/resources/systems")
    as_built = fabric_from_ufm(systems, sim.get("/ufmRest/resources/links"), sim.get("/ufmRest/resources/ports"),
                               sim.url)
    report = verify(fat_tree(PRESETS["tiny"]), as_built)
    assert not report.matches
    assert report.summary()["ok"] == 46 and report.summary()["missing"] == 0
    assert [m.kind.value for m in report.miswired] == ["swapped", "swapped"]
    planned = {Cable(End("pod01-leaf01", "5"), End("pod01-spine01", "1")).key,
               Cable(End("pod01-leaf02", "7"), End("pod01-spine02", "3")).key}
    assert {m.expected.key for m in report.miswired} == planned


def test_sm_unhealthy_port(sim: Sim) -> None:
    port = sim.state.resolve_port("pod01-spine02/1")
    sim.inject(fault="unhealthy", port="pod01-spine02/1", condition="FLAPPING")
    event = _events(sim)[0]
    assert event.event_id == 702 and event.object_name == port
    assert event.description == "Peer Port pod01-leaf01:7 is considered by SM as unhealthy due to FLAPPING."

    async def read() -> None:
        async with sim.client() as ufm:
            entry = (await ufm.unhealthy_ports())[0]
            assert entry.peer_port_name == port and entry.Condition == ["FLAPPING"]  # the Peer side: see unhealthy.py
    run(read())


def test_storm_and_scheduled_steps(sim: Sim) -> None:
    sim.inject(fault="storm", count=500, at="30s")
    assert _events(sim) == []
    assert sim.get("/simulator/state")["pending"][0]["what"].startswith("admin: storm")
    sim.advance(30)
    events = _events(sim)
    assert len(events) == 500 and [e.id for e in events] == list(range(1, 501))
    assert {e.event_id for e in events} <= {110, 111, 112, 113}
    assert all("Peer info:" in (e.description or "") for e in events)


def test_fabric_storms(sim: Sim) -> None:
    cables = len(sim.state.fabric.links)
    bounced = sim.http.post("/simulator/events/bulk", json={"kind": "link_bounce", "up_after": 10})
    assert bounced.status_code == 200 and bounced.json()["count"] == 4 * cables
    events = _events(sim)
    downs, ups = events[:2 * cables], events[2 * cables:]
    assert {e.event_id for e in downs} == {329} and {e.event_id for e in ups} == {328}
    assert {e.timestamp for e in downs} == {START} and {e.timestamp for e in ups} == {START + timedelta(seconds=10)}
    assert sim.get("/simulator/state")["links_down"] == []  # the events only: the fabric is as it was

    names = sim.state.fabric.names
    switch_cables = sum(1 for link in sim.state.fabric.links.values()
                        if names[link.a].is_switch and names[link.b].is_switch)
    ber = sim.http.post("/simulator/events/bulk", json={"kind": "ber_high"})
    assert ber.status_code == 200 and ber.json()["count"] == 2 * switch_cables
    assert {e.event_id for e in _events(sim)[4 * cables:]} == {918}
    for refused in ({"kind": "melt"}, {"kind": "link_bounce", "up_after": -1},
                    {"kind": "link_bounce", "up_after": "10s"}, {"kind": "link_bounce", "up_after": True}):
        assert sim.http.post("/simulator/events/bulk", json=refused).status_code == 400, refused


def test_bad_targets_are_rejected(sim: Sim) -> None:
    for step in ({"fault": "link_down", "link": "no-such-switch/1"},
                 {"fault": "switch_reboot", "switch": "pod01-node01"},
                 {"fault": "flap", "link": "pod01-spine01/1", "cycles": "three"},
                 {"fault": "melt"},
                 {"fault": "degrade", "link": "pod01-spine01/1"}):
        response = sim.http.post("/simulator/faults", json=step)
        assert response.status_code == 400, step
    assert _events(sim) == []


def test_as_built_deviation_from_the_plan(sim_factory: Callable[..., Sim]) -> None:
    plan = fat_tree(PRESETS["tiny"])
    planted = plant(plan, FaultCounts(swapped=2), seed=9)
    sim = sim_factory(SimState.from_plan(plan, as_built=planted.fabric, clock=SimClock(START)))
    assert sim.state.plan is plan
    as_built = fabric_from_ufm(sim.get("/ufmRest/resources/systems"), sim.get("/ufmRest/resources/links"),
                               sim.get("/ufmRest/resources/ports"), sim.url)
    report = verify(plan, as_built)
    assert len(report.miswired) == 4 and report.summary()["ok"] == 44
    assert {m.expected.key for m in report.miswired} == {c.key for pair in planted.swapped for c in pair}
