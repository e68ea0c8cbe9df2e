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
| ``POST /simulator/restart``       | a UFM restart (event ids reset, history and sessions gone)           |
| ``PUT /simulator/ufm_version``    | ``{"version": "6.16"}``: switches the event payload shape            |
| ``DELETE /simulator/api_faults``  | clears injected API faults                                           |
| ``GET /simulator/event.log``      | every event as UFM ``event.log`` lines (text)                        |

An advance ``at_next_read`` is kept until the next ``GET /simulator/state`` and made just before it answers (more
of them add up): a client that reads the clock there before each of its cycles (``fabricctl run --clock
simulator``) then sees time jump only between two cycles, never while one runs, however long its cycles take.

Every body is checked before anything changes: a value the simulator cannot use (a rate outside 0..1,000,000,
a duration past ten years, a count outside its step's range in ``faults.py``, NaN, a number of more digits than
Python reads) is a 400 whose ``detail`` names the field.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import PlainTextResponse, Response

from fabric.jsonbody import json_body, strict_router
from fabric.simulator.clock import MAX_RATE, later
from fabric.simulator.events import parse_version
from fabric.simulator.faults import MAX_STORM, storm
from fabric.simulator.scenario import ScenarioError, parse_duration, parse_scenario, parse_step
from fabric.simulator.state import SimState, TargetError


def _json(payload: Any, status: int = 200) -> Response:
    return Response(json.dumps(payload).encode(), status_code=status, media_type="application/json")


async def _body(request: Request) -> Mapping[str, Any]:
    data = await json_body(request, empty={})
    if not isinstance(data, Mapping):
        raise HTTPException(400, "the body must be a JSON object")
    return data


def admin_router(state: SimState) -> APIRouter:
    router = strict_router()
    _clock_and_state(router, state)
    _faults(router, state)
    return router


def _clock_and_state(router: APIRouter, state: SimState) -> None:
    pending: list[float] = []
    """Advances ``at_next_read`` not made yet."""

    @router.get("/state")
    async def read_state() -> Response:
        if pending:
            seconds = sum(pending)
            pending.clear()
            state.advance(seconds)
        return _json(state.summary())

    @router.post("/clock/advance")
    async def advance(request: Request) -> Response:
        body = await _body(request)
        at_next_read = body.get("at_next_read", False)
        if not isinstance(at_next_read, bool):
            raise HTTPException(400, "at_next_read must be true or false")
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
        return _json({"now": when.isoformat(), "pending_seconds": sum(pending), "errors": list(state.errors)})

    @router.put("/clock")
    async def set_clock(request: Request) -> Response:
        body = await _body(request)
        rate = body.get("rate")
        if isinstance(rate, bool) or not isinstance(rate, int | float):
            raise HTTPException(400, f"rate must be a number from 0 to {MAX_RATE:,.0f}")
        try:
            state.clock.set_rate(rate)
        except ValueError as exc:
            raise HTTPException(400, str(exc)) from None
        return _json({"now": state.now().isoformat(), "rate": state.clock.rate})

    @router.put("/ufm_version")
    async def set_version(request: Request) -> Response:
        body = await _body(request)
        version = str(body.get("version", ""))
        try:
            parse_version(version)
        except ValueError as exc:
            raise HTTPException(400, str(exc)) from None
        state.set_ufm_version(version)
        return _json({"ufm_version": version, "event_shape": state.shape.value})

    @router.get("/event.log")
    async def event_log() -> Response:
        with state.lock:
            text = "".join(line + "\n" for line in state.events.log_lines())
        return PlainTextResponse(text)


def _faults(router: APIRouter, state: SimState) -> None:
    @router.post("/faults")
    async def inject(request: Request) -> Response:
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
        return _json({"scheduled_at": when.isoformat(), "fault": timed.step.kind,
                      "last_event_id": state.events.last_id})

    @router.post("/scenario")
    async def scenario(request: Request) -> Response:
        body = await _body(request)
        try:
            loaded = parse_scenario(body, "posted scenario")
            loaded.schedule(state)
        except (ScenarioError, TargetError) as exc:
            raise HTTPException(400, str(exc)) from None
        state.tick()
        return _json({"name": loaded.name, "steps": len(loaded.steps), "errors": list(state.errors)})

    @router.post("/events/bulk")
    async def bulk(request: Request) -> Response:
        body = await _body(request)
        count = body.get("count", 1000)
        events = body.get("events", [110, 111, 112, 113])
        if isinstance(count, bool) or not isinstance(count, int) or not 0 < count <= MAX_STORM:
            raise HTTPException(400, f"count must be an integer between 1 and {MAX_STORM:,}")
        if not isinstance(events, list) or not events or any(e not in (110, 111, 112, 113) for e in events):
            raise HTTPException(400, "events must be a non-empty list among 110, 111, 112, 113")
        started = time.perf_counter()
        storm(state, count, [int(e) for e in events])
        return _json({"count": count, "last_event_id": state.events.last_id,
                      "seconds": round(time.perf_counter() - started, 3)})

    @router.post("/restart")
    async def restart() -> Response:
        state.ufm_restart()
        return _json({"restarts": state.counters.restarts})

    @router.delete("/api_faults")
    async def clear_api_faults() -> Response:
        state.api_faults.clear()
        return _json({"cleared": True})
