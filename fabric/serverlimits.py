"""The limits the project's HTTP servers read their clients within (``fabric.serving`` applies them).

Apart from ``fabric.serving`` so that reading a configuration (``fabric.config``: ``fabricctl replay``, ``config
check``) does not import uvicorn, which only a server needs.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MAX_CONNECTIONS", "READ_TIMEOUT", "ServerLimits"]

READ_TIMEOUT = 10.0
MAX_CONNECTIONS = 256


@dataclass(frozen=True, slots=True)
class ServerLimits:
    """``[api] read_timeout`` and ``max_connections`` (``ApiSection.server_limits``); the defaults serve the
    servers that have no configuration (the simulator, the fake Jira)."""

    read_timeout: float = READ_TIMEOUT
    """Seconds a request's headers may take to arrive, and then its body."""
    max_connections: int = MAX_CONNECTIONS
    """Connections served at once; a request past them is answered 503."""
