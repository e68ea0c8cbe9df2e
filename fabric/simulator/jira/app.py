"""The fake Jira's REST API (v2, and v3 at the same paths where the ``jira`` library or Cloud uses it).

What it serves: ``serverInfo``, ``myself``, ``field``, issue create and get, search (Data Center's
``/search`` by ``startAt``, Cloud's ``/search/jql`` by ``nextPageToken``), transitions (list, do) and comments
(add, list), with Jira's error bodies (``{"errorMessages": [...], "errors": {...}}``).  Basic auth (user and
password or API token) and bearer tokens (Data Center's personal access tokens); 401 otherwise.

``/_admin`` (no auth, loopback tool) injects faults and sets the search lag; see ``admin_routes``.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from itertools import count
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Depends, FastAPI, Path, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from fabric.http_problems import problems
from fabric.jsonbody import json_body, strict_app, strict_router
from fabric.simulator.jira.jql import JqlError, parse_jql
from fabric.simulator.jira.state import (
    CATEGORY_IDS,
    CATEGORY_NAMES,
    RESOLUTIONS,
    Comment,
    Fault,
    Issue,
    JiraState,
    Status,
    WorkflowError,
    jira_time,
)
from fabric.simulator.jira.webhooks import WebhookSender, WebhookTarget, issue_updated

__all__ = ["JiraAuth", "create_jira_app", "send_webhooks"]

_VERSIONS = ("2", "3")
_SYSTEM_FIELDS = ("summary", "description", "labels", "status", "resolution", "issuetype", "project", "created",
                  "updated", "resolutiondate", "comment")


@dataclass(frozen=True, slots=True)
class JiraAuth:
    users: dict[str, str] = field(default_factory=lambda: {"fabric-bot": "api-token"})
    """Basic auth: user (or e-mail on Cloud) -> password or API token."""
    tokens: dict[str, str] = field(default_factory=dict)
    """Bearer personal access tokens -> the user they belong to."""

    def user(self, header: str | None) -> str | None:
        """Who the ``Authorization`` header authenticates, or ``None``."""
        scheme, _, credentials = (header or "").partition(" ")
        if scheme.lower() == "bearer":
            return next((user for token, user in self.tokens.items()
                         if secrets.compare_digest(token.encode(), credentials.strip().encode())), None)
        if scheme.lower() != "basic":
            return None
        try:
            user, _, password = base64.b64decode(credentials.strip(), validate=True).decode().partition(":")
        except (binascii.Error, UnicodeDecodeError):
            return None
        expected = self.users.get(user)
        if expected is None or not secrets.compare_digest(expected.encode(), password.encode()):
            return None
        return user


class JiraErrors(BaseModel):
    """Jira's error body: messages about the request, and problems by field."""

    errorMessages: list[str]  # Jira's name
    errors: dict[str, str]


def _errors(status: int, messages: list[str] | None = None, errors: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"errorMessages": messages or [], "errors": errors or {}}, status_code=status)


async def _bad_request(request: Request, exc: Exception) -> JSONResponse:
    """A body or parameter FastAPI refused: 400 with Jira's body, the problems by field."""
    assert isinstance(exc, RequestValidationError)
    return _errors(400, errors=dict(problems(exc)))


async def _refused(request: Request, exc: Exception) -> JSONResponse:
    """What FastAPI itself refuses (a body it cannot parse, a path or method it does not serve), in Jira's body."""
    assert isinstance(exc, StarletteHTTPException)
    answer = _errors(exc.status_code, [str(exc.detail)])
    answer.headers.update(exc.headers or {})
    return answer


async def _api_version(version: Annotated[Literal["2", "3"], Path(description="The REST API's version.")]) -> None:
    """Every REST path names the API's version; the middleware answers 404 for any other before routing."""


def _status_json(status: Status, base: str) -> dict[str, Any]:
    category = {"self": f"{base}/rest/api/2/statuscategory/{CATEGORY_IDS[status.category]}",
                "id": CATEGORY_IDS[status.category], "key": status.category,
                "name": CATEGORY_NAMES[status.category]}
    return {"self": f"{base}/rest/api/2/status/{status.id}", "id": status.id, "name": status.name,
            "statusCategory": category}


