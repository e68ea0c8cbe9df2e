"""The writes: silences, resume, clear, reload. Each needs the admin token and says who asks and why.

Resume and clear are operator requests in the store, as ``fabricctl resume`` and ``components clear`` write them:
the engine carries them out at its next cycle and records the outcome. A silence keeps its author and reason. An
expiry and a reload have no row of their own: their who and why go to the log.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any

from fastapi import HTTPException, Path, Query, status

from fabric.api.context import NotApplied
from fabric.api.deps import BAD_INPUT, AdminDep, ComponentDep, RuntimeDep, StoreDep
from fabric.api.models import Audit, Expired, Problem, Reloaded, RequestOut, SilenceCreate, SilenceOut
from fabric.bounded import Instant, StoreId
from fabric.jsonbody import strict_router
from fabric.remediation.domain import Lifecycle
from fabric.remediation.textlimits import BY_MAX, REASON_MAX
from fabric.store import RequestKind

log = logging.getLogger(__name__)

_DENIED: dict[int | str, dict[str, Any]] = {401: {"model": Problem}, 403: {"model": Problem}}
router = strict_router(tags=["write"], responses={422: {"model": Problem}})


@router.get("/silences", response_model=list[SilenceOut], summary="Current and future silences")
def list_silences(
    store: StoreDep,
    ended_since: Annotated[Instant | None, Query(description="Also those that ended after this time.")]
    = None,
) -> list[SilenceOut]:
    return [SilenceOut.of(silence) for silence in store.silences(include_ended_since=ended_since)]


@router.post("/silences", response_model=SilenceOut, status_code=status.HTTP_201_CREATED, dependencies=[AdminDep],
             responses=_DENIED, summary="Silence components (now, or a maintenance window)")
def add_silence(body: SilenceCreate, store: StoreDep) -> SilenceOut:
    try:
        silence = store.add_silence(body.matcher, reason=body.reason, created_by=body.by, ends_at=body.ends_at,
                                    duration=body.length(), starts_at=body.starts_at)
    except ValueError as exc:  # the model checked all else: it ends before it starts (now, by the service's clock)
        raise HTTPException(BAD_INPUT, f"ends_at: {exc}") from None
    log.info("silence %d of %s until %s added by %s: %s", silence.id, silence.matcher, silence.ends_at.isoformat(),
             body.by, body.reason)
    return SilenceOut.of(silence)


@router.delete("/silences/{silence_id}", response_model=Expired, dependencies=[AdminDep],
               responses={**_DENIED, 404: {"model": Problem}}, summary="Expire a silence now")
def expire_silence(
    silence_id: Annotated[StoreId, Path()],
    store: StoreDep,
    by: Annotated[str, Query(min_length=1, max_length=BY_MAX, description="Who asks (logged).")],
    reason: Annotated[str, Query(min_length=1, max_length=REASON_MAX, description="Why (logged).")],
) -> Expired:
    if not store.expire_silence(silence_id):
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no active silence {silence_id} in fabric {store.fabric}")
    log.info("silence %d expired by %s: %s", silence_id, by, reason)
    return Expired(id=silence_id, expired=True)


@router.post("/resume", response_model=RequestOut, status_code=status.HTTP_202_ACCEPTED, dependencies=[AdminDep],
             responses={**_DENIED, 409: {"model": Problem}},
             summary="Ask the engine to resume automation after the storm breaker halted it")
def resume(body: Audit, store: StoreDep, runtime: RuntimeDep) -> RequestOut:
    with store.transaction() as tx:
        if not tx.state_scope().breaker_state().halted:  # a dry run's halt is resumed too
            raise HTTPException(status.HTTP_409_CONFLICT, f"automation of fabric {store.fabric} is not halted")
        request = tx.request(RequestKind.RESUME, reason=body.reason, requested_by=body.by)
    log.info("resume requested (request %d) by %s: %s", request.id, body.by, body.reason)
    runtime.wake()
    return RequestOut.of(request)


@router.post("/components/{component_id:path}/clear", response_model=RequestOut,
             status_code=status.HTTP_202_ACCEPTED, dependencies=[AdminDep],
             responses={**_DENIED, 409: {"model": Problem},
                        404: {"model": Problem, "description": "A path that names no component (a newline in it)."}},
             summary="Ask the engine to release a quarantined component (on probation, within the guard)")
def clear(component: ComponentDep, body: Audit, store: StoreDep, runtime: RuntimeDep) -> RequestOut:
    with store.transaction() as tx:
        record = tx.state_scope().get_component(component)
        if record is None or record.lifecycle is not Lifecycle.QUARANTINED:
            raise HTTPException(status.HTTP_409_CONFLICT, f"{component} is not quarantined in fabric {store.fabric}")
        request = tx.request(RequestKind.CLEAR, component=component, reason=body.reason, requested_by=body.by)
    log.info("clear of %s requested (request %d) by %s: %s", component, request.id, body.by, body.reason)
    runtime.wake()
    return RequestOut.of(request)


_NOT_APPLIED = {NotApplied.INVALID: BAD_INPUT,
                NotApplied.BUSY: status.HTTP_503_SERVICE_UNAVAILABLE, NotApplied.STANDBY: status.HTTP_409_CONFLICT}
"""A reload that applied nothing is no success: a script must tell it from one by the status alone."""


@router.post("/reload", response_model=Reloaded, dependencies=[AdminDep],
             responses={**_DENIED, 409: {"model": Problem}, 503: {"model": Problem}},
             summary="Re-read rules and silences without a restart",
             description="200 with what changed; 422 with the file's problems when it does not load (the running "
                         "configuration stays), 503 while the engine starts or the daemon stops, 409 on a standby.")
async def reload(body: Audit, runtime: RuntimeDep) -> Reloaded:
    # async: the runtime's reload waits for the engine's answer on the service's loop, its store calls in threads.
    outcome = await runtime.reload(body.by, body.reason)
    log.info("reload by %s: %s; %s", body.by, body.reason, outcome.message)
    if outcome.not_applied is not None:
        raise HTTPException(_NOT_APPLIED[outcome.not_applied], outcome.message)
    return Reloaded(changed=outcome.message)
