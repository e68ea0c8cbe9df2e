"""The API's assembly: ``api_router()`` (every ``/api/v1`` route), ``install(app)`` and ``create_app(context)``.

``install`` puts the API's routes, the webhook receiver and the one-line answer to bad input on an app: the daemon
calls it on its own app (which adds ``/healthz``, ``/readyz``, ``/metrics``); tests serve ``create_app`` alone.
"""

from __future__ import annotations

from fastapi import APIRouter, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from fabric.api import burnin, hosts, reads, writes
from fabric.api.context import ApiContext
from fabric.api.deps import BAD_INPUT
from fabric.api.webhooks import webhook_router
from fabric.http_problems import problems
from fabric.jsonbody import strict_app, strict_router

PREFIX = "/api/v1"


def api_router() -> APIRouter:
    """Every route of the API under ``/api/v1``."""
    router = strict_router(prefix=PREFIX)
    for part in (reads.router, hosts.router, writes.router, burnin.router):
        router.include_router(part)
    return router


def install(app: FastAPI) -> None:
    """The API's routes under ``/api/v1``, the webhook receiver (``/webhooks/...``) and the 422 answer, on ``app``
    (whose ``state.context`` the routers read)."""
    app.include_router(api_router())
    app.include_router(webhook_router())
    app.add_exception_handler(RequestValidationError, _bad_input)


def create_app(context: ApiContext, *, title: str = "fabric-remediation") -> FastAPI:
    """An app serving the API over ``context`` (``app.state.context``, what the routers read)."""
    app = strict_app(title=title, version="1")
    app.state.context = context
    install(app)
    return app


async def _bad_input(request: Request, exc: Exception) -> JSONResponse:
    """422 with one line per problem, each naming its field: ``duration: not a duration: '10 minutes'``."""
    assert isinstance(exc, RequestValidationError)
    return JSONResponse({"detail": "; ".join(f"{field}: {message}" for field, message in problems(exc))},
                        status_code=BAD_INPUT)
