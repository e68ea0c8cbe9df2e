"""The simulator's own API under ``/simulator`` (not UFM's): drive the clock, inject faults, read state.

| method + path                     | body / answer                                                        |
|-----------------------------------|----------------------------------------------------------------------|
| ``GET /simulator/state``          | summary: clock, links down, disabled ports, events, pending steps…   |
| ``POST /simulator/clock/advance`` | ``{"seconds": 90}`` or ``{"by": "10m"}``; runs what falls due        |
|                                   | ``"at_next_read": true``: at the next ``GET /simulator/state`` (below) |
| ``PUT /simulator/clock``          | ``{"rate": 60}``: simulated seconds per real second (0 freezes)      |
| ``POST /simulator/faults``        | one scenario step, ``{"fault": "flap", "link": "…", "at": "30s"}``   |
| ``POST /simulator/scenario``      | a whole scenario (the TOML/YAML structure as JSON)                   |
| ``POST /simulator/events/bulk``   | ``{"count": 100000, "events": [110, 113]}``: an event storm, now     |
|                                   | ``{"kind": "link_bounce", "up_after": 10}`` or ``{"kind": "ber_high"}``: |
|                                   | one over the whole fabric (``storms.py``)                            |
| ``POST /simulator/restart``       | a UFM restart (event ids reset, history and sessions gone)           |
| ``PUT /simulator/ufm_version``    | ``{"version": "6.16"}``: switches the event payload shape            |
| ``DELETE /simulator/api_faults``  | clears injected API faults                                           |
| ``DELETE /simulator/telemetry_faults`` | clears stale, missing and malformed telemetry (``telemetry_faults``) |
| ``GET /simulator/event.log``      | every event as UFM ``event.log`` lines (text)                        |

An advance ``at_next_read`` is kept until the next ``GET /simulator/state`` and made just before it answers (more
of them add up): a client that reads the clock there before each of its cycles (``fabricctl run --clock
simulator``) then sees time jump only between two cycles, never while one runs, however long its cycles take.

Every body is checked before anything changes: a value the simulator cannot use (a rate outside 0..1,000,000,
a duration past ten years, a count outside its step's range in ``faults.py``, NaN, a number of more digits than
Python reads) is a 400 whose ``detail`` names the field.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import PlainTextResponse
from pydantic import BaseModel

from fabric.jsonbody import json_body, strict_router
from fabric.simulator.catalog import STORM_EVENTS
from fabric.simulator.clock import MAX_RATE, MAX_SPAN_S, later
from fabric.simulator.events import parse_version
from fabric.simulator.faults import MAX_STORM, STEP_TYPES, storm
from fabric.simulator.scenario import ScenarioError, parse_duration, parse_scenario, parse_step
from fabric.simulator.state import SimState, TargetError
from fabric.simulator.storms import FABRIC_STORMS, ber_high, link_bounce

THRESHOLD_STORM = "threshold"
MAX_UP_AFTER_S = 3600.0
"""The longest a ``link_bounce`` storm's cables stay down: its ups are raised with its downs, the clock moved."""


async def _body(request: Request) -> Mapping[str, Any]:
    data = await json_body(request, empty={})
    if not isinstance(data, Mapping):
        raise HTTPException(400, "the body must be a JSON object")
    return data


# --- what the OpenAPI document says: the bodies are read and checked by hand (the checks name the field in the
# scenario's own words, as a scenario file's are), so their schemas are written here, beside those checks.

_DURATION: dict[str, Any] = {"type": ["string", "number"], "description": "90s, 10m, 1h30m, 500ms or seconds; at "
                             f"most {MAX_SPAN_S / 86400:.0f} days", "example": "90s"}
