"""The API over a real SQLite store of the tiny plan, a runtime of the test's own, and the app in process."""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn
from api_support import NOW, TOKEN, FakeRuntime
from fastapi import FastAPI

from fabric.api.app import PREFIX, create_app
from fabric.api.context import ApiContext
from fabric.api.plan_index import plan_index
from fabric.config import ServiceConfig
from fabric.store import Store
from topology.generate import PRESETS, fat_tree
from topology.model import Fabric


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def plan() -> Fabric:
    return fat_tree(PRESETS["tiny"])


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(f"sqlite:///{tmp_path / 'fabric.db'}", fabric="test", clock=lambda: NOW) as opened:
        yield opened


@pytest.fixture
def runtime() -> FakeRuntime:
    return FakeRuntime()


@pytest.fixture
def token(monkeypatch: pytest.MonkeyPatch) -> str:
    """An admin token configured (through the environment, as an operator would)."""
    monkeypatch.setenv("FABRIC_API__ADMIN_TOKEN", TOKEN)
    return TOKEN


@pytest.fixture(autouse=True)
def no_token_from_outside(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FABRIC_API__ADMIN_TOKEN", raising=False)


@pytest.fixture
def app(plan: Fabric, store: Store, runtime: FakeRuntime) -> FastAPI:
    return create_app(ApiContext(config=ServiceConfig(), index=plan_index(plan), store=store, runtime=runtime,
                                 clock=lambda: NOW))


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://api/api/v1") as http:
        yield http


@pytest.fixture
def served(app: FastAPI) -> Iterator[str]:
    """``app`` served by uvicorn on 127.0.0.1, a free port; yields the API's base URL."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", access_log=False,
                                           lifespan="off"))
    thread = threading.Thread(target=server.run, name="api-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}{PREFIX}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
