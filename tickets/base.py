"""What every ticket backend offers: the ``TicketBackend`` protocol, ``Ticket`` and the dedup key.

A maintenance ticket is found again by its *dedup key*, a short deterministic hash of the fabric and the
component (``ibdedup-<hex>``).  Backends store it where an exact search can find it (a Jira label, a column
of the local table), so that ``open`` is idempotent: a second ``open`` for the same key adopts the ticket
that is already open instead of creating another one.  This covers a crash between "ticket created" and
"ticket recorded" as well as two service instances racing.

This package depends on nothing else in the project.
"""

from __future__ import annotations

import builtins
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Protocol, runtime_checkable

__all__ = [
    "DEDUP_PREFIX",
    "BackendUnavailableError",
    "OutcomeUnknownError",
    "Ticket",
    "TicketBackend",
    "TicketConflictError",
    "TicketError",
    "TicketNotFoundError",
    "TicketStatus",
    "dedup_key",
    "is_dedup_key",
    "ticket_labels",
]

DEDUP_PREFIX = "ibdedup-"
_DEDUP_HEX_CHARS = 16
_DEDUP_RE = re.compile(rf"^{DEDUP_PREFIX}[0-9a-f]{{{_DEDUP_HEX_CHARS}}}$")


def dedup_key(fabric: str, component: str) -> str:
    """The dedup key of ``component`` (e.g. ``str(ComponentId)``) on ``fabric``: ``ibdedup-`` + 16 hex digits.

    Deterministic across processes and versions (SHA-256 of the case-folded, stripped names), safe as a Jira
    label (no spaces, lower case ASCII).  Different fabrics give different keys for the same component name.
    """
    fabric_norm = fabric.strip().casefold()
    component_norm = component.strip().casefold()
    if not fabric_norm or not component_norm:
        raise ValueError(f"dedup_key needs a fabric and a component, got {fabric!r} and {component!r}")
    # The unit separator cannot occur in either name, so ("a", "b:c") and ("a:b", "c") never collide.
    digest = hashlib.sha256(f"{fabric_norm}\x1f{component_norm}".encode()).hexdigest()
    return DEDUP_PREFIX + digest[:_DEDUP_HEX_CHARS]


def is_dedup_key(text: str) -> bool:
    """Whether ``text`` has the shape ``dedup_key`` produces."""
    return _DEDUP_RE.fullmatch(text) is not None


def ticket_labels(dedup_key: str, labels: Sequence[str]) -> tuple[str, ...]:
    """``labels`` plus the dedup key, each once, in order; Jira's rule (no whitespace) applies to every backend."""
    out: list[str] = []
    for label in (*labels, dedup_key):
        if not label or any(ch.isspace() for ch in label):
            raise ValueError(f"invalid ticket label {label!r}: labels must be non-empty and contain no whitespace")
        if label not in out:
            out.append(label)
    return tuple(out)


class TicketStatus(StrEnum):
    OPEN = "open"
    """Someone has work to do (any status that is not done: new, in progress, reopened...)."""
    RESOLVED = "resolved"
    """The work is done: the component was repaired."""
    CLOSED = "closed"
    """Done without a repair (duplicate, won't fix, closed by hand)."""


@dataclass(frozen=True, slots=True)
class Ticket:
    """A ticket as the backend sees it now."""

    key: str
    """The backend's own key: ``OPS-123``, ``LOCAL-17``."""
    dedup_key: str
    summary: str
    description: str
    status: TicketStatus
    labels: tuple[str, ...]
    url: str | None
    created_at: datetime
    resolved_at: datetime | None = None
    comments: int = 0
    """How many comments the ticket has."""

    @property
    def is_open(self) -> bool:
        return self.status is TicketStatus.OPEN


class TicketError(Exception):
    """Base class of every error a ticket backend raises."""


class TicketNotFoundError(TicketError):
    """No ticket has that key."""

    def __init__(self, key: str) -> None:
        self.key = key
        super().__init__(f"ticket {key!r} not found")


class BackendUnavailableError(TicketError):
    """The backend could not be reached or did not answer; the operation may be retried later."""

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        """Seconds the backend asked to be left alone for (HTTP ``Retry-After``), if it said."""


class OutcomeUnknownError(BackendUnavailableError):
    """The request was sent and no answer came back (a timeout, a dropped connection, a gateway's 5xx): it may
    have been carried out. A create that ends so must not be repeated before a search could show what it made."""


class TicketConflictError(TicketError):
    """The operation would leave two open tickets for one dedup key (e.g. reopening an old ticket while a
    newer one for the same component is open)."""


@runtime_checkable
class TicketBackend(Protocol):
    """A ticket system.  Every method is synchronous (wrap it in ``asyncio.to_thread`` from async code)."""

    @property
    def name(self) -> str:
        """Short, stable backend name recorded beside every ticket: ``local``, ``jira``."""
        ...

    def open(self, dedup_key: str, summary: str, description: str, labels: Sequence[str] = (), *,
             severity: int | None = None) -> Ticket:
        """Open a ticket for ``dedup_key``; idempotent.

        If an open ticket carrying that dedup key exists, it is adopted and returned unchanged; otherwise a new
        one is created with ``labels`` plus the dedup key as a label. ``severity``: how bad the fault is (higher
        is worse), for backends that rank tickets (Jira's priority).
        """
        ...

    def comment(self, key: str, text: str) -> None:
        """Add a comment.  Raises ``TicketNotFoundError``."""
        ...

    def reopen(self, key: str, comment: str) -> Ticket:
        """Reopen a resolved or closed ticket with a comment (an open ticket just gets the comment).

        Raises ``TicketNotFoundError``, or ``TicketConflictError`` when another ticket with the same dedup key
        is open.
        """
        ...

    def status(self, key: str) -> Ticket:
        """The ticket as it is now.  Raises ``TicketNotFoundError``."""
        ...

    def find_open(self, dedup_key: str) -> Ticket | None:
        """The open ticket carrying ``dedup_key``, if any."""
        ...

    def resolve(self, key: str, resolution_comment: str) -> Ticket:
        """Mark the ticket resolved (repaired) with a comment; resolving a resolved ticket changes nothing.

        Backends whose tickets are resolved by people (Jira) may raise ``TicketError`` here.
        """
        ...

    def list(self, status: TicketStatus | None = None) -> builtins.list[Ticket]:
        """Every ticket this backend knows, optionally only those with ``status``, oldest first."""
        ...