def _comment_json(comment: Comment, issue: Issue, base: str) -> dict[str, Any]:
    return {"self": f"{base}/rest/api/2/issue/{issue.id}/comment/{comment.id}", "id": str(comment.id),
            "body": comment.body, "author": {"name": comment.author, "displayName": comment.author},
            "created": jira_time(comment.created), "updated": jira_time(comment.created)}


def issue_json(state: JiraState, issue: Issue, base: str) -> dict[str, Any]:
    resolution = None if issue.resolution is None else {
        "self": f"{base}/rest/api/2/resolution/{RESOLUTIONS.get(issue.resolution, '1')}",
        "id": RESOLUTIONS.get(issue.resolution, "1"), "name": issue.resolution}
    fields = {
        "summary": issue.summary,
        "description": issue.description,
        "labels": list(issue.labels),
        "status": _status_json(issue.status, base),
        "resolution": resolution,
        "resolutiondate": None if issue.resolved is None else jira_time(issue.resolved),
        "issuetype": {"id": str(state.issue_types.index(issue.issue_type) + 1), "name": issue.issue_type},
        "project": {"id": str(sorted(state.projects).index(issue.project) + 1), "key": issue.project,
                    "name": state.projects[issue.project]},
        "reporter": {"name": issue.reporter, "displayName": issue.reporter},
        "created": jira_time(issue.created),
        "updated": jira_time(issue.updated),
        "comment": {"comments": [_comment_json(c, issue, base) for c in issue.comments],
                    "maxResults": len(issue.comments), "total": len(issue.comments), "startAt": 0},
        "issuelinks": [{"type": {"name": kind, "inward": LINK_TYPES[kind][0], "outward": LINK_TYPES[kind][1]},
                        f"{side}Issue": {"key": other}} for kind, side, other in issue.links],
        "priority": issue.extra.get("priority"),
        "components": issue.extra.get("components", []),
        **{name: value for name, value in issue.extra.items() if name.startswith("customfield_")},
    }
    return {"id": str(issue.id), "key": issue.key, "self": f"{base}/rest/api/2/issue/{issue.id}", "fields": fields}


def _object(body: dict[str, Any], name: str) -> dict[str, Any]:
    """``body[name]`` when it is a JSON object, else an empty one (Jira ignores what it does not expect)."""
    value = body.get(name)
    return value if isinstance(value, dict) else {}


def _base(request: Request) -> str:
    return str(request.base_url).rstrip("/")


def _name_or_id(value: Any, names: list[str]) -> str | None:
    """The name a ``{"name": ...}``, ``{"key": ...}`` or ``{"id": ...}`` reference means, if it names one."""
    if not isinstance(value, dict):
        return None
    for attr in ("key", "name"):
        if isinstance(value.get(attr), str) and value[attr] in names:
            return str(value[attr])
    wanted = value.get("id")
    if isinstance(wanted, str | int) and str(wanted).isascii() and str(wanted).isdigit() \
            and 0 < int(wanted) <= len(names):
        return names[int(wanted) - 1]
    return None


PRIORITIES = ("Highest", "High", "Medium", "Low", "Lowest")
LINK_TYPES = {"Relates": ("relates to", "relates to"), "Duplicate": ("is duplicated by", "duplicates"),
              "Blocks": ("is blocked by", "blocks")}
_CREATE_FIELDS = frozenset({"project", "issuetype", "summary", "description", "labels"})


def _extra_fields(state: JiraState, given: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """The create's fields beyond the basic ones, and Jira's complaints about them (as it words them)."""
    extra: dict[str, Any] = {}
    problems: dict[str, str] = {}
    custom = set(state.custom_fields.values())
    for name, value in given.items():
        if name in _CREATE_FIELDS:
            continue
        if name == "priority":
            if _object(given, "priority").get("name") not in PRIORITIES:
                problems[name] = f"Specify a valid value for priority (one of {', '.join(PRIORITIES)})"
        elif name == "components":
            if not isinstance(value, list) or not all(isinstance(c, dict) and c.get("name") for c in value):
                problems[name] = "Component name is required."
        elif name not in custom:
            problems[name] = (f"Field '{name}' cannot be set. It is not on the appropriate screen, or unknown.")
        extra[name] = value
    return extra, problems


def _lookup(state: JiraState, key: str) -> Issue | JSONResponse:
    issue = state.find(key)
    if issue is None:
        return _errors(404, ["Issue Does Not Exist"])
    return issue


_REST_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": JiraErrors}, 401: {"model": JiraErrors, "description": "No or wrong credentials."},
    404: {"model": JiraErrors, "description": "No such issue, or no such version of the API."},
}


