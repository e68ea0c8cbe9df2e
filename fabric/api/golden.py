"""The golden set as the API answers it: the store's reliability history folded per host, kept in the API's
process and brought up to date with the rows added since the last request (``Store.history_after``), so that a
request costs what changed since the last one and the plan's hosts once, never a read of the whole history.

Membership is always current: the findings and quarantines (read by id) and what is out of service (by its
lifecycle index) are read at every request. The tickets, repairs and strikes shown beside it are read by their
``updated_at``, which no index covers (a scan of the tickets and of the component records), so at most once every
``CHANGES_EVERY`` of the service's clock: the counts may be that old, never the set.

A host's faults are those of its adapters' cables and ports, of the host itself (``PlanIndex.hosts_of``) and of
a leaf it hangs from (``PlanIndex.behind``): a leaf that failed failed its hosts' jobs too.
"""

from __future__ import annotations

import threading
from datetime import datetime, timedelta

from fabric.api.health import UNUSABLE, unhealthy
from fabric.api.models import ComponentReliability, HostReliability, reliability
from fabric.api.plan_index import PlanIndex
from fabric.remediation.domain import ComponentId, ComponentKind
from fabric.remediation.golden import Ledger, days_clean
from fabric.store import HistoryMark, Store

CHANGES_EVERY = timedelta(seconds=60)
"""How often the tickets and component records are read again for the counts shown (not for membership)."""


class GoldenIndex:
    """One per API process (``ApiContext.golden``); its methods may be called from several worker threads."""

    def __init__(self, index: PlanIndex) -> None:
        self._index = index
        self._ledger = Ledger(self._hosts_of)
        self._mark = HistoryMark()
        self._watched_since: datetime | None = None
        self._changes_read: datetime | None = None
        self._listed_answers: dict[str, tuple[tuple[int, datetime, int], HostReliability]] = {}
        self._lock = threading.Lock()

    def _hosts_of(self, component: ComponentId) -> tuple[str, ...]:
        if component.kind is ComponentKind.SWITCH:
            return self._index.behind.get(component.name, ())
        return self._index.hosts_of(component)

    def _catch_up(self, store: Store, now: datetime) -> datetime | None:
        """Fold what the store added since the last call (under the lock); when the watch began."""
        changed = self._changes_read is None or not now - CHANGES_EVERY < self._changes_read <= now
        rows = store.history_after(self._mark, changed=changed)
        if changed:
            self._changes_read = now
        for component, at in rows.findings:
            self._ledger.finding(component, at)
        for component in rows.quarantines:
            self._ledger.quarantine(component)
        for ticket_id, component, repaired in rows.tickets:
            self._ledger.ticket(ticket_id, component, repaired=repaired)
        for component, strikes in rows.strikes:
            self._ledger.strikes(component, strikes)
        self._mark = rows.mark
        if self._watched_since is None:
            self._watched_since = store.watched_since()
        return self._watched_since

    def golden(self, store: Store, now: datetime, clean_for: timedelta) -> list[HostReliability]:
        """The golden hosts at ``now``, by planned name, each with its history (without its components')."""
        sick = unhealthy(self._index, store.components(UNUSABLE))
        with self._lock:
            since = self._catch_up(store, now) or now
            return [self._listed(host, now, since)
                    for host in self._ledger.golden(self._index.by_name, now, clean_for, since, sick)]

    def count(self, store: Store, now: datetime, clean_for: timedelta) -> int:
        """How many hosts are golden at ``now`` (the metric)."""
        return len(self.golden(store, now, clean_for))

    def history(self, store: Store, host: str, now: datetime, clean_for: timedelta) -> HostReliability:
        """``host``'s history (a case-folded planned name) with its components', and whether it is golden."""
        sick = unhealthy(self._index, store.components(UNUSABLE))
        with self._lock:
            since = self._catch_up(store, now) or now
            golden = self._ledger.is_golden(host, now, clean_for, since, sick)
            return self._answer(host, now, since, golden=golden, components=True)

    def _listed(self, host: str, now: datetime, since: datetime) -> HostReliability:
        """A golden host's answer, built again only once its history or its days clean moved: a scheduler polling
        the list is answered from the same objects (most of a fabric's hosts, once it has settled)."""
        history = self._ledger.host(host)
        key = (history.version, history.clean_since(since), days_clean(history, now, since))
        kept = self._listed_answers.get(host)
        if kept is None or kept[0] != key:
            kept = self._listed_answers[host] = (key, self._answer(host, now, since, golden=True, components=False))
        return kept[1]

    def _answer(self, host: str, now: datetime, since: datetime, *, golden: bool,
                components: bool) -> HostReliability:
        history = self._ledger.host(host)
        parts = ([ComponentReliability(component=str(component), **reliability(self._ledger.components[component]))
                  for component in self._ledger.of_host(host)] if components else [])
        # built without validation: every value is the ledger's own, typed (a golden list holds thousands)
        return HostReliability.model_construct(host=self._index.hosts[host], golden=golden,
                                               clean_since=history.clean_since(since),
                                               days_clean=days_clean(history, now, since), components=parts,
                                               **reliability(history))
