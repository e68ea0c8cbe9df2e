"""The remediation vocabulary shared by signals, detectors, policy, store and engine.

Components are named by the fabric model, never by UFM ids, so that a UFM restart or a re-read of the plan
does not change who is who: a cable by its two ends (``leaf1/Port 33|spine2/Port 5``, ends sorted), a port
as ``device/Port n``, a switch or a host by its name.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, ClassVar, NamedTuple


class ComponentKind(StrEnum):
    LINK = "link"
    PORT = "port"
    SWITCH = "switch"
    HOST = "host"


class ComponentId:
    """A component, by kind and canonical name: ``a/p|b/q`` for a link, ``device/p`` for a port, the name for a
    device (case-folded).

    Interned: there is one object per (kind, name), so hashing and equality are by identity, done in C. Every
    detector window, policy record and guard lookup is a dictionary keyed by component; a generated Python
    ``__hash__`` (and the enum's own Python ``__hash__`` under it) cost about a third of the time of a storm.
    The table only grows with the distinct components named, which the fabric bounds.
    """

    __slots__ = ("_key", "kind", "name")
    kind: ComponentKind
    name: str
    _key: tuple[str, str]
    """(kind, name) as plain strings: the order of components, compared in C."""
    _interned: ClassVar[dict[tuple[str, str], ComponentId]] = {}

    def __new__(cls, kind: ComponentKind | str, name: str) -> ComponentId:
        if type(kind) is not ComponentKind:
            kind = ComponentKind(kind)
        key = (kind._value_, name)
        found = cls._interned.get(key)
        if found is None:
            found = object.__new__(cls)
            object.__setattr__(found, "kind", kind)
            object.__setattr__(found, "name", name)
            object.__setattr__(found, "_key", key)
            found = cls._interned.setdefault(key, found)
        return found

    def __setattr__(self, attribute: str, value: object) -> None:
        raise AttributeError(f"ComponentId is immutable: cannot set {attribute!r}")

    def __reduce__(self) -> tuple[type[ComponentId], tuple[ComponentKind, str]]:
        return ComponentId, (self.kind, self.name)

    def __repr__(self) -> str:
        return f"ComponentId({self.kind.value!r}, {self.name!r})"

    def __str__(self) -> str:
        return f"{self._key[0]}:{self.name}"

    def __lt__(self, other: ComponentId) -> bool:
        return self._key < other._key

    def __le__(self, other: ComponentId) -> bool:
        return self._key <= other._key

    def __gt__(self, other: ComponentId) -> bool:
        return self._key > other._key

    def __ge__(self, other: ComponentId) -> bool:
        return self._key >= other._key

    @classmethod
    def parse(cls, text: str) -> ComponentId:
        kind, sep, name = text.partition(":")
        if not sep or not name:
            raise ValueError(f"not a component id: {text!r} (expected 'link:...', 'port:...', 'switch:...')")
        return cls(ComponentKind(kind), name)


class Lifecycle(StrEnum):
    """Where a component is in its lifecycle (docs/design.md)."""

    HEALTHY = "healthy"
    DISABLED = "disabled"
    """Decided out of service: UFM has not confirmed the disable yet, or its ticket is being opened."""
    AWAITING_REPAIR = "awaiting_repair"
    """Out of service with an open ticket."""
    DEFERRED = "deferred"
    """Faulty, but the capacity guard kept it up; ticket open; retried when capacity returns."""
    TICKETED = "ticketed"
    """A ticket-only finding (host links, duplicate GUIDs...): nothing was changed in UFM."""
    PROBATION = "probation"
    """Repaired and back in service, watched for a clean soak."""
    QUARANTINED = "quarantined"
    """Broke too often: stays out until an operator clears it."""
    RESET = "reset"
    """Faulty, and its port was reset instead of taken out (the reset ladder): in service, watched for
    ``reset_settle``. A fault found meanwhile takes it out; the watch ending clean makes it healthy again."""


OUT_OF_SERVICE = frozenset({Lifecycle.DISABLED, Lifecycle.AWAITING_REPAIR, Lifecycle.QUARANTINED})
HELD = OUT_OF_SERVICE | {Lifecycle.PROBATION}
"""Automation holds the component out, or released it and is enabling it (on probation): a port of it UFM shows
disabled is automation's business, neither an operator's action to report nor a lost disable to adopt."""
CONVERGE_RULE = "reconcile"
"""The rule of the controller's convergence writes: they re-assert a state already decided (a disable counted
against the hourly rate when it was decided), so the rate's rebuild from the decision log leaves them out."""


@dataclass(frozen=True, slots=True)
class ComponentRecord:
    """The desired state of one component: what ``decide`` keeps, the store persists and the engine converges
    UFM to. One type from the policy to the database and back."""

    lifecycle: Lifecycle
    since: datetime
    """When it entered ``lifecycle``."""
    rule: str
    """The rule that put it there."""
    reason: str
    strikes: int = 0
    never_auto_restore: bool = False
    probation_until: datetime | None = None


class Finding(NamedTuple):
    """A detector's conclusion that a component is faulty, with the evidence that led to it. A named tuple:
    a storm makes tens of thousands, and a frozen dataclass's ``__init__`` costs several times a tuple's."""

    component: ComponentId
    rule: str
    at: datetime
    reason: str
    evidence: tuple[int, ...] = ()
    """UFM event ids."""
    ticket_only: bool = False
    never_auto_restore: bool = False
    no_reset: bool = False
    """Taken out (guard permitting) without the reset ladder's reset first: a burn-in window's finding, which
    failed under load and would pass a watch once the load is gone."""


class ActionKind(StrEnum):
    DISABLE = "disable"
    ENABLE = "enable"
    DEFER = "defer"
    TICKET = "ticket"
    COMMENT = "comment"
    REOPEN = "reopen"
    QUARANTINE = "quarantine"
    HALT = "halt"
    RECORD = "record"
    """Noted, nothing to do (below a threshold, explained by a reboot, silenced...)."""
    RESET = "reset"
    """Reset the component's port (``POST /actions`` reset): the link retrains, and a fault a reset cures ends."""


@dataclass(frozen=True, slots=True)
class Action:
    """One decision of the policy: what to do, to what, by which rule, and why."""

    kind: ActionKind
    at: datetime
    rule: str
    reason: str
    component: ComponentId | None = None
    guard: dict[str, Any] = field(default_factory=dict)
    """The capacity guard's figures at the time of the decision."""
    dry_run: bool = True
