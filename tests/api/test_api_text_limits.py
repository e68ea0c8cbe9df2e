"""Every text a write stores (or logs) has a length limit: stated in the OpenAPI document, refused past it with
422 (400 for a webhook) naming the field, nothing stored; the same limits in ``fabricctl``, exit 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from api_support import NOW, TOKEN, FakeRuntime
from fastapi import FastAPI
from typer.testing import CliRunner

from fabric.api.app import create_app
from fabric.api.context import ApiContext
from fabric.api.plan_index import plan_index
from fabric.cli.app import app as fabricctl
from fabric.config import ServiceConfig
from fabric.remediation.textlimits import BY_MAX, COMMENT_MAX, DURATION_MAX, MATCHER_MAX, REASON_MAX
from fabric.store import Store
from tickets.events import MAX_DELIVERY_CHARS, MAX_KEY_CHARS
from topology.model import Fabric

pytestmark = pytest.mark.anyio

AUTH = {"Authorization": f"Bearer {TOKEN}"}
SILENCE = {"matcher": "switch:core01-*", "duration": "1h", "reason": "CHG-42", "by": "alice"}
WHY = {"reason": "CHG-42", "by": "alice"}
WRITES = ("post", "put", "patch", "delete")


def _schema(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def _strings(document: dict[str, Any], schema: dict[str, Any], where: str) -> list[tuple[str, dict[str, Any]]]:
    """Every free text a schema holds (through references, options and properties), with where it is: a string
    that is no enum value and no formatted value (a date-time is parsed, not kept as text)."""
    schema = _schema(document, schema)
    free = schema.get("type") == "string" and "enum" not in schema and "format" not in schema
    found = [(where, schema)] if free else []
    for option in schema.get("anyOf", []):
        found += _strings(document, option, where)
    for name, inner in schema.get("properties", {}).items():
        found += _strings(document, inner, f"{where}.{name}")
    return found


def test_every_text_a_write_takes_has_a_documented_length_limit(app: FastAPI) -> None:
    document = app.openapi()
    unbounded = []
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            if method not in WRITES:
                continue
            strings = [pair for parameter in operation.get("parameters", []) if parameter["in"] != "path"
                       for pair in _strings(document, parameter["schema"], f"{method} {path} {parameter['name']}")]
            body = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
            if "schema" in body:
                strings += _strings(document, body["schema"], f"{method} {path} body")
            unbounded += [where for where, schema in strings if "maxLength" not in schema]
    # A Jira webhook's body is Jira's own: only the fields the receiver reads are described, none of them stored.
    assert [where for where in unbounded if not where.startswith("post /webhooks/jira body")] == []


@pytest.mark.usefixtures("token")
@pytest.mark.parametrize(("field", "limit"), [("reason", REASON_MAX), ("by", BY_MAX), ("matcher", MATCHER_MAX),
                                              ("duration", DURATION_MAX)])
async def test_a_silence_text_past_its_limit_is_422_naming_it(client: httpx.AsyncClient, store: Store, field: str,
                                                              limit: int) -> None:
    fits = {"reason": "r" * limit, "by": "b" * limit, "matcher": "switch:" + "x" * (limit - 7),
            "duration": "1h".rjust(limit, "0")}[field]
    response = await client.post("/silences", json={**SILENCE, field: fits + "x"}, headers=AUTH)
    assert response.status_code == 422
    assert response.json()["detail"] == f"{field}: String should have at most {limit} characters"
    assert store.silences() == []
    assert (await client.post("/silences", json={**SILENCE, field: fits}, headers=AUTH)).status_code == 201


@pytest.mark.usefixtures("token")
@pytest.mark.parametrize("endpoint", ["/resume", "/reload", "/components/switch:core01-01/clear"])
@pytest.mark.parametrize(("field", "limit"), [("reason", REASON_MAX), ("by", BY_MAX)])
async def test_a_request_text_past_its_limit_is_422_naming_it(client: httpx.AsyncClient, store: Store,
                                                              runtime: FakeRuntime, endpoint: str, field: str,
                                                              limit: int) -> None:
    response = await client.post(endpoint, json={**WHY, field: "x" * (limit + 1)}, headers=AUTH)
    assert response.status_code == 422
    assert response.json()["detail"] == f"{field}: String should have at most {limit} characters"
    assert store.pending_requests() == [] and runtime.reloads == 0


@pytest.mark.usefixtures("token")
async def test_an_expiry_past_its_limits_is_422(client: httpx.AsyncClient, store: Store) -> None:
    created = (await client.post("/silences", json=SILENCE, headers=AUTH)).json()
    for field, limit in (("reason", REASON_MAX), ("by", BY_MAX)):
        response = await client.delete(f"/silences/{created['id']}", params={**WHY, field: "x" * (limit + 1)},
                                       headers=AUTH)
        assert response.status_code == 422
        assert response.json()["detail"] == f"{field}: String should have at most {limit} characters"
    assert [silence.id for silence in store.silences()] == [created["id"]]


async def test_webhook_strings_past_their_limits_are_400_naming_them(plan: Fabric, store: Store,
                                                                     runtime: FakeRuntime) -> None:
    config = ServiceConfig.model_validate({"tickets": {"webhook_token_file": None}})
    app = create_app(ApiContext(config=config, index=plan_index(plan), store=store, runtime=runtime, clock=lambda: NOW))
    jira = {"webhookEvent": "jira:issue_updated", "issue": {"key": "NET-1", "fields": {}},
            "changelog": {"id": "c" * (MAX_DELIVERY_CHARS + 1)}}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://api") as http:
        identified = await http.post("/webhooks/jira", content=json.dumps({**jira, "changelog": {"id": 1}}),
                                     headers={"X-Atlassian-Webhook-Identifier": "i" * (MAX_DELIVERY_CHARS + 1)})
        changelog = await http.post("/webhooks/jira", content=json.dumps(jira))
        key = await http.post("/webhooks/jira", content=json.dumps(
            {**jira, "issue": {"key": "K" * (MAX_KEY_CHARS + 1)}, "changelog": {"id": 1}}))
    assert (identified.status_code, identified.json()["detail"]) == (
        400, f"X-Atlassian-Webhook-Identifier: {MAX_DELIVERY_CHARS + 1} characters, more than the "
             f"{MAX_DELIVERY_CHARS} of a delivery id")
    assert (changelog.status_code, changelog.json()["detail"]) == (
        400, f"changelog.id: {MAX_DELIVERY_CHARS + 1} characters, more than the {MAX_DELIVERY_CHARS} of a delivery id")
    assert (key.status_code, key.json()["detail"].split(":")[0]) == (400, "issue.key")
    assert store.unprocessed_deliveries() == []


@pytest.mark.parametrize(("argv", "option", "limit"), [
    (["silence", "add", "switch:x", "--duration", "1h", "--reason", "{long}"], "--reason", REASON_MAX),
    (["silence", "add", "switch:x", "--duration", "1h", "--reason", "r", "--by", "{long}"], "--by", BY_MAX),
    (["silence", "add", "switch:{long}", "--duration", "1h", "--reason", "r"], "matcher", MATCHER_MAX),
    (["resume", "--reason", "{long}"], "--reason", REASON_MAX),
    (["components", "clear", "switch:core01-01", "--reason", "r", "--by", "{long}"], "--by", BY_MAX),
    (["tickets", "resolve", "LOCAL-1", "--comment", "{long}"], "--comment", COMMENT_MAX),
])
def test_fabricctl_refuses_the_same_text_past_its_limit(tmp_path: Path, argv: list[str], option: str,
                                                        limit: int) -> None:
    url = f"sqlite:///{tmp_path / 'fabric.db'}"
    Store.open(url, fabric="lab").close()
    long = "x" * (limit + 1)
    result = CliRunner().invoke(fabricctl, [arg.replace("{long}", long) for arg in argv]
                                + ["--store", url, "--fabric", "lab"])
    assert result.exit_code == 2, result.output
    [line] = result.output.strip().splitlines()
    assert line.startswith(f"fabricctl: error: {option}") and f"more than the {limit:,} accepted" in line
    with Store.open(url, fabric="lab") as store:
        assert store.silences() == [] and store.pending_requests() == []
