"""Async client for UFM's REST API.

Only a base URL and an auth config are needed (``UfmClient("https://ufm.example", BasicAuth(...))``);
every path is built from the REST prefix the auth method implies (see :mod:`fabric.ufm.auth`).

Guarantees:
- reads (GET) are retried with exponential backoff on transport failures, timeouts, 429 and 5xx;
  writes (POST/PUT) are never retried (a 401 answered to a session request is the one exception: the
  request was refused, not performed, so it is re-sent once after logging in again) — see
  :mod:`fabric.ufm.http`;
- a response that is not what the API promises raises a :mod:`fabric.ufm.errors` error; no caller
  ever gets partial data;
- a port write (a disable or enable posted as a UFM job, a port marked unhealthy or healthy) is handed to
  UFM and returned without being confirmed: the caller settles it by reading UFM
  (``fabric.controller.writes``), so that no call waits on a job or a subnet manager's sweep.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, tzinfo
from enum import StrEnum
from pathlib import Path
from types import TracebackType
from typing import Any, Self, TypeVar
from urllib.parse import quote

import httpx

from fabric.ufm.address import DEFAULT_TIMEOUT_S
from fabric.ufm.appended import EventListMemory
from fabric.ufm.auth import UfmAuth
from fabric.ufm.cursor import CursorState, Lookback, drop_handed_over, needed_to_warm
from fabric.ufm.errors import (
    UfmError,
    UfmJobFailedError,
    UfmJobTimeoutError,
    UfmMalformedResponseError,
    UfmNotFoundError,
    UfmOutcomeUnknownError,
    UfmTransportError,
)
from fabric.ufm.http import RetryPolicy, SleepFn, UfmHttp
from fabric.ufm.models import (
    Alarm,
    Event,
    Job,
    JobStatus,
    Link,
    Port,
    ShapeError,
    System,
    UfmModel,
    UnhealthyPort,
    Versioning,
    parse_list,
    parse_one,
    unwrap_list,
)
from fabric.ufm.objects import PortEnd
from fabric.ufm.spooled import SpooledList, body_start
from topology import strictjson
from topology.jsonlist import list_items
from topology.strictjson import JsonError

__all__ = [
    "JobPollPolicy",
    "PortActionMethod",
    "PostedAction",
    "RetryPolicy",
    "UfmClient",
]

log = logging.getLogger(__name__)

M = TypeVar("M", bound=UfmModel)
ClockFn = Callable[[], float]

EXTERNAL_INFO = 551
"""UFM's "General External Event Notification" (Info): what this service reports its actions as."""
PORT_ACTIONS = ("disable", "enable", "reset")
"""What ``POST /actions`` does to one port here (``params.port_id``)."""
TOPOLOGY_MODELS: dict[str, type[UfmModel]] = {"systems": System, "links": Link, "ports": Port}
"""UFM's topology lists (``/resources/<name>``) and what each element is."""
_JOB_REF_RE = re.compile(r"(?:^|/)jobs/([A-Za-z0-9_.-]+)")


class PortActionMethod(StrEnum):
    """How a port is taken out of service (the choice is site configuration, ``[ufm] method``).

    ``DISABLE``: ``POST /actions`` disable/enable, a UFM job; the port's ``physical_state`` becomes
    ``Disabled``.  Persistent across switch reboots.
    ``ISOLATE``: ``PUT /app/unhealthy_ports`` UNHEALTHY (action isolate) / HEALTHY, synchronous: UFM lists the
    port at once, and OpenSM applies it at its next sweep (the link stays up, no data crosses it).
    """

    DISABLE = "disable"
    ISOLATE = "isolate"


@dataclass(frozen=True, slots=True)
class JobPollPolicy:
    """How a UFM job is awaited: poll every ``interval`` seconds, give up after ``deadline``."""

    interval: float = 3.0
    deadline: float = 300.0


@dataclass(frozen=True, slots=True)
class PostedAction:
    """A port write handed to UFM and not yet confirmed: an action of ``POST /actions`` (``disable``, ``enable``,
    ``reset``), or a change of ``PUT /app/unhealthy_ports`` (``isolate``, ``restore``)."""

    port_name: str
    action: str
    port: Port
    """The port as read just before."""
    job_id: str | None
    """UFM's job; ``None`` for an unhealthy-ports change (UFM answers it at once, no job) or when nothing was
    sent."""
    sent: bool = True
    """False when nothing was sent, UFM showing the port in the wanted state already."""


