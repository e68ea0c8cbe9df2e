"""Host endpoints: one host's yes/no, the list a training scheduler uses as an exclude file, and the golden set
(the hosts it should fill first) with each host's reliability history.

Always from the fabric's real state, never a dry run's would-be one: a dry run must not drain hosts.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import HTTPException, Query, status
from fastapi.responses import PlainTextResponse

from fabric.api.deps import BAD_INPUT, ContextDep, PlanIndexDep, StoreDep
from fabric.api.health import UNUSABLE, host_health, hosts_health, unhealthy
from fabric.api.models import HostHealth, HostReliability, Problem
from fabric.jsonbody import strict_router

router = strict_router(tags=["hosts"], responses={422: {"model": Problem}})


@router.get("/hosts/{host}/health", response_model=HostHealth, responses={404: {"model": Problem}},
            summary="Whether a host is fit for jobs, and why not")
def get_host_health(host: str, store: StoreDep, index: PlanIndexDep) -> HostHealth:
    key = host.casefold()
    if key not in index.hosts:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"host: no host {host!r} in the fabric plan")
    return host_health(index, key, unhealthy(index, store.components(UNUSABLE)))


@router.get("/hosts/{host}/history", response_model=HostReliability, responses={404: {"model": Problem}},
            summary="A host's reliability history, per component, and whether it is golden")
def get_host_history(host: str, context: ContextDep) -> HostReliability:
    key = host.casefold()
    if key not in context.index.hosts:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"host: no host {host!r} in the fabric plan")
    return context.golden.history(context.store, key, context.clock(), context.config.golden.clean_for)


@router.get("/hosts", response_model=list[HostHealth | HostReliability],
            responses={200: {"content": {"text/plain": {"schema": {"type": "string"}}},
                             "description": "JSON, or with format=text one host name a line (an exclude file; with "
                                            "golden=true, the hosts to fill first)."}},
            summary="Every planned host's health, by name; or the golden set")
def list_hosts(
    context: ContextDep,
    healthy: Annotated[bool | None, Query(description="Only the healthy (true) or unhealthy (false) ones.")] = None,
    golden: Annotated[bool, Query(description="Only the golden set, each host with its reliability history: "
                                              "healthy, never quarantined, clean for [golden] clean_for.")] = False,
    output: Annotated[Literal["json", "text"], Query(alias="format", description="text: one host a line.")]
    = "json",
) -> list[HostHealth] | list[HostReliability] | PlainTextResponse:
    found: list[HostHealth] | list[HostReliability]
    if golden:
        if healthy is not None:
            raise HTTPException(BAD_INPUT, "healthy: not with golden=true (every golden host is healthy)")
        found = context.golden.golden(context.store, context.clock(), context.config.golden.clean_for)
    else:
        found = hosts_health(context.index, context.store.components(UNUSABLE), healthy)
    if output == "text":
        return PlainTextResponse("".join(f"{h.host}\n" for h in found))
    return found
