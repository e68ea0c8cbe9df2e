"""The three ways UFM's REST API authenticates, and the sessions and tokens behind them.

| prefix        | credentials                                                                      |
|---------------|----------------------------------------------------------------------------------|
| ``/ufmRest``  | HTTP Basic ``user:password``                                                     |
| ``/ufmRestV2``| the session cookie set by ``POST /dologin`` (form ``httpd_username``/``httpd_password``) |
| ``/ufmRestV3``| ``Authorization: Basic <access_token>`` (the word is Basic, not Bearer)           |

Tokens come from ``POST /ufmRest/app/tokens`` and answer ``{"access_token","revoked","issued_at",
"expires_in":315360000,"username"}`` (UFM REST guide).  The cookie's name, ``sessionid``, is UNCONFIRMED.
Sessions die with a UFM restart; tokens survive it (UFM keeps them in its database).
"""

from __future__ import annotations

import base64
import binascii
import hmac
import secrets
import threading
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from fabric.simulator.events import s_timestamp

SESSION_COOKIE = "sessionid"
TOKEN_LIFETIME = 315_360_000
BASIC, SESSION, TOKEN = "/ufmRest", "/ufmRestV2", "/ufmRestV3"
PREFIXES = (BASIC, SESSION, TOKEN)


@dataclass(slots=True)
class AuthSettings:
    users: dict[str, str] = field(default_factory=lambda: {"admin": "123456"})
    """User name -> password.  UFM's factory default is admin / 123456."""


@dataclass(slots=True)
class Token:
    value: str
    username: str
    issued: datetime
    revoked: bool = False

    def to_rest(self) -> dict[str, Any]:
        return {"access_token": self.value, "revoked": self.revoked, "issued_at": s_timestamp(self.issued),
                "expires_in": TOKEN_LIFETIME, "username": self.username}


class AuthStore:
    def __init__(self, settings: AuthSettings | None = None) -> None:
        self.settings = settings or AuthSettings()
        self._sessions: dict[str, str] = {}
        self._tokens: dict[str, Token] = {}
        self._lock = threading.Lock()

    def check_password(self, username: str, password: str) -> bool:
        expected = self.settings.users.get(username)
        return expected is not None and hmac.compare_digest(expected.encode(), password.encode())

    def basic_user(self, authorization: str | None) -> str | None:
        """The user of an ``Authorization: Basic base64(user:password)`` header, if the password is right."""
        encoded = _basic_credentials(authorization)
        if encoded is None:
            return None
        try:
            username, sep, password = base64.b64decode(encoded, validate=True).decode("utf-8").partition(":")
        except (binascii.Error, UnicodeDecodeError):
            return None
        return username if sep and self.check_password(username, password) else None

    def login(self, username: str, password: str) -> str | None:
        if not self.check_password(username, password):
            return None
        session = secrets.token_hex(16)
        with self._lock:
            self._sessions[session] = username
        return session

    def session_user(self, session: str | None) -> str | None:
        if not session:
            return None
        with self._lock:
            return self._sessions.get(session)

    def clear_sessions(self) -> None:
        with self._lock:
            self._sessions.clear()

    def create_token(self, username: str, when: datetime) -> Token:
        token = Token(secrets.token_urlsafe(24), username, when)
        with self._lock:
            self._tokens[token.value] = token
        return token

    def token_user(self, authorization: str | None) -> str | None:
        value = _basic_credentials(authorization)
        if value is None:
            return None
        with self._lock:
            token = self._tokens.get(value)
        return token.username if token is not None and not token.revoked else None

    def revoke(self, value: str) -> bool:
        with self._lock:
            token = self._tokens.get(value)
            if token is None:
                return False
            token.revoked = True
            return True

    def tokens(self) -> list[Token]:
        with self._lock:
            return list(self._tokens.values())


def _basic_credentials(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, value = authorization.strip().partition(" ")
    if scheme.lower() != "basic" or not value.strip():
        return None
    return value.strip()
