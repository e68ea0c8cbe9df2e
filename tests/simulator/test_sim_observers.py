"""Request observers: told of each request as it is received and as its answer goes out, in order, with the status;
an observer that acts on ``answering`` acts after UFM carried the request out and before the client has its answer."""

from __future__ import annotations

import httpx
from sim_support import PASSWORD, USER, Sim

from fabric.simulator.state import RequestSeen


def test_observers_see_each_request_received_then_answering(sim: Sim) -> None:
    seen: list[RequestSeen] = []
    sim.state.request_observers.append(seen.append)
    sim.get("/ufmRest/resources/systems")
    sim.http.get("/ufmRest/jobs/999", auth=(USER, PASSWORD))
    sim.http.get("/simulator/state")
    assert [(s.method, s.path, s.prefix, s.moment, s.status) for s in seen] == [
        ("GET", "/resources/systems", "/ufmRest", "received", None),
        ("GET", "/resources/systems", "/ufmRest", "answering", 200),
        ("GET", "/jobs/999", "/ufmRest", "received", None),
        ("GET", "/jobs/999", "/ufmRest", "answering", 404),
        ("GET", "/simulator/state", None, "received", None),
        ("GET", "/simulator/state", None, "answering", 200),
    ]


def test_an_action_is_carried_out_before_its_answer_is_observed(sim: Sim) -> None:
    link = sim.state.resolve_link("pod01-spine01/1")
    jobs_then: list[int] = []

    def observer(seen: RequestSeen) -> None:
        if seen.path == "/actions" and seen.moment == "answering":
            jobs_then.append(len(sim.state.jobs))

    sim.state.request_observers.append(observer)
    system = sim.state.port_name(link.b).system_guid
    response = sim.http.post("/ufmRest/actions", auth=(USER, PASSWORD), json={
        "action": "disable", "object_ids": [system], "object_type": "System", "params": {"port_id": link.b}})
    assert response.status_code == 202, response.text
    assert jobs_then == [1]


def test_without_observers_nothing_is_wrapped(sim: Sim) -> None:
    assert sim.state.request_observers == []
    assert isinstance(sim.get("/ufmRest/resources/systems"), list)
    assert sim.http.get("/simulator/state").status_code == httpx.codes.OK