_STEP: dict[str, Any] = {
    "type": "object", "required": ["fault"],
    "description": "One scenario step: its kind, when (from now), and its parameters (fabric.simulator.faults).",
    "properties": {"fault": {"enum": sorted(STEP_TYPES)}, "at": _DURATION},
}
_BODIES: dict[str, dict[str, Any]] = {
    "advance": {"type": "object", "not": {"required": ["seconds", "by"]}, "properties": {
        "seconds": _DURATION, "by": _DURATION, "at_next_read": {"type": "boolean"}}},
    "clock": {"type": "object", "required": ["rate"], "properties": {
        "rate": {"type": "number", "minimum": 0, "maximum": MAX_RATE}}},
    "version": {"type": "object", "required": ["version"], "properties": {
        "version": {"type": ["string", "number"], "example": "6.16"}}},
    "step": _STEP,
    "scenario": {"type": "object", "required": ["steps"], "additionalProperties": False, "properties": {
        "name": {"type": ["string", "null"]}, "description": {"type": ["string", "null"]},
        "seed": {"type": ["integer", "null"]},
        "steps": {"type": "array", "minItems": 1, "items": _STEP}}},
    "bulk": {"type": "object", "properties": {
        "kind": {"enum": [THRESHOLD_STORM, *FABRIC_STORMS], "description": "threshold events on random ports "
                 "(count, events), or a storm over the whole fabric (fabric.simulator.storms)"},
        "count": {"type": "integer", "minimum": 1, "maximum": MAX_STORM},
        "events": {"type": "array", "minItems": 1, "items": {"enum": list(STORM_EVENTS)}},
        "up_after": {"type": "number", "minimum": 0, "maximum": MAX_UP_AFTER_S,
                     "description": "link_bounce: simulated seconds from the downs to the ups"}}},
}


def _documented(body: str) -> dict[str, Any]:
    """The route's ``openapi_extra``: the schema of its JSON body (none: ``{}``)."""
    return {"requestBody": {"required": False, "content": {"application/json": {"schema": _BODIES[body]}}}}


class AdminProblem(BaseModel):
    """A refused request: what is wrong, naming the field."""

    detail: str


_REFUSED: dict[int | str, dict[str, Any]] = {400: {"model": AdminProblem}}


class Summary(BaseModel, extra="allow"):
    """The simulation at a glance (clock, links down, disabled ports, events, pending steps...)."""


class Advanced(BaseModel):
    now: str
    pending_seconds: float
    errors: list[str]


class ClockRate(BaseModel):
    now: str
    rate: float


class UfmVersion(BaseModel):
    ufm_version: str
    event_shape: str


class Injected(BaseModel):
    scheduled_at: str
    fault: str
    last_event_id: int


class Scheduled(BaseModel):
    name: str
    steps: int
    errors: list[str]


class Stormed(BaseModel):
    count: int
    last_event_id: int
    seconds: float


class Restarted(BaseModel):
    restarts: int


class Cleared(BaseModel):
    cleared: bool


def admin_router(state: SimState) -> APIRouter:
    router = strict_router()
    _clock_and_state(router, state)
    _faults(router, state)
    return router


def _clock_and_state(router: APIRouter, state: SimState) -> None:
    pending: list[float] = []
    """Advances ``at_next_read`` not made yet."""

    @router.get("/state", response_model=Summary)
    async def read_state() -> Any:
        if pending:
            seconds = sum(pending)
            pending.clear()
            state.advance(seconds)
        return state.summary()

    @router.post("/clock/advance", responses=_REFUSED, openapi_extra=_documented("advance"))
    async def advance(request: Request) -> Advanced:
        body = await _body(request)
        at_next_read = body.get("at_next_read", False)
        if not isinstance(at_next_read, bool):
            raise HTTPException(400, "at_next_read must be true or false")
        if "seconds" in body and "by" in body:
            raise HTTPException(400, "give seconds or by, not both")
        try:
            seconds = parse_duration(body.get("by", body.get("seconds", 0)))
            if at_next_read:
                later(state.now(), sum(pending) + seconds)  # past the clock's horizon: refused now, not then
                pending.append(seconds)
                when = state.now()
            else:
                when = state.advance(seconds)
        except ValueError as exc:  # unreadable, or past the clock's horizon
            raise HTTPException(400, str(exc)) from None
        return Advanced(now=when.isoformat(), pending_seconds=sum(pending), errors=list(state.errors))

    @router.put("/clock", responses=_REFUSED, openapi_extra=_documented("clock"))
    async def set_clock(request: Request) -> ClockRate:
        body = await _body(request)
        rate = body.get("rate")
        if isinstance(rate, bool) or not isinstance(rate, int | float):
            raise HTTPException(400, f"rate must be a number from 0 to {MAX_RATE:,.0f}")
        try:
            state.clock.set_rate(rate)
        except ValueError as exc:
            raise HTTPException(400, str(exc)) from None
        return ClockRate(now=state.now().isoformat(), rate=state.clock.rate)

    @router.put("/ufm_version", responses=_REFUSED, openapi_extra=_documented("version"))
    async def set_version(request: Request) -> UfmVersion:
        body = await _body(request)
        version = str(body.get("version", ""))
        try:
            parse_version(version)
        except ValueError as exc:
            raise HTTPException(400, str(exc)) from None
        state.set_ufm_version(version)
        return UfmVersion(ufm_version=version, event_shape=state.shape.value)

    @router.get("/event.log", response_class=PlainTextResponse)
    async def event_log() -> PlainTextResponse:
        with state.lock:
            text = "".join(line + "\n" for line in state.events.log_lines())
        return PlainTextResponse(text)


