"""UfmClient port writes: disable/enable posted as jobs, isolate/restore through unhealthy ports.

Every write is handed to UFM and returned at once, never retried; confirming it by reading UFM is the caller's
(``fabric.controller.writes``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import httpx
import pytest
import respx
from ufm_fakes import ClientFactory, FakeTime, port_payload

from fabric.ufm.client import JobPollPolicy, PortActionMethod, RetryPolicy, UfmClient
from fabric.ufm.errors import (
    UfmJobFailedError,
    UfmJobTimeoutError,
    UfmMalformedResponseError,
    UfmNotFoundError,
    UfmOutcomeUnknownError,
    UfmServerError,
    UfmTimeoutError,
    UfmTransportError,
)
from fabric.ufm.models import Job

T = TypeVar("T")
PORT = "1c34da0300728606_7"
SYSTEM = "1c34da0300728606"
PORT_PATH = f"/ufmRest/resources/ports/{PORT}"


def call(factory: ClientFactory, fn: Callable[[UfmClient], Awaitable[T]], **kwargs: Any) -> T:
    async def go() -> T:
        async with factory(**kwargs) as ufm:
            return await fn(ufm)

    return asyncio.run(go())


def port_states(router: respx.Router, *states: str) -> respx.Route:
    """Successive reads of the port return these physical states (the last one repeats)."""
    responses = [httpx.Response(200, json=[port_payload(PORT, physical_state=s)]) for s in states]
    responses += [responses[-1]] * 10
    return router.get(PORT_PATH).mock(side_effect=responses)


def accepted(job_id: str = "17", *, location: bool = True, body: Any = None) -> httpx.Response:
    headers = {"Location": f"https://ufm.example/ufmRest/jobs/{job_id}"} if location else {}
    if body is None:
        return httpx.Response(202, headers=headers)
    return httpx.Response(202, headers=headers, json=body)


def job_statuses(router: respx.Router, job_id: str, *statuses: str) -> respx.Route:
    responses = [
        httpx.Response(200, json={"ID": job_id, "Status": s, "Progress": 100, "Summary": f"{s} summary"})
        for s in statuses
    ]
    return router.get(f"/ufmRest/jobs/{job_id}").mock(side_effect=responses + [responses[-1]] * 50)


# ------------------------------------------------------------------------------------------ disable / enable


def test_disable_posts_the_action_and_returns_its_job_without_waiting(
    router: respx.Router, make_client: ClientFactory, fake_time: FakeTime
) -> None:
    reads = port_states(router, "Link Up")
    post = router.post("/ufmRest/actions").mock(return_value=accepted("17"))
    jobs = job_statuses(router, "17", "Running")

    posted = call(make_client, lambda u: u.take_out(PORT, PortActionMethod.DISABLE))

    assert json.loads(post.calls.last.request.content) == {
        "action": "disable",
        "object_ids": [SYSTEM],
        "object_type": "System",
        "identifier": "id",
        "params": {"port_id": PORT},
        "description": "",
    }
    assert (posted.port_name, posted.action, posted.job_id, posted.sent) == (PORT, "disable", "17", True)
    assert (post.call_count, reads.call_count, jobs.call_count) == (1, 1, 0)  # read for the system GUID, no poll
    assert fake_time.sleeps == []


def test_the_system_guid_comes_from_the_port_not_the_port_name(
    router: respx.Router, make_client: ClientFactory
) -> None:
    host_port = "0c42a10300280000_1"
    router.get(f"/ufmRest/resources/ports/{host_port}").respond(
        200, json=[port_payload(host_port, system_id="0c42a103001b80ce")])
    post = router.post("/ufmRest/actions").mock(return_value=accepted("3"))
    call(make_client, lambda u: u.take_out(host_port, PortActionMethod.DISABLE))
    assert json.loads(post.calls.last.request.content)["object_ids"] == ["0c42a103001b80ce"]


def test_put_back_by_disable_posts_the_enable(router: respx.Router, make_client: ClientFactory) -> None:
    port_states(router, "Disabled")
    post = router.post("/ufmRest/actions").mock(return_value=accepted("18"))
    posted = call(make_client, lambda u: u.put_back(PORT, PortActionMethod.DISABLE))
    assert json.loads(post.calls.last.request.content)["action"] == "enable"
    assert (posted.action, posted.job_id) == ("enable", "18")


def test_job_id_may_come_in_the_body(router: respx.Router, make_client: ClientFactory) -> None:
    port_states(router, "Link Up")
    router.post("/ufmRest/actions").mock(return_value=accepted(location=False, body={"url": "/ufmRest/jobs/42"}))
    posted = call(make_client, lambda u: u.post_port_action(PORT, "disable"))
    assert posted.job_id == "42"


def test_action_without_a_job_reference_is_malformed(router: respx.Router, make_client: ClientFactory) -> None:
    port_states(router, "Link Up")
    router.post("/ufmRest/actions").respond(202, text="accepted")
    with pytest.raises(UfmMalformedResponseError, match="named no job") as caught:
        call(make_client, lambda u: u.take_out(PORT, PortActionMethod.DISABLE))
    assert caught.value.status_code == 202
    assert "POST /ufmRest/actions" in str(caught.value)


@pytest.mark.parametrize("status", ["Completed With Errors", "Aborted"])
def test_failed_jobs_raise(router: respx.Router, make_client: ClientFactory, status: str) -> None:
    job_statuses(router, "19", "Running", status)
    with pytest.raises(UfmJobFailedError) as caught:
        call(make_client, lambda u: u.wait_for_job("19"))
    assert caught.value.job is not None and caught.value.job.Status == status
    assert status in str(caught.value)
    assert "GET /ufmRest/jobs/19" in str(caught.value)


def test_job_still_running_at_the_deadline(
    router: respx.Router, make_client: ClientFactory, fake_time: FakeTime
) -> None:
    jobs = job_statuses(router, "20", "Running")
    with pytest.raises(UfmJobTimeoutError, match="still 'Running'"):
        call(make_client, lambda u: u.wait_for_job("20"), job_poll=JobPollPolicy(interval=5.0, deadline=20.0))
    assert sum(fake_time.sleeps) == 20.0
    assert jobs.call_count == 5


def test_already_disabled_port_sends_nothing(router: respx.Router, make_client: ClientFactory) -> None:
    port_states(router, "Disabled")
    post = router.post("/ufmRest/actions").mock(return_value=accepted("1"))
    posted = call(make_client, lambda u: u.take_out(PORT, PortActionMethod.DISABLE))
    assert post.call_count == 0
    assert not posted.sent and posted.job_id is None and posted.port.is_disabled


def test_port_without_system_id_is_refused_before_any_write(router: respx.Router, make_client: ClientFactory) -> None:
    router.get(PORT_PATH).respond(200, json=[port_payload(PORT, system_id=None)])
    post = router.post("/ufmRest/actions").mock(return_value=accepted("1"))
    with pytest.raises(UfmMalformedResponseError, match="no systemID"):
        call(make_client, lambda u: u.take_out(PORT, PortActionMethod.DISABLE))
    assert post.call_count == 0


@pytest.mark.parametrize(
    ("effect", "error"),
    [(httpx.Response(503, text="busy"), UfmServerError), (httpx.ReadTimeout("slow"), UfmOutcomeUnknownError)],
)
def test_post_is_never_retried(
    router: respx.Router,
    make_client: ClientFactory,
    fake_time: FakeTime,
    effect: Any,
    error: type[Exception],
) -> None:
    port_states(router, "Link Up")
    post = router.post("/ufmRest/actions").mock(side_effect=[effect, accepted("1")])
    with pytest.raises(error) as caught:
        call(make_client, lambda u: u.take_out(PORT, PortActionMethod.DISABLE))
    assert post.call_count == 1
    assert fake_time.sleeps == []
    if isinstance(caught.value, UfmOutcomeUnknownError):
        # no answer: UFM may be carrying it out (a timeout, typed so that the caller reads UFM, never re-sends)
        assert isinstance(caught.value.__cause__, UfmTimeoutError)
        assert "outcome of this write is unknown" in str(caught.value)


def test_a_failed_read_before_the_post_is_not_an_unknown_outcome(
    router: respx.Router, make_client: ClientFactory
) -> None:
    router.get(PORT_PATH).mock(side_effect=httpx.ConnectError("refused"))
    post = router.post("/ufmRest/actions").mock(return_value=accepted("1"))
    with pytest.raises(UfmTransportError) as caught:
        call(make_client, lambda u: u.post_port_action(PORT, "disable"), retry=RetryPolicy(attempts=1))
    assert not isinstance(caught.value, UfmOutcomeUnknownError) and post.call_count == 0


def test_awaiting_jobs_polls_them_together_until_none_runs(
    router: respx.Router, make_client: ClientFactory, fake_time: FakeTime
) -> None:
    quick = job_statuses(router, "1", "Running", "Completed")
    slow = job_statuses(router, "2", "Running", "Running", "Completed With Errors")
    router.get("/ufmRest/jobs/3").respond(404)
    seen = call(make_client, lambda u: u.await_jobs(["1", "2", "3", "2"], within=60.0))
    assert fake_time.sleeps == [3.0, 3.0]  # one sleep a round for all of them, not one per job
    assert (quick.call_count, slow.call_count) == (2, 3)
    first, second, gone = seen["1"], seen["2"], seen["3"]
    assert isinstance(first, Job) and first.succeeded
    assert isinstance(second, Job) and second.failed
    assert isinstance(gone, UfmNotFoundError)


def test_awaiting_jobs_gives_up_within_the_time_given(
    router: respx.Router, make_client: ClientFactory, fake_time: FakeTime
) -> None:
    job_statuses(router, "5", "Running")
    seen = call(make_client, lambda u: u.await_jobs(["5"], within=10.0))
    assert sum(fake_time.sleeps) <= 10.0
    job = seen["5"]
    assert isinstance(job, Job) and job.in_progress
    fake_time.sleeps.clear()
    call(make_client, lambda u: u.await_jobs(["5"], within=0))  # read once
    assert fake_time.sleeps == []


def test_bad_port_name_is_refused_locally(router: respx.Router, make_client: ClientFactory) -> None:
    for method in PortActionMethod:
        with pytest.raises(ValueError):
            call(make_client, lambda u, m=method: u.take_out("leaf01/1", m))
    assert not router.calls


# ------------------------------------------------------------------------------------------ isolate / restore


def test_isolate_reads_the_port_then_puts_it_unhealthy_and_returns_at_once(
    router: respx.Router, make_client: ClientFactory, fake_time: FakeTime
) -> None:
    reads = port_states(router, "Link Up")
    put = router.put("/ufmRest/app/unhealthy_ports").respond(200)
    listing = router.get("/ufmRest/app/unhealthy_ports").respond(200, json=[])
    posted = call(make_client, lambda u: u.take_out(PORT, PortActionMethod.ISOLATE))
    assert json.loads(put.calls.last.request.content) == {
        "ports": [PORT],
        "ports_policy": "UNHEALTHY",
        "action": "isolate",
    }
    assert (posted.port_name, posted.action, posted.job_id, posted.sent) == (PORT, "isolate", None, True)
    assert posted.port.system_guid == SYSTEM  # where UFM's event log files the note of the write
    # Confirming it is the caller's (by reading the list at its own time), never the client's.
    assert (reads.call_count, listing.call_count, fake_time.sleeps) == (1, 0, [])


def test_restore_puts_the_port_healthy(router: respx.Router, make_client: ClientFactory) -> None:
    port_states(router, "Link Up")
    put = router.put("/ufmRest/app/unhealthy_ports").respond(200, json={})
    posted = call(make_client, lambda u: u.put_back(PORT, PortActionMethod.ISOLATE))
    assert json.loads(put.calls.last.request.content) == {"ports": [PORT], "ports_policy": "HEALTHY"}
    assert (posted.action, posted.job_id) == ("restore", None)


def test_an_unknown_port_is_never_put(router: respx.Router, make_client: ClientFactory) -> None:
    router.get(PORT_PATH).respond(200, json=[])
    put = router.put("/ufmRest/app/unhealthy_ports").respond(200)
    with pytest.raises(UfmNotFoundError):
        call(make_client, lambda u: u.take_out(PORT, PortActionMethod.ISOLATE))
    assert put.call_count == 0


@pytest.mark.parametrize(
    ("effect", "error"),
    [(httpx.Response(500, text="no"), UfmServerError), (httpx.ReadTimeout("slow"), UfmOutcomeUnknownError)],
)
def test_put_is_never_retried(router: respx.Router, make_client: ClientFactory, fake_time: FakeTime, effect: Any,
                              error: type[Exception]) -> None:
    port_states(router, "Link Up")
    put = router.put("/ufmRest/app/unhealthy_ports").mock(side_effect=[effect, httpx.Response(200)])
    with pytest.raises(error) as caught:
        call(make_client, lambda u: u.take_out(PORT, PortActionMethod.ISOLATE))
    assert put.call_count == 1 and fake_time.sleeps == []
    if isinstance(caught.value, UfmOutcomeUnknownError):
        assert "isolate of port" in str(caught.value) and "PUT /ufmRest/app/unhealthy_ports" in str(caught.value)
