"""The daemon's FastAPI app: its own endpoints (``/healthz``, ``/readyz``, ``/metrics``, at the root where
Kubernetes and Prometheus look by default and under ``/api/v1``), the routers of ``fabric.api`` and the console's
pages (``fabric.console``), all reading one ``ApiContext`` on ``app.state.context``.

``fabric.api.app.install`` puts the API's routes and the webhook receiver on it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime, timedelta

from fastapi import APIRouter, FastAPI, Request, Response
from fastapi.responses import JSONResponse, PlainTextResponse
from pydantic import BaseModel, Field

from fabric.api.app import PREFIX, install
from fabric.api.context import ApiContext, EngineState, Role, RuntimeStatus
from fabric.api.webhooks import count_deliveries
from fabric.console.app import install as install_console
from fabric.daemon.api_metrics import ApiMetrics
from fabric.jsonbody import strict_app, strict_router

STALE_AFTER_INTERVALS = 3
"""The last cycle is not recent once this many intervals passed without one completing."""

CONTENT_TYPE_PROMETHEUS = "text/plain; version=0.0.4; charset=utf-8"


STARTING = "the engine is starting (settling what the last run left pending)"
SILENT_AFTER = 10.0
"""Seconds without a status record from a running engine process before the daemon is not ready (it writes one
every ``status_record.WRITE_EVERY``, whatever its cycle does: a process that stops writing is stopped or hung)."""


def build_app(context: ApiContext, metrics: ApiMetrics, engine_metrics: Callable[[], str] = str) -> FastAPI:
    """``engine_metrics``: the engine process's metrics in the text format, served after this process's own."""
    app = strict_app(title="fabric-remediation", summary="Safe, explainable remediation of InfiniBand fabrics.",
                     openapi_url=f"{PREFIX}/openapi.json", docs_url=f"{PREFIX}/docs", redoc_url=None)
    app.state.context = context
    app.state.metrics = metrics
    app.state.engine_metrics = engine_metrics
    app.include_router(_health_router(PREFIX))
    app.include_router(_health_router(""), include_in_schema=False)  # the same answers: documented once
    install(app)  # the API's reads, host health, writes and the webhook receiver
    install_console(app)  # GET / and /ui/...
    count_deliveries(app, metrics.webhook_delivery)
    return app


class Alive(BaseModel):
    alive: bool


class Readiness(BaseModel):
    ready: bool
    reasons: list[str] = Field(description="Why it is not ready, one line each (empty when ready).")


def _health_router(prefix: str) -> APIRouter:
    router = strict_router(prefix=prefix, tags=["health"])

    @router.get("/healthz", summary="The process is alive and its loop answers.")
    async def healthz() -> Alive:
        return Alive(alive=True)

    @router.get("/readyz", summary="Ready: the database answers, UFM answered the last cycle, which is recent "
                                    "and was decided on a reading of UFM that can be true, on event lists that could "
                                    "be believed lately (503 with the reasons); "
                                    "a standby: the database answers (it serves reads, and stands ready to lead).",
                response_model=Readiness, responses={503: {"model": Readiness, "description": "Not ready."}})
    async def readyz(request: Request) -> JSONResponse:
        context: ApiContext = request.app.state.context
        reasons = await _not_ready(context)
        answer = Readiness(ready=not reasons, reasons=reasons)
        return JSONResponse(answer.model_dump(), status_code=503 if reasons else 200)

    @router.get("/metrics", summary="Prometheus metrics (text exposition format).", response_class=PlainTextResponse)
    async def metrics(request: Request) -> Response:
        registry: ApiMetrics = request.app.state.metrics
        engine: Callable[[], str] = request.app.state.engine_metrics
        # in a worker thread: a gauge read at the scrape (the golden set's) reads the store
        own = await asyncio.to_thread(registry.render)
        return Response(own + engine().encode(), media_type=CONTENT_TYPE_PROMETHEUS)

    return router


async def _not_ready(context: ApiContext) -> list[str]:
    status = context.runtime.status()
    reasons: list[str] = []
    if not await asyncio.to_thread(context.store.ping):
        reasons.append("the database does not answer")
    if (engine := status.engine) is not None:
        if engine.state is EngineState.STARTING:
            return [*reasons, STARTING]
        if engine.state is not EngineState.RUNNING:
            ended = f"; the last one: {engine.last_exit}" if engine.last_exit else ""
            reasons.append(f"the engine process is {engine.state.value} since {engine.since.isoformat()} "
                           f"({engine.restarts} restart(s){ended})")
            return reasons  # what it last reported says nothing of the process to come
        if engine.silent_for is not None and engine.silent_for > SILENT_AFTER:
            reasons.append(f"the engine process has not reported for {engine.silent_for:.0f} s")
    if status.leadership is not None and status.leadership.role is Role.STANDBY:
        return reasons  # no cycle of its own to judge: it serves reads from the store the leader writes
    ufm_ok = await context.ping_ufm() if context.ping_ufm is not None else status.ufm_reachable
    if not ufm_ok:
        reasons.append(f"UFM did not answer the last cycle ({status.last_cycle_error})")
    if status.starting:
        reasons.append(STARTING)
    elif status.last_cycle_at is None:
        reasons.append("no cycle has completed yet")
    else:
        stale = timedelta(seconds=status.interval_seconds * STALE_AFTER_INTERVALS)
        if context.clock() - status.last_cycle_at > stale:
            reasons.append(f"the last cycle completed at {status.last_cycle_at.isoformat()}, more than "
                           f"{STALE_AFTER_INTERVALS} intervals ago")
    now = context.clock()
    for doubt, since, bound in _doubts(status, context.config.daemon.events_untrusted_for):
        if since is not None and now - since >= bound:
            reasons.append(f"{doubt} since {since.isoformat()}")
    return reasons


def _doubts(status: RuntimeStatus, events_bound: timedelta) -> list[tuple[str, datetime | None, timedelta]]:
    """What UFM answers that the engine does not believe, since when (``None``: it believes them), and how long
    that may last before the daemon is not ready. A refused topology at once: nothing is decided meanwhile. Event
    lists not believed after ``[daemon] events_untrusted_for``: a few lose nothing (the events they lacked come
    with the first list that holds them), and UFM answers one short now and then."""
    doubts = [("UFM's topology readings are refused", status.view_refused_since, timedelta(0))]
    if (read := status.event_read) is not None:
        doubts.append((f"UFM's event lists are not believed ({read.value}: {read.meaning})",
                       status.events_untrusted_since, events_bound))
    return doubts
