"""What NVIDIA's own UFM SDK scripts expect of UFM (read in Mellanox/ufm_sdk_3.0), checked against the simulator."""

from __future__ import annotations

import re

from sim_support import PASSWORD, USER, Sim

# utils/job_polling.py finds the job in the 202's body text with this pattern.
SDK_JOB_IN_BODY = re.compile(r"\b/jobs/([0-9]*)\b")


def _disable(sim: Sim, label: str) -> tuple[str, str]:
    port = sim.state.resolve_port(label)
    guid = sim.state.port_name(port).system_guid
    response = sim.http.post("/ufmRest/actions", auth=(USER, PASSWORD), json={
        "action": "disable", "object_ids": [guid], "object_type": "System", "identifier": "id",
        "params": {"port_id": port}, "description": ""})
    assert response.status_code == 202, response.text
    found = SDK_JOB_IN_BODY.search(response.text)
    assert found is not None, response.text
    assert response.headers["Location"].split("/")[-1] == found.group(1)
    return found.group(1), guid


def test_an_action_names_its_job_in_the_header_and_the_body_and_has_a_sub_job_per_device(sim: Sim) -> None:
    job_id, guid = _disable(sim, "pod01-spine01/5")
    [child] = sim.get("/ufmRest/jobs", parent_id=job_id)
    assert (child["ParentID"], child["RelatedObjects"][0], child["Status"]) == (job_id, guid, "Running")
    sim.advance(5)
    assert sim.get("/ufmRest/jobs", parent_id=job_id)[0]["Status"] == "Completed"
    assert sim.get("/ufmRest/jobs", parent_id="999") == []


def test_versioning_has_an_events_counter_that_moves_with_every_event(sim: Sim) -> None:
    before = sim.get("/ufmRest/app/versioning")["events_version"]
    sim.inject(fault="link_down", link="core01-01/1")
    assert sim.get("/ufmRest/app/versioning")["events_version"] > before


def test_isolated_ports_lists_the_ports_marked_isolate(sim: Sim) -> None:
    port = sim.state.resolve_port("pod01-spine01/4")
    assert sim.get("/ufmRest/resources/isolated_ports") == {"isolated_ports": []}
    for action in ("isolate", "no_discover"):
        put = sim.http.put("/ufmRest/app/unhealthy_ports", auth=(USER, PASSWORD),
                           json={"ports": [port], "ports_policy": "UNHEALTHY", "action": action})
        assert put.status_code == 200
        sim.advance(sim.state.settings.sweep_seconds)  # the subnet manager applies it at its next sweep
        listed = sim.get("/ufmRest/resources/isolated_ports")["isolated_ports"]
        assert listed == ([f"0x{port}"] if action == "isolate" else [])


def test_external_events_land_in_the_event_log_and_bad_ones_are_refused(sim: Sim) -> None:
    guid = sim.state.port_name(sim.state.resolve_port("pod01-spine01/4")).system_guid
    sent = sim.http.post("/ufmRest/app/events/external_event", auth=(USER, PASSWORD), json={
        "event_id": 551, "description": "fabric-remediation: disabled pod01-spine01/4 (flap)",
        "object_name": guid, "otype": "Switch"})
    assert sent.status_code == 200, sent.text
    several = sim.http.post("/ufmRest/app/events/external_event?multiple_events=true", auth=(USER, PASSWORD),
                            json=[{"event_id": 553, "description": "a"}, {"event_id": "554", "description": "b"}])
    assert several.status_code == 200, several.text
    events = sim.get("/ufmRest/app/events")
    mine = [e for e in events if e["id"] >= events[-3]["id"]]
    assert [e["description"] for e in mine] == ["fabric-remediation: disabled pod01-spine01/4 (flap)", "a", "b"]
    assert [e["event_type"] for e in mine] == ["551", "553", "554"]
    assert mine[0]["object_name"] == guid
    for body, field in (({"event_id": 336, "description": "x"}, "event_id"), ({"event_id": 551}, "description"),
                        ({"event_id": 551, "description": "x", "object_name": 7}, "object_name")):
        refused = sim.http.post("/ufmRest/app/events/external_event", auth=(USER, PASSWORD), json=body)
        assert refused.status_code == 400 and f"'{field}'" in refused.json()["detail"], refused.text
