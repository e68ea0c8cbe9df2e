"""UfmClient reads: auth modes, error mapping, retries of GET only, no partial data."""

from __future__ import annotations

import asyncio
import base64
import gc
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
import respx
from ufm_fakes import BASE, ClientFactory, FakeTime, port_payload

from fabric.ufm.auth import BasicAuth, SessionAuth, TokenAuth
from fabric.ufm.client import RetryPolicy, UfmClient
from fabric.ufm.errors import (
    UfmAuthError,
    UfmError,
    UfmHttpStatusError,
    UfmMalformedResponseError,
    UfmNotFoundError,
    UfmServerError,
    UfmTimeoutError,
    UfmTransportError,
)
from topology.errors import InputError

T = TypeVar("T")


def call(factory: ClientFactory, fn: Callable[[UfmClient], Awaitable[T]], **kwargs: Any) -> T:
    async def go() -> T:
        async with factory(**kwargs) as ufm:
            return await fn(ufm)

    return asyncio.run(go())


# ------------------------------------------------------------------------------------------ auth


def test_basic_auth_uses_ufmrest_and_http_basic(router: respx.Router, make_client: ClientFactory) -> None:
    route = router.get("/ufmRest/resources/ports").respond(200, json=[port_payload()])
    ports = call(make_client, lambda u: u.ports())
    assert [p.name for p in ports] == ["1c34da0300728606_1"]
    sent = route.calls.last.request
    assert sent.headers["Authorization"] == "Basic " + base64.b64encode(b"admin:s3cret").decode()
    assert sent.url.path == "/ufmRest/resources/ports"


def test_token_auth_uses_v3_and_the_word_basic_not_bearer(router: respx.Router, make_client: ClientFactory) -> None:
    route = router.get("/ufmRestV3/resources/systems").respond(200, json=[{"guid": "1c34da0300728606"}])
    call(make_client, lambda u: u.systems(type="switch"), auth=TokenAuth("tok-123"))
    sent = route.calls.last.request
    assert sent.headers["Authorization"] == "Basic tok-123"
    assert "Bearer" not in sent.headers["Authorization"]
    assert sent.url.params["type"] == "switch"


def test_secrets_stay_out_of_repr() -> None:
    assert "s3cret" not in repr(BasicAuth("admin", "s3cret"))
    assert "tok-123" not in repr(TokenAuth("tok-123"))
    assert "pw" not in repr(SessionAuth("admin", "pw"))


def _login_route(router: respx.Router, *cookies: str) -> respx.Route:
    responses = [httpx.Response(302, headers={"Set-Cookie": f"sessionid={c}; Path=/"}) for c in cookies]
    return router.post("/dologin").mock(side_effect=responses)


def test_session_login_posts_form_fields_and_keeps_the_cookie(router: respx.Router, make_client: ClientFactory) -> None:
    login = _login_route(router, "abc")
    route = router.get("/ufmRestV2/app/alarms").respond(200, json=[])
    call(make_client, lambda u: u.alarms(), auth=SessionAuth("admin", "pw"))
    assert login.call_count == 1
    form = dict(httpx.QueryParams(login.calls.last.request.content.decode()))
    assert form == {"httpd_username": "admin", "httpd_password": "pw"}
    assert "sessionid=abc" in route.calls.last.request.headers["Cookie"]
    assert "Authorization" not in route.calls.last.request.headers


def test_session_relogs_in_once_on_401(router: respx.Router, make_client: ClientFactory) -> None:
    login = _login_route(router, "old", "new")
    route = router.get("/ufmRestV2/app/alarms").mock(
        side_effect=[httpx.Response(401, text="session expired"), httpx.Response(200, json=[])]
    )

    async def two_reads(ufm: UfmClient) -> None:
        await ufm.alarms()

    call(make_client, two_reads, auth=SessionAuth("admin", "pw"))
    assert login.call_count == 2
    assert route.call_count == 2
    assert "sessionid=new" in route.calls.last.request.headers["Cookie"]


def test_session_second_401_is_an_auth_error(router: respx.Router, make_client: ClientFactory) -> None:
    login = _login_route(router, "a", "b", "c")
    router.get("/ufmRestV2/app/alarms").respond(401, text="nope")
    with pytest.raises(UfmAuthError) as caught:
        call(make_client, lambda u: u.alarms(), auth=SessionAuth("admin", "pw"))
    assert login.call_count == 2
    assert caught.value.status_code == 401


