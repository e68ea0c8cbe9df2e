"""How the project's HTTP servers read their clients: within a time, a size and a number of connections.

The daemon's API, the webhook receiver alone, the simulator and the fake Jira are uvicorn servers, and uvicorn
waits as long as a client likes for a request's headers (it has no such timeout) and for a body shorter than its
``Content-Length`` said: one client that sends part of a request and stops holds a connection for ever, and enough
of them hold every one. :class:`ServerConfig` is the one configuration they are all served with:

- **read timeout** (``ServerLimits.read_timeout``): a request's headers must arrive within it of the connection
  opening (or of the previous answer on a kept-alive one), and its body within it of the headers; otherwise the
  client gets ``408 Request Timeout`` and the connection is closed (:class:`DeadlinedH11Protocol`, uvicorn's h11
  protocol with the two deadlines added). A trickle of bytes does not move a deadline. No deadline runs while the
  app answers;
- **connections** (``ServerLimits.max_connections``, uvicorn's ``limit_concurrency``): past it, a request is answered
  ``503`` at once instead of being queued;
- **header size**: ``HEADER_BYTES`` of request line and headers at most (h11 answers ``400`` past it); bodies are
  bounded where they are read (the webhook receiver's ``MAX_BODY_BYTES``, FastAPI's models);
- an idle kept-alive connection is closed after ``KEEP_ALIVE`` seconds (uvicorn's own ``timeout_keep_alive``).

Each of them listens on a socket from :func:`bind_listener`, and those other than the daemon's API are configured by
:func:`uvicorn_config`; both live here, beside the limits, because production (the daemon, ``fabricctl webhook``)
and the simulators serve alike and production must not lean on the simulator for it.
"""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path
from typing import Any

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from fabric.serverlimits import MAX_CONNECTIONS, READ_TIMEOUT, ServerLimits

__all__ = ["HEADER_BYTES", "KEEP_ALIVE", "MAX_CONNECTIONS", "READ_TIMEOUT", "SHUTDOWN_GRACE", "DeadlinedH11Protocol",
           "ServerConfig", "ServerLimits", "bind_listener", "uvicorn_config"]

HEADER_BYTES = 16 * 1024
"""The most a request line and its headers may take (h11's own default, stated)."""
KEEP_ALIVE = 5
"""Seconds an idle kept-alive connection stays open (uvicorn's default, stated)."""


class ServerConfig(uvicorn.Config):
    """``uvicorn.Config`` for every server of the project: the deadlined h11 protocol and ``limits``; ``options``
    are uvicorn's (host, port, TLS, logging...)."""

    def __init__(self, app: Any, limits: ServerLimits | None = None, **options: Any) -> None:
        self.limits = limits or ServerLimits()
        super().__init__(app, http=DeadlinedH11Protocol, limit_concurrency=self.limits.max_connections,
                         h11_max_incomplete_event_size=HEADER_BYTES, timeout_keep_alive=KEEP_ALIVE, **options)


SHUTDOWN_GRACE = 2
"""Seconds the requests in flight get to finish once told to stop (SIGTERM, the end of a test's server): an injected
delay of the simulator (up to ten minutes, on purpose) must not keep a server from stopping."""


def uvicorn_config(app: Any, host: str, port: int, cert: Path | None = None,
                   key: Path | None = None, limits: ServerLimits | None = None) -> uvicorn.Config:
    """How the project's servers other than the daemon's API are served (the webhook receiver alone, the simulator,
    the fake Jira): read within ``limits`` (the defaults unless a configuration says otherwise)."""
    return ServerConfig(
        app, limits, host=host, port=port, log_level="warning", access_log=False, lifespan="off",
        ssl_certfile=str(cert) if cert else None, ssl_keyfile=str(key) if key else None,
        timeout_graceful_shutdown=SHUTDOWN_GRACE,
    )


def bind_listener(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` (IPv6 when ``host`` has a colon), for ``uvicorn.Server.run(sockets=…)``.

    Binding before uvicorn starts lets a busy port or an unknown address be reported as bad input, in one
    line, before anything is announced; uvicorn itself would log it and exit 3.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on connections accepted from a socket that says it is TCP,
    # and without it every keep-alive answer written in two parts waits 40 ms for the client's delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except (OSError, OverflowError) as exc:  # OverflowError: a port past 65535
        sock.close()
        shown = f"[{host}]" if ":" in host else host
        raise ValueError(f"cannot listen on {shown}:{port}: {getattr(exc, 'strerror', None) or exc}") from None
    return sock


class DeadlinedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, with a deadline on a request's headers and one on its body (see the module)."""

    def __init__(self, config: uvicorn.Config, server_state: Any, app_state: dict[str, Any],
                 _loop: asyncio.AbstractEventLoop | None = None) -> None:
        super().__init__(config, server_state, app_state, _loop)
        if not isinstance(config, ServerConfig):
            raise TypeError("DeadlinedH11Protocol is served with a ServerConfig, which holds its limits")
        self._read_timeout = config.limits.read_timeout
        self._awaiting: str | None = None
        """What the client owes: ``headers``, ``body``, or nothing (``None``: the request is in)."""
        self._deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._follow()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._follow()

    def on_response_complete(self) -> None:
        super().on_response_complete()  # may start the next request of the connection
        self._follow()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel()
        super().connection_lost(exc)

    def _follow(self) -> None:
        """A deadline for what the client owes now, started when that changes (not when more bytes arrive)."""
        state = self.conn.their_state
        awaiting = "headers" if state is h11.IDLE else "body" if state is h11.SEND_BODY else None
        if self.transport.is_closing():
            awaiting = None
        if awaiting == self._awaiting:
            return
        self._cancel()
        self._awaiting = awaiting
        if awaiting is not None:
            self._deadline = self.loop.call_later(self._read_timeout, self._expired)

    def _cancel(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        """408 (unless an answer has begun), and the connection closed; the app, if one runs, sees a disconnect."""
        self._deadline = None
        if self.transport.is_closing():
            return
        cycle = self.cycle if self._awaiting == "body" else None
        if cycle is None or not cycle.response_started:
            detail = f"the request's {self._awaiting} did not arrive within {self._read_timeout:g}s"
            body = json.dumps({"detail": detail}).encode()
            self.transport.write(b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
                                 b"connection: close\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body))
        if cycle is not None:
            cycle.disconnected = True
            cycle.message_event.set()
        self.transport.close()
