"""The ticket webhook receiver: ``POST /webhooks/jira`` and ``POST /webhooks/generic``.

A delivery is checked (size, signature or token, payload), stored (``Store.record_delivery``) and answered at
once; nothing else happens in the request. The engine processes stored deliveries at its next cycle
(``fabric.controller.deliveries``), reading each ticket from the backend again: a webhook is only a hint.

Answers: 202 ``accepted`` (stored), 200 ``duplicate`` (this delivery was stored already: a retry or a replay
changes nothing), 202 ``ignored`` (not a ticket of this fabric), 400 a payload that says nothing usable (the
detail names the field), 401 a missing or wrong signature or token, 413 a body over ``MAX_BODY_BYTES`` (refused
while it is read, not after).

A delivery is committed before it is answered. The deliveries that arrive while one commit is under way are
stored together in the next transaction (``_Deliveries``: a group commit), so that a burst costs one ``fsync`` per
commit rather than one per delivery, and the store is only ever written from one worker thread at a time, never
on the event loop. Each outcome, refusals included, is counted through ``count_deliveries`` (the daemon's
Prometheus counter).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from fastapi import APIRouter, FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, SecretStr

from fabric.api.context import ApiContext
from fabric.config import ConfigError
from fabric.controller.deliveries import delivery_payload
from fabric.jsonbody import strict_router
from fabric.store import NewDelivery, Store
from tickets.events import (
    MAX_BODY_BYTES,
    MAX_DELIVERY_CHARS,
    MAX_KEY_CHARS,
    TicketEvent,
    TicketEventError,
    generic_event,
    jira_event,
    parse_body,
)
from topology.numerals import whole_number

__all__ = ["DeliveryAnswer", "DeliveryCounter", "Outcome", "Refusal", "count_deliveries", "webhook_router"]

log = logging.getLogger(__name__)

SIGNATURE_HEADER = "X-Hub-Signature"
"""Jira's HMAC-SHA256 of the raw body with the webhook's secret: ``sha256=<hex>``."""
IDENTIFIER_HEADER = "X-Atlassian-Webhook-Identifier"
"""Jira's delivery id, the same across its retries of one delivery."""


class Outcome(StrEnum):
    ACCEPTED = "accepted"
    DUPLICATE = "duplicate"
    IGNORED = "ignored"


class Refusal(StrEnum):
    """Why a delivery was refused (the label of its count; the answer's detail says more)."""

    UNSIGNED = "unsigned"
    """No signature (Jira) or no bearer token (generic)."""
    BAD_SIGNATURE = "bad_signature"
    """A signature or token that does not match."""
    TOO_LARGE = "too_large"
    MALFORMED = "malformed"
    UNAVAILABLE = "unavailable"
    """The secret or token file cannot be read, or the database refused the delivery."""


_STATUS = {Outcome.ACCEPTED: 202, Outcome.DUPLICATE: 200, Outcome.IGNORED: 202}

DeliveryCounter = Callable[[str, str], None]
"""Told ``(source, outcome)`` once per delivery: an ``Outcome`` or a ``Refusal`` value."""


def count_deliveries(app: FastAPI, counter: DeliveryCounter) -> None:
    """Have the webhook endpoints of ``app`` report each delivery's outcome to ``counter``."""
    app.state.delivery_counter = counter


