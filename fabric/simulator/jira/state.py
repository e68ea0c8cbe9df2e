"""The fake Jira's state: projects, issues, their comments, one workflow, and the faults to inject.

The workflow is Jira's classic one, reduced::

    Open (new) --Start Progress--> In Progress (indeterminate)
    Open, In Progress, Reopened --Done--> Done (done, resolution "Done")
    Open, In Progress, Reopened --Won't Do--> Done (done, resolution "Won't Do")
    Done --Reopen--> Reopened (new, resolution cleared)

Thread-safe: the HTTP handlers and the tests' own calls go through one lock.  Times come from ``clock``
(seconds since the epoch), so the eventual consistency of search can be tested without waiting.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from fabric.simulator.jira.jql import Query

__all__ = ["Comment", "Fault", "Issue", "JiraState", "Status", "Transition", "WorkflowError"]

Clock = Callable[[], float]
Changed = Callable[["Issue", "Status", "str | None", str], None]
"""Called after a transition with the issue, the status and resolution it left, and who moved it."""


@dataclass(frozen=True, slots=True)
class Status:
    id: str
    name: str
    category: str
    """``new``, ``indeterminate`` or ``done``: what Jira calls the status category's key."""


@dataclass(frozen=True, slots=True)
class Transition:
    id: str
    name: str
    sources: frozenset[str]
    """Names of the statuses it leaves from."""
    to: Status
    resolution: str | None
    """The resolution it sets (``None``: it clears the resolution)."""


OPEN = Status("1", "Open", "new")
IN_PROGRESS = Status("3", "In Progress", "indeterminate")
REOPENED = Status("4", "Reopened", "new")
DONE = Status("10001", "Done", "done")
_WORKING = frozenset({OPEN.name, IN_PROGRESS.name, REOPENED.name})
WORKFLOW = (
    Transition("11", "Start Progress", frozenset({OPEN.name, REOPENED.name}), IN_PROGRESS, None),
    Transition("31", "Done", _WORKING, DONE, "Done"),
    Transition("41", "Won't Do", _WORKING, DONE, "Won't Do"),
    Transition("51", "Reopen", frozenset({DONE.name}), REOPENED, None),
)
RESOLUTIONS = {"Done": "10000", "Won't Do": "10001", "Duplicate": "10002", "Cannot Reproduce": "10003"}
CATEGORY_IDS = {"new": 2, "indeterminate": 4, "done": 3}
CATEGORY_NAMES = {"new": "To Do", "indeterminate": "In Progress", "done": "Done"}


class WorkflowError(ValueError):
    """A transition that does not exist from the issue's status (Jira answers 400)."""


@dataclass(slots=True)
class Comment:
    id: int
    body: str
    author: str
    created: float


@dataclass(slots=True)
class Issue:
    id: int
    number: int
    project: str
    issue_type: str
    summary: str
    description: str
    labels: list[str]
    reporter: str
    created: float
    updated: float
    visible_at: float
    """When search starts finding it (Cloud's search lags behind a create)."""
    extra: dict[str, Any] = field(default_factory=dict)
    links: list[tuple[str, str, str]] = field(default_factory=list)
    """``(link type, "inward" or "outward", the other issue's key)``."""
    """What the create set beyond the fields above: ``priority``, ``components``, custom fields by id."""
    status: Status = OPEN
    resolution: str | None = None
    resolved: float | None = None
    comments: list[Comment] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.project}-{self.number}"

    @property
    def category(self) -> str:
        return self.status.category


@dataclass(slots=True)
class Fault:
    """What the next ``count`` matching requests get instead of (or on top of) an answer."""

    status: int | None = None
    """Answer with this status (429, 503...) without doing anything."""
    retry_after: int | None = None
    delay: float = 0.0
    """Seconds to sleep *after* doing the work and before answering: a client that times out never learns
    the outcome, as when a response is lost. With ``status``: seconds to sleep before refusing, having done
    nothing (a gateway timing out in front of a Jira that is down)."""
    count: int = 1
    method: str | None = None
    path: str | None = None
    """Only requests whose path contains this (e.g. ``/issue``); ``None``: every REST request."""

    def applies(self, method: str, path: str) -> bool:
        return (self.method is None or self.method.upper() == method.upper()) and \
            (self.path is None or self.path in path)


@dataclass(slots=True)
class _Counters:
    issues: int = 10000
    comments: int = 20000
    numbers: dict[str, int] = field(default_factory=dict)