def test_session_login_without_cookie_is_an_auth_error(router: respx.Router, make_client: ClientFactory) -> None:
    router.post("/dologin").respond(200, text="<html>login page</html>")
    data = router.get("/ufmRestV2/app/alarms").respond(200, json=[])
    with pytest.raises(UfmAuthError, match="no session cookie"):
        call(make_client, lambda u: u.alarms(), auth=SessionAuth("admin", "wrong"))
    assert data.call_count == 0


def test_session_login_refused(router: respx.Router, make_client: ClientFactory) -> None:
    router.post("/dologin").respond(403, text="forbidden")
    with pytest.raises(UfmAuthError, match="login refused"):
        call(make_client, lambda u: u.alarms(), auth=SessionAuth("admin", "wrong"))


# ------------------------------------------------------------------------------------------ status errors


@pytest.mark.parametrize(
    ("status", "error"),
    [(401, UfmAuthError), (403, UfmAuthError), (404, UfmNotFoundError), (400, UfmHttpStatusError)],
)
def test_client_errors_are_typed_and_not_retried(
    router: respx.Router, make_client: ClientFactory, fake_time: FakeTime, status: int, error: type[UfmError]
) -> None:
    route = router.get("/ufmRest/app/events").respond(status, text=f"status {status} body")
    with pytest.raises(error) as caught:
        call(make_client, lambda u: u.events())
    assert route.call_count == 1
    assert fake_time.sleeps == []
    message = str(caught.value)
    assert "GET /ufmRest/app/events" in message
    assert str(status) in message
    assert f"status {status} body" in message


def test_500_is_retried_with_backoff_then_raised(
    router: respx.Router, make_client: ClientFactory, fake_time: FakeTime
) -> None:
    route = router.get("/ufmRest/resources/links").respond(500, text="Internal Server Error")
    with pytest.raises(UfmServerError) as caught:
        call(make_client, lambda u: u.links())
    assert route.call_count == 3
    assert fake_time.sleeps == [0.5, 1.0]
    assert caught.value.status_code == 500
    assert "Internal Server Error" in str(caught.value)


def test_transient_503_then_success(router: respx.Router, make_client: ClientFactory, fake_time: FakeTime) -> None:
    link = {"source_guid": "a" * 16, "source_port": "1", "destination_guid": "b" * 16, "destination_port": "2"}
    router.get("/ufmRest/resources/links").mock(
        side_effect=[httpx.Response(503), httpx.Response(200, json={"data": [link]})]
    )
    links = call(make_client, lambda u: u.links())
    assert [lk.source.name for lk in links] == ["a" * 16 + "_1"]
    assert fake_time.sleeps == [0.5]


def test_backoff_is_capped() -> None:
    policy = RetryPolicy(attempts=10, backoff=1.0, multiplier=3.0, max_backoff=5.0)
    assert [policy.delay(n) for n in range(1, 5)] == [1.0, 3.0, 5.0, 5.0]
    with pytest.raises(ValueError):
        RetryPolicy(attempts=0)


def test_get_timeout_is_retried_then_raised(
    router: respx.Router, make_client: ClientFactory, fake_time: FakeTime
) -> None:
    route = router.get("/ufmRest/app/versioning").mock(side_effect=httpx.ReadTimeout("slow"))
    with pytest.raises(UfmTimeoutError) as caught:
        call(make_client, lambda u: u.versioning())
    assert route.call_count == 3
    assert len(fake_time.sleeps) == 2
    assert "GET /ufmRest/app/versioning" in str(caught.value)


def test_connection_failure_is_a_transport_error(router: respx.Router, make_client: ClientFactory) -> None:
    router.get("/ufmRest/app/alarms").mock(side_effect=httpx.ConnectError("refused"))
    with pytest.raises(UfmTransportError, match="ConnectError"):
        call(make_client, lambda u: u.alarms())


# ------------------------------------------------------------------------------------------ bad bodies