def rest_routes(state: JiraState) -> APIRouter:
    router = strict_router(dependencies=[Depends(_api_version)], responses=_REST_ERRORS)
    _info_routes(router, state)
    _issue_routes(router, state)
    _search_routes(router, state)
    _workflow_routes(router, state)
    return router


def _info_routes(router: APIRouter, state: JiraState) -> None:
    @router.get("/rest/api/{version}/serverInfo")
    def server_info(request: Request) -> dict[str, Any]:
        version = [1001, 0, 0] if state.cloud else [9, 12, 0]
        return {"baseUrl": _base(request), "version": ".".join(map(str, version)), "versionNumbers": version,
                "deploymentType": "Cloud" if state.cloud else "Server", "buildNumber": 100000,
                "serverTitle": "Fake Jira"}

    @router.get("/rest/api/{version}/myself")
    def myself(request: Request) -> dict[str, Any]:
        user = request.state.user
        return {"self": f"{_base(request)}/rest/api/2/user?username={user}", "name": user, "key": user,
                "accountId": f"fake-{user}", "displayName": user, "emailAddress": user, "active": True}

    @router.get("/rest/api/{version}/field")
    def fields() -> list[dict[str, Any]]:
        system = [{"id": name, "key": name, "name": name.capitalize(), "custom": False, "navigable": True,
                   "searchable": True, "clauseNames": [name]} for name in _SYSTEM_FIELDS]
        custom = [{"id": field_id, "key": field_id, "name": name, "custom": True, "navigable": True,
                   "searchable": True, "clauseNames": [f"cf[{field_id.rpartition('_')[2]}]", name]}
                  for name, field_id in state.custom_fields.items()]
        return system + custom



def _issue_routes(router: APIRouter, state: JiraState) -> None:
    @router.post("/rest/api/{version}/issue", response_model=None, status_code=201)
    def create(request: Request, body: dict[str, Any] = Body(...)) -> JSONResponse:  # noqa: B008
        given = _object(body, "fields")
        problems: dict[str, str] = {}
        project = _name_or_id(given.get("project"), sorted(state.projects))
        if project is None:
            problems["project"] = "valid project is required"
        issue_type = _name_or_id(given.get("issuetype"), list(state.issue_types))
        if issue_type is None:
            problems["issuetype"] = "valid issue type is required"
        summary = given.get("summary")
        if not isinstance(summary, str) or not summary.strip():
            problems["summary"] = "You must specify a summary of the issue."
        labels = given.get("labels", [])
        if not isinstance(labels, list) or not all(isinstance(label, str) for label in labels):
            problems["labels"] = "Labels must be a list of strings."
        else:
            for label in labels:
                if not label or any(ch.isspace() for ch in label):
                    problems["labels"] = f"The label '{label}' contains spaces which is invalid."
        description = given.get("description") or ""
        extra, refused = _extra_fields(state, given)
        problems.update(refused)
        if problems or project is None or issue_type is None or not isinstance(summary, str):
            return _errors(400, errors=problems)
        issue = state.create(project, issue_type, summary, str(description), list(labels), request.state.user,
                             extra)
        base = _base(request)
        return JSONResponse({"id": str(issue.id), "key": issue.key, "self": f"{base}/rest/api/2/issue/{issue.id}"},
                            status_code=201)

    @router.get("/rest/api/{version}/issue/{key}", response_model=None)
    def get_issue(key: str, request: Request) -> dict[str, Any] | JSONResponse:
        found = _lookup(state, key)
        return found if isinstance(found, JSONResponse) else issue_json(state, found, _base(request))



