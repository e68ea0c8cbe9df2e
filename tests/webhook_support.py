"""The webhook router served over real loopback HTTP (uvicorn in a thread) on a real store, and signed bodies."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import uvicorn
from fastapi import FastAPI

from fabric.api.context import ApiContext, Reload, RuntimeStatus
from fabric.api.plan_index import plan_index
from fabric.api.webhooks import webhook_router
from fabric.config import ServiceConfig
from fabric.serving import uvicorn_config
from fabric.store import Store
from topology.model import Fabric

SECRET = "jira-hmac-key"
TOKEN = "generic-bearer-token"


class IdleRuntime:
    """No engine behind the API: the webhook router asks nothing of the runtime."""

    def status(self) -> RuntimeStatus:
        return RuntimeStatus(started_at=datetime(2026, 1, 1, tzinfo=UTC), dry_run=True, interval_seconds=30.0)

    async def reload(self, by: str, reason: str) -> Reload:
        return Reload("nothing to reload")

    def wake(self) -> None:
        """Nothing to wake."""


@contextmanager
def serve_app(app: FastAPI) -> Iterator[str]:
    """``app`` on 127.0.0.1, a free port, for the block; yields its base URL."""
    server = uvicorn.Server(uvicorn_config(app, "127.0.0.1", 0))
    thread = threading.Thread(target=server.run, name="webhooks", daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            raise RuntimeError("the webhook server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@contextmanager
def webhooks(store: Store, plan: Fabric, config: ServiceConfig, clock: Callable[[], datetime]) -> Iterator[str]:
    """The webhook router alone, with an ``ApiContext`` over ``store``; yields the base URL."""
    app = FastAPI()
    app.include_router(webhook_router())
    app.state.context = ApiContext(config, plan_index(plan), store, IdleRuntime(), clock)
    with serve_app(app) as url:
        yield url


def jira_body(key: str, *, category: str = "done", resolution: Any = None, changelog: int = 10_001) -> bytes:
    """A Jira ``jira:issue_updated`` body with the fields the service reads."""
    return json.dumps({
        "timestamp": 1_767_225_600_000, "webhookEvent": "jira:issue_updated",
        "issue": {"key": key, "fields": {"status": {"name": "Fixed", "statusCategory": {"key": category}},
                                         "resolution": resolution}},
        "changelog": {"id": changelog, "items": []},
    }).encode()


def signed(body: bytes, identifier: str, secret: str = SECRET) -> dict[str, str]:
    """Jira's headers for ``body``: its HMAC-SHA256 signature and delivery id."""
    digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return {"X-Hub-Signature": f"sha256={digest}", "X-Atlassian-Webhook-Identifier": identifier,
            "Content-Type": "application/json"}
