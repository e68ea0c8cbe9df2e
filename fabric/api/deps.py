"""What the routers depend on: the daemon's ``ApiContext`` (``app.state.context``) and the admin-token check.

Every part comes from the app the request reached, never from a global, so tests serve a context of their own.
"""

from __future__ import annotations

import hmac
from typing import Annotated, cast

from fastapi import Depends, HTTPException, Path, Request, status
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from fabric.api.context import ApiContext, Runtime
from fabric.api.plan_index import PlanIndex
from fabric.config import ADMIN_TOKEN_ENV, ConfigError, ServiceConfig
from fabric.remediation.domain import ComponentId, ComponentKind
from fabric.store import Store

BAD_INPUT = 422
"""Unprocessable input (Starlette renamed its constant between versions; the number stays)."""
_bearer = HTTPBearer(auto_error=False, description="The admin token ([api] admin_token_file or "
                                                   f"{ADMIN_TOKEN_ENV}); every write needs it.")


# The accessors are ``async``: they only read attributes, and FastAPI would run a plain ``def`` dependency in a
# worker thread of its own (several hops per request for nothing). What blocks (the store) stays in ``def``.


async def get_context(request: Request) -> ApiContext:
    return cast(ApiContext, request.app.state.context)


ContextDep = Annotated[ApiContext, Depends(get_context)]


async def get_store(context: ContextDep) -> Store:
    return context.store


async def get_config(context: ContextDep) -> ServiceConfig:
    return context.config


async def get_runtime(context: ContextDep) -> Runtime:
    return context.runtime


async def get_plan_index(context: ContextDep) -> PlanIndex:
    return context.index


StoreDep = Annotated[Store, Depends(get_store)]
ConfigDep = Annotated[ServiceConfig, Depends(get_config)]
RuntimeDep = Annotated[Runtime, Depends(get_runtime)]
PlanIndexDep = Annotated[PlanIndex, Depends(get_plan_index)]


def require_admin(config: ConfigDep,
                  credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]) -> None:
    """Writes need ``Authorization: Bearer <admin token>``: 403 while no token is configured (writes are off), 401
    without the header or with another token (compared in constant time)."""
    try:
        token = config.api.admin_token()
    except ConfigError as exc:  # a token file that vanished or emptied: the message names the file, not the token
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, f"the admin token cannot be read: {exc}") from None
    if token is None:
        raise HTTPException(status.HTTP_403_FORBIDDEN, "writes are refused: no admin token is configured (set "
                                                       f"{ADMIN_TOKEN_ENV} or [api] admin_token_file)")
    challenge = {"WWW-Authenticate": "Bearer"}
    if credentials is None:
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, "this write needs the admin token: send "
                                                          "'Authorization: Bearer <token>'", headers=challenge)
    if not hmac.compare_digest(credentials.credentials.encode(), token.get_secret_value().encode()):
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, "wrong admin token", headers=challenge)


AdminDep = Depends(require_admin)


COMPONENT_PATTERN = "^(" + "|".join(sorted(kind.value for kind in ComponentKind)) + r"):[^\n]+$"
"""What a component id looks like (``kind:name``), for the OpenAPI document; ``parse_component`` checks it and
says what is wrong in its own words. No newline: a path with one matches no route (404)."""


async def path_component(component_id: Annotated[str, Path(description="kind:name, URL-encoded, e.g. "
                                                                  "'link%3Aleaf01%2F1%7Cspine01%2F1'.",
                                                       json_schema_extra={"pattern": COMPONENT_PATTERN})]
                   ) -> ComponentId:
    return parse_component(component_id, "component_id")


def parse_component(text: str, parameter: str) -> ComponentId:
    """The component ``text`` names (``kind:name``): 422 naming ``parameter`` when it is not one."""
    try:
        return ComponentId.parse(text)
    except ValueError:
        kinds = ", ".join(kind.value for kind in ComponentKind)
        raise HTTPException(BAD_INPUT,
                            f"{parameter}: not a component id: {text!r} (kind:name, kind one of {kinds})") from None


ComponentDep = Annotated[ComponentId, Depends(path_component)]
