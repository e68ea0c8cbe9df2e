"""The golden set: the hosts a scheduler should fill first, from each host's reliability history.

A host is golden at an instant when it is healthy now, none of its components (its adapters' cables and ports, the
host itself, a leaf it hangs from) had a finding within ``clean_for``, none was ever quarantined, and the service
has watched the fabric for at least ``clean_for`` (a host nobody watched is not known clean, only unknown).

Pure: ``Ledger`` is fed the store's history a row at a time, in any order and in as many pieces as it comes
(findings, quarantines, tickets, the strikes of component records), and answers at any instant. What folds a row
is cheap and per component, so the API keeps one ledger and feeds it only the rows added since it last looked.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from fabric.remediation.domain import ComponentId

HostsOf = Callable[[ComponentId], tuple[str, ...]]
"""The hosts a component's faults count against (case-folded names; none for a component off every host)."""


@dataclass(slots=True)
class History:
    """One component's reliability history, or a host's (its components' summed)."""

    findings: int = 0
    last_finding: datetime | None = None
    tickets: int = 0
    repairs: int = 0
    """Tickets the ticket system resolved or closed: a repair done (or judged not needed) on the component."""
    strikes: int = 0
    """The strikes its record carries (a host: its components' summed): how often it broke again after a repair."""
    quarantined: bool = False
    """It was quarantined at some time (broke too often): a host with such a component is never golden."""

    def clean_since(self, watched_since: datetime) -> datetime:
        """Since when nothing was found: its last finding, or the start of the watch when later."""
        if self.last_finding is None or self.last_finding < watched_since:
            return watched_since
        return self.last_finding

    def add(self, other: History) -> None:
        self.findings += other.findings
        if other.last_finding is not None and (self.last_finding is None or other.last_finding > self.last_finding):
            self.last_finding = other.last_finding
        self.tickets += other.tickets
        self.repairs += other.repairs
        self.strikes += other.strikes
        self.quarantined |= other.quarantined


@dataclass(slots=True)
class _Ticket:
    component: ComponentId
    repaired: bool


@dataclass(slots=True)
class Ledger:
    """Every component's history and, per host, what golden needs (the last finding, ever quarantined)."""

    hosts_of: HostsOf
    components: dict[ComponentId, History] = field(default_factory=dict)
    _last_bad: dict[str, datetime] = field(default_factory=dict)
    _quarantined: set[str] = field(default_factory=set)
    _of_host: dict[str, set[ComponentId]] = field(default_factory=dict)
    _tickets: dict[int, _Ticket] = field(default_factory=dict)

    def _history(self, component: ComponentId) -> History:
        found = self.components.get(component)
        if found is None:
            found = self.components[component] = History()
            for host in self.hosts_of(component):
                self._of_host.setdefault(host, set()).add(component)
        return found

    def finding(self, component: ComponentId, at: datetime) -> None:
        history = self._history(component)
        history.findings += 1
        if history.last_finding is None or at > history.last_finding:
            history.last_finding = at
        for host in self.hosts_of(component):
            if host not in self._last_bad or at > self._last_bad[host]:
                self._last_bad[host] = at

    def quarantine(self, component: ComponentId) -> None:
        self._history(component).quarantined = True
        self._quarantined.update(self.hosts_of(component))

    def ticket(self, ticket_id: int, component: ComponentId, *, repaired: bool) -> None:
        """A ticket row as the store holds it now: counted once however often it is seen; a repair once
        resolved (a ticket reopened after its repair stays one repair: the component was repaired)."""
        history = self._history(component)
        known = self._tickets.get(ticket_id)
        if known is None:
            known = self._tickets[ticket_id] = _Ticket(component, repaired=False)
            history.tickets += 1
        if repaired and not known.repaired:
            known.repaired = True
            history.repairs += 1

    def strikes(self, component: ComponentId, strikes: int) -> None:
        """The strikes a component's record carries now (the record is forgotten once healthy: the most it
        carried stays)."""
        history = self._history(component)
        history.strikes = max(history.strikes, strikes)

    def of_host(self, host: str) -> list[ComponentId]:
        """``host``'s components with a history, in order."""
        return sorted(self._of_host.get(host, ()))

    def host(self, host: str) -> History:
        """``host``'s history: its components' summed (nothing recorded: an empty one)."""
        total = History()
        for component in self._of_host.get(host, ()):
            total.add(self.components[component])
        return total

    def is_golden(self, host: str, now: datetime, clean_for: timedelta, watched_since: datetime,
                  unhealthy: Collection[str] = ()) -> bool:
        if host in self._quarantined or host in unhealthy or watched_since > now - clean_for:
            return False
        last = self._last_bad.get(host)
        return last is None or last <= now - clean_for

    def golden(self, hosts: Iterable[str], now: datetime, clean_for: timedelta, watched_since: datetime,
               unhealthy: Collection[str] = ()) -> list[str]:
        """The golden ones of ``hosts`` (case-folded), in their order."""
        if watched_since > now - clean_for:
            return []
        return [host for host in hosts if self.is_golden(host, now, clean_for, watched_since, unhealthy)]


def days_clean(history: History, now: datetime, watched_since: datetime) -> int:
    """Whole days since ``history``'s last finding (or the watch's start), never below zero."""
    return max(0, (now - history.clean_since(watched_since)).days)
