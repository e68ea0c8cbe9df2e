"""The API over real loopback HTTP (uvicorn on a free port), and its OpenAPI document."""

from __future__ import annotations

from urllib.parse import quote

import httpx
import pytest
from api_support import NODE1_LINK, TOKEN, seed
from fastapi import FastAPI

from fabric.api.app import PREFIX
from fabric.store import Store
from topology.model import Fabric


@pytest.mark.usefixtures("token")
def test_over_real_http_an_encoded_component_a_text_list_and_a_write(served: str, store: Store,
                                                                      plan: Fabric) -> None:
    seed(store, plan)
    with httpx.Client(base_url=served, timeout=10) as http:
        # The id's '/', '|' and ' ' travel percent-encoded, as a client must send them.
        response = http.get(f"/components/{quote(str(NODE1_LINK), safe='')}")
        assert response.status_code == 200 and response.json()["state"]["lifecycle"] == "disabled"
        response = http.get("/hosts", params={"healthy": "false", "format": "text"})
        assert response.text.splitlines()[0] == "pod01-node01"
        store.halt("storm")
        assert http.post("/resume", json={"reason": "over", "by": "alice"}).status_code == 401
        response = http.post("/resume", json={"reason": "over", "by": "alice"},
                             headers={"Authorization": f"Bearer {TOKEN}"})
        assert response.status_code == 202
    assert [r.requested_by for r in store.pending_requests()] == ["alice"]


ROUTES = {
    ("get", "/status"), ("get", "/components"), ("get", "/components/{component_id}"), ("get", "/decisions"),
    ("get", "/hosts/{host}/health"), ("get", "/hosts/{host}/history"), ("get", "/hosts"), ("get", "/silences"),
    ("post", "/silences"),
    ("delete", "/silences/{silence_id}"), ("post", "/resume"), ("post", "/components/{component_id}/clear"),
    ("post", "/reload"), ("post", "/webhooks/jira"), ("post", "/webhooks/generic"), ("get", "/tickets"),
    ("post", "/burnin"), ("get", "/burnin"),
}


def test_openapi_has_every_route_with_its_response_model(app: FastAPI) -> None:
    document = app.openapi()
    found = {(method, path.removeprefix(PREFIX)) for path, item in document["paths"].items() for method in item}
    assert found == ROUTES
    for path, item in document["paths"].items():
        for method, operation in item.items():
            success = next(code for code in operation["responses"] if code.startswith("2"))
            schema = operation["responses"][success]["content"]["application/json"]["schema"]
            assert "$ref" in schema or schema.get("type") == "array", (method, path)
            if path.startswith("/webhooks/"):
                # Signed by the ticket system or carrying its own token, not the admin's.
                assert {"401", "413"} <= set(operation["responses"]), (method, path)
                continue
            if method != "get" or path.endswith("/clear"):
                assert {"401", "403"} <= set(operation["responses"]), (method, path)
                assert operation["security"] == [{"HTTPBearer": []}]
            if operation.get("parameters") or "requestBody" in operation:
                problem = operation["responses"]["422"]["content"]["application/json"]["schema"]
                assert problem == {"$ref": "#/components/schemas/Problem"}, (method, path)
