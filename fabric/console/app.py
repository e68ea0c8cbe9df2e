"""The console's routes on the daemon's app: ``install(app)``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, FastAPI
from fastapi.staticfiles import StaticFiles

from fabric.console import actions, fabric_page, pages
from fabric.console.pages import UI
from fabric.console.sessions import Sessions
from fabric.jsonbody import strict_router

ROUTES: tuple[tuple[str, str, Callable[..., Any]], ...] = (
    ("GET", "/", pages.status_page),
    ("GET", UI + "/fabric", fabric_page.fabric_page),
    ("GET", UI + "/components", pages.components_page),
    ("GET", UI + "/components/{component_id:path}", pages.component_page),
    ("GET", UI + "/decisions", pages.decisions_page),
    ("GET", UI + "/hosts", pages.hosts_page),
    ("GET", UI + "/silences", pages.silences_page),
    ("POST", UI + "/silences", actions.add_silence),
    ("POST", UI + "/silences/{silence_id}/expire", actions.expire_silence),
    ("POST", UI + "/resume", actions.resume),
    ("GET", UI + "/login", pages.login_page),
    ("POST", UI + "/login", actions.login),
    ("POST", UI + "/logout", actions.logout),
)
"""Every page and form of the console: method, path, endpoint."""


def console_router() -> APIRouter:
    """The console's routes; none in the API's OpenAPI document (they answer HTML)."""
    router = strict_router(include_in_schema=False)  # (forms, but the one route class of every app)
    for method, path, endpoint in ROUTES:
        router.add_api_route(path, endpoint, methods=[method])
    return router


def install(app: FastAPI) -> None:
    """The console on ``app`` (whose ``state.context`` its pages read), with its own sessions and its stylesheet
    under ``/ui/static``."""
    app.state.console_sessions = Sessions()
    app.include_router(console_router())
    app.mount(UI + "/static", StaticFiles(packages=[("fabric.console", "static")]), name="console-static")
