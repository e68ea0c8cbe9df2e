"""The live daemon's HTTP server against clients that misbehave, over raw sockets on 127.0.0.1: one that sends
nothing, one that trickles its headers, one whose body is shorter than its ``Content-Length`` each get 408 and
lose the connection within ``[api] read_timeout``; past ``max_connections`` a request is answered 503 at once, and
served again once the idle connections are let go. The API answers throughout."""

from __future__ import annotations

import time
from pathlib import Path

from daemon_support import daemon, migrate, simulator, write_config
from raw_http import connect, status_of, trickle, until_closed

from fabric.simulator.server import free_port

READ_TIMEOUT = 1.0
MAX_CONNECTIONS = 6
LIMITS = f'read_timeout = "{READ_TIMEOUT:g}s"\nmax_connections = {MAX_CONNECTIONS}\n'
SLACK = 1.5
"""Seconds past the deadline within which the server must have answered (a loaded CI machine)."""


def test_clients_that_stop_mid_request_get_408_and_are_let_go(tiny_plan: Path, tmp_path: Path) -> None:
    migrate(tmp_path / "fabric.db")
    port = free_port()
    with simulator(tiny_plan) as sim:
        config = write_config(tmp_path, sim.url, tiny_plan, port=port, extra=LIMITS)
        with daemon(config, port, tmp_path / "daemon.log") as d:
            d.wait_for("/healthz", lambda: d.get("/healthz").status_code == 200)
            began = time.monotonic()
            silent = connect(port)
            trickling = connect(port)
            short = connect(port)
            short.sendall(b"POST /api/v1/silences HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                          b"Content-Length: 1000\r\n\r\n{\"matcher\": ")
            trickle(trickling, b"GET /api/v1/healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n", 0.1,
                    began + READ_TIMEOUT + SLACK)
            answers = {name: until_closed(sock) for name, sock in
                       (("silent", silent), ("trickling", trickling), ("short", short))}
            elapsed = time.monotonic() - began
            assert elapsed < READ_TIMEOUT + SLACK + 0.5, elapsed
            for name, answer in answers.items():
                assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), (name, answer)
            assert b"the request's body did not arrive within 1s" in answers["short"]
            assert b"the request's headers did not arrive within 1s" in answers["trickling"]
            assert d.get("/silences").json() == []  # the cut request stored nothing
            assert d.get("/healthz").status_code == 200


def test_past_max_connections_a_request_is_503_until_idle_ones_are_let_go(tiny_plan: Path, tmp_path: Path) -> None:
    migrate(tmp_path / "fabric.db")
    port = free_port()
    with simulator(tiny_plan) as sim:
        config = write_config(tmp_path, sim.url, tiny_plan, port=port, extra=LIMITS)
        with daemon(config, port, tmp_path / "daemon.log"):
            assert status_of(port, "/api/v1/healthz") == 200
            idle = [connect(port) for _ in range(MAX_CONNECTIONS)]
            time.sleep(0.2)  # accepted: each is one of the server's connections
            assert status_of(port, "/api/v1/healthz") == 503
            for sock in idle:  # each let go at the read timeout
                assert until_closed(sock).startswith(b"HTTP/1.1 408")
            assert status_of(port, "/api/v1/healthz") == 200