@pytest.mark.parametrize(
    "body",
    [
        b"<html><body>502 Bad Gateway from a proxy</body></html>",
        b'[{"name": "1c34da0300728606_1", "physical_state": "Link Up"}, {"name": "1c34da03',
        b"",
    ],
    ids=["garbage", "truncated", "empty"],
)
def test_unparseable_bodies_are_malformed_and_not_retried(
    router: respx.Router, make_client: ClientFactory, body: bytes
) -> None:
    route = router.get("/ufmRest/resources/ports").respond(200, content=body)
    with pytest.raises(UfmMalformedResponseError) as caught:
        call(make_client, lambda u: u.ports())
    assert route.call_count == 1
    assert "GET /ufmRest/resources/ports" in str(caught.value)
    assert caught.value.body_excerpt == body.decode()[:200] + ("…" if len(body) > 200 else "")


@pytest.mark.parametrize(("path", "body", "says"), [
    # Read last-wins, the port would be the second one's: a wrong port disabled, or a false wrong_port.
    ("/resources/ports", b'[{"name": "1c34da0300728606_1", "name": "1c34da0300728606_2"}]',
     "[0].name: duplicate key 'name'"),
    ("/resources/ports", b'[{"name": "1c34da0300728606_1", "active_speed": NaN}]',
     "[0].active_speed: NaN is not a number JSON has"),
    ("/app/versioning", b'{"topology": Infinity}', "topology: Infinity is not a number JSON has"),
    ("/app/versioning", b'{"topology": 1, "topology": 2}', "topology: duplicate key 'topology'"),
])
def test_json_no_reader_should_trust_is_malformed_naming_the_field(
    router: respx.Router, make_client: ClientFactory, path: str, body: bytes, says: str
) -> None:
    router.get("/ufmRest" + path).respond(200, content=body)
    read: Callable[[UfmClient], Awaitable[object]] = (
        (lambda u: u.ports()) if path == "/resources/ports" else (lambda u: u.versioning()))
    with pytest.raises(UfmMalformedResponseError) as caught:
        call(make_client, read)
    assert f"UFM's answer is not JSON the service reads: {says}" in str(caught.value)
    assert f"GET /ufmRest{path}" in str(caught.value)


@pytest.mark.parametrize(
    "payload",
    [
        {"error": "something"},
        [port_payload(), {"physical_state": "Link Up"}],  # second port has no name
        [port_payload(), "string"],
        {"data": "not a list"},
    ],
    ids=["object", "bad-element", "non-object-element", "bad-data"],
)
def test_wrong_shapes_never_yield_partial_data(router: respx.Router, make_client: ClientFactory, payload: Any) -> None:
    router.get("/ufmRest/resources/ports").respond(200, json=payload)
    with pytest.raises(UfmMalformedResponseError, match="wrong shape") as caught:
        call(make_client, lambda u: u.ports())
    assert caught.value.status_code == 200
    assert "GET /ufmRest/resources/ports" in str(caught.value)


def test_body_excerpt_is_bounded(router: respx.Router, make_client: ClientFactory) -> None:
    router.get("/ufmRest/app/events").respond(500, text="x" * 5000)
    with pytest.raises(UfmServerError) as caught:
        call(make_client, lambda u: u.events(), retry=RetryPolicy(attempts=1))
    assert caught.value.body_excerpt is not None
    assert len(caught.value.body_excerpt) <= 201
    assert len(str(caught.value)) < 400


# ------------------------------------------------------------------------------------------ reads


def test_ports_of_one_system_and_single_port(router: respx.Router, make_client: ClientFactory) -> None:
    listing = router.get("/ufmRest/resources/ports").respond(200, json=[port_payload()])
    single = router.get("/ufmRest/resources/ports/1c34da0300728606_3").respond(
        200, json=[port_payload("1c34da0300728606_3", physical_state="Disabled")]
    )

    async def go(ufm: UfmClient) -> tuple[int, bool]:
        ports = await ufm.ports(system="1c34da0300728606")
        port = await ufm.port("1C34DA0300728606_3")
        return len(ports), port.is_disabled

    assert call(make_client, go) == (1, True)
    assert listing.calls.last.request.url.params["system"] == "1c34da0300728606"
    assert single.call_count == 1


def test_port_empty_list_is_not_found(router: respx.Router, make_client: ClientFactory) -> None:
    router.get("/ufmRest/resources/ports/1c34da0300728606_3").respond(200, json=[])
    with pytest.raises(UfmNotFoundError, match="no port 1c34da0300728606_3"):
        call(make_client, lambda u: u.port("1c34da0300728606_3"))


