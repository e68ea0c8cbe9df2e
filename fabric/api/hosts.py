"""Host endpoints: one host's yes/no, the list a training scheduler uses as an exclude file, and the golden set
(the hosts it should fill first) with each host's reliability history.

Always from the fabric's real state, never a dry run's would-be one: a dry run must not drain hosts.
"""

from __future__ import annotations

from typing import Annotated, Literal, TypeVar

from fastapi import HTTPException, Query, status
from fastapi.responses import PlainTextResponse

from fabric.api.deps import BAD_INPUT, ContextDep, PlanIndexDep, StoreDep
from fabric.api.health import UNUSABLE, host_health, hosts_health, unhealthy
from fabric.api.models import HostHealth, HostReliability, Problem
from fabric.api.plan_index import PlanIndex
from fabric.jsonbody import strict_router
from fabric.store import Store

H = TypeVar("H", HostHealth, HostReliability)
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
def hosts_or_golden(
    context: ContextDep,
    healthy: Annotated[bool | None, Query(description="Only the healthy (true) or unhealthy (false) ones.")] = None,
    golden: Annotated[bool, Query(description="Only the golden set, each host with its reliability history: "
                                              "healthy, never quarantined, clean for [golden] clean_for.")] = False,
    output: Annotated[Literal["json", "text"], Query(alias="format", description="text: one host a line.")]
    = "json",
) -> list[HostHealth] | list[HostReliability] | PlainTextResponse:
    if not golden:
        return list_hosts(context.store, context.index, healthy, output)
    if healthy is not None:
        raise HTTPException(BAD_INPUT, "healthy: not with golden=true (every golden host is healthy)")
    return _as(output, context.golden.golden(context.store, context.clock(), context.config.golden.clean_for))


def list_hosts(store: Store, index: PlanIndex, healthy: bool | None = None,
               output: Literal["json", "text"] = "json") -> list[HostHealth] | PlainTextResponse:
    """Every planned host's health, or the healthy or unhealthy ones (what ``GET /hosts`` answers without
    ``golden``; other readers of the API's answers call it too)."""
    return _as(output, hosts_health(index, store.components(UNUSABLE), healthy))


def _as(output: Literal["json", "text"], found: list[H]) -> list[H] | PlainTextResponse:
    """``found`` as JSON, or one host name a line."""
    if output == "text":
        return PlainTextResponse("".join(f"{h.host}\n" for h in found))
    return found
