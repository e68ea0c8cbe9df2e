"""NVIDIA UFM: async REST client, payload models, event cursor and ``event.log`` parser.

The names below load on first use (PEP 562): a module that needs only the models or the object-path parser
(the pure remediation core does) does not pull in httpx and the client by importing this package.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fabric.ufm.auth import BasicAuth, NoAuth, SessionAuth, TokenAuth, UfmAuth
    from fabric.ufm.client import (
        JobPollPolicy,
        PortActionMethod,
        RetryPolicy,
        UfmClient,
    )
    from fabric.ufm.cursor import CursorState, EventCursor
    from fabric.ufm.errors import (
        UfmAuthError,
        UfmError,
        UfmHttpStatusError,
        UfmJobError,
        UfmJobFailedError,
        UfmJobTimeoutError,
        UfmMalformedResponseError,
        UfmNotFoundError,
        UfmOutcomeUnknownError,
        UfmResponseTooLargeError,
        UfmServerError,
        UfmTimeoutError,
        UfmTransportError,
    )
    from fabric.ufm.eventlog import EventLogStats, MalformedLine, iter_event_log, parse_event_line
    from fabric.ufm.models import (
        Alarm,
        Event,
        Job,
        JobStatus,
        Link,
        Port,
        System,
        UnhealthyPort,
        Versioning,
        parse_list,
        unwrap_list,
    )
    from fabric.ufm.objects import ObjectRef, PortEnd, parse_object_path
    from fabric.ufm.telemetry import TelemetryClient

_HOMES: dict[str, str] = {
    "Alarm": "fabric.ufm.models",
    "BasicAuth": "fabric.ufm.auth",
    "CursorState": "fabric.ufm.cursor",
    "Event": "fabric.ufm.models",
    "EventCursor": "fabric.ufm.cursor",
    "EventLogStats": "fabric.ufm.eventlog",
    "Job": "fabric.ufm.models",
    "JobPollPolicy": "fabric.ufm.client",
    "JobStatus": "fabric.ufm.models",
    "Link": "fabric.ufm.models",
    "MalformedLine": "fabric.ufm.eventlog",
    "NoAuth": "fabric.ufm.auth",
    "ObjectRef": "fabric.ufm.objects",
    "Port": "fabric.ufm.models",
    "PortActionMethod": "fabric.ufm.client",
    "PortEnd": "fabric.ufm.objects",
    "RetryPolicy": "fabric.ufm.client",
    "SessionAuth": "fabric.ufm.auth",
    "System": "fabric.ufm.models",
    "TelemetryClient": "fabric.ufm.telemetry",
    "TokenAuth": "fabric.ufm.auth",
    "UfmAuth": "fabric.ufm.auth",
    "UfmAuthError": "fabric.ufm.errors",
    "UfmClient": "fabric.ufm.client",
    "UfmError": "fabric.ufm.errors",
    "UfmHttpStatusError": "fabric.ufm.errors",
    "UfmJobError": "fabric.ufm.errors",
    "UfmJobFailedError": "fabric.ufm.errors",
    "UfmJobTimeoutError": "fabric.ufm.errors",
    "UfmMalformedResponseError": "fabric.ufm.errors",
    "UfmNotFoundError": "fabric.ufm.errors",
    "UfmOutcomeUnknownError": "fabric.ufm.errors",
    "UfmResponseTooLargeError": "fabric.ufm.errors",
    "UfmServerError": "fabric.ufm.errors",
    "UfmTimeoutError": "fabric.ufm.errors",
    "UfmTransportError": "fabric.ufm.errors",
    "UnhealthyPort": "fabric.ufm.models",
    "Versioning": "fabric.ufm.models",
    "iter_event_log": "fabric.ufm.eventlog",
    "parse_event_line": "fabric.ufm.eventlog",
    "parse_list": "fabric.ufm.models",
    "parse_object_path": "fabric.ufm.objects",
    "unwrap_list": "fabric.ufm.models",
}

__all__ = [
    "Alarm",
    "BasicAuth",
    "CursorState",
    "Event",
    "EventCursor",
    "EventLogStats",
    "Job",
    "JobPollPolicy",
    "JobStatus",
    "Link",
    "MalformedLine",
    "NoAuth",
    "ObjectRef",
    "Port",
    "PortActionMethod",
    "PortEnd",
    "RetryPolicy",
    "SessionAuth",
    "System",
    "TelemetryClient",
    "TokenAuth",
    "UfmAuth",
    "UfmAuthError",
    "UfmClient",
    "UfmError",
    "UfmHttpStatusError",
    "UfmJobError",
    "UfmJobFailedError",
    "UfmJobTimeoutError",
    "UfmMalformedResponseError",
    "UfmNotFoundError",
    "UfmOutcomeUnknownError",
    "UfmResponseTooLargeError",
    "UfmServerError",
    "UfmTimeoutError",
    "UfmTransportError",
    "UnhealthyPort",
    "Versioning",
    "iter_event_log",
    "parse_event_line",
    "parse_list",
    "parse_object_path",
    "unwrap_list",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
