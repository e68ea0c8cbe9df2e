"""How the Jira backend is set up: kept apart from ``tickets.jira`` so that reading the configuration does not
import the ``jira`` library (a tenth of a second at every command's start)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

__all__ = ["DEFAULT_CLOSED_RESOLUTIONS", "FABRIC_LABEL_PREFIX", "JiraAuthKind", "JiraSettings", "fabric_label"]

FABRIC_LABEL_PREFIX = "ibfabric-"
_NOT_LABEL = re.compile(r"[^a-z0-9_.-]+")

DEFAULT_CLOSED_RESOLUTIONS = ("Won't Do", "Won't Fix", "Duplicate", "Cannot Reproduce", "Incomplete", "Declined")


class JiraAuthKind(StrEnum):
    CLOUD = "cloud"
    """Jira Cloud: basic auth with the account's e-mail and an API token."""
    DATACENTER = "datacenter"
    """Jira Data Center: a personal access token (bearer), or basic auth with a password when a user is given."""


@dataclass(frozen=True, slots=True)
class JiraSettings:
    url: str
    project: str
    scope_label: str
    """The label every ticket of this fabric carries and ``list`` searches by."""
    auth: JiraAuthKind = JiraAuthKind.DATACENTER
    user: str | None = None
    issue_type: str = "Task"
    labels: tuple[str, ...] = ("fabric-remediation",)
    reopen_transition: str = "Reopen"
    resolve_transition: str = "Done"
    closed_resolutions: tuple[str, ...] = DEFAULT_CLOSED_RESOLUTIONS
    components: tuple[str, ...] = ()
    """Jira components every new ticket names."""
    priorities: tuple[tuple[int, str], ...] = ()
    """``(severity, priority name)``: a new ticket whose fault has at least that severity gets that priority (the
    highest threshold it reaches); none reached, or none given: the project's default priority."""
    fields: tuple[tuple[str, str], ...] = ()
    """``(field name, value)``: custom fields every new ticket sets, by the name Jira shows (resolved to their ids
    once, through ``/field``)."""
    timeout: float = 10.0
    """Seconds to connect, and again to wait for an answer, on every call."""
    verify: bool | str = True
    """TLS: verify Jira's certificate against the system's CA store (``True``) or this CA bundle (a path)."""


def fabric_label(fabric: str) -> str:
    """The scope label of ``fabric``'s tickets: ``ibfabric-`` and the name, case-folded, each run of other
    characters than letters, digits, ``_.-`` made one ``-`` (a Jira label has no spaces)."""
    slug = _NOT_LABEL.sub("-", fabric.strip().casefold()).strip("-")
    if not slug:
        raise ValueError(f"fabric name {fabric!r} gives no label")
    return FABRIC_LABEL_PREFIX + slug
