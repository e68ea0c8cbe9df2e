"""What must hold however the engine is killed and restarted (issue 9, "Proof"), as functions of what the store,
the ticket backend and UFM show. Each returns one line per violation, empty when the invariant holds.

UFM reuses event ids after it restarts, so an event is known by its id, time, type and object: the harness keeps
every event UFM raised, each with the number of UFM restarts before it (``epoch``), and places it on a component
of the model the way the engine does (``fabric.remediation.signals``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from fabric.remediation.domain import ComponentId, Finding
from fabric.store.records import TicketRecord, TicketState
from tickets.base import Ticket, TicketStatus

LINK_EVENTS = frozenset({329, 328, 276, 112})
"""UFM events of a link's state: link down/up, port down, link downed."""
PORT_ACTION_DONE = 336
"""UFM's "port action succeeded": a disable or enable UFM carried out."""
OWN_ACTION_WINDOW = timedelta(minutes=2)
"""How long after a port action UFM's link events on that cable are the action's own (the simulator raises them
at once; UFM may take a few seconds)."""


@dataclass(frozen=True, slots=True)
class UfmEvent:
    """One event UFM raised, known by id, time, type and object."""

    epoch: int
    """UFM restarts before it: ids start again from 1 after each."""
    id: int
    type: int
    at: datetime
    object: str
    component: ComponentId | None
    """Where the engine places it (for a port action: the cable of the port)."""
    action: str | None = None
    """For a port action: ``disable`` or ``enable``."""

    def __str__(self) -> str:
        return f"#{self.id} (type {self.type} at {self.at:%H:%M:%S}, UFM epoch {self.epoch})"


class EventIndex:
    """Every event UFM raised, by id, to resolve a finding's evidence (ids only) to the events it can mean."""

    def __init__(self, events: Iterable[UfmEvent]) -> None:
        self.events = list(events)
        self._by_id: dict[int, list[UfmEvent]] = defaultdict(list)
        for event in self.events:
            self._by_id[event.id].append(event)

    def meant(self, finding: Finding, event_id: int) -> list[UfmEvent]:
        """The events an evidence id of ``finding`` can be: that id, on its component, no later than the finding
        (any component, if none matches: a switch's finding cites events on its ports)."""
        earlier = [e for e in self._by_id.get(event_id, ()) if e.at <= finding.at]
        placed = [e for e in earlier if e.component == finding.component]
        return placed or earlier

    def port_actions(self) -> list[UfmEvent]:
        return [e for e in self.events if e.type == PORT_ACTION_DONE and e.action in ("disable", "enable")]


def _finding(finding: Finding) -> str:
    return f"{finding.rule} finding on {finding.component} at {finding.at:%H:%M:%S}"


def repeated_evidence(findings: Sequence[Finding], index: EventIndex) -> list[str]:
    """(a) No finding whose evidence counts one event twice: an id may appear as often as UFM raised events with
    it on that component (once per UFM restart at most), never more."""
    problems = []
    for finding in findings:
        repeated = [f"#{event_id} x{times} (UFM raised {len(meant)})"
                    for event_id, times in sorted(Counter(finding.evidence).items())
                    if times > len(meant := index.meant(finding, event_id))]
        if repeated:
            problems.append(f"{_finding(finding)}: evidence {list(finding.evidence)} counts events more often than "
                            f"UFM raised them: {', '.join(repeated)}")
    return problems


def own_action_evidence(findings: Sequence[Finding], index: EventIndex,
                        window: timedelta = OWN_ACTION_WINDOW) -> list[str]:
    """(b) No finding counts a link event automation caused: one on the cable within ``window`` after UFM carried
    out a disable or enable of it. An evidence id counts as own only if every event it can mean is."""
    actions: dict[ComponentId, list[UfmEvent]] = defaultdict(list)
    for action in index.port_actions():
        if action.component is not None:
            actions[action.component].append(action)

    def cause(event: UfmEvent) -> UfmEvent | None:
        if event.type not in LINK_EVENTS or event.component is None:
            return None
        before = [a for a in actions.get(event.component, ()) if a.at <= event.at <= a.at + window]
        return max(before, key=lambda a: (a.at, a.epoch, a.id)) if before else None

    problems = []
    for finding in findings:
        own = []
        for event_id in dict.fromkeys(finding.evidence):
            causes = [cause(e) for e in index.meant(finding, event_id)]
            first = causes[0] if causes else None
            if first is not None and all(causes):
                own.append(f"#{event_id} after the {first.action} at {first.at:%H:%M:%S}")
        if own:
            problems.append(f"{_finding(finding)}: evidence {list(finding.evidence)} includes automation's own "
                            f"link events: {', '.join(own)}")
    return problems


