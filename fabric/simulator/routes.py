"""UFM's REST resources as the simulator serves them (mounted by :func:`fabric.simulator.app.create_app`).

Shapes not fixed by NVIDIA's documentation (all UNCONFIRMED): ``/resources/systems/<guid>`` and
``/resources/ports/<name>`` answer a list of one (as the PDR plugin reads ports); an unknown port, system,
event, alarm or job is a 404; a paged ``/resources/links`` is ``{"data": [...]}`` and nothing else;
``POST /actions`` answers 202 with the job's URL in ``Location`` and as the body's text (NVIDIA's scripts read
either); ``GET /resources/isolated_ports`` lists the ports the subnet manager isolated (marked unhealthy with
``isolate``, from the sweep after the mark on), as ``0x<guid>_<n>``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import Response

from fabric.jsonbody import json_body, strict_router
from fabric.simulator.catalog import EXTERNAL_EVENTS
from fabric.simulator.naming import site_object
from fabric.simulator.state import PORT_ACTIONS, SimState
from fabric.simulator.unhealthy import UNHEALTHY_ACTIONS

JSON = "application/json"
_PORT_NAME = re.compile(r"^(?:0x)?([0-9a-fA-F]{16})_(\d+)$")


def json_response(payload: Any, status: int = 200) -> Response:
    return Response(json.dumps(payload, separators=(",", ":")).encode(), status_code=status, media_type=JSON)


def _bytes(data: bytes) -> Response:
    return Response(data, media_type=JSON)


def _truthy(value: str | None) -> bool:
    return value is not None and value.strip().lower() in ("1", "true", "yes")


def not_found(what: str) -> HTTPException:
    return HTTPException(404, f"{what} not found")


def port_key(text: str) -> str:
    """A port name as the simulator keys it: lower-case GUID, no ``0x``."""
    match = _PORT_NAME.match(text.strip())
    return f"{match.group(1).lower()}_{int(match.group(2))}" if match else text.strip()


def _reader(state: SimState) -> Callable[[Callable[[], bytes]], Response]:
    def read(build: Callable[[], bytes]) -> Response:
        with state.lock:
            return _bytes(build())
    return read


def resource_routes(state: SimState) -> APIRouter:
    """``/resources/systems``, ``/resources/ports``, ``/resources/links``."""
    router = strict_router()
    fabric = state.fabric
    read = _reader(state)

    @router.get("/resources/systems")
    async def systems(type: str | None = None) -> Response:
        return read(lambda: fabric.systems_json(type))

    @router.get("/resources/systems/{guid}")
    async def system(guid: str) -> Response:
        with state.lock:
            found = fabric.resolve_system(guid)
            if found is None:
                raise not_found(f"system {guid}")
            return _bytes(b"[" + fabric.system_bytes(found) + b"]")

    @router.get("/resources/ports")
    async def ports(system: str | None = None, active: str | None = None,
                    show_disabled: str | None = None) -> Response:
        hide_disabled = show_disabled is not None and not _truthy(show_disabled)
        return read(lambda: fabric.ports_json(system, _truthy(active), not hide_disabled))

    @router.get("/resources/ports/{name}")
    async def port(name: str) -> Response:
        key = port_key(name)
        with state.lock:
            if key not in fabric.ports:
                raise not_found(f"port {name}")
            return _bytes(b"[" + fabric.port_bytes(key) + b"]")

    @router.get("/resources/isolated_ports")
    async def isolated_ports() -> Response:
        with state.lock:
            return json_response({"isolated_ports": [f"0x{port}" for port in fabric.isolated]})

    @router.get("/resources/links")
    async def links(system: str | None = None, page_number: int | None = None, rpp: int | None = None) -> Response:
        if page_number is None and rpp is None:
            return read(lambda: fabric.links_json(system))
        with state.lock:
            if page_number is not None and rpp is not None and page_number >= 1 and rpp >= 1:
                data = fabric.links_page(system, page_number, rpp)
            else:
                data = fabric.links_json(system)
        return _bytes(b'{"data":' + data + b"}")

    return router


def app_routes(state: SimState) -> APIRouter:
    """``/app/events``, ``/app/alarms``, ``/app/versioning``, ``/app/unhealthy_ports``."""
    router = strict_router()
    fabric = state.fabric
    read = _reader(state)

    @router.get("/app/events")
    async def events(request: Request) -> Response:
        filters = dict(request.query_params)
        return read(lambda: state.events.list_bytes(state.shape, filters))

    @router.post("/app/events/external_event")
    async def external_event(request: Request, multiple_events: str | None = None) -> Response:
        body = await json_body(request)
        items = body if _truthy(multiple_events) and isinstance(body, list) else [body]
        checked = [_external_event(item, index if len(items) > 1 else None) for index, item in enumerate(items)]
        with state.lock:
            for event_id, description, object_name in checked:
                system = fabric.systems.get(object_name.lower().removeprefix("0x")) if object_name else None
                obj = state.node_object(system["guid"]) if system is not None else site_object()
                state.emit(event_id, obj, description)
        return Response(status_code=200)

    @router.get("/app/events/{event_id}")
    async def event(event_id: int) -> Response:
        with state.lock:
            record = state.events.get(event_id)
            if record is None:
                raise not_found(f"event {event_id}")
            return _bytes(record.encoded(state.shape))

    @router.get("/app/alarms")
    async def alarms() -> Response:
        return read(state.alarms.encoded)

    @router.get("/app/alarms/{alarm_id}")
    async def alarm(alarm_id: int) -> Response:
        with state.lock:
            found = state.alarms.get(alarm_id)
            if found is None:
                raise not_found(f"alarm {alarm_id}")
            return json_response(found.to_rest())

    @router.get("/app/versioning")
    async def versioning() -> Response:
        with state.lock:
            return json_response(dict(fabric.versions.counters))

    @router.get("/app/ufm_version")
    async def ufm_version() -> Response:
        return json_response({"ufm_release_version": state.ufm_version})

    @router.get("/app/unhealthy_ports")
    async def unhealthy_ports() -> Response:
        with state.lock:
            return json_response(state.unhealthy.to_rest())

    @router.get("/app/unhealthy_ports/{name}")
    async def unhealthy_port(name: str) -> Response:
        with state.lock:
            entry = state.unhealthy.get(port_key(name))
            if entry is None:
                raise not_found(f"unhealthy port {name}")
            return json_response(entry.to_rest())

    @router.put("/app/unhealthy_ports")
    async def put_unhealthy(request: Request) -> Response:
        body = await json_body(request)
        apply_unhealthy(state, body)
        return Response(status_code=200)

    return router


def action_routes(state: SimState, prefix: str) -> APIRouter:
    """``POST /actions`` and ``/jobs``; ``prefix`` makes the job's ``Location``."""
    router = strict_router()

    @router.post("/actions")
    async def actions(request: Request) -> Response:
        body = await json_body(request)
        system_guid, port_id, action = _parse_action(body)
        job = state.start_action(action, system_guid, port_id, request.state.user)
        location = str(request.base_url).rstrip("/") + f"{prefix}/jobs/{job.id}"
        # The job in the Location header and in the body: NVIDIA's own job poller (the SDK's
        # utils/job_polling.py) reads ``/jobs/<id>`` from the body text, its other scripts from the header.
        return Response(status_code=202, headers={"Location": location}, content=location,
                        media_type="text/plain")

    @router.get("/jobs")
    async def jobs(status: str | None = None, operation: str | None = None,
                   parent_id: str | None = None) -> Response:
        with state.lock:
            if parent_id is not None:
                parent = state.jobs.get(int(parent_id)) if parent_id.isascii() and parent_id.isdigit() and len(
                    parent_id) < 20 else None
                return json_response([parent.child_rest()] if parent is not None else [])
            found = [j.to_rest() for j in state.jobs.all()]
        return json_response([j for j in found if (status is None or j["Status"] == status)
                      and (operation is None or j["Operation"] == operation)])

    @router.get("/jobs/{job_id}")
    async def job(job_id: str) -> Response:
        with state.lock:
            # isascii: int() reads other scripts' digits, and refuses more than 4300 of them
            found = state.jobs.get(int(job_id)) if job_id.isascii() and job_id.isdigit() and len(job_id) < 20 else None
            if found is None:
                raise not_found(f"job {job_id}")
            return json_response(found.to_rest())

    return router


