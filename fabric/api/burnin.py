"""``/api/v1/burnin``: ask the engine for a burn-in window, and read the windows and their survivors reports.

A window is asked for as resume and clear are: an operator request in the store (with the window's row, in one
transaction), then the engine woken; the engine opens it at its next cycle and, at its end, stores the report and
hands the window's findings to its policy (``fabric.controller.burnin``).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Annotated, Self

from fastapi import Query, status
from pydantic import Field, field_validator

from fabric.api.deps import AdminDep, ConfigDep, RuntimeDep, StoreDep
from fabric.api.models import Audit, Problem, RequestOut, _Model
from fabric.durations import parse_duration
from fabric.jsonbody import strict_router
from fabric.remediation.textlimits import DURATION_MAX
from fabric.store import BurninWindow

log = logging.getLogger(__name__)

router = strict_router(tags=["burn-in"], responses={422: {"model": Problem}})


class BurninStart(Audit):
    duration: str | None = Field(None, max_length=DURATION_MAX,
                                 description="How long the window lasts: '30m', '24h' (default: [burnin] duration).")

    @field_validator("duration")
    @classmethod
    def _duration(cls, value: str | None) -> str | None:
        if value is not None and parse_duration(value) <= timedelta():
            raise ValueError("a burn-in window must last longer than zero")
        return value


class PortTotals(_Model):
    survived: int
    failed: int = Field(description="Ports whose cable the window found faulty.")
    down: int = Field(description="Ports whose cable was not up when the window began.")
    idle: int = Field(description="Ports that carried no traffic (UFM Telemetry; 0 where not told).")


class SwitchTotals(_Model):
    survived: int = Field(description="Switches none of whose ports failed or was down.")
    failed: int


class SwitchSurvival(_Model):
    switch: str
    survived: bool = Field(description="None of its ports failed or was down.")
    utilisation_alerts: int
    ports: PortTotals


class PortOutcome(_Model):
    port: str = Field(description="switch/Port n, as the plan names it.")
    verdict: str = Field(description="failed, down or idle.")
    why: str


class WindowFinding(_Model):
    component: str
    rule: str
    at: datetime
    reason: str


class SurvivorsReport(_Model):
    ports: PortTotals
    switches: SwitchTotals
    by_switch: list[SwitchSurvival]
    not_survived: list[PortOutcome]
    utilisation_alerts: list[str] = Field(description="Ports that crossed UFM's utilisation alert (not faults).")
    findings: list[WindowFinding] = Field(description="What the window found, handed to the policy, which decided "
                                                      "on each (GET /api/v1/decisions).")


class BurninWindowOut(_Model):
    id: int = Field(description="The window's id: the operator request's that asked for it.")
    duration_s: float
    started_at: datetime | None = Field(description="When the engine opened it (null: not yet).")
    ends_at: datetime | None
    ended_at: datetime | None = Field(description="When the engine judged it (null: open, or not opened yet).")
    dry_run: bool | None
    report: SurvivorsReport | None = Field(description="The survivors per port and switch, once it ended.")

    @classmethod
    def of(cls, window: BurninWindow) -> Self:
        return cls(id=window.id, duration_s=window.duration.total_seconds(), started_at=window.started_at,
                   ends_at=window.ends_at, ended_at=window.ended_at, dry_run=window.dry_run,
                   report=None if window.report is None else SurvivorsReport.model_validate(window.report))


class BurninAsked(_Model):
    request: RequestOut
    window: BurninWindowOut


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