def _faults(router: APIRouter, state: SimState) -> None:
    @router.post("/faults", responses=_REFUSED, openapi_extra=_documented("step"))
    async def inject(request: Request) -> Injected:
        body = await _body(request)
        try:
            timed = parse_step(body, "fault")
            with state.lock:
                if timed.at > 0:
                    when = state.schedule(timed.at, f"admin: {timed.step.label()}",
                                          lambda: timed.step.apply(state))
                else:
                    when = state.now()
                    timed.step.apply(state)
        except ValueError as exc:  # ScenarioError, TargetError, or a time past the clock's horizon
            raise HTTPException(400, str(exc)) from None
        return Injected(scheduled_at=when.isoformat(), fault=timed.step.kind, last_event_id=state.events.last_id)

    @router.post("/scenario", responses=_REFUSED, openapi_extra=_documented("scenario"))
    async def scenario(request: Request) -> Scheduled:
        body = await _body(request)
        try:
            loaded = parse_scenario(body, "posted scenario")
            loaded.schedule(state)
        except (ScenarioError, TargetError) as exc:
            raise HTTPException(400, str(exc)) from None
        state.tick()
        return Scheduled(name=loaded.name, steps=len(loaded.steps), errors=list(state.errors))

    @router.post("/events/bulk", responses=_REFUSED, openapi_extra=_documented("bulk"))
    async def bulk(request: Request) -> Stormed:
        body = await _body(request)
        # Every field is checked whatever the kind, as documented: one the kind does not use is still refused
        # when it is wrong.
        kind = body.get("kind", THRESHOLD_STORM)
        count = body.get("count", 1000)
        events = body.get("events", [110, 111, 112, 113])
        up_after = body.get("up_after", 10)
        if kind not in (THRESHOLD_STORM, *FABRIC_STORMS):
            raise HTTPException(400, f"kind must be one of {', '.join([THRESHOLD_STORM, *FABRIC_STORMS])}")
        if isinstance(count, bool) or not isinstance(count, int) or not 0 < count <= MAX_STORM:
            raise HTTPException(400, f"count must be an integer between 1 and {MAX_STORM:,}")
        if not isinstance(events, list) or not events or any(e not in (110, 111, 112, 113) for e in events):
            raise HTTPException(400, "events must be a non-empty list among 110, 111, 112, 113")
        if isinstance(up_after, bool) or not isinstance(up_after, int | float) or not 0 <= up_after <= MAX_UP_AFTER_S:
            raise HTTPException(400, f"up_after must be a number of seconds from 0 to {MAX_UP_AFTER_S:g}")
        started = time.perf_counter()
        if kind == "link_bounce":
            count = link_bounce(state, float(up_after))
        elif kind == "ber_high":
            count = ber_high(state)
        else:
            storm(state, count, [int(e) for e in events])
        return Stormed(count=count, last_event_id=state.events.last_id,
                       seconds=round(time.perf_counter() - started, 3))

    @router.post("/restart")
    async def restart() -> Restarted:
        state.ufm_restart()
        return Restarted(restarts=state.counters.restarts)

    @router.delete("/api_faults")
    async def clear_api_faults() -> Cleared:
        state.api_faults.clear()
        return Cleared(cleared=True)

    @router.delete("/telemetry_faults")
    async def clear_telemetry_faults() -> Cleared:
        state.telemetry_faults.clear()
        return Cleared(cleared=True)
