"""Port actions (POST /actions + jobs) and isolation (PUT /app/unhealthy_ports) through the project's client."""

from __future__ import annotations

import httpx
import pytest
from sim_support import PASSWORD, USER, Sim, run

from fabric.ufm import JobStatus, PortActionMethod, UfmJobFailedError, UfmOutcomeUnknownError


def _event_ids(sim: Sim) -> list[int]:
    return [int(e["event_type"]) for e in sim.get("/ufmRest/app/events")]


def test_disable_then_enable_a_port(sim: Sim) -> None:
    link = sim.state.resolve_link("pod01-spine01/1")
    port = link.b

    async def scenario() -> None:
        async with sim.client() as ufm:
            posted = await ufm.take_out(port, PortActionMethod.DISABLE)
            assert posted.sent and posted.job_id is not None
            assert (await ufm.wait_for_job(posted.job_id)).status is JobStatus.COMPLETED
            disabled = await ufm.port(port)
            assert (disabled.physical_state, disabled.logical_state) == ("Disabled", "Down")
            peer = await ufm.port(link.a)
            assert peer.physical_state == "Polling"
            assert link.name not in {f"{k.source.name}:{k.destination.name}" for k in await ufm.links()}
            events = await ufm.events()
            assert [e.event_id for e in events] == [336, 329]
            assert events[0].object_name == port and events[0].description == f"Port {port} action disable succeeded"
            again = await ufm.take_out(port, PortActionMethod.DISABLE)
            assert not again.sent and again.job_id is None  # already disabled: nothing sent, no job
            restored = await ufm.put_back(port, PortActionMethod.DISABLE)
            assert restored.job_id is not None and (await ufm.wait_for_job(restored.job_id)).succeeded
            assert (await ufm.port(port)).physical_state == "Link Up"
            assert [e.event_id for e in await ufm.events()] == [336, 329, 336, 328]
            assert len(await ufm.links()) == 48
    run(scenario())


def test_job_runs_for_its_simulated_time(sim: Sim) -> None:
    port = sim.state.resolve_port("pod01-spine01/2")
    guid = sim.state.port_name(port).system_guid
    body = {"action": "reset", "object_ids": [guid], "object_type": "System", "identifier": "id",
            "params": {"port_id": port}, "description": ""}
    response = sim.http.post("/ufmRest/actions", json=body, auth=(USER, PASSWORD))
    assert response.status_code == 202
    job_path = httpx.URL(response.headers["Location"]).path
    assert sim.get(job_path)["Status"] == "Running"
    sim.advance(0.5)
    assert sim.get(job_path)["Status"] == "Running"
    assert _event_ids(sim) == []
    sim.advance(0.5)
    job = sim.get(job_path)
    assert job["Status"] == "Completed" and job["Progress"] == 100
    assert _event_ids(sim) == [336, 329]  # a reset takes the link down while the port retrains...
    assert sim.get(f"/ufmRest/resources/ports/{port}")[0]["physical_state"] == "Polling"
    sim.advance(sim.state.settings.reset_seconds)
    assert _event_ids(sim) == [336, 329, 328]  # ...and up again
    assert sim.get(f"/ufmRest/resources/ports/{port}")[0]["physical_state"] == "Link Up"


def test_unknown_port_and_injected_failure_complete_with_errors(sim: Sim) -> None:
    port = sim.state.resolve_port("pod01-spine01/3")
    guid = sim.state.port_name(port).system_guid

    async def scenario() -> None:
        body = {"action": "disable", "object_ids": [guid], "object_type": "System", "identifier": "id",
                "params": {"port_id": f"{guid}_60"}}
        # The client reads a port before acting on it, so an unknown port is sent by hand.
        response = sim.http.post("/ufmRest/actions", json=body, auth=(USER, PASSWORD))
        assert response.status_code == 202
        job_id = response.headers["Location"].rsplit("/", 1)[1]
        async with sim.client() as ufm:
            with pytest.raises(UfmJobFailedError) as failed:
                await ufm.wait_for_job(job_id)
            assert failed.value.job is not None and "not found" in str(failed.value.job.Summary)
            sim.inject(fault="action_failure", count=1, port="pod01-spine01/3", reason="switch did not answer")
            posted = await ufm.take_out(port, PortActionMethod.DISABLE)
            with pytest.raises(UfmJobFailedError) as injected:
                await ufm.wait_for_job(posted.job_id or "")
            assert injected.value.job is not None
            assert injected.value.job.Status == "Completed With Errors"
            assert (await ufm.port(port)).physical_state == "Link Up"
            events = await ufm.events()
            assert [e.event_id for e in events] == [337, 337]
            assert events[1].object_name == port and events[1].severity == "Minor"
            # the failure was for one action only: the next one works
            again = await ufm.take_out(port, PortActionMethod.DISABLE)
            assert (await ufm.wait_for_job(again.job_id or "")).succeeded
            assert (await ufm.port(port)).physical_state == "Disabled"
    run(scenario())


