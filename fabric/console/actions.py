"""The console's writes: log in and out, add and expire a silence, resume automation.

Every write but the login needs a session (``sessions``) and the session's CSRF token in the form, checked on every
POST: a page of another site cannot post a form here with the admin's cookie (``SameSite=Strict`` keeps the cookie
off such a request as well). The login needs no CSRF token: it asks for the admin token itself, which a forging
site does not have. A standby refuses every write (409): it serves reads only.

The writes themselves are the API's (``fabric.api.writes``): the same checks, rows, log lines, who (the name given
at login) and why (the form's reason) as ``/api/v1``.
"""

from __future__ import annotations

import hmac
from datetime import UTC, datetime
from typing import Annotated, TypeVar
from urllib.parse import parse_qs

from fastapi import HTTPException, Path, Request, status
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import ValidationError

from fabric.api import reads, writes
from fabric.api.deps import ContextDep
from fabric.api.models import Audit, SilenceCreate
from fabric.bounded import StoreId
from fabric.console.pages import UI
from fabric.console.render import SECURITY_HEADERS, Viewer, admin_token, console_sessions, page, viewer
from fabric.console.sessions import COOKIE, LIFETIME, Session
from fabric.http_problems import problems
from fabric.remediation.textlimits import BY_MAX

STANDBY = "this instance is the standby: it serves reads only; log in and write on the leader"
FORM_MOST = 16 * 1024
"""Bytes a form may send (a silence's matcher and reason are far shorter)."""


async def _form(request: Request) -> dict[str, str]:
    """The form's fields (the first value of each), from a body of at most ``FORM_MOST`` bytes."""
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > FORM_MOST:
            raise HTTPException(status.HTTP_413_REQUEST_ENTITY_TOO_LARGE, f"a form of at most {FORM_MOST} bytes")
    try:
        fields = parse_qs(body.decode(), keep_blank_values=True, max_num_fields=20)
    except (UnicodeDecodeError, ValueError):
        raise HTTPException(status.HTTP_400_BAD_REQUEST, "not a form (application/x-www-form-urlencoded)") from None
    return {name: values[0] for name, values in fields.items()}


def _see(path: str) -> RedirectResponse:
    """After a write, the page that shows it (303: the browser asks it with a GET)."""
    return RedirectResponse(path, status_code=status.HTTP_303_SEE_OTHER, headers=SECURITY_HEADERS)


def _writer(request: Request, context: ContextDep, form: dict[str, str]) -> tuple[Viewer, Session]:
    """The viewer, once they may write: logged in, on the leader, with the session's CSRF token in the form."""
    who = viewer(request, context)
    if who.standby:
        raise HTTPException(status.HTTP_409_CONFLICT, STANDBY)
    if who.session is None:
        raise HTTPException(status.HTTP_401_UNAUTHORIZED, "log in with the admin token first")
    if not who.session.csrf_matches(form.get("csrf")):
        raise HTTPException(status.HTTP_403_FORBIDDEN, "the form's CSRF token is missing or not this session's: "
                                                       "reload the page and try again")
    return who, who.session


def _refusal(template: str, who: Viewer, exc: HTTPException, **values: object) -> HTMLResponse:
    return page(template, who, status_code=exc.status_code, error=str(exc.detail), **values)


async def login(request: Request, context: ContextDep) -> Response:
    form = await _form(request)
    who = viewer(request, context)
    by, token = form.get("by", "").strip(), admin_token(context)
    if who.standby:
        return _refusal("login.html", who, HTTPException(status.HTTP_409_CONFLICT, STANDBY))
    if token is None:
        return _refusal("login.html", who, HTTPException(status.HTTP_403_FORBIDDEN, "writes are off: no admin "
                                                         "token is configured"))
    if not by or len(by) > BY_MAX:
        return _refusal("login.html", who, HTTPException(422, f"by: your name, 1 to {BY_MAX} characters"))
    if not hmac.compare_digest(form.get("token", "").encode(), token.encode()):
        return _refusal("login.html", who, HTTPException(status.HTTP_401_UNAUTHORIZED, "wrong admin token"))
    session = console_sessions(request).open(by, token, context.clock())
    answer = _see(UI + "/silences")
    answer.set_cookie(COOKIE, session.id, max_age=int(LIFETIME.total_seconds()), path="/", httponly=True,
                      samesite="strict", secure=request.url.scheme == "https")
    return answer


async def logout(request: Request, context: ContextDep) -> Response:
    form = await _form(request)
    who = viewer(request, context)
    if who.session is not None and who.session.csrf_matches(form.get("csrf")):
        console_sessions(request).close(who.session.id)
    answer = _see("/")
    answer.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
    return answer


async def add_silence(request: Request, context: ContextDep) -> Response:
    form = await _form(request)
    try:
        _, session = _writer(request, context, form)
        body = _parsed(SilenceCreate, matcher=form.get("matcher", ""), reason=form.get("reason", ""), by=session.by,
                       duration=form.get("duration") or None, starts_at=_instant(form.get("starts_at")),
                       ends_at=_instant(form.get("ends_at")))
        writes.add_silence(body, context.store)
    except HTTPException as exc:
        return _refusal("silences.html", viewer(request, context), exc,
                        silences=writes.list_silences(context.store, None))
    return _see(UI + "/silences")


async def expire_silence(request: Request, context: ContextDep, silence_id: Annotated[StoreId, Path()]) -> Response:
    form = await _form(request)
    try:
        _, session = _writer(request, context, form)
        reason = _parsed(Audit, reason=form.get("reason", ""), by=session.by).reason
        writes.expire_silence(silence_id, context.store, session.by, reason)
    except HTTPException as exc:
        return _refusal("silences.html", viewer(request, context), exc,
                        silences=writes.list_silences(context.store, None))
    return _see(UI + "/silences")


async def resume(request: Request, context: ContextDep) -> Response:
    form = await _form(request)
    try:
        _, session = _writer(request, context, form)
        writes.resume(_parsed(Audit, reason=form.get("reason", ""), by=session.by), context.store, context.runtime)
    except HTTPException as exc:
        return _refusal("status.html", viewer(request, context), exc,
                        status=reads.get_status(context.store, context.runtime))
    return _see("/")


def _instant(text: str | None) -> str | None:
    """A form's date and time (``datetime-local``: no zone, taken as UTC), as the API's models read one."""
    if not text:
        return None
    try:
        at = datetime.fromisoformat(text)
    except ValueError:
        raise HTTPException(422, f"not a date and time: {text!r}") from None
    return (at if at.tzinfo else at.replace(tzinfo=UTC)).isoformat()


Written = TypeVar("Written", Audit, SilenceCreate)


def _parsed(model: type[Written], **fields: object) -> Written:
    """The form's fields as the API's model of the write: refused in the API's own words, one per field."""
    try:
        return model.model_validate(fields)
    except ValidationError as exc:
        found = problems(RequestValidationError(exc.errors()))
        raise HTTPException(422, "; ".join(f"{field}: {message}" for field, message in found)) from None
