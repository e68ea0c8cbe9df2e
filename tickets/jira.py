"""Tickets in Jira (Cloud or Data Center), through the ``jira`` library.

Every ticket carries three kinds of labels: the configured ones, the *scope label* naming the fabric (so that one
search finds every ticket of this fabric and no other's), and the dedup key (``ibdedup-<hex>``) of its component,
which ``open`` searches before creating: the adoption path after a crash between "created in Jira" and "recorded
in the store".

The library's own retries are off (``max_retries=0``): they re-send a POST after a timeout or a 503, which
creates the same issue twice.  A failed call raises ``BackendUnavailableError`` at once and the caller retries
later, when the search finds the issue if the failed create did happen.  Every call has a timeout (the library's
default is none).

Resolved or closed: Jira's status category is ``done`` or the issue has a resolution (a workflow may set one
without reaching a done status).  Resolutions named in ``closed_resolutions`` ("Won't Do", "Duplicate"...) mean
done *without* a repair (``TicketStatus.CLOSED``): the component stays out of service.

Thread-safe: the client is built on first use (so a Jira that is down when the service starts delays tickets,
never the start) and shared; ``requests`` sessions serve concurrent calls.
"""

from __future__ import annotations

import builtins
import logging
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import requests
from jira import JIRA, JIRAError

from tickets.base import (
    DEDUP_PREFIX,
    BackendUnavailableError,
    OutcomeUnknownError,
    Ticket,
    TicketConflictError,
    TicketError,
    TicketNotFoundError,
    TicketStatus,
    ticket_labels,
)
from tickets.jira_settings import JiraAuthKind, JiraSettings
from topology.redact import redacted_url

__all__ = ["JiraAuthKind", "JiraSettings", "JiraTicketBackend"]

_JIRA_TIME = "%Y-%m-%dT%H:%M:%S.%f%z"
LINK_TYPE = "Relates"
"""The issue link a ticket opened again (the workflow cannot reopen) has to the one before: Jira's default type."""

log = logging.getLogger(__name__)


