"""The engine's burn-in windows (``POST /api/v1/burnin``): asked for through the store, judged with the cycle.

A window asked for (an operator request with its window's row, ``fabric.store._burnin``) is opened by the next
cycle when none is open, and lasts its duration on the engine's clock. Each cycle of the window hands that
cycle's new UFM events to a pipeline of its own, dry, built on the same view with ``[burnin]``'s stricter
thresholds (``BurninSettings.strict``, no reset first): its findings are kept, the first of each component. The
cycle at or after the window's end closes it: the survivors report (``fabric.remediation.burnin``) is stored with
the window, and the window's findings go to that cycle's own step (``Pipeline.step(found=...)``), where the
engine's policy decides on them with everything else, through the same correlation, guard, cap and breaker, and
the engine carries out what it decides (in dry run: records it), except that none of them is reset first (a
finding's ``no_reset``): the window's point is what fails under load. No second rule engine decides anything.

The window's pipeline lives in the engine process: after a restart mid-window it is made again and handed first
the events of UFM's history (as the engine read it at start) raised since the window opened, so a window judges the
same events whether or not the engine restarted during it (the pipeline counts each event once).

Where the engine reads UFM Telemetry, each sample read while the window is open (``sampled``) keeps its received
packets per port: the window's first sample and its newest tell, at the close, the planned ports that carried no
traffic (``idle``, ``fabric.remediation.burnin.idle_ends``). A restart mid-window starts that comparison again from
the first sample after it (the counts are not stored: 200,000 ports on the largest fabric); the report says which
samples it compared, or why it compared none.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from fabric.remediation.burnin import (
    BurninSettings,
    WindowFacts,
    failures_found,
    idle_ends,
    report_dict,
    survivors,
)
from fabric.remediation.domain import ComponentId, Finding
from fabric.remediation.pipeline import Pipeline
from fabric.remediation.policy import PolicyConfig
from fabric.remediation.rules import RuleSettings
from fabric.remediation.view import FabricView
from fabric.store import BurninWindow, RequestKind, Store
from fabric.ufm.models import Event
from topology.guard import CableKey, GuardSettings
from topology.model import End

if TYPE_CHECKING:  # numpy comes with the first sample, not with the engine
    from fabric.telemetry.sample import Sample

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PacketCount:
    """One UFM Telemetry sample's received packets, by UFM's port name."""

    time: datetime
    packets: dict[str, int]


class BurninWindows:
    def __init__(self, store: Store, *, telemetry: bool) -> None:
        """``telemetry``: whether the engine reads UFM Telemetry (and hands its samples to ``sampled``), which a
        report names as why it told no port idle."""
        self.store = store
        self.telemetry = telemetry
        self._window: BurninWindow | None = None
        self._pipeline: Pipeline | None = None
        self._found: dict[ComponentId, Finding] = {}
        self._alerted: set[End] = set()
        self._down: frozenset[CableKey] = frozenset()
        self.history: Sequence[Event] = ()
        """UFM's events as the engine read them at start: a window found open judges those raised since it opened."""
        self._first: PacketCount | None = None
        self._last: PacketCount | None = None
        """The open window's first and newest UFM Telemetry samples' received packets."""

    @property
    def open(self) -> bool:
        """Whether a window is open (and wants UFM Telemetry's samples, ``sampled``)."""
        return self._window is not None

    def sampled(self, sample: Sample) -> None:
        """A UFM Telemetry sample read while the window is open: the first is kept, and the newest."""
        count = PacketCount(sample.time, sample.received_packets())
        if self._first is None:
            self._first = count
        else:
            self._last = count

    def cycle(self, view: FabricView, events: Sequence[Event], now: datetime, *, burnin: BurninSettings,
              policy: PolicyConfig, rules: RuleSettings, guard: GuardSettings,
              down: frozenset[CableKey]) -> list[Finding]:
        """This cycle's part: a window asked for opened, the open one's events judged, one due closed. Returns the
        findings of a window that closed (for the cycle's own step), else none."""
        # Only the first cycle after a start can find open a window that UFM's history (as read at start) holds
        # events of; after it the list is dropped, not kept for the process's life (250,000 events at most).
        history, self.history = self.history, ()
        window = self._window or self.store.running_burnin() or self._open(now, policy.dry_run)
        if window is None:
            return []
        if window is not self._window:  # opened now, or found open after a restart
            self._window, self._found, self._alerted, self._down = window, {}, set(), down
            self._first = self._last = None
            self._pipeline = Pipeline(view, replace(burnin.strict_policy(policy), dry_run=True),
                                      burnin.strict(rules), guard)
            assert window.started_at is not None
            opened = window.started_at
            events = sorted([*(e for e in history if e.timestamp >= opened), *events], key=_time)
        assert self._pipeline is not None
        if self._pipeline.view is not view:
            self._pipeline.rebase(view)
        for finding in self._pipeline.step(events, now).findings:
            self._found.setdefault(finding.component, finding)
        self._alerted.update(end for event in events if event.event_id in burnin.utilisation_events
                             and (end := view.resolver.ports.get(event.object_name or "")) is not None)
        assert window.ends_at is not None
        if now < window.ends_at:
            return []
        return self._close(window, view, now, burnin.min_packets)

    def _open(self, now: datetime, dry_run: bool) -> BurninWindow | None:
        asked = self.store.pending_requests(RequestKind.BURNIN)
        if not asked:
            return None
        request = asked[0]
        with self.store.transaction() as tx:
            window = tx.open_burnin(request.id, now, dry_run=dry_run)
            assert window.ends_at is not None
            tx.handle_request(request.id, ("dry run: " if dry_run else "") +
                              f"burn-in window {window.id} open until {window.ends_at.isoformat()}")
        log.info("burn-in window %d open until %s, asked by %s: %s", window.id, window.ends_at.isoformat(),
                 request.requested_by, request.reason)
        return window

    def _close(self, window: BurninWindow, view: FabricView, now: datetime, min_packets: int) -> list[Finding]:
        found = sorted(self._found.values(), key=lambda f: (f.at, f.component))
        first, last = self._first, self._last
        idle = frozenset() if first is None or last is None else idle_ends(
            view.resolver.ports, first.packets, last.packets, min_packets)
        ports, switches = survivors(view.plan, view.context, failures_found(found),
                                    WindowFacts(self._down, idle, frozenset(self._alerted)))
        report: dict[str, Any] = {
            **report_dict(ports, switches),
            "telemetry": self._compared(),
            "findings": [{"component": str(f.component), "rule": f.rule, "at": f.at.isoformat(), "reason": f.reason}
                         for f in found],
        }
        self.store.end_burnin(window.id, now, report)
        log.info("burn-in window %d ended: %d of %d switches survived, %d finding(s) handed to the policy", window.id,
                 report["switches"]["survived"], len(switches), len(found))
        self._window, self._pipeline, self._found, self._alerted = None, None, {}, set()
        self._first = self._last = None
        # Decided as the window judged them: no reset first (``BurninSettings.strict_policy``), whatever the
        # service's own reset ladder does with its findings.
        return [finding._replace(no_reset=True) for finding in found]

    def _compared(self) -> dict[str, Any]:
        """Which UFM Telemetry samples the ``idle`` ports were told from, or why none were."""
        first, last = self._first, self._last
        if first is not None and last is not None:
            return {"compared": True, "first": first.time.isoformat(), "last": last.time.isoformat()}
        why = ("fewer than two UFM Telemetry samples were read while the window was open (since the engine's "
               "restart, if it restarted during it)") if self.telemetry else "the engine reads no UFM Telemetry"
        return {"compared": False, "why": f"{why}: no port told idle"}


def _time(event: Event) -> datetime:
    return event.timestamp
