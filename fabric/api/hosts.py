"""Host health endpoints: one host's yes/no, and the list a training scheduler uses as an exclude file.

Always from the fabric's real state, never a dry run's would-be one: a dry run must not drain hosts.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import HTTPException, Query, status
from fastapi.responses import PlainTextResponse

from fabric.api.deps import PlanIndexDep, StoreDep
from fabric.api.health import UNUSABLE, host_health, hosts_health, unhealthy
from fabric.api.models import HostHealth, Problem
from fabric.jsonbody import strict_router

router = strict_router(tags=["hosts"], responses={422: {"model": Problem}})


@router.get("/hosts/{host}/health", response_model=HostHealth, responses={404: {"model": Problem}},
            summary="Whether a host is fit for jobs, and why not")
def get_host_health(host: str, store: StoreDep, index: PlanIndexDep) -> HostHealth:
    key = host.casefold()
    if key not in index.hosts:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"host: no host {host!r} in the fabric plan")
    return host_health(index, key, unhealthy(index, store.components(UNUSABLE)))


@router.get("/hosts", response_model=list[HostHealth],
            responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}},
                             "description": "JSON, or with format=text one host name a line (an exclude file)."}},
            summary="Every planned host's health, by name")
def list_hosts(
    store: StoreDep,
    index: PlanIndexDep,
    healthy: Annotated[bool | None, Query(description="Only the healthy (true) or unhealthy (false) ones.")] = None,
    output: Annotated[Literal["json", "text"], Query(alias="format", description="text: one host a line.")]
    = "json",
) -> list[HostHealth] | PlainTextResponse:
    found = hosts_health(index, store.components(UNUSABLE), healthy)
    if output == "text":
        return PlainTextResponse("".join(f"{h.host}\n" for h in found))
    return found