class _SearchRefused(Exception):
    """A search the fake cannot run: Jira's 400 with these messages."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.answer = _errors(400, [message])


def _whole(params: dict[str, Any], name: str, default: int) -> int:
    """``params[name]`` as a whole number of 0 or more (a number, or its digits as text), else Jira's 400."""
    value = params.get(name)
    if value is None or value == "":
        return default
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 18:
        return int(value)
    raise _SearchRefused(f"{name} must be a whole number of 0 or more")


async def _search_params(request: Request) -> dict[str, Any]:
    """The search's parameters: the query string (GET) or the JSON object posted (POST)."""
    if request.method != "POST":
        return dict(request.query_params)
    body = await json_body(request)  # JSON it refuses: a 400 naming the field, in Jira's body (``_refused``)
    if not isinstance(body, dict):
        raise _SearchRefused("The request body is not a JSON object.")
    return body


def _search_routes(router: APIRouter, state: JiraState) -> None:
    def search_page(request: Request, params: dict[str, Any], start: int) -> tuple[list[Any], int, int]:
        try:
            query = parse_jql(str(params.get("jql") or ""))
        except JqlError as exc:
            raise _SearchRefused(str(exc)) from None
        size = max(1, min(_whole(params, "maxResults", state.page_size), state.page_size))
        found = state.search(query)
        base = _base(request)
        return [issue_json(state, issue, base) for issue in found[start:start + size]], size, len(found)

    removed: dict[int | str, dict[str, Any]] = {410: {"model": JiraErrors, "description": "Cloud: use /search/jql."}}

    @router.get("/rest/api/{version}/search", response_model=None, responses=removed)
    @router.post("/rest/api/{version}/search", response_model=None, responses=removed)
    async def search(request: Request) -> dict[str, Any] | JSONResponse:
        if state.cloud:  # Cloud removed it in 2025: the library must use /search/jql
            return _errors(410, ["The requested API has been removed. Please migrate to /rest/api/3/search/jql."])
        try:
            params = await _search_params(request)
            start = _whole(params, "startAt", 0)
            issues, size, total = search_page(request, params, start)
        except _SearchRefused as refused:
            return refused.answer
        return {"startAt": start, "maxResults": size, "total": total, "issues": issues}

    @router.get("/rest/api/{version}/search/jql", response_model=None)
    @router.post("/rest/api/{version}/search/jql", response_model=None)
    async def search_jql(request: Request) -> dict[str, Any] | JSONResponse:
        try:
            params = await _search_params(request)
            token = params.get("nextPageToken")
            if token is not None and not (isinstance(token, str) and token.isascii() and token.isdigit()):
                raise _SearchRefused("Invalid nextPageToken.")
            start = _whole(params, "nextPageToken", 0)
            issues, size, total = search_page(request, params, start)
        except _SearchRefused as refused:
            return refused.answer
        more = start + size < total
        return {"issues": issues, "isLast": not more, **({"nextPageToken": str(start + size)} if more else {})}


