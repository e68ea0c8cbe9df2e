"""A loopback stand-in for UFM Telemetry, for the telemetry benchmark: successive samples, each served once.

``GET /csv/xcset/low_freq_debug`` answers as UFM Telemetry's HTTP server does (``text/csv`` with its length) on
127.0.0.1, any other path a 404. The samples are made one at a time, before each is asked for, and the server says
so on ``announce``: a line ``port N`` first, then ``ready`` once each sample is made. The measured process waits
for ``ready`` before it asks, so making a sample never overlaps what is timed, on a 2-core host.

HTTP/1.1 with keep-alive (httpx keeps its connection): requests are read on one connection until the client closes
it, then the next connection is taken. Only what a GET needs is read: the request line and the headers.
"""

from __future__ import annotations

import socket
from collections.abc import Iterable
from typing import TextIO

PATH = "/csv/xcset/low_freq_debug"
_HEAD_END = b"\r\n\r\n"
_MAX_HEAD = 64 * 1024


class _Connections:
    """The listening socket and the connection requests are read on (one at a time)."""

    def __init__(self, listener: socket.socket) -> None:
        self._listener = listener
        self._connection: socket.socket | None = None
        self._pending = b""

    def request_path(self) -> str:
        """The path of the next request, on the open connection or the next one."""
        while True:
            if self._connection is None:
                self._connection, _ = self._listener.accept()
                self._pending = b""
            while _HEAD_END not in self._pending and len(self._pending) < _MAX_HEAD:
                chunk = self._connection.recv(65536)
                if not chunk:
                    break
                self._pending += chunk
            if _HEAD_END in self._pending:
                head, self._pending = self._pending.split(_HEAD_END, 1)
                return head.split(b"\r\n", 1)[0].decode("latin-1").split(" ")[1]
            self._connection.close()
            self._connection = None

    def answer(self, status: str, body: bytes) -> None:
        assert self._connection is not None
        self._connection.sendall(f"HTTP/1.1 {status}\r\nContent-Type: text/csv\r\nContent-Length: {len(body)}\r\n"
                                 "\r\n".encode())
        self._connection.sendall(body)


def serve(bodies: Iterable[bytes], announce: TextIO) -> None:
    """Serve each of ``bodies`` to one ``GET`` of ``PATH``, in turn; return once the last is served."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        connections = _Connections(listener)
        announce.write(f"port {listener.getsockname()[1]}\n")
        announce.flush()
        for body in bodies:
            announce.write("ready\n")
            announce.flush()
            while connections.request_path() != PATH:
                connections.answer("404 Not Found", b"no such instance\n")
            connections.answer("200 OK", body)