def _running(job: Job | UfmError) -> bool:
    return isinstance(job, Job) and job.in_progress


def _port_name_of(name: str) -> str:
    return PortEnd.parse(name).name


class UfmClient:
    """Async UFM REST client.  Use as ``async with UfmClient(...) as ufm:``.

    ``transport`` replaces the network (tests, simulators); ``sleep`` and ``clock`` replace waiting
    and the monotonic clock so tests never really wait.  ``server_tz`` is the zone UFM's zone-less
    timestamps are read in (UTC unless configured).
    """

    def __init__(
        self,
        base_url: str,
        auth: UfmAuth,
        *,
        verify: bool = True,
        ca_bundle: str | Path | None = None,
        timeout: float | httpx.Timeout = DEFAULT_TIMEOUT_S,
        retry: RetryPolicy | None = None,
        job_poll: JobPollPolicy | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: SleepFn | None = None,
        clock: ClockFn | None = None,
        server_tz: tzinfo = UTC,
    ) -> None:
        self._http = UfmHttp(
            base_url,
            auth,
            verify=verify,
            ca_bundle=ca_bundle,
            timeout=timeout,
            retry=retry,
            transport=transport,
            sleep=sleep,
        )
        self.base_url = self._http.base_url
        self.retry = self._http.retry
        self.job_poll = job_poll or JobPollPolicy()
        self._sleep: SleepFn = sleep or asyncio.sleep
        self._clock: ClockFn = clock or time.monotonic
        self._tz = server_tz
        self._answered = EventListMemory(server_tz)

    # ---------------------------------------------------------------------------------- lifecycle

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    @property
    def prefix(self) -> str:
        """The REST prefix in use: ``/ufmRest``, ``/ufmRestV2`` or ``/ufmRestV3``."""
        return self._http.prefix

    # ---------------------------------------------------------------------------------- reads

    async def systems(self, type: str | None = None) -> list[System]:
        """``GET /resources/systems`` (``type`` e.g. ``"switch"``)."""
        return await self._get_list("/resources/systems", System, {"type": type} if type else None)

    async def ports(self, system: str | None = None) -> list[Port]:
        """``GET /resources/ports``, optionally only the ports of one system GUID."""
        return await self._get_list("/resources/ports", Port, {"system": system} if system else None)

    async def running_jobs(self) -> list[Job]:
        """``GET /jobs?status=Running``: the jobs UFM is running now (a filter UFM documents)."""
        return await self._get_list("/jobs", Job, {"status": JobStatus.RUNNING.value})

    async def port(self, name: str) -> Port:
        """``GET /resources/ports/<name>``.  UFM answers with a list; its element 0 is the port."""
        wanted = _port_name_of(name)
        path = f"/resources/ports/{quote(wanted, safe='')}"
        payload, status = await self._http.get_json(path)
        try:
            if isinstance(payload, Mapping) and "data" not in payload:
                port = parse_one(Port, payload, tz=self._tz)
            else:
                items = unwrap_list(payload)
                if not items:
                    raise UfmNotFoundError(
                        f"UFM has no port {wanted}", method="GET", path=self._http.prefix + path, body="[]"
                    )
                port = parse_list(Port, items[:1], tz=self._tz)[0]
        except ShapeError as exc:
            raise self._http.malformed("GET", path, status, payload, exc) from exc
        if port.end is None or port.end.name != wanted:
            raise UfmMalformedResponseError(
                f"asked for port {wanted}, UFM answered with port {port.name!r}",
                method="GET",
                path=self._http.prefix + path,
            )
        return port

    async def links(self) -> list[Link]:
        """``GET /resources/links``."""
        return await self._get_list("/resources/links", Link)

    async def topology_list(self, name: str) -> SpooledList:
        """``GET /resources/<name>``, one of ``systems``, ``links`` and ``ports``, its body in a temporary file (the
        caller closes it) to be read an element at a time: what start-up reads of a fabric of any size."""
        model = TOPOLOGY_MODELS[name]
        path = f"/resources/{name}"
        body, status = await self._http.get_spooled(path)
        return SpooledList(body, model, path, status, self._http, self._tz)

    async def events(self, *, handed_over: CursorState | None = None, lookback: Lookback | None = None,
                     **filters: str) -> list[Event]:
        """``GET /app/events`` (documented filters: object_name, type, category, severity, group).
        ``handed_over``: a cursor's state; the events it would not return are dropped before validation
        (``cursor.drop_handed_over``). ``lookback``: besides those, the past that warms the detectors
        (``cursor.needed_to_warm``; with no ``handed_over``, for a cursor to be primed on the list)."""
        keep: Callable[[Iterable[Any]], Iterable[Any]] | None = None
        if lookback is not None:
            keep = lambda items: needed_to_warm(items, handed_over, lookback, self._tz)  # noqa: E731
        elif handed_over is not None:
            keep = lambda items: drop_handed_over(items, handed_over, self._tz)  # noqa: E731
        if filters:
            return await self._get_list("/app/events", Event, dict(filters), keep=keep)
        # The whole history, spooled to a file as it arrives: what the last answer held already is not decoded
        # again, and the answer is never held whole (``ufm.appended``); a reading that keeps more than the
        # cursor's filter is decoded whole.
        path = "/app/events"
        body, status = await self._http.get_spooled(path)
        with body:
            try:
                elements = self._answered.elements(body, handed_over if lookback is None else None)
                events = parse_list(Event, elements, tz=self._tz, keep=keep)
            except ShapeError as exc:
                raise self._http.malformed("GET", path, status, body_start(body), exc) from exc
            except JsonError as exc:
                raise self._http.not_json("GET", path, status, body_start(body), None, exc) from exc
        self._answered.settle()
        return events

    async def alarms(self) -> list[Alarm]:
        """``GET /app/alarms``."""
        return await self._get_list("/app/alarms", Alarm)

    async def unhealthy_ports(self) -> list[UnhealthyPort]:
        """``GET /app/unhealthy_ports``."""
        return await self._get_list("/app/unhealthy_ports", UnhealthyPort)

    async def versioning(self) -> Versioning:
        """``GET /app/versioning``: change counters, for cheap change detection."""
        path = "/app/versioning"
        payload, status = await self._http.get_json(path)
        try:
            return parse_one(Versioning, payload, tz=self._tz)
        except ShapeError as exc:
            raise self._http.malformed("GET", path, status, payload, exc) from exc

    async def job(self, job_id: str) -> Job:
        """``GET /jobs/<id>`` (an object, or a list holding it; an empty list means no such job)."""
        job_id = str(job_id)
        path = f"/jobs/{quote(job_id, safe='')}"
        payload, status = await self._http.get_json(path)
        try:
            if isinstance(payload, list) or (isinstance(payload, Mapping) and "data" in payload):
                items = unwrap_list(payload)
                if not items:
                    raise UfmNotFoundError(
                        f"UFM has no job {job_id}", method="GET", path=self._http.prefix + path, body="[]"
                    )
                jobs = parse_list(Job, items, tz=self._tz)
                job = next((j for j in jobs if job_id == j.ID), jobs[0])
            else:
                job = parse_one(Job, payload, tz=self._tz)
        except ShapeError as exc:
            raise self._http.malformed("GET", path, status, payload, exc) from exc
        if job.ID is None:
            job = job.model_copy(update={"ID": job_id})
        return job

    # ---------------------------------------------------------------------------------- actions

    async def take_out(self, port_name: str, method: PortActionMethod) -> PostedAction:
        """Take a port out of service by ``method`` without waiting: its disable posted (a job), or the port marked
        unhealthy with action isolate (synchronous; OpenSM isolates it at its next sweep)."""
        if method is PortActionMethod.DISABLE:
            return await self.post_port_action(port_name, "disable")
        return await self._put_unhealthy(port_name, unhealthy=True)

    async def put_back(self, port_name: str, method: PortActionMethod) -> PostedAction:
        """Undo :meth:`take_out` by ``method``, without waiting: the port's enable posted, or the port marked
        healthy."""
        if method is PortActionMethod.DISABLE:
            return await self.post_port_action(port_name, "enable")
        return await self._put_unhealthy(port_name, unhealthy=False)

    async def wait_for_job(self, job_id: str) -> Job:
        """Poll a job until it is no longer running; raise unless it succeeded.

        "Completed" and "Completed With Warnings" succeed; "Completed With Errors", "Aborted" and any
        undocumented final status raise :class:`UfmJobFailedError`; still running at the deadline
        raises :class:`UfmJobTimeoutError`.
        """
        start = self._clock()
        slept = 0.0
        path = f"{self._http.prefix}/jobs/{job_id}"
        while True:
            job = await self.job(job_id)
            if not job.in_progress:
                break
            # Slept time counts too, so an injected no-op sleep still reaches the deadline.
            if max(self._clock() - start, slept) >= self.job_poll.deadline:
                raise UfmJobTimeoutError(
                    f"UFM job {job_id} still {job.Status!r} (progress {job.Progress}) after "
                    f"{self.job_poll.deadline:g}s",
                    job=job,
                    method="GET",
                    path=path,
                )
            await self._sleep(self.job_poll.interval)
            slept += self.job_poll.interval
        if job.failed:
            raise UfmJobFailedError(
                f"UFM job {job_id} ended {job.Status!r}: {job.Summary!r}", job=job, method="GET", path=path
            )
        if job.status is JobStatus.COMPLETED_WITH_WARNINGS:
            log.warning(
                "UFM job completed with warnings",
                extra={"ufm_job_id": job_id, "ufm_job_summary": str(job.Summary)[:500]},
            )
        return job

    async def post_port_action(self, port_name: str, action: str) -> PostedAction:
        """Read the port and, unless it is already in the wanted state, ``POST /actions`` its ``disable``,
        ``enable`` or ``reset`` (always sent); returns as soon as UFM names the job, without waiting for it
        (:meth:`await_jobs`).

        A POST that gets no usable answer (timeout, connection lost) raises :class:`UfmOutcomeUnknownError`: UFM
        may be carrying it out, so the caller settles it by reading the port, never by posting it again.
        """
        if action not in PORT_ACTIONS:
            raise ValueError(f"a port action is one of {', '.join(PORT_ACTIONS)}, not {action!r}")
        name = _port_name_of(port_name)
        port = await self.port(name)
        system_guid = port.system_guid
        if system_guid is None:
            raise UfmMalformedResponseError(
                f"port {name} has no systemID, cannot address the {action} action to its system",
                method="GET",
                path=f"{self._http.prefix}/resources/ports/{name}",
            )
        if action != "reset" and port.is_disabled == (action == "disable"):
            log.info(
                "UFM port already in wanted state, nothing sent",
                extra={"ufm_action": action, "ufm_port": name, "physical_state": port.physical_state},
            )
            return PostedAction(name, action, port, None, sent=False)
        body = {
            "action": action,
            "object_ids": [system_guid],
            "object_type": "System",
            "identifier": "id",
            "params": {"port_id": name},
            "description": "",
        }
        log.info("UFM port action requested", extra={"ufm_action": action, "ufm_port": name})
        response = await self._write("POST", "/actions", body, f"{action} of port {name}")
        job_id = self._job_id(response, "/actions")
        log.info("UFM port action accepted", extra={"ufm_action": action, "ufm_port": name, "ufm_job_id": job_id})
        return PostedAction(name, action, port, job_id)

    async def external_event(self, description: str, *, object_name: str | None = None, otype: str = "Switch",
                             event_id: int = EXTERNAL_INFO) -> None:
        """``POST /app/events/external_event``: a line in UFM's own event log, as UFM's plugins (PDR, SNMP) put
        their actions there, so that operators who watch UFM see what this service did."""
        body: dict[str, Any] = {"event_id": event_id, "description": description, "otype": otype,
                                "external_event_source": "fabric-remediation"}
        if object_name is not None:
            body["object_name"] = object_name
        await self._http.request("POST", "/app/events/external_event", json_body=body)

    async def await_jobs(self, job_ids: Sequence[str], within: float) -> dict[str, Job | UfmError]:
        """The latest status of each job, polled every ``job_poll.interval`` seconds until none is running or
        ``within`` seconds have passed (0: each is read once).

        A job that cannot be read maps to the error and is not read again (:class:`UfmNotFoundError`: UFM has
        no such job, as after a restart of UFM).  Nothing is raised for a job that failed or still runs: the
        caller judges the outcome.
        """
        seen: dict[str, Job | UfmError] = {}
        running = list(dict.fromkeys(str(j) for j in job_ids))
        start = self._clock()
        slept = 0.0
        while True:
            for job_id in running:
                try:
                    seen[job_id] = await self.job(job_id)
                except UfmError as exc:
                    seen[job_id] = exc
            running = [j for j in running if _running(seen[j])]
            # Slept time counts too, as in ``wait_for_job``.
            if not running or max(self._clock() - start, slept) + self.job_poll.interval > within:
                return seen
            await self._sleep(self.job_poll.interval)
            slept += self.job_poll.interval

    # ---------------------------------------------------------------------------------- action internals

    async def _put_unhealthy(self, port_name: str, *, unhealthy: bool) -> PostedAction:
        """``PUT /app/unhealthy_ports``: the port marked UNHEALTHY with action isolate, or HEALTHY. The port is read
        first, as before a ``POST /actions``: an unknown port is refused before anything is sent, and the caller
        learns its system (where UFM's event log files the note of the write)."""
        name = _port_name_of(port_name)
        port = await self.port(name)
        action = "isolate" if unhealthy else "restore"
        body: dict[str, Any] = ({"ports": [name], "ports_policy": "UNHEALTHY", "action": "isolate"} if unhealthy
                                else {"ports": [name], "ports_policy": "HEALTHY"})
        log.info("UFM unhealthy-ports change requested", extra={"ufm_action": action, "ufm_port": name})
        await self._write("PUT", "/app/unhealthy_ports", body, f"{action} of port {name}")
        return PostedAction(name, action, port, None)

    async def _write(self, method: str, path: str, body: dict[str, Any], what: str) -> httpx.Response:
        """One write, never retried. One that gets no usable answer (timeout, connection lost) raises
        :class:`UfmOutcomeUnknownError`: UFM may have carried it out."""
        try:
            return await self._http.request(method, path, json_body=body)
        except UfmTransportError as exc:
            if exc.path != self._http.display_path(path):
                raise  # the session login before it failed: nothing was sent
            raise UfmOutcomeUnknownError(f"{what}: {exc.summary}", method=method, path=exc.path) from exc

    def _job_id(self, response: httpx.Response, path: str) -> str:
        location = response.headers.get("Location")
        if location:
            try:
                location_path = httpx.URL(location).path
            except httpx.InvalidURL:
                location_path = location
            match = _JOB_REF_RE.search(location_path)
            if match:
                return match.group(1)
        text = response.content.decode("utf-8", errors="replace")
        match = _JOB_REF_RE.search(text)
        if match:
            return match.group(1)
        try:
            payload = strictjson.loads(text) if text.strip() else None
        except JsonError:
            payload = None
        if isinstance(payload, Mapping):
            for key in ("job_id", "jobId", "ID", "id"):
                value = payload.get(key)
                if isinstance(value, int | str) and not isinstance(value, bool) and str(value).strip():
                    return str(value).strip()
        raise UfmMalformedResponseError(
            "UFM accepted the action but named no job (no Location '/jobs/<id>', no job id in the body)",
            method="POST",
            path=self._http.prefix + path,
            status_code=response.status_code,
            body=response.content,
        )

    # ---------------------------------------------------------------------------------- helpers

    async def _get_list(self, path: str, model: type[M], params: Mapping[str, str] | None = None,
                        keep: Callable[[Iterable[Any]], Iterable[Any]] | None = None) -> list[M]:
        """The list's elements decoded a piece at a time; ``keep``: as ``parse_list``'s."""
        body, status = await self._http.get_body(path, params)
        try:
            return parse_list(model, list_items(body), tz=self._tz, keep=keep)
        except ShapeError as exc:
            raise self._http.malformed("GET", path, status, body, exc, params) from exc
        except JsonError as exc:
            raise self._http.not_json("GET", path, status, body, params, exc) from exc