TELEMETRY_PATH = "/csv/xcset/"
"""Where UFM Telemetry serves its instances' samples (``/csv/xcset/low_freq_debug``)."""


def telemetry_routes(state: SimState) -> APIRouter:
    """``GET /csv/xcset/<instance>``: UFM Telemetry's CSV (:mod:`fabric.simulator.telemetry`), unprefixed and with
    no credentials, as UFM Telemetry answers on the UFM host's loopback (port 9002); another instance is a 404."""
    router = strict_router()

    @router.get(TELEMETRY_PATH + "{instance}")
    async def sample(instance: str) -> Response:
        if instance != state.settings.telemetry.instance:
            raise not_found(f"telemetry instance {instance}")
        return Response(state.telemetry_sample(), media_type="text/csv")

    return router


def _external_event(item: Any, index: int | None) -> tuple[int, str, str | None]:
    """(event id, description, object name) of one external event, or a 400 naming the field."""
    where = "" if index is None else f"item {index}: "
    if not isinstance(item, dict):
        raise HTTPException(400, f"{where}an external event is a JSON object")
    event_id = item.get("event_id")
    if isinstance(event_id, str) and event_id.isascii() and event_id.isdigit() and len(event_id) < 6:
        event_id = int(event_id)
    if not isinstance(event_id, int) or isinstance(event_id, bool) or event_id not in EXTERNAL_EVENTS:
        raise HTTPException(400, f"{where}'event_id' must be one of {list(EXTERNAL_EVENTS)}")
    description = item.get("description")
    if not isinstance(description, str) or not description.strip():
        raise HTTPException(400, f"{where}'description' must be a non-empty string")
    object_name = item.get("object_name")
    if object_name is not None and not isinstance(object_name, str):
        raise HTTPException(400, f"{where}'object_name' must be a string (a node GUID)")
    return event_id, description, object_name