def test_action_on_a_port_of_another_system_fails(sim: Sim) -> None:
    port = sim.state.resolve_port("pod01-spine01/1")
    other = sim.state.resolve_node("pod01-spine02", switch=True)
    response = sim.http.post("/ufmRest/actions", auth=(USER, PASSWORD), json={
        "action": "disable", "object_ids": [other], "object_type": "System", "identifier": "id",
        "params": {"port_id": port}})
    sim.advance(1)
    job = sim.get(httpx.URL(response.headers["Location"]).path)
    assert job["Status"] == "Completed With Errors" and "not a port of system" in job["Summary"]
    assert sim.get(f"/ufmRest/resources/ports/{port}")[0]["physical_state"] == "Link Up"


@pytest.mark.parametrize("mode", ["basic", "session", "token"])
def test_isolate_and_restore(sim: Sim, mode: str) -> None:
    port = sim.state.resolve_port("pod01-spine01/4")

    async def scenario() -> None:
        async with sim.client(mode) as ufm:
            posted = await ufm.take_out(port, PortActionMethod.ISOLATE)
            assert (posted.action, posted.job_id, posted.sent) == ("isolate", None, True)  # synchronous: no job
            [entry] = await ufm.unhealthy_ports()  # listed at once...
            assert port in entry.ports and entry.manual and entry.Condition == ["MANUAL"]
            event = (await ufm.events())[-1]
            assert event.event_id == 702 and "due to MANUAL" in (event.description or "")
            assert (await ufm.port(port)).logical_state == "Active"  # ...isolated at the next sweep
            sim.advance(sim.state.settings.sweep_seconds)
            assert (await ufm.port(port)).logical_state == "Armed"
            assert (await ufm.port(port)).physical_state == "Link Up"  # the link stays up
            restored = await ufm.put_back(port, PortActionMethod.ISOLATE)
            assert restored.action == "restore" and await ufm.unhealthy_ports() == []
            sim.advance(sim.state.settings.sweep_seconds)
            assert (await ufm.port(port)).logical_state == "Active"
    run(scenario())


def test_healthy_by_device_clears_all_its_ports(sim: Sim) -> None:
    first, second = sim.state.resolve_port("pod01-spine01/1"), sim.state.resolve_port("pod01-spine01/2")
    guid = sim.state.port_name(first).system_guid
    put = sim.http.put("/ufmRest/app/unhealthy_ports", auth=(USER, PASSWORD),
                       json={"ports": [first, second], "ports_policy": "UNHEALTHY", "action": "no_discover"})
    assert put.status_code == 200
    assert {e["State"] for e in sim.get("/ufmRest/app/unhealthy_ports")} == {"no_discover"}
    clear = sim.http.put("/ufmRest/app/unhealthy_ports", auth=(USER, PASSWORD),
                         json={"ports": [], "devices": [guid], "ports_policy": "HEALTHY"})
    assert clear.status_code == 200
    assert sim.get("/ufmRest/app/unhealthy_ports") == []


def test_a_stalled_job_never_completes_and_never_changes_the_port(sim: Sim) -> None:
    port = sim.state.resolve_port("pod01-spine01/5")
    sim.inject(fault="job_stall", count=1, port="pod01-spine01/5")

    async def scenario() -> None:
        async with sim.client() as ufm:
            posted = await ufm.post_port_action(port, "disable")
            assert posted.job_id is not None
            sim.advance(3600)
            job = (await ufm.await_jobs([posted.job_id], within=0))[posted.job_id]
            assert not isinstance(job, Exception) and job.in_progress
            assert (await ufm.port(port)).physical_state == "Link Up"
            again = await ufm.post_port_action(port, "disable")  # the stall was for one action only
            assert again.job_id is not None
            sim.advance(1)
            assert (await ufm.port(port)).physical_state == "Disabled"
    run(scenario())
    assert 336 in sim.event_ids() and len(sim.state.jobs) == 2


def test_a_slow_job_completes_after_its_time(sim: Sim) -> None:
    port = sim.state.resolve_port("pod01-spine01/6")
    sim.inject(fault="job_stall", count=1, runs_for="2m")

    async def scenario() -> None:
        async with sim.client() as ufm:
            posted = await ufm.post_port_action(port, "disable")
            assert posted.job_id is not None
            sim.advance(119)
            assert (await ufm.port(port)).physical_state == "Link Up"
            sim.advance(1)
            job = (await ufm.await_jobs([posted.job_id], within=0))[posted.job_id]
            assert not isinstance(job, Exception) and job.succeeded
            assert (await ufm.port(port)).physical_state == "Disabled"
    run(scenario())


def test_a_late_answer_times_the_client_out_but_the_action_is_carried_out(sim: Sim) -> None:
    port = sim.state.resolve_port("pod01-spine01/7")
    sim.inject(fault="api", endpoint="/actions", method="POST", mode="late", delay="3s", requests=1)

    async def scenario() -> None:
        async with sim.client(timeout=0.5) as ufm:
            with pytest.raises(UfmOutcomeUnknownError):
                await ufm.post_port_action(port, "disable")
    run(scenario())
    assert len(sim.state.jobs) == 1  # UFM took the action before the answer was lost
    sim.advance(1)
    assert sim.get(f"/ufmRest/resources/ports/{port}")[0]["physical_state"] == "Disabled"