def _quote(value: str) -> str:
    """``value`` as a JQL string literal."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _seconds(retry_after: str | None) -> float | None:
    """``Retry-After`` in seconds (Jira sends a number; an HTTP date is not worth parsing: the backoff covers it)."""
    try:
        return max(0.0, float(retry_after)) if retry_after else None
    except ValueError:
        return None


def _parse_time(text: Any) -> datetime | None:
    if not isinstance(text, str) or not text:
        return None
    return datetime.strptime(text, _JIRA_TIME).astimezone(UTC)


class JiraTicketBackend:
    """``TicketBackend`` over one Jira project."""

    name = "jira"

    def __init__(self, settings: JiraSettings, token: str) -> None:
        """``token``: the API token (Cloud), the personal access token or password (Data Center); kept only in
        the client's session."""
        if settings.auth is JiraAuthKind.CLOUD and not settings.user:
            raise ValueError("Jira Cloud needs the account's e-mail as user")
        self.settings = settings
        self._token = token
        self._client: JIRA | None = None
        self._field_ids: dict[str, str] | None = None
        """``[tickets.jira.fields]``' names -> Jira's field ids, once read."""
        self._lock = threading.Lock()
        self._closed = frozenset(name.casefold() for name in settings.closed_resolutions)
        self._base_jql = f"project = {_quote(settings.project)} AND labels = {_quote(settings.scope_label)}"

    # -- the protocol ------------------------------------------------------------------------------------

    def open(self, dedup_key: str, summary: str, description: str, labels: Sequence[str] = (), *,
             severity: int | None = None) -> Ticket:
        all_labels = ticket_labels(dedup_key, (*self.settings.labels, self.settings.scope_label, *labels))
        existing = self.find_open(dedup_key)
        if existing is not None:
            return existing
        fields: dict[str, Any] = {
            "project": {"key": self.settings.project}, "issuetype": {"name": self.settings.issue_type},
            "summary": summary, "description": description, "labels": list(all_labels), **self._custom_fields()}
        if self.settings.components:
            fields["components"] = [{"name": name} for name in self.settings.components]
        priority = self._priority(severity)
        if priority is not None:
            fields["priority"] = {"name": priority}
        with self._calls("create an issue", outcome_unknown=True) as client:
            created = client.create_issue(fields=fields, prefetch=False)
        key = str(created.key)
        try:
            return self.status(key)
        except BackendUnavailableError:
            # Created, but the read back failed: the key must not be lost (the caller records it), so the ticket
            # is described from what was sent.
            log.warning("created %s for %s but could not read it back", key, dedup_key)
            return Ticket(key=key, dedup_key=dedup_key, summary=summary, description=description,
                          status=TicketStatus.OPEN, labels=all_labels, url=self._url(key),
                          created_at=datetime.now(UTC))

    def comment(self, key: str, text: str) -> None:
        if not text:
            return
        with self._calls(f"comment on {key}", key) as client:
            client.add_comment(key, text)

    def reopen(self, key: str, comment: str) -> Ticket:
        """Reopen ``key`` by ``reopen_transition``; when the workflow offers no such transition from its status (a
        workflow whose done is final), a new ticket is opened instead, linked to it ("Relates"), carrying the same
        dedup key: the returned ticket's key then differs from ``key``."""
        ticket = self.status(key)
        if not ticket.is_open:
            other = self.find_open(ticket.dedup_key) if ticket.dedup_key else None
            can_reopen = self._offers(key, self.settings.reopen_transition)
            if other is not None and other.key != ticket.key:
                if not can_reopen:  # the linked ticket an attempt whose answer was lost opened: adopted
                    return other
                raise TicketConflictError(
                    f"cannot reopen {key}: {other.key} is open for the same dedup key {ticket.dedup_key}")
            if not can_reopen:
                return self._open_linked(ticket, comment)
            self._transition(key, self.settings.reopen_transition, "reopen_transition")
        self.comment(key, comment)
        return self.status(key)

    def _offers(self, key: str, name: str) -> bool:
        with self._calls(f"list the transitions of {key}", key) as client:
            offered = client.transitions(key)
        return any(str(t.get("name", "")).casefold() == name.casefold() for t in offered)

    def _open_linked(self, done: Ticket, comment: str) -> Ticket:
        log.warning("Jira's workflow offers no %r from %s: a new ticket linked to it instead",
                    self.settings.reopen_transition, done.key)
        extra = tuple(label for label in done.labels if label != done.dedup_key)
        ticket = self.open(done.dedup_key, f"{done.summary} (again)", f"Failed again after {done.key} was "
                           f"resolved.\n\n{comment}", labels=extra)
        with self._calls(f"link {ticket.key} to {done.key}", ticket.key) as client:
            client.create_issue_link(LINK_TYPE, ticket.key, done.key)
        return ticket

    def status(self, key: str) -> Ticket:
        with self._calls(f"read {key}", key) as client:
            issue = client.issue(key)
        return self._to_ticket(issue.raw)

    def find_open(self, dedup_key: str) -> Ticket | None:
        jql = (f"project = {_quote(self.settings.project)} AND labels = {_quote(dedup_key)} "
               f"AND statusCategory != Done AND resolution is EMPTY ORDER BY created ASC")
        found = [ticket for ticket in self._search(jql) if ticket.is_open]
        if len(found) > 1:
            log.warning("%d open Jira tickets carry %s (%s): adopting the oldest", len(found), dedup_key,
                        ", ".join(ticket.key for ticket in found))
        return found[0] if found else None

    def resolve(self, key: str, resolution_comment: str) -> Ticket:
        ticket = self.status(key)
        if ticket.status is TicketStatus.RESOLVED:
            return ticket
        if ticket.status is not TicketStatus.OPEN:
            raise TicketError(f"cannot mark {key} resolved: it is {ticket.status.value}")
        self._transition(key, self.settings.resolve_transition, "resolve_transition")
        self.comment(key, resolution_comment)
        return self.status(key)

    def list(self, status: TicketStatus | None = None) -> builtins.list[Ticket]:
        """One JQL search (paginated) for the fabric's tickets: only the open ones for ``OPEN``, which is what the
        engine's fallback poll asks each time."""
        if status is TicketStatus.OPEN:
            jql = f"{self._base_jql} AND statusCategory != Done AND resolution is EMPTY ORDER BY created ASC"
        else:
            jql = f"{self._base_jql} ORDER BY created ASC"
        tickets = self._search(jql)
        return tickets if status is None else [ticket for ticket in tickets if ticket.status is status]

    # -- internals ---------------------------------------------------------------------------------------

    def _priority(self, severity: int | None) -> str | None:
        if severity is None:
            return None
        reached = [(threshold, name) for threshold, name in self.settings.priorities if severity >= threshold]
        return max(reached)[1] if reached else None

    def _custom_fields(self) -> dict[str, str]:
        """``[tickets.jira.fields]`` by id: Jira's ``/field`` read once, the first time a ticket is created. A name
        Jira does not know is a configuration error, raised at every create (the write waits in the outbox) until
        the configuration names a field Jira has."""
        if not self.settings.fields:
            return {}
        with self._lock:
            ids = self._field_ids
        if ids is None:
            with self._calls("list the fields") as client:
                known = client.fields()
            by_name = {str(field.get("name", "")).casefold(): str(field.get("id")) for field in known}
            missing = [name for name, _ in self.settings.fields if name.casefold() not in by_name]
            if missing:
                raise TicketError("; ".join(
                    f"tickets.jira.fields.{name!r}: Jira has no field of that name" for name in missing))
            ids = {name: by_name[name.casefold()] for name, _ in self.settings.fields}
            with self._lock:
                self._field_ids = ids
        return {ids[name]: value for name, value in self.settings.fields}

    def _search(self, jql: str) -> builtins.list[Ticket]:
        with self._calls("search") as client:
            # maxResults=0: every page (startAt on Data Center, nextPageToken on Cloud).
            issues = client.search_issues(jql, maxResults=0, fields="*all")
        return [self._to_ticket(issue.raw) for issue in issues]

    def _transition(self, key: str, name: str, setting: str) -> None:
        with self._calls(f"move {key} by {name!r}", key) as client:
            offered = client.transitions(key)
            chosen = next((t for t in offered if str(t.get("name", "")).casefold() == name.casefold()), None)
            if chosen is None:
                names = ", ".join(repr(t.get("name")) for t in offered) or "none"
                raise TicketError(f"Jira offers no transition {name!r} for {key} (offered: {names}); set "
                                  f"[tickets.jira] {setting} to one of the workflow's transitions")
            client.transition_issue(key, str(chosen["id"]))

    def _to_ticket(self, raw: dict[str, Any]) -> Ticket:
        fields = raw.get("fields") or {}
        key = str(raw.get("key"))
        labels = tuple(str(label) for label in fields.get("labels") or ())
        created = _parse_time(fields.get("created")) or datetime.now(UTC)
        comments = fields.get("comment") or {}
        return Ticket(
            key=key,
            dedup_key=next((label for label in labels if label.startswith(DEDUP_PREFIX)), ""),
            summary=str(fields.get("summary") or ""),
            description=str(fields.get("description") or ""),
            status=self._status_of(fields),
            labels=labels,
            url=self._url(key),
            created_at=created,
            resolved_at=_parse_time(fields.get("resolutiondate")),
            comments=int(comments.get("total", len(comments.get("comments") or ()))),
        )

    def _status_of(self, fields: dict[str, Any]) -> TicketStatus:
        category = ((fields.get("status") or {}).get("statusCategory") or {}).get("key")
        resolution = fields.get("resolution")
        if category != "done" and not resolution:
            return TicketStatus.OPEN
        name = str((resolution or {}).get("name") or "")
        return TicketStatus.CLOSED if name.casefold() in self._closed else TicketStatus.RESOLVED

    def _url(self, key: str) -> str:
        return f"{self.settings.url.rstrip('/')}/browse/{key}"

    @contextmanager
    def _calls(self, what: str, key: str | None = None, *, outcome_unknown: bool = False) -> Iterator[JIRA]:
        """The client, with the library's and the network's errors as ``tickets.base`` errors.  Messages never
        quote the library's exception whole: its text holds the request headers, the credentials among them.

        ``outcome_unknown``: the call is a write whose failure may hide its success (a create). Only a refusal
        Jira answers itself (429, 503) or a connection never made says it did nothing; anything else (a read
        timeout, a reset, a gateway's 502 or 504) raises ``OutcomeUnknownError``."""
        unavailable = OutcomeUnknownError if outcome_unknown else BackendUnavailableError
        try:
            yield self._connected()
        except JIRAError as err:
            code = err.status_code
            detail = f"Jira could not {what}: HTTP {code}: {err.text}" if code else f"Jira could not {what}: {err.text}"
            if code == 404 and key is not None:
                raise TicketNotFoundError(key) from None
            if code is not None and (code == 429 or code >= 500):
                retry_after = err.response.headers.get("Retry-After") if err.response is not None else None
                refused = BackendUnavailableError if code in (429, 503) else unavailable
                raise refused(detail + (f" (retry after {retry_after} s)" if retry_after else ""),
                              retry_after=_seconds(retry_after)) from None
            if code in (401, 403):
                raise TicketError(f"Jira refused the credentials ({what}): HTTP {code}; check [tickets.jira] user, "
                                  f"auth and the token") from None
            raise TicketError(detail) from None
        except requests.RequestException as err:
            never_sent = isinstance(err, requests.ConnectTimeout) or "NewConnectionError" in str(err)
            raise (BackendUnavailableError if never_sent else unavailable)(
                f"Jira unreachable ({what}): {type(err).__name__}: {err}") from None

    def _connected(self) -> JIRA:
        with self._lock:
            if self._client is None:
                self._client = self._connect()
            return self._client

    def _connect(self) -> JIRA:
        try:
            return self._new_client()
        except (KeyError, ValueError) as err:  # the library's own checks of serverInfo's answer
            raise TicketError(f"{redacted_url(self.settings.url)} does not answer as Jira does (serverInfo: {err})"
                              ) from None

    def _new_client(self) -> JIRA:
        settings = self.settings
        common: dict[str, Any] = {
            "server": settings.url, "options": {"verify": settings.verify, "check_update": False},
            "max_retries": 0, "timeout": settings.timeout, "get_server_info": True,
        }
        if settings.auth is JiraAuthKind.CLOUD or settings.user:
            return JIRA(basic_auth=(settings.user or "", self._token), **common)
        return JIRA(token_auth=self._token, **common)