def _parse_action(body: Any) -> tuple[str, str, str]:
    if not isinstance(body, Mapping):
        raise HTTPException(400, "the body must be a JSON object")
    action = body.get("action")
    if action not in PORT_ACTIONS:
        raise HTTPException(400, f"unsupported action {action!r} (the simulator does {', '.join(PORT_ACTIONS)})")
    objects = body.get("object_ids")
    if not isinstance(objects, list) or len(objects) != 1 or not isinstance(objects[0], str):
        raise HTTPException(400, "object_ids must list exactly one system GUID")
    if str(body.get("object_type", "System")) != "System":
        raise HTTPException(400, "object_type must be System")
    params = body.get("params")
    port_id = params.get("port_id") if isinstance(params, Mapping) else None
    if not isinstance(port_id, str) or not port_id.strip():
        raise HTTPException(400, "params.port_id is required for a port action")
    return objects[0].strip().lower().removeprefix("0x"), port_key(port_id), str(action)


def apply_unhealthy(state: SimState, body: Any) -> None:
    """``PUT /app/unhealthy_ports``: all ports are checked before any is changed."""
    if not isinstance(body, Mapping):
        raise HTTPException(400, "the body must be a JSON object")
    policy = str(body.get("ports_policy", "")).upper()
    names = body.get("ports") or []
    devices = body.get("devices") or []
    if not isinstance(names, list) or not isinstance(devices, list):
        raise HTTPException(400, "ports and devices must be lists")
    with state.lock:
        ports = [port_key(str(p)) for p in names]
        unknown = [p for p in ports if p not in state.fabric.ports]
        if unknown:
            raise HTTPException(400, f"unknown ports: {', '.join(unknown)}")
        if policy == "UNHEALTHY":
            action = str(body.get("action", "isolate"))
            if action not in UNHEALTHY_ACTIONS:
                raise HTTPException(400, f"action must be one of {', '.join(UNHEALTHY_ACTIONS)}")
            for port in ports:
                state.unhealthy.asked.append((state.now(), policy, port))
                state.mark_unhealthy(port, action, "MANUAL")
        elif policy == "HEALTHY":
            for device in devices:
                guid = state.fabric.resolve_system(str(device))
                if guid is None:
                    raise HTTPException(400, f"unknown device {device}")
                ports += [p for p in state.unhealthy.names() if state.fabric.names[p].system_guid == guid]
            for port in ports:
                state.unhealthy.asked.append((state.now(), policy, port))
                state.mark_healthy(port)
        else:
            raise HTTPException(400, "ports_policy must be UNHEALTHY or HEALTHY")