class _Refused(HTTPException):
    def __init__(self, refusal: Refusal, status: int, detail: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(status, detail, headers)
        self.refusal = refusal


class DeliveryAnswer(BaseModel):
    outcome: Outcome
    ticket: str
    delivery: str
    """What identifies the delivery among its repeats."""


def webhook_router() -> APIRouter:
    """The two webhook endpoints; they read the service's ``ApiContext`` from ``request.app.state.context``."""
    router = strict_router(tags=["webhooks"])
    deliveries = _Deliveries()
    answers: dict[int | str, dict[str, Any]] = {
        200: {"model": DeliveryAnswer, "description": "a repeat of a delivery stored already: nothing changes"},
        202: {"model": DeliveryAnswer, "description": "stored for the engine's next cycle, or ignored (not a "
                                                      "ticket of this fabric)"},
        400: {"description": "the body is not JSON or does not say which ticket and what happened to it"},
        401: {"description": "no signature or token, or a wrong one"},
        413: {"description": f"a body over {MAX_BODY_BYTES:,} bytes"},
        503: {"description": "the webhook's secret or token file cannot be read"},
    }

    @router.post("/webhooks/jira", summary="A Jira webhook", responses=answers, response_model=DeliveryAnswer,
                 openapi_extra=_body_schema(_JIRA_BODY, _IDENTIFIER))
    async def jira(request: Request) -> JSONResponse:
        """A Jira webhook (Cloud or Data Center). When ``[tickets] webhook_secret`` is set, ``X-Hub-Signature:
        sha256=<hex>`` must be the HMAC-SHA256 of the raw body with it."""
        context = _context(request)
        with _counted(request, "jira"):
            raw = await _body(request)
            secret = _secret(context.config.tickets.webhook_secret)
            if secret is not None:
                _check_signature(raw, request.headers.get(SIGNATURE_HEADER), secret)
            event = _event(jira_event, raw, request.headers.get(IDENTIFIER_HEADER))
            return await _store(request, deliveries, context, event)

    @router.post("/webhooks/generic", summary="A ticket's new status, from any sender", responses=answers,
                 response_model=DeliveryAnswer,
                 openapi_extra=_body_schema(_GENERIC_BODY))
    async def generic(request: Request) -> JSONResponse:
        """``{"ticket": KEY, "status": "resolved" | "reopened"}`` with ``Authorization: Bearer <[tickets]
        webhook_token>`` (Jira Automation's "send web request", ServiceNow, scripts)."""
        context = _context(request)
        with _counted(request, "generic"):
            _check_token(request.headers.get("Authorization"), _secret(context.config.tickets.webhook_token))
            event = _event(generic_event, await _body(request), None)
            return await _store(request, deliveries, context, event)

    return router


# The bodies are read raw (the signature is over the bytes), so their schemas are given to OpenAPI by hand.
_KEY: dict[str, Any] = {"type": "string", "pattern": r"^\s*\S+\s*$", "maxLength": MAX_KEY_CHARS, "example": "OPS-123"}
"""A ticket key as ``tickets.events`` takes it: no space inside."""
_JIRA_BODY: dict[str, Any] = {
    "type": "object", "required": ["webhookEvent", "issue"],
    "description": "Jira's webhook body; read: webhookEvent, issue.key, issue.fields.status.statusCategory.key, "
                   "issue.fields.resolution, changelog.id, timestamp",
    "properties": {"webhookEvent": {"type": "string", "pattern": "^jira:issue_", "example": "jira:issue_updated"},
                   "issue": {"type": "object", "required": ["key"], "properties": {"key": _KEY}},
                   "changelog": {"type": ["object", "null"]},
                   "timestamp": {"description": "Epoch milliseconds; anything else is ignored, not refused."}},
}
_GENERIC_BODY: dict[str, Any] = {
    "type": "object", "required": ["ticket", "status"],
    "properties": {"ticket": _KEY,
                   "status": {"type": "string", "enum": ["resolved", "reopened"]}},
}


_IDENTIFIER: dict[str, Any] = {
    "name": IDENTIFIER_HEADER, "in": "header", "required": False,
    "description": "The sender's id of the delivery, the same across its retries (stored: a repeat is a duplicate)",
    "schema": {"type": "string", "maxLength": MAX_DELIVERY_CHARS},
}


def _body_schema(schema: dict[str, Any], *headers: dict[str, Any]) -> dict[str, Any]:
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}},
            **({"parameters": list(headers)} if headers else {})}


def _context(request: Request) -> ApiContext:
    context: ApiContext = request.app.state.context
    return context


def _count(request: Request, source: str, outcome: str) -> None:
    counter: DeliveryCounter | None = getattr(request.app.state, "delivery_counter", None)
    if counter is not None:
        counter(source, outcome)


@contextlib.contextmanager
def _counted(request: Request, source: str) -> Iterator[None]:
    """Count the refusal raised in the block (the stored outcomes are counted by ``_store``)."""
    try:
        yield
    except _Refused as refused:
        _count(request, source, refused.refusal.value)
        raise


async def _body(request: Request) -> bytes:
    """The raw body, refused (413) as soon as it is known to exceed ``MAX_BODY_BYTES``: from its declared length,
    else while it is read, so an endless body is never held in memory."""
    declared = whole_number(request.headers.get("Content-Length", ""))
    if declared is not None and declared > MAX_BODY_BYTES:
        raise _too_large()
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise _too_large()
        chunks.append(chunk)
    return b"".join(chunks)


def _too_large() -> HTTPException:
    return _Refused(Refusal.TOO_LARGE, 413, f"body larger than the {MAX_BODY_BYTES:,} bytes accepted")


def _secret(read: Callable[[], SecretStr | None]) -> bytes | None:
    try:
        secret = read()
    except ConfigError as exc:  # a secret file gone or emptied since the service started
        log.error("webhook refused: %s", exc)
        raise _Refused(Refusal.UNAVAILABLE, 503, "the webhook's secret cannot be read: see the service's log") from None
    return None if secret is None else secret.get_secret_value().encode()


def _check_signature(raw: bytes, header: str | None, secret: bytes) -> None:
    method, _, given = (header or "").partition("=")
    expected = hmac.new(secret, raw, hashlib.sha256).hexdigest().encode()
    if method.strip().lower() != "sha256" or not hmac.compare_digest(expected, given.strip().lower().encode(
            "latin-1", "replace")):
        log.warning("webhook /webhooks/jira refused: %s", "a wrong signature" if header else "no signature")
        raise _Refused(Refusal.BAD_SIGNATURE if header else Refusal.UNSIGNED, 401,
                       f"{SIGNATURE_HEADER}: {'wrong' if header else 'missing'} signature "
                       "(sha256=<HMAC-SHA256 of the body>)")


