"""``fabric.serving``: the deadlines leave well-behaved clients alone — kept-alive connections, pipelined requests,
a body that arrives in pieces within the timeout — and catch the next request's headers after an answer."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
import uvicorn
from fastapi import FastAPI, Request
from raw_http import connect, until_closed

from fabric.serving import ServerConfig, ServerLimits

TIMEOUT = 1.0


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    app = FastAPI()

    @app.get("/ping")
    async def ping() -> dict[str, bool]:
        return {"pong": True}

    @app.post("/echo")
    async def echo(request: Request) -> dict[str, int]:
        return {"bytes": len(await request.body())}

    server = uvicorn.Server(ServerConfig(app, ServerLimits(TIMEOUT, 16), host="127.0.0.1", port=0,
                                         log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline
        time.sleep(0.01)
    yield server.servers[0].sockets[0].getsockname()[1]
    server.should_exit = True
    thread.join(timeout=10)


GET = b"GET /ping HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
LAST = b"GET /ping HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"


def test_kept_alive_and_pipelined_requests_are_answered(port: int) -> None:
    sock = connect(port)
    sock.sendall(GET)
    time.sleep(TIMEOUT * 0.6)
    sock.sendall(GET + GET)  # the second request's deadline began with the first's answer: not reached yet
    time.sleep(TIMEOUT * 0.6)
    sock.sendall(LAST)
    assert until_closed(sock).count(b"HTTP/1.1 200 OK") == 4


def test_a_body_sent_in_pieces_within_the_timeout_is_read(port: int) -> None:
    sock = connect(port)
    sock.sendall(b"POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: 8\r\n\r\n")
    for piece in (b"ab", b"cd", b"ef", b"gh"):
        time.sleep(TIMEOUT / 8)
        sock.sendall(piece)
    answer = until_closed(sock)
    assert answer.startswith(b"HTTP/1.1 200 OK") and answer.endswith(b'{"bytes":8}')


def test_the_next_requests_headers_have_the_timeout_from_the_answer(port: int) -> None:
    sock = connect(port)
    sock.sendall(GET + b"GET /ping HTTP/1.1\r\n")
    began = time.monotonic()
    answer = until_closed(sock)
    assert answer.startswith(b"HTTP/1.1 200 OK") and b"HTTP/1.1 408 Request Timeout" in answer
    assert TIMEOUT * 0.8 < time.monotonic() - began < TIMEOUT + 1.5
