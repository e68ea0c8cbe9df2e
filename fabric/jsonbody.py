"""JSON request bodies read by ``topology.strictjson``, for every HTTP server of the project: the daemon's API and
webhooks, the UFM simulator, the fake Jira.

FastAPI decodes a route's JSON body itself, with ``json.loads``: a body naming ``matcher`` twice would reach the
route as its second value. ``StrictJsonRoute`` is the route class of every router (``strict_router``,
``strict_app``): the request its handler sees decodes JSON with the project's decoder, and a body it refuses is a 400
whose detail names the problem and the field (``body: matcher: duplicate key 'matcher'``), before any validation.
A route that reads its body by hand calls ``json_body``, which answers the same way. A client that goes away before
its body is read (a webhook sender that timed out, a daemon killed in the middle of a write) ends the request with
one debug line (``CLIENT_CLOSED``), not an "Exception in ASGI application" traceback in the server's log.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import APIRouter, FastAPI, HTTPException, Request, Response
from fastapi.routing import APIRoute
from starlette.requests import ClientDisconnect

from topology import strictjson
from topology.strictjson import JsonError

__all__ = ["BAD_BODY", "CLIENT_CLOSED", "StrictJsonRequest", "StrictJsonRoute", "json_body", "strict_app",
           "strict_router"]

BAD_BODY = 400
"""A body that is not JSON, or JSON no reader should trust; 422 stays for JSON of the wrong shape."""
CLIENT_CLOSED = 499
"""The status a request whose client went away before its body was read ends with (nginx's; nobody receives it)."""

log = logging.getLogger(__name__)


def _refused(exc: JsonError) -> HTTPException:
    return HTTPException(BAD_BODY, f"body: {exc}")


class StrictJsonRequest(Request):
    """A request whose ``json()`` is ``strictjson.loads`` of its body."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            try:
                self._json = strictjson.loads(await self.body())
            except JsonError as exc:
                raise _refused(exc) from None
        return self._json


_REFUSED_ANSWER: dict[str, Any] = {
    "description": "The body is not JSON, or JSON the service refuses: a key given twice, NaN or Infinity, a lone "
                   "surrogate, nesting deeper than 100 (the detail names the field)",
    "content": {"application/json": {"schema": {"type": "object", "required": ["detail"],
                                                "properties": {"detail": {"type": "string"}}}}},
}


class StrictJsonRoute(APIRoute):
    """An ``APIRoute`` whose handler is given a ``StrictJsonRequest``; a route that takes a body documents the 400
    it may answer."""

    def __init__(self, path: str, endpoint: Callable[..., Any], **options: Any) -> None:
        super().__init__(path, endpoint, **options)
        if self.body_field is not None:
            self.responses.setdefault(BAD_BODY, _REFUSED_ANSWER)

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handle = super().get_route_handler()

        async def strict(request: Request) -> Response:
            return await handle(StrictJsonRequest(request.scope, request.receive))

        return strict


def strict_router(**options: Any) -> APIRouter:
    """An ``APIRouter`` (``options`` as its own) whose routes read JSON bodies strictly."""
    return APIRouter(route_class=StrictJsonRoute, **options)


def strict_app(**options: Any) -> FastAPI:
    """A ``FastAPI`` app (``options`` as its own) whose own routes read JSON bodies strictly; routers included in it
    keep their route class, so theirs come from ``strict_router``."""
    app = FastAPI(**options)
    app.router.route_class = StrictJsonRoute
    app.add_exception_handler(ClientDisconnect, _client_gone)
    return app


async def _client_gone(request: Request, exc: Exception) -> Response:
    log.debug("%s %s: the client went away before its body was read", request.method, request.url.path)
    return Response(status_code=CLIENT_CLOSED)


async def json_body(request: Request, *, empty: Any = None) -> Any:
    """The request's body decoded strictly (``empty`` for no body); a 400 naming the problem for any other."""
    raw = await request.body()
    if not raw:
        return empty
    try:
        return strictjson.loads(raw)
    except JsonError as exc:
        raise _refused(exc) from None
