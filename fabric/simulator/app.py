"""The simulated UFM as a FastAPI app: ``create_app(state, auth)``.

The same REST resources (:mod:`fabric.simulator.routes`) are served under ``/ufmRest`` (HTTP Basic),
``/ufmRestV2`` (session cookie from ``POST /dologin``) and ``/ufmRestV3`` (access token), plus UFM Telemetry's
``/csv/xcset/<instance>`` and the admin API under ``/simulator`` (no auth: the simulator listens on loopback
unless told otherwise).  List answers
are pre-encoded bytes cached per ``/app/versioning`` counter, so the 25,000-port list of the h100-4k plan
costs a join, not a re-encode.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import parse_qs

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Request
from fastapi.responses import Response

from fabric.jsonbody import json_body, strict_app, strict_router
from fabric.simulator.admin import admin_router
from fabric.simulator.auth import BASIC, SESSION, SESSION_COOKIE, TOKEN, AuthSettings, AuthStore
from fabric.simulator.middleware import SimulatorMiddleware
from fabric.simulator.routes import (
    JSON,
    action_routes,
    app_routes,
    json_response,
    not_found,
    resource_routes,
    telemetry_routes,
)
from fabric.simulator.state import SimState


async def _form(request: Request) -> dict[str, str]:
    """Form fields from an urlencoded or multipart body (no python-multipart needed), or a JSON object."""
    body = await request.body()
    kind = request.headers.get("content-type", "")
    if kind.startswith("multipart/form-data"):
        text = body.decode("utf-8", errors="replace")
        pattern = r'name="([^"]+)"[^\r\n]*\r?\n(?:[^\r\n]+\r?\n)*\r?\n(.*?)\r?\n--'
        return {m.group(1): m.group(2) for m in re.finditer(pattern, text, re.DOTALL)}
    if kind.startswith(JSON):
        data = await json_body(request, empty={})
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}
    return {k: v[0] for k, v in parse_qs(body.decode("utf-8", errors="replace")).items() if v}


def _unauthorized(basic: bool) -> HTTPException:
    headers = {"WWW-Authenticate": 'Basic realm="UFM"'} if basic else None
    return HTTPException(401, "Unauthorized", headers=headers)


def create_app(state: SimState, auth: AuthSettings | AuthStore | None = None) -> FastAPI:
    """The simulated UFM serving ``state``; ``auth`` gives the users (default ``admin`` / ``123456``)."""
    store = auth if isinstance(auth, AuthStore) else AuthStore(auth)
    state.restart_listeners.append(store.clear_sessions)
    app = strict_app(title="fabric-remediation UFM simulator", docs_url="/simulator/docs",
                     openapi_url="/simulator/openapi.json", redoc_url=None)
    app.state.sim = state
    app.state.auth = store

    def user_of(lookup: Callable[[Request], str | None], basic: bool) -> Callable[[Request], str]:
        """A FastAPI dependency: the user ``lookup`` finds in the request, else 401 (with a Basic challenge)."""
        def dependency(request: Request) -> str:
            user = lookup(request)
            if user is None:
                raise _unauthorized(basic)
            request.state.user = user
            return user
        return dependency

    basic_user = user_of(lambda request: store.basic_user(request.headers.get("authorization")), True)
    session_user = user_of(lambda request: store.session_user(request.cookies.get(SESSION_COOKIE)), False)
    token_user = user_of(lambda request: store.token_user(request.headers.get("authorization")), False)

    for prefix, dependency, tokens in ((BASIC, basic_user, True), (SESSION, session_user, True),
                                       (TOKEN, token_user, False)):
        guard = [Depends(dependency)]
        for router in (resource_routes(state), app_routes(state), action_routes(state, prefix)):
            app.include_router(router, prefix=prefix, dependencies=guard)
        if tokens:
            app.include_router(_tokens(state, store), prefix=prefix, dependencies=guard)

    @app.post("/dologin")
    async def dologin(request: Request) -> Response:
        form = await _form(request)
        session = store.login(form.get("httpd_username", ""), form.get("httpd_password", ""))
        if session is None:
            return json_response({"error": "Invalid username or password"}, 401)
        response = json_response({"status": "ok"})
        response.set_cookie(SESSION_COOKIE, session, httponly=True, path="/")
        return response

    app.include_router(telemetry_routes(state))
    app.include_router(admin_router(state), prefix="/simulator")
    app.add_middleware(SimulatorMiddleware, state=state)
    return app


def _tokens(state: SimState, store: AuthStore) -> APIRouter:
    router = strict_router()

    @router.post("/app/tokens")
    async def create_token(request: Request) -> Response:
        token = store.create_token(request.state.user, state.now())
        return json_response(token.to_rest())

    @router.get("/app/tokens")
    async def list_tokens() -> Response:
        return json_response([t.to_rest() for t in store.tokens()])

    @router.post("/app/tokens/revoke")
    async def revoke_token(request: Request) -> Response:
        form = await _form(request)
        if not store.revoke(form.get("token", "")):
            raise not_found("token")
        return json_response({"status": "revoked"})

    return router