def _check_token(header: str | None, token: bytes | None) -> None:
    scheme, _, given = (header or "").partition(" ")
    if token is None:
        raise _Refused(Refusal.UNAVAILABLE, 401, "no webhook token is configured: [tickets] webhook_token_file or "
                       "FABRIC_TICKETS__WEBHOOK_TOKEN", headers={"WWW-Authenticate": "Bearer"})
    if scheme.lower() != "bearer" or not hmac.compare_digest(token, given.strip().encode("latin-1", "replace")):
        log.warning("webhook /webhooks/generic refused: %s", "a wrong token" if header else "no token")
        raise _Refused(Refusal.BAD_SIGNATURE if header else Refusal.UNSIGNED, 401,
                       f"Authorization: {'wrong' if header else 'missing'} bearer token",
                       headers={"WWW-Authenticate": "Bearer"})


def _event(parse: Callable[..., TicketEvent], raw: bytes, delivery: str | None) -> TicketEvent:
    delivery = delivery.strip() if delivery and delivery.strip() else None
    if delivery is not None and len(delivery) > MAX_DELIVERY_CHARS:  # it is stored: bounded like every stored text
        raise _Refused(Refusal.MALFORMED, 400, f"{IDENTIFIER_HEADER}: {len(delivery):,} characters, more than the "
                                               f"{MAX_DELIVERY_CHARS} of a delivery id")
    try:
        return parse(parse_body(raw), delivery=delivery)
    except TicketEventError as exc:
        raise _Refused(Refusal.MALFORMED, 400, str(exc)) from None


async def _store(request: Request, deliveries: _Deliveries, context: ApiContext, event: TicketEvent) -> JSONResponse:
    try:
        outcome = await deliveries.record(context.store, context.config.tickets.backend, event)
    except Exception:
        _count(request, event.source, Refusal.UNAVAILABLE.value)
        raise
    _count(request, event.source, outcome.value)
    if outcome is Outcome.ACCEPTED:
        context.runtime.wake()
    log.info("webhook %s delivery %s for ticket %s (%s): %s", event.source, event.delivery, event.key,
             event.status.value, outcome.value)
    answer = DeliveryAnswer(outcome=outcome, ticket=event.key, delivery=event.delivery)
    return JSONResponse(answer.model_dump(mode="json"), status_code=_STATUS[outcome])


@dataclass
class _Deliveries:
    """Group commit of deliveries: one transaction in one worker thread at a time; the deliveries that arrive
    meanwhile wait and go together into the next. Each caller is answered once the transaction holding its
    delivery has committed (or with its error), so nothing is answered before it is durable."""

    waiting: list[tuple[Store, str, TicketEvent, asyncio.Future[Outcome]]] = field(default_factory=list)
    writer: asyncio.Task[None] | None = None
    """The task writing (held here: the loop keeps only a weak reference to a task, and one collected while it
    waits for its thread would leave every later delivery waiting)."""

    async def record(self, store: Store, backend: str, event: TicketEvent) -> Outcome:
        answer: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        self.waiting.append((store, backend, event, answer))
        if self.writer is None:
            self.writer = asyncio.get_running_loop().create_task(self._write())
        return await answer

    async def _write(self) -> None:
        try:
            while self.waiting:
                batch, self.waiting = self.waiting, []
                # One app serves one store and backend; grouped all the same, so that no delivery goes astray.
                groups: dict[tuple[int, str], list[tuple[Store, str, TicketEvent, asyncio.Future[Outcome]]]] = {}
                for entry in batch:
                    groups.setdefault((id(entry[0]), entry[1]), []).append(entry)
                for mine in groups.values():
                    store, backend = mine[0][0], mine[0][1]
                    try:
                        outcomes = await asyncio.to_thread(_record, store, backend, [e for _, _, e, _ in mine])
                    except Exception as exc:
                        for *_, answer in mine:
                            if not answer.done():  # done: its caller went away (the sender hung up)
                                answer.set_exception(exc)
                    else:
                        for (*_, answer), outcome in zip(mine, outcomes, strict=True):
                            if not answer.done():
                                answer.set_result(outcome)
        finally:
            self.writer = None


def _record(store: Store, backend: str, events: Sequence[TicketEvent]) -> list[Outcome]:
    """Store the deliveries naming a ticket of this fabric, in one transaction."""
    stored = store.record_ticket_deliveries(backend, [
        NewDelivery(event.delivery, event.source, event.key, delivery_payload(event)) for event in events])
    return [_OUTCOME[result] for result in stored]


_OUTCOME = {True: Outcome.ACCEPTED, False: Outcome.DUPLICATE, None: Outcome.IGNORED}
