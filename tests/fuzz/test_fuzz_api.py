"""The API's request bodies: a silence's, corrupted anywhere. An answer of 201, 400 or 422, never a 5xx, and a body
refused leaves the store as it was."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from unittest import mock

import httpx
import pytest
from fuzz_support import corrupted_json, fuzz_settings
from hypothesis import given
from hypothesis import strategies as st

from fabric.api.app import PREFIX, create_app
from fabric.api.context import ApiContext
from fabric.api.plan_index import plan_index
from fabric.config import ServiceConfig
from fabric.store import Store
from topology import strictjson
from topology.generate import PRESETS, fat_tree

TOKEN = "fuzz-admin-token"
NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)
SILENCE = {"matcher": "link:pod01-leaf01/*", "duration": "2h", "reason": "CHG-42", "by": "alice"}


Post = Callable[[bytes], httpx.Response]


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Post, Store]]:
    """``POST /silences`` of a body, with the admin token, to the API in process over a real SQLite store."""
    database: Path = tmp_path_factory.mktemp("api") / "fabric.db"
    with mock.patch.dict(os.environ, {"FABRIC_API__ADMIN_TOKEN": TOKEN}), \
            Store.open(f"sqlite:///{database}", fabric="fuzz", clock=lambda: NOW) as store:
        app = create_app(ApiContext(config=ServiceConfig(), index=plan_index(fat_tree(PRESETS["tiny"])), store=store,
                                    runtime=None, clock=lambda: NOW))  # type: ignore[arg-type]  # silences only

        async def post(body: bytes) -> httpx.Response:
            transport = httpx.ASGITransport(app, raise_app_exceptions=False)
            async with httpx.AsyncClient(transport=transport, base_url=f"http://api{PREFIX}") as client:
                return await client.post("/silences", content=body, headers={
                    "Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"})

        yield (lambda body: asyncio.run(post(body))), store


@fuzz_settings(100)
@given(st.data())
def test_a_silence_body_corrupted_is_created_or_refused_and_a_refusal_stores_nothing(
        api: tuple[Post, Store], data: st.DataObject) -> None:
    post, store = api
    body = data.draw(corrupted_json(SILENCE)).encode("utf-8", "surrogatepass")
    before = len(store.silences())
    response = post(body)
    assert response.status_code in (201, 400, 422), response.text
    if response.status_code == 201:
        sent: Any = strictjson.loads(body)  # what was created is what the body says, each key once
        assert response.json()["matcher"] == sent["matcher"]
        assert len(store.silences()) == before + 1
    else:
        assert "detail" in response.json()
        assert len(store.silences()) == before
