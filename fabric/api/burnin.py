"""``/api/v1/burnin``: ask the engine for a burn-in window, and read the windows and their survivors reports.

A window is asked for as resume and clear are: an operator request in the store (with the window's row, in one
transaction), then the engine woken; the engine opens it at its next cycle and, at its end, stores the report and
hands the window's findings to its policy (``fabric.controller.burnin``).
"""

from __future__ import annotations

import logging
from typing import Annotated

from fastapi import Query, status

from fabric.api.deps import AdminDep, ConfigDep, RuntimeDep, StoreDep
from fabric.api.models import BurninAsked, BurninStart, BurninWindowOut, Problem, RequestOut
from fabric.durations import parse_duration
from fabric.jsonbody import strict_router

log = logging.getLogger(__name__)

router = strict_router(tags=["burn-in"], responses={422: {"model": Problem}})


@router.post("/burnin", response_model=BurninAsked, status_code=status.HTTP_202_ACCEPTED, dependencies=[AdminDep],
             responses={401: {"model": Problem}, 403: {"model": Problem}},
             summary="Ask the engine for a burn-in window: stricter thresholds, then the survivors and the failed "
                     "taken out through the guard")
def ask_burnin(body: BurninStart, store: StoreDep, config: ConfigDep, runtime: RuntimeDep) -> BurninAsked:
    duration = parse_duration(body.duration) if body.duration is not None else config.burnin.duration
    with store.transaction() as tx:
        request, window = tx.ask_burnin(duration, reason=body.reason, requested_by=body.by)
    log.info("burn-in window of %s requested (request %d) by %s: %s", duration, request.id, body.by, body.reason)
    runtime.wake()
    return BurninAsked(request=RequestOut.of(request), window=BurninWindowOut.of(window))


@router.get("/burnin", response_model=list[BurninWindowOut], summary="Burn-in windows, newest first, with reports")
def list_burnin(store: StoreDep, limit: Annotated[int, Query(ge=1, le=100)] = 20) -> list[BurninWindowOut]:
    return [BurninWindowOut.of(window) for window in store.burnin_windows(limit)]
