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
    version: int = 0
    """Counts the changes folded into it: an answer built from it stays right while this does not move."""

    def clean_since(self, watched_since: datetime) -> datetime:
        """Since when nothing was found: its last finding, or the start of the watch when later."""
        if self.last_finding is None or self.last_finding < watched_since:
            return watched_since
        return self.last_finding


@dataclass(slots=True)
class _Ticket:
    component: ComponentId
    repaired: bool


_NOTHING = History()


@dataclass(slots=True)
class Ledger:
    """Every component's history, and every host's: its components' summed, kept as each row is folded (a host's
    answer costs a lookup, not a walk over its components)."""

    hosts_of: HostsOf
    components: dict[ComponentId, History] = field(default_factory=dict)
    _hosts: dict[str, History] = field(default_factory=dict)
    _of_host: dict[str, set[ComponentId]] = field(default_factory=dict)
    _tickets: dict[int, _Ticket] = field(default_factory=dict)

    def _fold(self, component: ComponentId, change: Callable[[History], None]) -> None:
        """``change`` made to ``component``'s history and to each of its hosts'."""
        history = self.components.get(component)
        hosts = self.hosts_of(component)
        if history is None:
            history = self.components[component] = History()
            for host in hosts:
                self._of_host.setdefault(host, set()).add(component)
        for each in (history, *(self._hosts.setdefault(host, History()) for host in hosts)):
            change(each)
            each.version += 1

    def finding(self, component: ComponentId, at: datetime) -> None:
        def found(history: History) -> None:
            history.findings += 1
            if history.last_finding is None or at > history.last_finding:
                history.last_finding = at

        self._fold(component, found)

    def quarantine(self, component: ComponentId) -> None:
        def quarantined(history: History) -> None:
            history.quarantined = True

        self._fold(component, quarantined)

    def ticket(self, ticket_id: int, component: ComponentId, *, repaired: bool) -> None:
        """A ticket row as the store holds it now: counted once however often it is seen; a repair once
        resolved (a ticket reopened after its repair stays one repair: the component was repaired)."""
        known = self._tickets.get(ticket_id)
        if known is None:
            known = self._tickets[ticket_id] = _Ticket(component, repaired=False)
            self._fold(component, _one_ticket)
        if repaired and not known.repaired:
            known.repaired = True
            self._fold(known.component, _one_repair)

    def strikes(self, component: ComponentId, strikes: int) -> None:
        """The strikes a component's record carries now (the record is forgotten once healthy: the most it
        carried stays)."""
        more = strikes - self.components.get(component, _NOTHING).strikes
        if more > 0:
            def struck(history: History) -> None:
                history.strikes += more

            self._fold(component, struck)

    def of_host(self, host: str) -> list[ComponentId]:
        """``host``'s components with a history, in order."""
        return sorted(self._of_host.get(host, ()))

    def host(self, host: str) -> History:
        """``host``'s history: its components' summed (nothing recorded: an empty one, not to be changed)."""
        return self._hosts.get(host, _NOTHING)

    def is_golden(self, host: str, now: datetime, clean_for: timedelta, watched_since: datetime,
                  unhealthy: Collection[str] = ()) -> bool:
        history = self._hosts.get(host, _NOTHING)
        if history.quarantined or host in unhealthy or watched_since > now - clean_for:
            return False
        return history.last_finding is None or history.last_finding <= now - clean_for

    def golden(self, hosts: Iterable[str], now: datetime, clean_for: timedelta, watched_since: datetime,
               unhealthy: Collection[str] = ()) -> list[str]:
        """The golden ones of ``hosts`` (case-folded), in their order."""
        if watched_since > now - clean_for:
            return []
        return [host for host in hosts if self.is_golden(host, now, clean_for, watched_since, unhealthy)]


def _one_ticket(history: History) -> None:
    history.tickets += 1


def _one_repair(history: History) -> None:
    history.repairs += 1


def days_clean(history: History, now: datetime, watched_since: datetime) -> int:
    """Whole days since ``history``'s last finding (or the watch's start), never below zero."""
    return max(0, (now - history.clean_since(watched_since)).days)
