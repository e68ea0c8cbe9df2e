"""The read endpoints: status, components (filtered, paginated) with their history, decisions.

In dry run the breaker and the components are the dry run's would-be state (``Store.state_scope``; each component
marked ``dry_run``): what live mode would hold. The history is the fabric's, the dry run's report among it.

Endpoints that call the store are plain ``def``: FastAPI runs them in its worker threads, so the blocking store
never holds the event loop the scheduler's cycles share.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import HTTPException, Query, status

from fabric.api.deps import (
    COMPONENT_PATTERN,
    ComponentDep,
    PlanIndexDep,
    RuntimeDep,
    StoreDep,
    parse_component,
)
from fabric.api.models import (
    Component,
    ComponentDetail,
    ComponentPage,
    Decision,
    EngineOut,
    FindingOut,
    Guard,
    Intent,
    Leader,
    Problem,
    RequestOut,
    Status,
    TelemetryRead,
    Ticket,
)
from fabric.bounded import Instant, RowOffset
from fabric.jsonbody import strict_router
from fabric.remediation.domain import Lifecycle
from fabric.store.records import TicketState

HISTORY = 100
"""How many of a component's newest findings, decisions and intents its page shows."""

router = strict_router(tags=["read"], responses={422: {"model": Problem}})


@router.get("/status", response_model=Status, summary="Dry run, the breaker, the last cycle, the guard, counts")
def get_status(store: StoreDep, runtime: RuntimeDep) -> Status:
    live = runtime.status()
    with store.snapshot() as snapshot:  # one read transaction: the figures agree with one another
        held = snapshot.state_scope()
        breaker, counts = held.breaker_state(), held.lifecycle_counts()
        pending = snapshot.pending_requests()
    return Status(
        fabric=store.fabric, dry_run=live.dry_run, would_be=held.would_be, halted=breaker.halted,
        halt_reason=breaker.reason, halted_since=breaker.since, started_at=live.started_at, starting=live.starting,
        interval_seconds=live.interval_seconds,
        last_poll_at=live.last_poll_at, last_cycle_at=live.last_cycle_at, last_cycle_error=live.last_cycle_error,
        ufm_reachable=live.ufm_reachable, view_refused_since=live.view_refused_since, guard=Guard.of(live.guard),
        components={lifecycle.value: count for lifecycle, count in counts.items()},
        pending_requests=[RequestOut.of(request) for request in pending],
        counters=dict(live.counters), leadership=Leader.of(live.leadership) if live.leadership else None,
        telemetry=TelemetryRead.of(live.telemetry) if live.telemetry else None,
        engine=EngineOut.of(live.engine) if live.engine else None)


@router.get("/components", response_model=ComponentPage, responses={404: {"model": Problem}},
            summary="Components with a recorded state, in id order")
def list_components(
    store: StoreDep,
    index: PlanIndexDep,
    state: Annotated[Lifecycle | None, Query(description="Only those in this lifecycle state.")] = None,
    switch: Annotated[str | None, Query(description="Only those on this switch (its cables, ports, itself).")]
    = None,
    host: Annotated[str | None, Query(description="Only those of this host (its adapters' cables and ports).")]
    = None,
    rule: Annotated[str | None, Query(description="Only those put in their state by this rule.")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[RowOffset, Query()] = 0,
) -> ComponentPage:
    wanted_switch = switch.casefold() if switch is not None else None
    if wanted_switch is not None and not index.known_switch(wanted_switch):
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"switch: no switch {switch!r} in the fabric plan")
    wanted_host = host.casefold() if host is not None else None
    if wanted_host is not None and wanted_host not in index.hosts:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"host: no host {host!r} in the fabric plan")
    with store.snapshot() as snapshot:  # which scope is kept, and its rows, of one moment
        held = snapshot.state_scope()
        records = held.components(state)
    matching = [
        Component.of(component, record, dry_run=held.would_be)
        for component, record in records.items()
        if (rule is None or record.rule == rule)
        and (wanted_switch is None or wanted_switch in index.devices_of(component))
        and (wanted_host is None or wanted_host in index.hosts_of(component))
    ]
    return ComponentPage(total=len(matching), limit=limit, offset=offset, items=matching[offset:offset + limit])


@router.get("/components/{component_id:path}", response_model=ComponentDetail, responses={404: {"model": Problem}},
            summary="One component: its state and history (findings, decisions, intents, tickets)")
def get_component(component: ComponentDep, store: StoreDep, index: PlanIndexDep) -> ComponentDetail:
    with store.snapshot() as tx:  # the state and the history that led to it agree
        held = tx.state_scope()
        record = held.get_component(component)
        findings = tx.findings(component=component, limit=HISTORY)
        decisions = tx.decisions(component=component, limit=HISTORY)
        intents = tx.intents(component=component, limit=HISTORY)
        tickets = tx.tickets(component=component)
    if record is None and not (findings or decisions or intents or tickets) and not index.known(component):
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"{component} is not in the fabric plan and nothing is "
                                                       "recorded about it")
    return ComponentDetail(
        id=str(component), state=None if record is None else Component.of(component, record, dry_run=held.would_be),
        findings=[FindingOut.of(finding) for finding in findings],
        decisions=[Decision.of(decision) for decision in decisions],
        intents=[Intent.of(intent) for intent in intents], tickets=[Ticket.of(ticket) for ticket in tickets])


@router.get("/decisions", response_model=list[Decision], summary="Decisions, oldest first, with the guard's figures")
def list_decisions(
    store: StoreDep,
    since: Annotated[Instant | None, Query(description="From this time on (with its zone).")] = None,
    until: Annotated[Instant | None, Query(description="Before this time (with its zone).")] = None,
    component: Annotated[str | None, Query(description="Only this component's (kind:name).",
                                           json_schema_extra={"pattern": COMPONENT_PATTERN})] = None,
    limit: Annotated[int, Query(ge=1, le=10_000, description="The newest N of them.")] = 100,
) -> list[Decision]:
    wanted = None if component is None else parse_component(component, "component")
    return [Decision.of(record) for record in store.decisions(component=wanted, since=since, until=until,
                                                              limit=limit)]


@router.get("/tickets", response_model=list[Ticket],
            summary="The fabric's tickets as the engine knows them (whatever the backend), oldest first")
def list_tickets(
    store: StoreDep,
    state: Annotated[TicketState | None, Query(description="Only those in this state (creating: claimed, the "
                                                           "backend's ticket not confirmed yet).")] = None,
) -> list[Ticket]:
    return [Ticket.of(ticket) for ticket in store.tickets(state=state)]
