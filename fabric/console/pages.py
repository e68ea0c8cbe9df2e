"""The console's read pages: status, components and one component's history, decisions, hosts, silences.

Each page asks the API's own endpoint functions (``fabric.api.reads``, ``hosts``, ``writes``) for what it shows, so
a page and ``/api/v1`` never disagree and no query is written twice; an answer the API refuses (an unknown switch,
a malformed component id) is shown on the page with the API's own words and status. Plain ``def``: FastAPI runs
them in its worker threads, as it does the API's, so the blocking store never holds the event loop.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import HTTPException, Query, Request
from fastapi.responses import HTMLResponse

from fabric.api import hosts, reads, writes
from fabric.api.deps import ContextDep, parse_component
from fabric.api.models import Decision, Ticket
from fabric.api.timeline import decision_entries
from fabric.console.render import page, viewer
from fabric.remediation.domain import Lifecycle

UI = "/ui"
PAGE = 100
"""Components and decisions a page lists."""

Text = Annotated[str | None, Query(max_length=300)]
"""A filter typed into a form: blank is no filter."""


def _given(text: str | None) -> str | None:
    return text.strip() if text and text.strip() else None


def _refused(template: str, request: Request, context: ContextDep, exc: HTTPException, **values: object
             ) -> HTMLResponse:
    return page(template, viewer(request, context), status_code=exc.status_code, error=str(exc.detail), **values)


def status_page(request: Request, context: ContextDep) -> HTMLResponse:
    status = reads.get_status(context.store, context.runtime)
    return page("status.html", viewer(request, context), status=status, states=list(Lifecycle))


def components_page(request: Request, context: ContextDep, state: Text = None, switch: Text = None,
                    host: Text = None, rule: Text = None,
                    offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0) -> HTMLResponse:
    filters = {"state": _given(state), "switch": _given(switch), "host": _given(host), "rule": _given(rule)}
    values: dict[str, Any] = {"filters": filters, "states": list(Lifecycle), "found": None}
    try:
        lifecycle = None if filters["state"] is None else Lifecycle(filters["state"])
    except ValueError:
        return _refused("components.html", request, context,
                        HTTPException(422, f"state: not a state: {filters['state']!r}"), **values)
    try:
        found = reads.list_components(context.store, context.index, lifecycle, filters["switch"], filters["host"],
                                      filters["rule"], PAGE, offset)
    except HTTPException as exc:
        return _refused("components.html", request, context, exc, **values)
    return page("components.html", viewer(request, context), **{**values, "found": found})


def component_page(request: Request, context: ContextDep, component_id: str) -> HTMLResponse:
    try:
        detail = reads.get_component(parse_component(component_id, "component"), context.store, context.index)
    except HTTPException as exc:
        return _refused("component.html", request, context, exc, component_id=component_id, detail=None)
    return page("component.html", viewer(request, context), component_id=component_id, detail=detail,
                jira=_jira_links(context, detail.tickets))


def _jira_links(context: ContextDep, tickets: list[Ticket]) -> dict[int, str]:
    """Each Jira ticket's page, where the configuration names the Jira it lives in."""
    base = context.config.tickets.jira.url
    if base is None:
        return {}
    return {ticket.id: f"{base.rstrip('/')}/browse/{ticket.external_key}" for ticket in tickets
            if ticket.backend == "jira" and ticket.external_key}


def decisions_page(request: Request, context: ContextDep, component: Text = None, kind: Text = None
                   ) -> HTMLResponse:
    filters = {"component": _given(component), "kind": _given(kind)}
    try:
        found = reads.list_decisions(context.store, None, None, filters["component"], PAGE)
    except HTTPException as exc:
        return _refused("decisions.html", request, context, exc, filters=filters, lines=[])
    shown = [d for d in reversed(found) if filters["kind"] is None or d.kind == filters["kind"]]
    return page("decisions.html", viewer(request, context), filters=filters, lines=_lines(shown))


def _lines(decisions: list[Decision]) -> list[tuple[Decision, str, str]]:
    """Each decision with its "what" and "why" as the demo's timeline words them (records included: a filter
    asked for them)."""
    lines = []
    for decision in decisions:
        (entry,) = decision_entries([decision.model_dump(mode="json")], verbose=True)
        lines.append((decision, entry.what, entry.why))
    return lines


def hosts_page(request: Request, context: ContextDep, host: Text = None) -> HTMLResponse:
    wanted = _given(host)
    values: dict[str, Any] = {"host": wanted, "health": None}
    values["unhealthy"] = hosts.list_hosts(context.store, context.index, False, "json")
    if wanted is not None:
        try:
            values["health"] = hosts.get_host_health(wanted, context.store, context.index)
        except HTTPException as exc:
            return _refused("hosts.html", request, context, exc, **values)
    return page("hosts.html", viewer(request, context), **values)


def silences_page(request: Request, context: ContextDep) -> HTMLResponse:
    return page("silences.html", viewer(request, context), silences=writes.list_silences(context.store, None))


def login_page(request: Request, context: ContextDep) -> HTMLResponse:
    return page("login.html", viewer(request, context))