def _workflow_routes(router: APIRouter, state: JiraState) -> None:
    @router.get("/rest/api/{version}/issue/{key}/transitions", response_model=None)
    def transitions(key: str, request: Request) -> dict[str, Any] | JSONResponse:
        found = _lookup(state, key)
        if isinstance(found, JSONResponse):
            return found
        base = _base(request)
        return {"expand": "transitions", "transitions": [
            {"id": t.id, "name": t.name, "to": _status_json(t.to, base), "hasScreen": False, "isGlobal": False,
             "isInitial": False, "isConditional": False} for t in state.transitions(found)]}

    @router.post("/rest/api/{version}/issue/{key}/transitions", response_model=None, status_code=204)
    def transition(key: str, request: Request, body: dict[str, Any] = Body(...)) -> Response:  # noqa: B008
        found = _lookup(state, key)
        if isinstance(found, JSONResponse):
            return found
        chosen = _object(body, "transition")
        named = _object(_object(body, "fields"), "resolution").get("name")
        resolution = named if isinstance(named, str) and named else None
        try:
            state.transition(found, str(chosen.get("id", "")), resolution, by=request.state.user)
        except WorkflowError as exc:
            return _errors(400, [str(exc)])
        for entry in _object(body, "update").get("comment", []):
            text = entry.get("add", {}).get("body") if isinstance(entry, dict) else None
            if isinstance(text, str) and text:
                state.add_comment(found, text, request.state.user)
        return Response(status_code=204)

    @router.get("/rest/api/{version}/issueLinkType")
    def link_types() -> dict[str, Any]:
        return {"issueLinkTypes": [{"id": str(10000 + n), "name": name, "inward": inward, "outward": outward}
                                   for n, (name, (inward, outward)) in enumerate(LINK_TYPES.items())]}

    @router.post("/rest/api/{version}/issueLink", response_model=None, status_code=201)
    def link(body: dict[str, Any] = Body(...)) -> Response:  # noqa: B008
        kind = _object(body, "type").get("name")
        inward = state.find(str(_object(body, "inwardIssue").get("key", "")))
        outward = state.find(str(_object(body, "outwardIssue").get("key", "")))
        if kind not in LINK_TYPES:
            return _errors(404, [f"No issue link type with name '{kind}' found."])
        if inward is None or outward is None:
            return _errors(404, ["Issue Does Not Exist"])
        with state.lock:
            inward.links.append((str(kind), "outward", outward.key))
            outward.links.append((str(kind), "inward", inward.key))
        return Response(status_code=201)

    @router.get("/rest/api/{version}/issue/{key}/comment", response_model=None)
    def comments(key: str, request: Request) -> dict[str, Any] | JSONResponse:
        found = _lookup(state, key)
        if isinstance(found, JSONResponse):
            return found
        base = _base(request)
        listed = [_comment_json(comment, found, base) for comment in found.comments]
        return {"startAt": 0, "maxResults": len(listed), "total": len(listed), "comments": listed}

    @router.post("/rest/api/{version}/issue/{key}/comment", response_model=None, status_code=201)
    def add_comment(key: str, request: Request, body: dict[str, Any] = Body(...)) -> JSONResponse:  # noqa: B008
        found = _lookup(state, key)
        if isinstance(found, JSONResponse):
            return found
        text = body.get("body")
        if not isinstance(text, str) or not text.strip():
            return _errors(400, errors={"comment": "Comment body can not be empty!"})
        comment = state.add_comment(found, text, request.state.user)
        return JSONResponse(_comment_json(comment, found, _base(request)), status_code=201)


class FaultSettings(BaseModel):
    """A fault to inject (``POST /_admin/faults``), checked here: a setting of the wrong type would otherwise be
    taken and fail the requests it meets later."""

    model_config = ConfigDict(extra="forbid", strict=True)  # strict: false is not 0, nor "5" a number

    status: int | None = Field(None, ge=400, le=599, description="Answer this (429, 503...) without doing anything.")
    retry_after: int | None = Field(None, ge=0, le=86_400, description="Seconds, in a Retry-After header.")
    delay: float = Field(0.0, ge=0, le=600, allow_inf_nan=False,
                         description="Real seconds to hold the answer (with status: before refusing).")
    count: int = Field(1, ge=1, le=1_000_000_000, description="How many matching requests meet it.")
    method: Literal["GET", "POST", "PUT", "DELETE"] | None = Field(None, description="Only this method's requests.")
    path: str | None = Field(None, min_length=1, description="Only requests whose path contains this.")


