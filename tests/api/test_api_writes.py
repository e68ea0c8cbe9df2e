"""Writes need the admin token, and each is recorded with who asks and why."""

from __future__ import annotations

import logging
from datetime import timedelta
from urllib.parse import quote

import httpx
import pytest
from api_support import NODE1_LINK, NODE2_LINK, NOW, TOKEN, FakeRuntime, seed

from fabric.api.context import NotApplied, Reload
from fabric.store import RequestKind, Store
from topology.model import Fabric

pytestmark = pytest.mark.anyio

AUTH = {"Authorization": f"Bearer {TOKEN}"}
WHY = {"reason": "CHG-42: storm was a UFM restart", "by": "alice"}


async def test_writes_are_refused_while_no_token_is_configured(client: httpx.AsyncClient, store: Store) -> None:
    store.halt("storm")
    response = await client.post("/resume", json=WHY, headers=AUTH)
    assert response.status_code == 403
    assert response.json() == {"detail": "writes are refused: no admin token is configured (set "
                                         "FABRIC_API__ADMIN_TOKEN or [api] admin_token_file)"}
    assert store.pending_requests() == []


@pytest.mark.usefixtures("token")
@pytest.mark.parametrize(("headers", "detail"), [
    ({}, "this write needs the admin token: send 'Authorization: Bearer <token>'"),
    ({"Authorization": "Bearer not-the-token"}, "wrong admin token"),
    ({"Authorization": f"Basic {TOKEN}"}, "this write needs the admin token: send 'Authorization: Bearer <token>'"),
])
async def test_a_missing_or_wrong_token_is_401(client: httpx.AsyncClient, store: Store, headers: dict[str, str],
                                               detail: str) -> None:
    store.halt("storm")
    for method, path, body in (("POST", "/resume", WHY), ("POST", "/silences", {**WHY, "matcher": "switch:x",
                                                                                 "duration": "1h"}),
                               ("POST", "/reload", WHY), ("DELETE", "/silences/1?by=a&reason=b", None)):
        response = await client.request(method, path, json=body, headers=headers)
        assert (response.status_code, response.json()) == (401, {"detail": detail}), path
        assert response.headers["www-authenticate"] == "Bearer"
    assert store.pending_requests() == [] and store.silences() == []


@pytest.mark.usefixtures("token")
async def test_resume_is_a_request_recorded_with_who_and_why(client: httpx.AsyncClient, store: Store,
                                                              runtime: FakeRuntime) -> None:
    response = await client.post("/resume", json=WHY, headers=AUTH)
    assert response.status_code == 409 and response.json() == {"detail": "automation of fabric test is not halted"}
    assert runtime.wakes == 0
    store.halt("storm")
    response = await client.post("/resume", json=WHY, headers=AUTH)
    assert response.status_code == 202, response.text
    (request,) = store.pending_requests()
    assert (request.kind, request.requested_by, request.reason, request.component) == (
        RequestKind.RESUME, "alice", "CHG-42: storm was a UFM restart", None)
    assert response.json()["id"] == request.id and response.json()["handled_at"] is None
    assert runtime.wakes == 1  # the engine acts on it at once, not at its next interval


@pytest.mark.usefixtures("token")
async def test_clear_asks_for_a_quarantined_component_only(client: httpx.AsyncClient, store: Store,
                                                           plan: Fabric) -> None:
    seed(store, plan)
    response = await client.post(f"/components/{quote(str(NODE1_LINK), safe='')}/clear", json=WHY, headers=AUTH)
    assert response.status_code == 409
    assert response.json() == {"detail": f"{NODE1_LINK} is not quarantined in fabric test"}
    response = await client.post(f"/components/{quote(str(NODE2_LINK), safe='')}/clear", json=WHY, headers=AUTH)
    assert response.status_code == 202, response.text
    (request,) = store.pending_requests()
    assert (request.kind, request.component, request.requested_by) == (RequestKind.CLEAR, NODE2_LINK, "alice")