def test_port_answer_for_another_port_is_malformed(router: respx.Router, make_client: ClientFactory) -> None:
    router.get("/ufmRest/resources/ports/1c34da0300728606_3").respond(200, json=[port_payload()])
    with pytest.raises(UfmMalformedResponseError, match="asked for port"):
        call(make_client, lambda u: u.port("1c34da0300728606_3"))


def test_events_both_shapes_in_one_list(router: respx.Router, make_client: ClientFactory) -> None:
    router.get("/ufmRest/app/events").respond(
        200,
        json=[
            {"id": 1, "type": "329", "timestamp": "2017-09-19 10:49:03.018", "severity": "Warning"},
            {"id": 2, "type": "Link", "event_type": "328", "timestamp": "2024-05-28 08:03:05"},
        ],
    )
    events = call(make_client, lambda u: u.events())
    assert [(e.id, e.event_id, e.object_type) for e in events] == [(1, 329, None), (2, 328, "Link")]


def test_unhealthy_ports_and_job(router: respx.Router, make_client: ClientFactory) -> None:
    router.get("/ufmRest/app/unhealthy_ports").respond(
        200,
        json=[{"UnhealthyGUID": "1c34da0300728606", "UnhealthyPortNumber": "3", "Condition": "MANUAL"}],
    )
    router.get("/ufmRest/jobs/5").respond(200, json=[{"ID": "5", "Status": "Completed"}])
    router.get("/ufmRest/jobs/6").respond(200, json={"Status": "Running"})
    router.get("/ufmRest/jobs/7").respond(200, json=[])

    async def go(ufm: UfmClient) -> tuple[Any, ...]:
        unhealthy = await ufm.unhealthy_ports()
        five, six = await ufm.job("5"), await ufm.job("6")
        return unhealthy[0].Condition, five.Status, six.ID, six.in_progress

    assert call(make_client, go) == (["MANUAL"], "Completed", "6", True)
    with pytest.raises(UfmNotFoundError):
        call(make_client, lambda u: u.job("7"))


def test_base_url_forms(router: respx.Router, fake_time: FakeTime) -> None:
    route = router.get("/ufmRest/app/alarms").respond(200, json=[])

    async def go() -> None:
        async with UfmClient(
            BASE + "/",
            BasicAuth("a", "b"),
            transport=httpx.MockTransport(router.async_handler),
            sleep=fake_time.sleep,
        ) as ufm:
            assert ufm.prefix == "/ufmRest"
            await ufm.alarms()

    asyncio.run(go())
    assert str(route.calls.last.request.url) == "https://ufm.example/ufmRest/app/alarms"
    with pytest.raises(ValueError):
        UfmClient("ufm.example", BasicAuth("a", "b"))


def test_ca_bundle_is_loaded(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):  # the bundle is really read: a missing one fails now
        UfmClient(BASE, BasicAuth("a", "b"), ca_bundle=tmp_path / "missing.pem")


def test_body_is_json_even_with_a_wrong_content_type(router: respx.Router, make_client: ClientFactory) -> None:
    router.get("/ufmRest/app/alarms").respond(200, content=json.dumps([{"id": 4}]).encode(), headers={})
    alarms = call(make_client, lambda u: u.alarms())
    assert alarms[0].id == 4


def test_a_list_answer_is_freed_with_its_last_reference_not_by_the_cyclic_collector() -> None:
    """httpx's response and its stream refer to each other: without the cycle broken, every list UFM answered
    (18 MB of ports on h100-4k) would stay until the collector ran, which the daemon's policy makes rare. (A
    transport of its own: respx's router keeps every response it served.)"""
    body = json.dumps([port_payload()]).encode()

    async def ports() -> list[str]:
        transport = httpx.MockTransport(lambda request: httpx.Response(200, content=body))
        async with UfmClient(BASE, BasicAuth("admin", "s3cret"), transport=transport) as client:
            return [p.name for p in await client.ports()]

    gc.collect()
    earlier = [o for o in gc.get_objects() if isinstance(o, httpx.Response)]  # other tests' (respx keeps them)
    gc.disable()
    try:
        names = asyncio.run(ports())
        alive = [o for o in gc.get_objects() if isinstance(o, httpx.Response) and all(o is not e for e in earlier)]
    finally:
        gc.enable()
    assert names == ["1c34da0300728606_1"]
    assert alive == []
