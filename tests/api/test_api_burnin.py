"""``/api/v1/burnin`` in process: the request and its window stored together, the engine woken, the report's
models in the OpenAPI document, bad input refused naming the field."""

from __future__ import annotations

from datetime import timedelta

import httpx
import pytest
from api_support import TOKEN, FakeRuntime
from fastapi import FastAPI

from fabric.store import RequestKind, Store

pytestmark = pytest.mark.anyio
AUTH = {"Authorization": f"Bearer {TOKEN}"}


async def test_a_window_asked_is_a_request_and_a_window_row_and_wakes_the_engine(
        client: httpx.AsyncClient, store: Store, runtime: FakeRuntime, token: str) -> None:
    response = await client.post("/burnin", json={"by": "ops", "reason": "pods 1-2", "duration": "2h"},
                                 headers=AUTH)
    assert response.status_code == 202, response.text
    answer = response.json()
    (request,) = store.pending_requests(RequestKind.BURNIN)
    assert answer["request"]["id"] == answer["window"]["id"] == request.id
    assert answer["window"] == {"id": request.id, "duration_s": 7200.0, "started_at": None, "ends_at": None,
                                "ended_at": None, "dry_run": None, "report": None}
    assert runtime.wakes == 1
    default = await client.post("/burnin", json={"by": "ops", "reason": "again"}, headers=AUTH)
    assert default.json()["window"]["duration_s"] == timedelta(hours=1).total_seconds()  # [burnin] duration
    listed = (await client.get("/burnin")).json()
    assert [w["id"] for w in listed] == [default.json()["window"]["id"], request.id]  # newest first


@pytest.mark.parametrize(("body", "field"), [
    ({"by": "ops", "reason": "r", "duration": "0s"}, "duration"),
    ({"by": "ops", "reason": "r", "duration": "soon"}, "duration"),
    ({"by": "ops", "reason": " "}, "reason"),
    ({"by": "ops", "reason": "r", "length": "1h"}, "length"),
])
async def test_bad_bodies_are_422_naming_the_field_and_store_nothing(
        client: httpx.AsyncClient, store: Store, token: str, body: dict[str, str], field: str) -> None:
    response = await client.post("/burnin", json=body, headers=AUTH)
    assert response.status_code == 422 and field in response.text, response.text
    assert store.burnin_windows() == [] and store.pending_requests(RequestKind.BURNIN) == []


async def test_without_the_token_nothing_is_asked(client: httpx.AsyncClient, store: Store, token: str) -> None:
    response = await client.post("/burnin", json={"by": "ops", "reason": "r"})
    assert response.status_code == 401 and store.burnin_windows() == []


def test_the_survivors_report_is_documented(app: FastAPI) -> None:
    document = app.openapi()
    schemas = document["components"]["schemas"]
    listed = document["paths"]["/api/v1/burnin"]["get"]["responses"]["200"]["content"]["application/json"]
    assert listed["schema"]["items"]["$ref"].endswith("/BurninWindowOut")
    assert set(schemas["SurvivorsReport"]["properties"]) == {"ports", "switches", "by_switch", "not_survived",
                                                             "utilisation_alerts", "findings", "telemetry"}
    assert set(schemas["TelemetryCompared"]["properties"]) == {"compared", "first", "last", "why"}
    assert set(schemas["PortTotals"]["properties"]) == {"survived", "failed", "down", "idle"}
