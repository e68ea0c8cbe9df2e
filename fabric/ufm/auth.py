"""How the client authenticates to UFM, and which REST prefix each method implies.

| config          | prefix        | how                                                                 |
|-----------------|---------------|---------------------------------------------------------------------|
| ``BasicAuth``   | ``/ufmRest``  | HTTP Basic ``user:password`` on every request                        |
| ``TokenAuth``   | ``/ufmRestV3``| header ``Authorization: Basic <access token>`` (Basic, *not* Bearer) |
| ``SessionAuth`` | ``/ufmRestV2``| ``POST /dologin`` with form ``httpd_username``/``httpd_password``;  |
|                 |               | the session cookie is kept and the login redone once on a 401        |
| ``NoAuth``      | (none)        | nothing: UFM Telemetry, which answers on the UFM host's loopback     |

Secrets are excluded from ``repr`` so they cannot leak through logs or tracebacks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

BASIC_PREFIX = "/ufmRest"
SESSION_PREFIX = "/ufmRestV2"
TOKEN_PREFIX = "/ufmRestV3"
LOGIN_PATH = "/dologin"


@dataclass(frozen=True, slots=True)
class BasicAuth:
    """HTTP Basic authentication with a UFM user name and password (``/ufmRest``)."""

    username: str
    password: str = field(repr=False)

    @property
    def prefix(self) -> str:
        return BASIC_PREFIX


@dataclass(frozen=True, slots=True)
class TokenAuth:
    """A UFM access token (``/ufmRestV3``), sent as ``Authorization: Basic <token>``."""

    token: str = field(repr=False)

    @property
    def prefix(self) -> str:
        return TOKEN_PREFIX

    @property
    def header(self) -> str:
        # UFM documents the scheme word "Basic" for access tokens; "Bearer" is rejected.
        return f"Basic {self.token}"


@dataclass(frozen=True, slots=True)
class SessionAuth:
    """Session login (``/ufmRestV2``): ``POST /dologin`` once, then the session cookie."""

    username: str
    password: str = field(repr=False)

    @property
    def prefix(self) -> str:
        return SESSION_PREFIX


@dataclass(frozen=True, slots=True)
class NoAuth:
    """No credentials and no REST prefix: UFM Telemetry (``/csv/xcset/<instance>`` on port 9002)."""

    @property
    def prefix(self) -> str:
        return ""


UfmAuth = BasicAuth | TokenAuth | SessionAuth | NoAuth
