"""ASGI middleware: bring the simulation up to date before each request, tell the request observers, and apply
injected API faults (to UFM's REST API and to UFM Telemetry's ``/csv/xcset/<instance>``: an ``api`` fault on
``*``, as a UFM restart's, takes telemetry down too).

Request observers (``SimState.request_observers``) are callbacks a test process that serves the simulator uses to
act at a precise moment of a client's conversation with UFM, e.g. SIGKILL the daemon at the n-th ``POST /actions``
once UFM has carried it out but before its answer leaves. Each is called twice per request, synchronously, on the
server's loop: ``received`` before the app handles it, and ``answering`` when the app's answer (status known) is
about to be sent; the answer waits for the callbacks, so one that takes time holds the request.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from fabric.simulator.apifaults import LIST_MODES, ApiFault, ApiFaultMode
from fabric.simulator.auth import PREFIXES
from fabric.simulator.routes import TELEMETRY_PATH
from fabric.simulator.state import RequestSeen, SimState
from topology import strictjson
from topology.strictjson import JsonError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def split_prefix(path: str) -> tuple[str | None, str]:
    """``/ufmRestV2/resources/ports`` -> (``/ufmRestV2``, ``/resources/ports``); other paths -> (None, path)."""
    for prefix in sorted(PREFIXES, key=len, reverse=True):
        if path == prefix or path.startswith(prefix + "/"):
            return prefix, path[len(prefix):] or "/"
    return None, path


class SimulatorMiddleware:
    def __init__(self, app: ASGIApp, state: SimState) -> None:
        self.app = app
        self.state = state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state = self.state
        state.tick()
        prefix, rest = split_prefix(scope["path"])
        with state.lock:
            counts = state.counters.requests
            counts[rest] = counts.get(rest, 0) + 1
        if state.request_observers:
            seen = RequestSeen(scope["method"], rest, prefix)
            state.observe(seen)
            send = _observed(send, state, seen)
        faulty = prefix is not None or rest.startswith(TELEMETRY_PATH)
        rule = state.api_faults.take(rest, scope["method"], state.now()) if faulty else None
        if rule is None:
            await self.app(scope, receive, send)
            return
        if rule.mode is ApiFaultMode.LATE:
            await self.app(scope, receive, _late(send, rule.delay))
            return
        if rule.delay > 0:
            await asyncio.sleep(rule.delay)
        if rule.mode is ApiFaultMode.ERROR:
            await _error(send, rule)
        elif rule.mode is ApiFaultMode.TRUNCATE:
            await self.app(scope, receive, _rewriting(send, lambda body: _truncated(body, rule)))
        elif rule.mode in LIST_MODES:
            await self.app(scope, receive, _rewriting(send, lambda body: _shortened(body, rule)))
        else:
            await self.app(scope, receive, send)


def _observed(send: Send, state: SimState, seen: RequestSeen) -> Send:
    """``send`` that tells the observers once, as the answer's status goes out (before any of its bytes)."""
    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            state.observe(seen.answering(int(message["status"])))
        await send(message)

    return wrapped


async def _error(send: Send, rule: ApiFault) -> None:
    body = json.dumps({"error": f"simulated failure (HTTP {rule.status})"}).encode()
    await send({"type": "http.response.start", "status": rule.status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def _late(send: Send, delay: float) -> Send:
    """Hold the answer back ``delay`` seconds; what the request changed is already changed."""
    held = False

    async def wrapped(message: Message) -> None:
        nonlocal held
        if not held:
            held = True
            await asyncio.sleep(delay)
        await send(message)

    return wrapped


def _truncated(body: bytes, rule: ApiFault) -> bytes:
    """The first ``keep`` fraction of the body."""
    return body[: int(len(body) * max(0.0, min(1.0, rule.keep)))]


def _shortened(body: bytes, rule: ApiFault) -> bytes:
    """The JSON list (or paged ``{"data": [...]}``) with only the items the rule leaves; other bodies as they are."""
    try:
        payload = strictjson.loads(body)
    except JsonError:
        return body
    if isinstance(payload, list):
        return json.dumps(rule.shorten(payload), separators=(",", ":")).encode()
    if isinstance(payload, dict) and isinstance(payload.get("data"), list):
        return json.dumps({**payload, "data": rule.shorten(payload["data"])}, separators=(",", ":")).encode()
    return body


def _rewriting(send: Send, rewrite: Callable[[bytes], bytes]) -> Send:
    """Collect the whole response, then send ``rewrite`` of its body."""
    start: Message = {}
    chunks: list[bytes] = []

    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            start.update(message)
            return
        if message["type"] != "http.response.body":
            await send(message)
            return
        chunks.append(message.get("body", b""))
        if message.get("more_body", False):
            return
        body = rewrite(b"".join(chunks))
        headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(body)).encode()))
        await send({**start, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return wrapped