class JiraState:
    """Everything the fake serves.  ``projects``: key -> name; ``issue_types``: the types every project has."""

    def __init__(self, *, projects: dict[str, str] | None = None, issue_types: tuple[str, ...] = ("Task", "Bug"),
                 cloud: bool = False, search_lag: float = 0.0, page_size: int = 100,
                 clock: Clock | None = None, custom_fields: dict[str, str] | None = None) -> None:
        self.lock = threading.RLock()
        self.projects = dict(projects or {"OPS": "Operations"})
        self.issue_types = issue_types
        self.custom_fields = dict(custom_fields or {"Rack": "customfield_10050", "Data Centre": "customfield_10051"})
        """Custom field names -> ids (what ``/field`` lists beside the system fields)."""
        self.cloud = cloud
        self.search_lag = search_lag
        self.page_size = page_size
        self.clock: Clock = clock or time.time
        self.issues: dict[int, Issue] = {}
        self.faults: list[Fault] = []
        self.requests: list[tuple[str, str]] = []
        """Every REST request served, as ``(method, path)``, for tests that count calls."""
        self.on_transition: Changed | None = None
        """What the app does after a transition (sends the webhook: ``fabric.simulator.jira.webhooks``)."""
        self._counters = _Counters()

    # -- issues ------------------------------------------------------------------------------------------

    def create(self, project: str, issue_type: str, summary: str, description: str, labels: list[str],
               reporter: str, extra: dict[str, Any] | None = None) -> Issue:
        with self.lock:
            now = self.clock()
            self._counters.issues += 1
            number = self._counters.numbers.get(project, 0) + 1
            self._counters.numbers[project] = number
            issue = Issue(id=self._counters.issues, number=number, project=project, issue_type=issue_type,
                          summary=summary, description=description, labels=labels, reporter=reporter,
                          created=now, updated=now, visible_at=now + self.search_lag, extra=dict(extra or {}))
            self.issues[issue.id] = issue
            return issue

    def find(self, key_or_id: str) -> Issue | None:
        with self.lock:
            wanted = key_or_id.strip().upper()
            if wanted.isascii() and wanted.isdigit():  # "²" is a digit to isdigit(), not to int()
                return self.issues.get(int(wanted))
            return next((issue for issue in self.issues.values() if issue.key == wanted), None)

    def search(self, query: Query) -> list[Issue]:
        """The issues ``query`` matches that search can see now, in its order."""
        with self.lock:
            now = self.clock()
            found: list[Any] = [issue for issue in self.issues.values()
                                if issue.visible_at <= now and query.matches(issue)]
            query.sort(found)
            return found

    def transitions(self, issue: Issue) -> list[Transition]:
        return [transition for transition in WORKFLOW if issue.status.name in transition.sources]

    def transition(self, issue: Issue, transition_id: str, resolution: str | None = None, *,
                   by: str = "technician") -> None:
        with self.lock:
            before, resolved_before = issue.status, issue.resolution
            chosen = next((t for t in self.transitions(issue) if t.id == str(transition_id)), None)
            if chosen is None:
                raise WorkflowError(f"It seems that you have tried to perform a workflow operation "
                                    f"({transition_id}) that is not valid for the current state of this issue "
                                    f"({issue.key}).")
            now = self.clock()
            issue.status = chosen.to
            issue.resolution = (resolution or chosen.resolution) if chosen.to.category == "done" else None
            issue.resolved = now if issue.resolution is not None else None
            issue.updated = now
            changed = self.on_transition
        if changed is not None:
            changed(issue, before, resolved_before, by)

    def resolve(self, key: str, resolution: str = "Done") -> Issue:
        """Resolve an issue as a technician would (tests, the demo): the ``Done`` or ``Won't Do`` transition."""
        with self.lock:
            issue = self.find(key)
            if issue is None:
                raise KeyError(key)
            transition = "41" if resolution == "Won't Do" else "31"
            self.transition(issue, transition, resolution)
            return issue

    def add_comment(self, issue: Issue, body: str, author: str) -> Comment:
        with self.lock:
            self._counters.comments += 1
            comment = Comment(self._counters.comments, body, author, self.clock())
            issue.comments.append(comment)
            issue.updated = comment.created
            return comment

    # -- faults ------------------------------------------------------------------------------------------

    def inject(self, fault: Fault) -> None:
        with self.lock:
            self.faults.append(fault)

    def clear_faults(self) -> None:
        with self.lock:
            self.faults.clear()

    def take_fault(self, method: str, path: str) -> Fault | None:
        """The first fault that applies to this request, counted down (and dropped once spent)."""
        with self.lock:
            self.requests.append((method, path))
            for fault in self.faults:
                if fault.applies(method, path):
                    fault.count -= 1
                    if fault.count <= 0:
                        self.faults.remove(fault)
                    return fault
            return None


def jira_time(seconds: float) -> str:
    """Jira's timestamp format: ``2026-12-01T14:00:00.000+0000``."""
    moment = datetime.fromtimestamp(seconds, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}+0000"
