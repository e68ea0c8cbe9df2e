"""The console's pages as HTML: Jinja2 templates of this package, escaped everywhere, and the headers every page has.

Autoescape is on for every template (not only those named ``.html``): whatever UFM or the store hold (a switch
named ``<script>``) reaches a page as text. The Content-Security-Policy allows scripts and styles from the daemon
alone, none inline, so a string that escaped the escaping still could not run.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, PackageLoader, StrictUndefined

from fabric.api.context import ApiContext, Role
from fabric.config import ConfigError
from fabric.console.sessions import COOKIE, Session, Sessions

SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                               "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}

_TEMPLATES = Environment(loader=PackageLoader("fabric.console", "templates"), autoescape=True,
                         undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def _when(at: datetime | None) -> str:
    return "—" if at is None else f"{at:%Y-%m-%d %H:%M:%S}"


_TEMPLATES.filters["when"] = _when


@dataclass(frozen=True, slots=True)
class Viewer:
    """Who looks at a page, and what this instance lets them do."""

    session: Session | None
    """Their login (``None``: not logged in, or a login the current admin token no longer stands behind)."""
    standby: bool
    """This instance stands by: every page is read-only."""

    @property
    def may_write(self) -> bool:
        return self.session is not None and not self.standby


def console_sessions(request: Request) -> Sessions:
    sessions: Sessions = request.app.state.console_sessions
    return sessions


def viewer(request: Request, context: ApiContext) -> Viewer:
    session = console_sessions(request).get(request.cookies.get(COOKIE), context.clock())
    if session is not None and not session.admin(admin_token(context)):
        session = None
    leadership = context.runtime.status().leadership
    return Viewer(session, leadership is not None and leadership.role is Role.STANDBY)


def admin_token(context: ApiContext) -> str | None:
    """The configured admin token (``None``: none, or one that cannot be read: no session stands for it)."""
    try:
        token = context.config.api.admin_token()
    except ConfigError:  # the file vanished or emptied
        return None
    return None if token is None else token.get_secret_value()


def page(template: str, who: Viewer, *, status_code: int = 200, **values: Any) -> HTMLResponse:
    html = _TEMPLATES.get_template(template).render(viewer=who, **values)
    return HTMLResponse(html, status_code=status_code, headers=SECURITY_HEADERS)