@pytest.mark.usefixtures("token")
async def test_silences_are_added_listed_and_expired(client: httpx.AsyncClient, store: Store,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    response = await client.post("/silences", json={**WHY, "matcher": "link:pod01-leaf01/*", "duration": "2h"},
                                 headers=AUTH)
    assert response.status_code == 201, response.text
    created = response.json()
    assert (created["matcher"], created["created_by"], created["reason"]) == ("link:pod01-leaf01/*", "alice",
                                                                             WHY["reason"])
    assert created["ends_at"] == (NOW + timedelta(hours=2)).isoformat().replace("+00:00", "Z")
    assert [s["id"] for s in (await client.get("/silences")).json()] == [created["id"]]
    with caplog.at_level(logging.INFO, logger="fabric.api.writes"):
        response = await client.delete(f"/silences/{created['id']}", params={"by": "bob", "reason": "work done"},
                                       headers=AUTH)
    assert response.status_code == 200 and response.json() == {"id": created["id"], "expired": True}
    assert f"silence {created['id']} expired by bob: work done" in caplog.messages
    assert store.silences() == []
    response = await client.delete(f"/silences/{created['id']}", params={"by": "bob", "reason": "again"},
                                   headers=AUTH)
    assert response.status_code == 404 and response.json() == {"detail": f"no active silence {created['id']} in "
                                                                         "fabric test"}


@pytest.mark.usefixtures("token")
@pytest.mark.parametrize(("body", "detail"), [
    ({"matcher": "cable:x", "duration": "1h"}, "matcher: not a component matcher: 'cable:x': 'cable' matches none"),
    ({"matcher": "switch:x", "duration": "10 minutes"}, "duration: "),
    ({"matcher": "switch:x", "duration": "0s"}, "duration: a silence must last longer than zero"),
    ({"matcher": "switch:x"}, "body: give either duration or ends_at"),
    ({"matcher": "switch:x", "duration": "1h", "ends_at": "2026-12-02T00:00:00"},
     "ends_at: 2026-12-02T00:00:00 has no time zone"),
    ({"matcher": "switch:x", "duration": "1h", "reason": "  "}, "reason: must not be blank"),
    ({"matcher": "switch:x", "duration": "1h", "by": None}, "by: Input should be a valid string"),
])
async def test_bad_input_is_422_naming_the_field(client: httpx.AsyncClient, store: Store, body: dict[str, object],
                                                 detail: str) -> None:
    response = await client.post("/silences", json={**WHY, **body}, headers=AUTH)
    assert response.status_code == 422
    assert response.json()["detail"].startswith(detail), response.json()
    assert store.silences() == []


@pytest.mark.usefixtures("token")
async def test_reload_calls_the_runtime(client: httpx.AsyncClient, runtime: FakeRuntime,
                                        caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="fabric.api.writes"):
        response = await client.post("/reload", json=WHY, headers=AUTH)
    assert response.status_code == 200 and response.json() == {"changed": "rules unchanged, 1 silence"}
    assert runtime.reloads == 1
    assert "reload by alice: CHG-42: storm was a UFM restart; rules unchanged, 1 silence" in caplog.messages
    response = await client.post("/reload", json={"by": "alice"}, headers=AUTH)
    assert response.status_code == 422 and response.json()["detail"] == "reason: Field required"
    assert runtime.reloads == 1


@pytest.mark.usefixtures("token")
@pytest.mark.parametrize(("why", "status"), [(NotApplied.INVALID, 422), (NotApplied.BUSY, 503),
                                             (NotApplied.STANDBY, 409)])
async def test_a_reload_that_applied_nothing_is_no_success(client: httpx.AsyncClient, runtime: FakeRuntime,
                                                          why: NotApplied, status: int) -> None:
    """It answered 200 ``"not applied"``: a script could not tell it from a reload that applied the file."""
    runtime.reloaded = Reload("reload: config.toml not applied: config.toml: api.bad_key: unknown key", why)
    response = await client.post("/reload", json=WHY, headers=AUTH)
    assert response.status_code == status and response.json()["detail"] == runtime.reloaded.message
