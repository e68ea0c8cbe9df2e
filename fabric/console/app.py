"""The console's routes on the daemon's app: ``install(app)``."""

from __future__ import annotations

from fastapi import APIRouter, FastAPI
from fastapi.staticfiles import StaticFiles

from fabric.console import actions, fabric_page, pages
from fabric.console.pages import UI
from fabric.console.sessions import Sessions


def console_router() -> APIRouter:
    """Every page and form of the console; none in the API's OpenAPI document (they answer HTML)."""
    router = APIRouter(include_in_schema=False)
    router.add_api_route("/", pages.status_page, methods=["GET"])
    router.add_api_route(UI + "/fabric", fabric_page.fabric_page, methods=["GET"])
    router.add_api_route(UI + "/components", pages.components_page, methods=["GET"])
    router.add_api_route(UI + "/components/{component_id:path}", pages.component_page, methods=["GET"])
    router.add_api_route(UI + "/decisions", pages.decisions_page, methods=["GET"])
    router.add_api_route(UI + "/hosts", pages.hosts_page, methods=["GET"])
    router.add_api_route(UI + "/silences", pages.silences_page, methods=["GET"])
    router.add_api_route(UI + "/silences", actions.add_silence, methods=["POST"])
    router.add_api_route(UI + "/silences/{silence_id}/expire", actions.expire_silence, methods=["POST"])
    router.add_api_route(UI + "/resume", actions.resume, methods=["POST"])
    router.add_api_route(UI + "/login", pages.login_page, methods=["GET"])
    router.add_api_route(UI + "/login", actions.login, methods=["POST"])
    router.add_api_route(UI + "/logout", actions.logout, methods=["POST"])
    return router


def install(app: FastAPI) -> None:
    """The console on ``app`` (whose ``state.context`` its pages read), with its own sessions and its stylesheet
    under ``/ui/static``."""
    app.state.console_sessions = Sessions()
    app.include_router(console_router())
    app.mount(UI + "/static", StaticFiles(packages=[("fabric.console", "static")]), name="console-static")
