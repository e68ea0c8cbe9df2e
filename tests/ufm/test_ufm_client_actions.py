"""UfmClient port actions: disable/enable through jobs, isolate/restore through unhealthy ports.

Every action is confirmed by reading state back; writes are never retried.
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

from fabric.ufm.client import ActionResult, JobPollPolicy, PortActionMethod, RetryPolicy, UfmClient
from fabric.ufm.errors import (
    UfmActionNotConfirmedError,
    UfmJobFailedError,
    UfmJobTimeoutError,
    UfmMalformedResponseError,
    UfmNotFoundError,
    UfmOutcomeUnknownError,
    UfmServerError,
    UfmTimeoutError,
    UfmTransportError,
)
from fabric.ufm.models import Job, Port

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


def test_disable_posts_the_action_polls_the_job_and_confirms(
    router: respx.Router, make_client: ClientFactory, fake_time: FakeTime
) -> None:
    reads = port_states(router, "Link Up", "Disabled")
    post = router.post("/ufmRest/actions").mock(return_value=accepted("17"))
    jobs = job_statuses(router, "17", "Running", "Running", "Completed")

    result = call(make_client, lambda u: u.disable_port(PORT))

    assert json.loads(post.calls.last.request.content) == {
        "action": "disable",
        "object_ids": [SYSTEM],
        "object_type": "System",
        "identifier": "id",
        "params": {"port_id": PORT},
        "description": "",
    }
    assert post.call_count == 1
    assert jobs.call_count == 3
    assert fake_time.sleeps == [3.0, 3.0]  # the poll interval, twice
    assert reads.call_count == 2  # once for the system GUID, once to confirm
    assert result == ActionResult(
        port_name=PORT,
        action="disable",
        method=PortActionMethod.DISABLE,
        sent=True,
        job=result.job,
        port=result.port,
        confirm_reads=1,
    )
    assert result.job is not None and result.job.ID == "17"
    assert result.port is not None and result.port.is_disabled


def test_the_system_guid_comes_from_the_port_not_the_port_name(
    router: respx.Router, make_client: ClientFactory
) -> None:
    host_port = "0c42a10300280000_1"
    router.get(f"/ufmRest/resources/ports/{host_port}").mock(
        side_effect=[
            httpx.Response(200, json=[port_payload(host_port, system_id="0c42a103001b80ce")]),
            httpx.Response(
                200, json=[port_payload(host_port, system_id="0c42a103001b80ce", physical_state="Disabled")]
            ),
        ]
    )
    post = router.post("/ufmRest/actions").mock(return_value=accepted("3"))
    job_statuses(router, "3", "Completed")
    call(make_client, lambda u: u.disable_port(host_port))
    assert json.loads(post.calls.last.request.content)["object_ids"] == ["0c42a103001b80ce"]


def test_enable_confirms_the_port_is_no_longer_disabled(router: respx.Router, make_client: ClientFactory) -> None:
    port_states(router, "Disabled", "Polling")
    post = router.post("/ufmRest/actions").mock(return_value=accepted("18"))
    job_statuses(router, "18", "Completed")
    result = call(make_client, lambda u: u.enable_port(PORT))
    assert json.loads(post.calls.last.request.content)["action"] == "enable"
    assert result.sent and result.port is not None and result.port.physical_state == "Polling"


def test_job_id_may_come_in_the_body(router: respx.Router, make_client: ClientFactory) -> None:
    port_states(router, "Link Up", "Disabled")
    router.post("/ufmRest/actions").mock(return_value=accepted(location=False, body={"url": "/ufmRest/jobs/42"}))
    jobs = job_statuses(router, "42", "Completed")
    result = call(make_client, lambda u: u.disable_port(PORT))
    assert jobs.call_count == 1
    assert result.job is not None and result.job.ID == "42"


def test_action_without_a_job_reference_is_malformed(router: respx.Router, make_client: ClientFactory) -> None:
    port_states(router, "Link Up")
    router.post("/ufmRest/actions").respond(202, text="accepted")
    with pytest.raises(UfmMalformedResponseError, match="named no job") as caught:
        call(make_client, lambda u: u.disable_port(PORT))
    assert caught.value.status_code == 202
    assert "POST /ufmRest/actions" in str(caught.value)


@pytest.mark.parametrize("status", ["Completed With Errors", "Aborted"])
def test_failed_jobs_raise(router: respx.Router, make_client: ClientFactory, status: str) -> None:
    reads = port_states(router, "Link Up")
    router.post("/ufmRest/actions").mock(return_value=accepted("19"))
    job_statuses(router, "19", "Running", status)
    with pytest.raises(UfmJobFailedError) as caught:
        call(make_client, lambda u: u.disable_port(PORT))
    assert caught.value.job is not None and caught.value.job.Status == status
    assert status in str(caught.value)
    assert "GET /ufmRest/jobs/19" in str(caught.value)
    assert reads.call_count == 1  # no confirmation attempted after a failed job


def test_job_still_running_at_the_deadline(
    router: respx.Router, make_client: ClientFactory, fake_time: FakeTime
) -> None:
    port_states(router, "Link Up")
    router.post("/ufmRest/actions").mock(return_value=accepted("20"))
    jobs = job_statuses(router, "20", "Running")
    with pytest.raises(UfmJobTimeoutError, match="still 'Running'"):
        call(make_client, lambda u: u.disable_port(PORT), job_poll=JobPollPolicy(interval=5.0, deadline=20.0))
    assert sum(fake_time.sleeps) == 20.0
    assert jobs.call_count == 5


def test_action_not_confirmed_when_the_port_stays_up(
    router: respx.Router, make_client: ClientFactory, fake_time: FakeTime
) -> None:
    reads = port_states(router, "Link Up")
    router.post("/ufmRest/actions").mock(return_value=accepted("21"))
    job_statuses(router, "21", "Completed")
    with pytest.raises(UfmActionNotConfirmedError) as caught:
        call(make_client, lambda u: u.disable_port(PORT))
    assert reads.call_count == 1 + 3  # the first read, then ConfirmPolicy.attempts reads
    assert fake_time.sleeps == [2.0, 2.0]
    assert "'Link Up'" in str(caught.value) and "job 21" in str(caught.value)


def test_already_disabled_port_sends_nothing(router: respx.Router, make_client: ClientFactory) -> None:
    port_states(router, "Disabled")
    post = router.post("/ufmRest/actions").mock(return_value=accepted("1"))
    result = call(make_client, lambda u: u.disable_port(PORT))
    assert post.call_count == 0
    assert not result.sent and result.job is None


def test_port_without_system_id_is_refused_before_any_write(router: respx.Router, make_client: ClientFactory) -> None:
    router.get(PORT_PATH).respond(200, json=[port_payload(PORT, system_id=None)])
    post = router.post("/ufmRest/actions").mock(return_value=accepted("1"))
    with pytest.raises(UfmMalformedResponseError, match="no systemID"):
        call(make_client, lambda u: u.disable_port(PORT))
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
        call(make_client, lambda u: u.disable_port(PORT))
    assert post.call_count == 1
    assert fake_time.sleeps == []
    if isinstance(caught.value, UfmOutcomeUnknownError):
        # no answer: UFM may be carrying it out (a timeout, typed so that the caller reads UFM, never re-sends)
        assert isinstance(caught.value.__cause__, UfmTimeoutError)
        assert "outcome of this write is unknown" in str(caught.value)


def test_posting_an_action_returns_its_job_without_waiting(
    router: respx.Router, make_client: ClientFactory, fake_time: FakeTime
) -> None:
    reads = port_states(router, "Link Up")
    post = router.post("/ufmRest/actions").mock(return_value=accepted("23"))
    jobs = job_statuses(router, "23", "Running")
    posted = call(make_client, lambda u: u.post_port_action(PORT, "disable"))
    assert (posted.port_name, posted.action, posted.job_id) == (PORT, "disable", "23")
    assert (post.call_count, reads.call_count, jobs.call_count) == (1, 1, 0)
    assert fake_time.sleeps == []


def test_posting_to_a_port_already_in_the_wanted_state_sends_nothing(
    router: respx.Router, make_client: ClientFactory
) -> None:
    port_states(router, "Disabled")
    post = router.post("/ufmRest/actions").mock(return_value=accepted("1"))
    posted = call(make_client, lambda u: u.post_port_action(PORT, "disable"))
    assert posted.job_id is None and posted.port.is_disabled and post.call_count == 0


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
    with pytest.raises(ValueError):
        call(make_client, lambda u: u.disable_port("leaf01/1"))
    assert not router.calls


# ------------------------------------------------------------------------------------------ isolate / restore


def unhealthy(*port_names: str, condition: Any = "MANUAL") -> httpx.Response:
    entries = [
        {
            "UnhealthyGUID": name.split("_")[0],
            "UnhealthyPortNumber": name.split("_")[1],
            "PeerGUID": "0c42a103001b8256",
            "PeerPortNumber": "1",
            "State": "UNHEALTHY",
            "Condition": condition,
        }
        for name in port_names
    ]
    return httpx.Response(200, json=entries)


def test_isolate_puts_unhealthy_and_confirms_from_the_list(
    router: respx.Router, make_client: ClientFactory, fake_time: FakeTime
) -> None:
    put = router.put("/ufmRest/app/unhealthy_ports").respond(200)
    listing = router.get("/ufmRest/app/unhealthy_ports").mock(
        side_effect=[unhealthy(), unhealthy(PORT, condition=["MANUAL"])]
    )
    result = call(make_client, lambda u: u.isolate_port(PORT))
    assert json.loads(put.calls.last.request.content) == {
        "ports": [PORT],
        "ports_policy": "UNHEALTHY",
        "action": "isolate",
    }
    assert listing.call_count == 2
    assert fake_time.sleeps == [2.0]
    assert result.sent and result.method is PortActionMethod.ISOLATE
    assert result.unhealthy is not None and result.unhealthy.Condition == ["MANUAL"]


def test_isolate_not_confirmed(router: respx.Router, make_client: ClientFactory) -> None:
    router.put("/ufmRest/app/unhealthy_ports").respond(200)
    router.get("/ufmRest/app/unhealthy_ports").mock(return_value=unhealthy("1c34da0300728606_8"))
    with pytest.raises(UfmActionNotConfirmedError, match="absent from"):
        call(make_client, lambda u: u.isolate_port(PORT))


def test_restore_puts_healthy_and_confirms_the_port_left_the_list(
    router: respx.Router, make_client: ClientFactory
) -> None:
    put = router.put("/ufmRest/app/unhealthy_ports").respond(200, json={})
    router.get("/ufmRest/app/unhealthy_ports").mock(return_value=unhealthy("1c34da0300728606_8"))
    result = call(make_client, lambda u: u.restore_port(PORT))
    assert json.loads(put.calls.last.request.content) == {"ports": [PORT], "ports_policy": "HEALTHY"}
    assert result.action == "restore" and result.unhealthy is None


def test_restore_not_confirmed(router: respx.Router, make_client: ClientFactory) -> None:
    router.put("/ufmRest/app/unhealthy_ports").respond(200)
    router.get("/ufmRest/app/unhealthy_ports").mock(return_value=unhealthy(PORT))
    with pytest.raises(UfmActionNotConfirmedError, match="still in"):
        call(make_client, lambda u: u.restore_port(PORT))


def test_put_is_never_retried(router: respx.Router, make_client: ClientFactory) -> None:
    put = router.put("/ufmRest/app/unhealthy_ports").respond(500)
    listing = router.get("/ufmRest/app/unhealthy_ports").mock(return_value=unhealthy(PORT))
    with pytest.raises(UfmServerError):
        call(make_client, lambda u: u.isolate_port(PORT))
    assert put.call_count == 1
    assert listing.call_count == 0


# ------------------------------------------------------------------------------------------ take_out / put_back


def test_take_out_and_put_back_dispatch_on_the_method(router: respx.Router, make_client: ClientFactory) -> None:
    port_states(router, "Link Up", "Disabled", "Disabled", "Link Up")
    post = router.post("/ufmRest/actions").mock(side_effect=[accepted("1"), accepted("2")])
    job_statuses(router, "1", "Completed")
    job_statuses(router, "2", "Completed")
    put = router.put("/ufmRest/app/unhealthy_ports").respond(200)
    router.get("/ufmRest/app/unhealthy_ports").mock(side_effect=[unhealthy(PORT), unhealthy()])

    async def go(ufm: UfmClient) -> list[str]:
        port = Port.model_validate(port_payload(PORT))
        results = [
            await ufm.take_out(port, PortActionMethod.DISABLE),
            await ufm.put_back(PORT, PortActionMethod.DISABLE),
            await ufm.take_out(PORT, PortActionMethod.ISOLATE),
            await ufm.put_back(port, PortActionMethod.ISOLATE),
        ]
        return [r.action for r in results]

    assert call(make_client, go) == ["disable", "enable", "isolate", "restore"]
    assert [json.loads(c.request.content)["action"] for c in post.calls] == ["disable", "enable"]
    assert [json.loads(c.request.content)["ports_policy"] for c in put.calls] == ["UNHEALTHY", "HEALTHY"]
