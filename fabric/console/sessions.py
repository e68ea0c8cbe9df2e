"""The console's logins: opaque server-side sessions, each with its CSRF token.

Why opaque and server-side rather than a signed cookie: the cookie then carries a random id and nothing else, so
neither the admin token nor anything derived from it ever leaves the daemon; there is no signing key to configure,
keep secret and rotate; and logging out (or a restart) really ends a session, where a signed cookie stays valid
until it expires. The price is that sessions live in this process's memory: an admin logs in again after a restart,
and on each instance of an active/standby pair (a standby refuses writes anyway).

A session remembers a digest of the admin token it was opened with: once the configured token changes (or is
removed), the session grants nothing and its holder must log in again.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass
from datetime import datetime, timedelta

COOKIE = "fabric_console"
LIFETIME = timedelta(hours=8)
"""How long a session lasts after its login (a working day): then its holder logs in again."""
MOST = 256
"""Sessions kept at once; a login beyond them ends the oldest (a client logging in in a loop costs no memory)."""


def token_digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


@dataclass(frozen=True, slots=True)
class Session:
    id: str
    """The cookie's value: 32 random bytes, URL-safe."""
    csrf: str
    """The token every form of this session carries and every POST must send back."""
    by: str
    """Who logged in, as they named themselves: the ``by`` of their writes."""
    token: bytes
    """The digest of the admin token the session was opened with."""
    expires: datetime

    def csrf_matches(self, sent: str | None) -> bool:
        return sent is not None and hmac.compare_digest(sent.encode(), self.csrf.encode())

    def admin(self, token: str | None) -> bool:
        """Whether the session still stands for the configured admin token ``token``."""
        return token is not None and hmac.compare_digest(token_digest(token), self.token)


class Sessions:
    """The live sessions, by id; safe to use from the API's worker threads."""

    def __init__(self) -> None:
        self._held: OrderedDict[str, Session] = OrderedDict()
        self._lock = threading.Lock()

    def open(self, by: str, token: str, now: datetime) -> Session:
        session = Session(secrets.token_urlsafe(32), secrets.token_urlsafe(32), by, token_digest(token),
                          now + LIFETIME)
        with self._lock:
            self._held[session.id] = session
            while len(self._held) > MOST:
                self._held.popitem(last=False)
        return session

    def get(self, session_id: str | None, now: datetime) -> Session | None:
        if not session_id:
            return None
        with self._lock:
            session = self._held.get(session_id)
            if session is not None and session.expires <= now:
                del self._held[session_id]
                return None
        return session

    def close(self, session_id: str) -> None:
        with self._lock:
            self._held.pop(session_id, None)
