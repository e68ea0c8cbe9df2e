"""Running the simulator: uvicorn in a background thread (tests, benchmarks, demos) or in the foreground.

```python
with serve(SimState.from_plan(fat_tree(PRESETS["tiny"]))) as server:
    async with UfmClient(server.url, BasicAuth("admin", "123456")) as ufm:
        ...
```

``serve`` binds 127.0.0.1 on a free port, waits until uvicorn accepts connections, and stops it cleanly on
exit.  A ticker thread keeps scenarios moving when the clock runs in real time (``rate`` > 0); with a
frozen clock nothing happens until ``state.advance`` or the admin API moves it.
"""

from __future__ import annotations

import contextlib
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import uvicorn
from fastapi import FastAPI

from fabric.serving import uvicorn_config
from fabric.simulator.app import create_app
from fabric.simulator.auth import AuthSettings
from fabric.simulator.state import SimState
from fabric.simulator.tls import self_signed_certificate


@dataclass(frozen=True, slots=True)
class RunningServer:
    url: str
    """Base URL, e.g. ``http://127.0.0.1:41234`` (no trailing slash)."""
    state: SimState
    app: FastAPI
    port: int
    cert: Path | None = None
    """The self-signed certificate when serving HTTPS (trust it with ``verify=cert``)."""


class Ticker:
    """Calls ``state.tick()`` every ``interval`` real seconds in a daemon thread."""

    def __init__(self, state: SimState, interval: float = 0.1) -> None:
        self._state = state
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="ufm-sim-ticker", daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            if self._state.clock.rate > 0:
                self._state.tick()

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on now (the kernel's pick), for a server started later in another process: another
    process may take it meanwhile, which the caller's start-up then reports."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def serve_in_thread(app: FastAPI, host: str, port: int, *, name: str, cert: Path | None = None,
                    key: Path | None = None, startup_timeout: float = 15.0) -> Iterator[int]:
    """Serve ``app`` with uvicorn in a background thread for the duration of the block, yielding the bound port."""
    server = uvicorn.Server(uvicorn_config(app, host, port, cert, key))
    thread = threading.Thread(target=server.run, name=name, daemon=True)
    thread.start()
    deadline = time.monotonic() + startup_timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            raise RuntimeError(f"{name} did not start on {host}:{port}")
        time.sleep(0.01)
    try:
        yield server.servers[0].sockets[0].getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def base_url(host: str, port: int, tls: bool = False) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"{'https' if tls else 'http'}://{shown}:{port}"


@contextlib.contextmanager
def serve(
    state: SimState,
    *,
    auth: AuthSettings | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
    tls: bool = False,
    tick_interval: float = 0.1,
    startup_timeout: float = 15.0,
) -> Iterator[RunningServer]:
    """Serve ``state`` over real HTTP(S) in a background thread for the duration of the block."""
    app = create_app(state, auth)
    with contextlib.ExitStack() as stack:
        cert = key = None
        if tls:
            directory = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="ufm-sim-tls-")))
            cert, key = self_signed_certificate(directory, host)
        bound = stack.enter_context(serve_in_thread(app, host, port, name="the UFM simulator", cert=cert, key=key,
                                                    startup_timeout=startup_timeout))
        ticker = Ticker(state, tick_interval)
        ticker.start()
        try:
            yield RunningServer(base_url(host, bound, tls), state, app, bound, cert)
        finally:
            ticker.stop()
