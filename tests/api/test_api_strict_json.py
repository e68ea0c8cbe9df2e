"""Over real loopback HTTP: a request body whose JSON the project refuses (a key given twice, NaN, nesting 20,000
deep) is a 400 naming the field, and changes nothing; every route of every app reads bodies that way."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator

import httpx
import pytest
from api_support import TOKEN
from fastapi import FastAPI, Request
from fastapi.routing import APIRoute
from starlette.routing import BaseRoute

from fabric.jsonbody import CLIENT_CLOSED, StrictJsonRoute, json_body, strict_app
from fabric.store import Store

ADMIN = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}


@pytest.fixture
def http(served: str, token: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=served, timeout=30) as client:
        yield client


@pytest.mark.parametrize(("body", "detail"), [
    # Read last-wins, this silenced every switch while its sender meant one leaf's links.
    (b'{"matcher": "link:pod01-leaf01/*", "matcher": "switch:*", "duration": "1h", "reason": "r", "by": "a"}',
     "body: matcher: duplicate key 'matcher'"),
    (b'{"matcher": "switch:x", "duration": "1h", "reason": "r", "by": "a", "by": "b"}', "body: by: duplicate key 'by'"),
    (b'{"matcher": "switch:x", "duration": "1h", "reason": "r", "by": "a", "x": NaN}', "body: x: NaN is not a number"),
    (b'{"matcher": "switch:x", "duration": "1h", "reason": "r", "by": "a", "x": ' + b"[" * 20_000 + b"]" * 20_000
     + b"}", "body: nested deeper than 100 levels"),
    (b'{"matcher": "switch:x", "reason": "\\ud800", "duration": "1h", "by": "a"}', "body: reason: a lone surrogate"),
    (b'{"matcher": "switch:x",', "body: Expecting property name enclosed in double quotes at line 1, column 24"),
])
def test_a_silence_whose_body_is_refused_is_a_400_naming_the_field_and_nothing_is_stored(
        http: httpx.Client, store: Store, body: bytes, detail: str) -> None:
    response = http.post("/silences", content=body, headers=ADMIN)
    assert response.status_code == 400, response.text
    assert response.json()["detail"].startswith(detail), response.text
    assert store.silences() == []


def test_the_same_silence_with_each_key_once_is_created(http: httpx.Client, store: Store) -> None:
    response = http.post("/silences", headers=ADMIN,
                         content=b'{"matcher": "link:pod01-leaf01/*", "duration": "1h", "reason": "r", "by": "a"}')
    assert response.status_code == 201, response.text
    assert [silence.matcher for silence in store.silences()] == ["link:pod01-leaf01/*"]


def test_a_resume_with_a_key_given_twice_is_refused(http: httpx.Client, store: Store) -> None:
    store.halt("storm")
    response = http.post("/resume", content=b'{"reason": "over", "by": "alice", "reason": "x"}', headers=ADMIN)
    assert (response.status_code, response.json()) == (400, {"detail": "body: reason: duplicate key 'reason'"})
    assert store.pending_requests() == []


def test_every_route_that_takes_a_body_documents_the_400(app: FastAPI) -> None:
    for path, item in app.openapi()["paths"].items():
        for method, operation in item.items():
            if "requestBody" in operation:
                assert "400" in operation["responses"], (method, path)


def _apps() -> Iterator[tuple[str, FastAPI]]:
    """Every FastAPI app the project serves, built as its command builds it."""
    from fabric.api.app import create_app
    from fabric.api.context import ApiContext
    from fabric.api.plan_index import plan_index
    from fabric.config import ServiceConfig
    from fabric.daemon.api_metrics import ApiMetrics
    from fabric.daemon.app import build_app
    from fabric.simulator.app import create_app as create_simulator
    from fabric.simulator.jira.app import create_jira_app
    from fabric.simulator.jira.state import JiraState
    from fabric.simulator.state import SimState
    from topology.generate import PRESETS, fat_tree

    plan = fat_tree(PRESETS["tiny"])
    context = ApiContext(config=ServiceConfig(), index=plan_index(plan), store=None, runtime=None, clock=None)  # type: ignore[arg-type]
    yield "api", create_app(context)
    yield "daemon", build_app(context, ApiMetrics())
    yield "simulator", create_simulator(SimState.from_plan(plan))
    yield "fake jira", create_jira_app(JiraState())


def _api_routes(routes: Iterable[BaseRoute]) -> Iterator[APIRoute]:
    """The API routes among ``routes`` and in the routers included there (FastAPI keeps those nested)."""
    for route in routes:
        if isinstance(route, APIRoute):
            yield route
        included = getattr(route, "original_router", None)
        if included is not None:
            yield from _api_routes(included.routes)


def test_every_route_of_every_app_reads_json_strictly() -> None:
    """A router made without ``strict_router`` (or an app without ``strict_app``) would read bodies last-wins."""
    for name, app in _apps():
        routes = list(_api_routes(app.routes))
        assert routes, name
        loose = [route.path for route in routes if not isinstance(route, StrictJsonRoute)]
        assert loose == [], name


def test_a_client_gone_before_its_body_is_read_ends_the_request_without_a_traceback() -> None:
    """A daemon killed while it writes to UFM (the chaos run), a webhook sender that timed out: the server's log
    had an "Exception in ASGI application" traceback for each."""
    app = strict_app()

    @app.put("/body")
    async def put_body(request: Request) -> dict[str, object]:
        return {"read": await json_body(request)}

    sent: list[dict[str, object]] = []

    async def gone() -> dict[str, object]:
        return {"type": "http.disconnect"}

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "PUT", "scheme": "http",
             "path": "/body", "raw_path": b"/body", "query_string": b"", "root_path": "",
             "headers": [(b"content-type", b"application/json"), (b"content-length", b"100")],
             "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 2)}
    asyncio.run(app(scope, gone, send))  # type: ignore[arg-type]
    assert sent[0]["type"] == "http.response.start" and sent[0]["status"] == CLIENT_CLOSED