class SearchLag(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    seconds: float = Field(ge=0, le=86_400, allow_inf_nan=False,
                           description="How long a new issue stays missing from search, as on Cloud.")


class Resolution(BaseModel):
    resolution: str | None = Field(None, min_length=1, description="Done unless told (Won't Do...).")


def admin_routes(state: JiraState) -> APIRouter:
    """``POST /_admin/faults`` (a ``Fault``'s fields as JSON), ``DELETE /_admin/faults``, ``PUT
    /_admin/search-lag`` (``{"seconds": n}``), ``POST /_admin/issues/{key}/resolve`` (``{"resolution": ...}``)."""
    router = strict_router(prefix="/_admin")
    refused: dict[int | str, dict[str, Any]] = {400: {"model": JiraErrors}}

    @router.post("/faults", status_code=204, responses=refused)
    def inject(body: FaultSettings) -> None:
        state.inject(Fault(**body.model_dump()))

    @router.delete("/faults", status_code=204)
    def clear() -> None:
        state.clear_faults()

    @router.put("/search-lag", status_code=204, responses=refused)
    def search_lag(body: SearchLag) -> None:
        state.search_lag = body.seconds

    @router.post("/issues/{key}/resolve", response_model=None, responses={**refused, 404: {"model": JiraErrors}})
    def resolve(key: str, request: Request, body: Resolution | None = None) -> Any:
        try:
            issue = state.resolve(key, (body.resolution if body else None) or "Done")
        except KeyError:
            return _errors(404, ["Issue Does Not Exist"])
        except WorkflowError as exc:
            return _errors(400, [str(exc)])
        return issue_json(state, issue, _base(request))

    return router


Next = Callable[[Request], Awaitable[Response]]


def send_webhooks(state: JiraState, base: str, target: WebhookTarget) -> WebhookSender:
    """After every transition of an issue (a resolve, a reopen), ``jira:issue_updated`` sent to ``target``, with
    the issue as ``GET /issue`` shows it from ``base`` and the changelog of its status and resolution."""
    sender = WebhookSender(target)
    changelogs = count(30_000)

    def changed(issue: Issue, before: Status, resolved_before: str | None, by: str) -> None:
        with state.lock:
            shown = issue_json(state, issue, base)
            items: list[dict[str, Any]] = [{
                "field": "status", "fieldtype": "jira", "fieldId": "status", "from": before.id,
                "fromString": before.name, "to": issue.status.id, "toString": issue.status.name}]
            if issue.resolution != resolved_before:
                items.insert(0, {"field": "resolution", "fieldtype": "jira", "fieldId": "resolution",
                                 "from": RESOLUTIONS.get(resolved_before or ""), "fromString": resolved_before,
                                 "to": RESOLUTIONS.get(issue.resolution or ""), "toString": issue.resolution})
            payload = issue_updated(shown, by, items, next(changelogs), state.clock)
        sender.send(issue.key, payload)

    state.on_transition = changed
    return sender


def create_jira_app(state: JiraState, auth: JiraAuth | None = None) -> FastAPI:
    """The fake Jira serving ``state``; every ``/rest`` request is authenticated and may meet a fault."""
    credentials = auth or JiraAuth()
    app = strict_app(title="Fake Jira", docs_url=None, redoc_url=None, openapi_url="/_admin/openapi.json")
    app.add_exception_handler(RequestValidationError, _bad_request)
    app.add_exception_handler(StarletteHTTPException, _refused)
    documented = app.openapi

    def openapi() -> dict[str, Any]:
        document = documented()  # built once, then the same dictionary
        for operation in (operation for path in document["paths"].values() for operation in path.values()):
            operation["responses"].pop("422", None)  # bad input is a 400 in Jira's words (_bad_request)
        return document

    app.openapi = openapi  # type: ignore[method-assign]

    @app.middleware("http")
    async def faults_and_auth(request: Request, call_next: Next) -> Response:
        path = request.url.path
        if not path.startswith("/rest/"):
            return await call_next(request)
        parts = path.split("/")  # "", "rest", "api", version, ...
        if len(parts) < 4 or parts[2] != "api" or parts[3] not in _VERSIONS:
            return _errors(404, [f"No REST resource at {path}"])
        fault = state.take_fault(request.method, path)
        if fault is not None and fault.status is not None:
            if fault.delay > 0:
                await asyncio.sleep(fault.delay)
            headers = {"Retry-After": str(fault.retry_after)} if fault.retry_after is not None else {}
            refused = _errors(fault.status, [f"fault injected: {fault.status}"])
            refused.headers.update(headers)
            return refused
        user = credentials.user(request.headers.get("authorization"))
        if user is None:
            return _errors(401, ["You are not authenticated. Authentication required to perform this operation."])
        request.state.user = user
        response = await call_next(request)
        if fault is not None and fault.delay > 0:
            await asyncio.sleep(fault.delay)
        return response

    app.include_router(rest_routes(state))
    app.include_router(admin_routes(state))
    return app
