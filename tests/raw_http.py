"""Raw sockets against a real server over 127.0.0.1: requests cut short, trickled or never sent, as a client that
misbehaves sends them (an HTTP library would not)."""

from __future__ import annotations

import socket
import time

WAIT = 15.0
"""Real seconds a test waits for the server to answer or to close before it fails (never hangs)."""


def connect(port: int) -> socket.socket:
    """A connection to the server on ``port``, once it listens (a server says where before it listens)."""
    deadline = time.monotonic() + WAIT
    while True:
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
            continue
        sock.settimeout(WAIT)
        return sock


def until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (``TimeoutError`` if it never does)."""
    received = b""
    with sock:
        while chunk := sock.recv(65536):
            received += chunk
    return received


def trickle(sock: socket.socket, data: bytes, every: float, until: float) -> None:
    """Send ``data`` a byte at a time, one every ``every`` seconds, until the monotonic time ``until`` (or the
    server closes the connection)."""
    for byte in data:
        if time.monotonic() >= until:
            return
        try:
            sock.sendall(bytes([byte]))
        except (BrokenPipeError, ConnectionResetError):
            return
        time.sleep(every)


def status_of(port: int, path: str) -> int:
    """The status of a well-formed ``GET path`` on a connection of its own."""
    sock = connect(port)
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
    return int(until_closed(sock).split(b" ", 2)[1])