def taken_out(index: EventIndex, tick: Callable[[datetime], datetime]) -> list[datetime]:
    """When UFM took a port out: each disable it carried out on a port that was not disabled already (a second job
    for a port already out, e.g. one sent again after a crash, takes nothing out), at the tick of the cycle that
    asked for it (``tick``: the guard's clock is the cycle's start, job polls move the clock within it)."""
    out: set[str] = set()
    times = []
    for action in sorted(index.port_actions(), key=lambda a: (a.at, a.epoch, a.id)):
        if action.action == "enable":
            out.discard(action.object)
        elif action.object not in out:
            out.add(action.object)
            times.append(tick(action.at))
    return times


def hourly_rate(index: EventIndex, limit: int, tick: Callable[[datetime], datetime]) -> list[str]:
    """(c) At most ``limit`` ports taken out in any sliding hour, counting what UFM did (``taken_out``)."""
    times = taken_out(index, tick)
    over: dict[datetime, str] = {}
    for end in times:
        inside = sum(1 for t in times if end - timedelta(hours=1) < t <= end)
        if inside > limit:
            over[end] = f"{inside} ports taken out in the hour up to {end:%H:%M} (limit {limit})"
    return list(over.values())


def breaker_trip(uninterrupted: datetime | None, killed: datetime | None, interval: timedelta) -> list[str]:
    """(d) The storm breaker trips within one cycle of when it trips in the uninterrupted run."""
    if uninterrupted is None:
        return ["the storm breaker never tripped in the uninterrupted run: the scenario's storm is too small"]
    if killed is None:
        return [f"the storm breaker never tripped (the uninterrupted run tripped at {uninterrupted:%H:%M:%S})"]
    late = killed - uninterrupted
    if abs(late) > interval:
        return [f"the storm breaker tripped at {killed:%H:%M:%S}, {late.total_seconds() / 60:+.0f} min from the "
                f"uninterrupted run's {uninterrupted:%H:%M:%S} (one cycle: {interval.total_seconds():.0f} s)"]
    return []


def disabled_without_one_ticket(disabled: Iterable[str], components: Mapping[str, ComponentId],
                                automation: set[str], open_tickets: Sequence[Ticket],
                                key: Callable[[ComponentId], str],
                                awaiting_resume: frozenset[ComponentId] = frozenset()) -> list[str]:
    """(e) Every port UFM shows disabled by automation (a port an intent names) has exactly one open ticket.

    ``awaiting_resume``: repaired, their ticket resolved and their enable not carried out yet, by design: while
    the storm breaker halts automation, or while the enable is in flight; they need none."""
    per_key = Counter(t.dedup_key for t in open_tickets if t.status is TicketStatus.OPEN)
    problems = []
    for port in sorted(disabled):
        component = components.get(port)
        if port not in automation:
            problems.append(f"UFM shows {port} ({component}) disabled, and no intent of automation names it")
        elif component is None:
            problems.append(f"UFM shows {port} disabled, a port of no planned cable")
        elif component not in awaiting_resume and (count := per_key[key(component)]) != 1:
            problems.append(f"UFM shows {port} ({component}) disabled by automation with {count} open tickets")
    return problems


_BACKEND_STATUS = {TicketState.OPEN: TicketStatus.OPEN, TicketState.RESOLVED: TicketStatus.RESOLVED,
                   TicketState.CLOSED: TicketStatus.CLOSED}


def ticket_disagreements(rows: Sequence[TicketRecord], backend: Sequence[Ticket]) -> list[str]:
    """(f) The store and the backend agree on every ticket: same status, none the other does not know."""
    by_key = {t.key: t for t in backend}
    problems = []
    for row in rows:
        if row.external_key is None:
            adopted = [t.key for t in backend if t.dedup_key == row.dedup_key and t.status is TicketStatus.OPEN]
            if adopted:
                problems.append(f"the store is still creating {row.component or 'the storm'}'s ticket while the "
                                f"backend has {', '.join(adopted)} open for it")
            continue
        ticket = by_key.get(row.external_key)
        if ticket is None:
            problems.append(f"the store names ticket {row.external_key} ({row.component}), the backend has no such "
                            "ticket")
        elif _BACKEND_STATUS.get(row.state) is not ticket.status:
            problems.append(f"{row.external_key} ({row.component or 'the storm'}): {row.state.value} in the store, "
                            f"{ticket.status.value} in the backend")
    known = {row.external_key for row in rows}
    problems += [f"{t.key} ({t.summary}, {t.status.value} in the backend) is unknown to the store"
                 for t in backend if t.key not in known]
    return problems
