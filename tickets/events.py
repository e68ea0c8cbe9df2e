"""What a ticket system says happened to a ticket, from its webhook payload: a typed ``TicketEvent``. Pure.

Two payloads are understood:

- Jira's own webhooks (Cloud and Data Center): ``webhookEvent`` (``jira:issue_updated`` ...), ``issue.key``,
  ``issue.fields.status.statusCategory.key`` and ``issue.fields.resolution``. An issue is resolved when its
  status is in the ``done`` category or it has a resolution: status names depend on the workflow, the category
  key does not. A deleted issue is closed (nothing was repaired).
- A generic one, for Jira Automation's "send web request", ServiceNow or a script:
  ``{"ticket": "OPS-123", "status": "resolved" | "reopened"}``.

A delivery is identified by the sender's id when it gives one (Jira's ``X-Atlassian-Webhook-Identifier``, the
same across its retries), else by the issue key and changelog id (Data Center), else by a digest of the payload,
so that a repeated delivery is recognised as one. A webhook is only a hint: whoever acts on it reads the ticket
from the backend again, because deliveries repeat, arrive out of order or get lost.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from tickets.base import TicketError, TicketStatus
from topology import strictjson
from topology.strictjson import JsonError

__all__ = ["MAX_BODY_BYTES", "MAX_DELIVERY_CHARS", "MAX_KEY_CHARS", "TicketEvent", "TicketEventError",
           "generic_event", "jira_event", "parse_body"]

MAX_BODY_BYTES = 1 << 20
"""Larger bodies are refused before they are decoded (Jira's payloads are a few KiB)."""
MAX_DELIVERY_CHARS = 200
"""The longest delivery id kept (Jira's identifier is a UUID, a changelog id a number): a longer one is refused."""
MAX_KEY_CHARS = 255
"""The longest ticket key taken (Jira's are a project key, a dash and a number)."""
_DONE = "done"
_GENERIC_STATUS = {"resolved": TicketStatus.RESOLVED, "reopened": TicketStatus.OPEN}


class TicketEventError(TicketError, ValueError):
    """A payload that does not say what happened to which ticket; the message names the field."""


@dataclass(frozen=True, slots=True)
class TicketEvent:
    source: str
    """``jira`` or ``generic``."""
    key: str
    """The ticket system's key: ``OPS-123``."""
    status: TicketStatus
    """The ticket's status as the payload reports it (open, resolved, or closed without a repair)."""
    delivery: str
    """What identifies this delivery among repeats of it."""
    at: datetime | None = None
    """When the ticket system says it happened (Jira's ``timestamp``), if it says."""


def parse_body(raw: bytes) -> Any:
    """A webhook body as JSON (``topology.strictjson``: a key given twice is refused, not resolved);
    ``TicketEventError`` for one that is too large, not UTF-8, not JSON, or JSON no reader should trust."""
    if len(raw) > MAX_BODY_BYTES:
        raise TicketEventError(f"body of {len(raw):,} bytes, more than the {MAX_BODY_BYTES:,} accepted")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise TicketEventError("body is not UTF-8 text") from None
    try:
        return strictjson.loads(text)
    except JsonError as exc:
        raise TicketEventError(f"body: {exc}" if exc.path else f"body is not JSON: {exc}") from None


def _field(document: Any, path: str) -> Any:
    """``document`` at a dotted ``path`` (``None`` when any step is missing); a step into a non-object is an error."""
    here = document
    walked: list[str] = []
    for step in path.split("."):
        if here is None:
            return None
        if not isinstance(here, Mapping):
            raise TicketEventError(f"{'.'.join(walked) or 'body'}: expected an object, got {type(here).__name__}")
        here = here.get(step)
        walked.append(step)
    return here


def _key(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_KEY_CHARS \
            or any(c.isspace() for c in value.strip()):
        raise TicketEventError(f"{where}: expected a ticket key such as OPS-123, got {json.dumps(value)[:60]}")
    return value.strip()


def _digest(payload: Any) -> str:
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()[:32]


def _timestamp(value: Any) -> datetime | None:
    """Jira's ``timestamp``: epoch milliseconds; anything else (or out of range) is left out, not an error."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return datetime.fromtimestamp(value / 1000, UTC)
    except (OverflowError, OSError, ValueError):
        return None


def jira_event(payload: Any, *, delivery: str | None = None) -> TicketEvent:
    """A Jira webhook payload as a ``TicketEvent``; ``delivery``: the ``X-Atlassian-Webhook-Identifier`` header."""
    if not isinstance(payload, Mapping):
        raise TicketEventError(f"body: expected a JSON object, got {type(payload).__name__}")
    event = payload.get("webhookEvent")
    if not isinstance(event, str) or not event.startswith("jira:issue_"):
        raise TicketEventError(f"webhookEvent: expected jira:issue_created, _updated or _deleted, got "
                               f"{json.dumps(event)[:60]}")
    key = _key(_field(payload, "issue.key"), "issue.key")
    category = _field(payload, "issue.fields.status.statusCategory.key")
    resolution = _field(payload, "issue.fields.resolution")
    if event == "jira:issue_deleted":
        status = TicketStatus.CLOSED
    elif category == _DONE or resolution is not None:
        status = TicketStatus.RESOLVED
    else:
        status = TicketStatus.OPEN
    changelog = _field(payload, "changelog.id")  # read with or without the header: a changelog not an object is refused
    if delivery is None:
        if isinstance(changelog, str) and len(changelog) > MAX_DELIVERY_CHARS:
            raise TicketEventError(f"changelog.id: {len(changelog):,} characters, more than the "
                                   f"{MAX_DELIVERY_CHARS} of a delivery id")
        delivery = f"{key}:{changelog}" if isinstance(changelog, str | int) and not isinstance(changelog, bool) \
            else _digest(payload)
    return TicketEvent("jira", key, status, delivery, _timestamp(payload.get("timestamp")))


def generic_event(payload: Any, *, delivery: str | None = None) -> TicketEvent:
    """``{"ticket": KEY, "status": "resolved" | "reopened"}`` as a ``TicketEvent``."""
    if not isinstance(payload, Mapping):
        raise TicketEventError(f"body: expected a JSON object, got {type(payload).__name__}")
    key = _key(payload.get("ticket"), "ticket")
    said = payload.get("status")
    status = _GENERIC_STATUS.get(said.strip().casefold()) if isinstance(said, str) else None
    if status is None:
        raise TicketEventError(f"status: expected \"resolved\" or \"reopened\", got {json.dumps(said)[:60]}")
    return TicketEvent("generic", key, status, delivery or _digest(payload))
