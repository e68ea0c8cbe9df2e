"""Signals over time windows -> findings with their evidence (the rule table of docs/design.md).

Every number is a setting. Link-down evidence is only counted once it is older than ``settle`` (a switch
reboot or node-down event may arrive a little after the link-down it explains), up to ``boot_time`` longer
after its switch or host lost several links at once (a reboot, whose 1312 or 332 comes when the device is
back), and only when no reboot, node down/up or silence explains it. A finding is emitted again for the same
rule only when new evidence arrived, so a component on probation gets one strike per new fault, not one per
cycle.

Components are evaluated in the order their signals arrived (never in hash order), so the same events always
give the same findings in the same order. Each component's history is also indexed by kind (the signals the
counted rules and the flap rule read), kept in step with it, so that a busy component is not rescanned whole
at every cycle; a counted rule is only re-evaluated when a signal of its kind arrived, since without one its
window can only lose evidence and cannot produce a finding. The flap rule likewise runs on a new link-state
signal, or for a link whose last episode was waiting to settle.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from heapq import heappop, heappush

from fabric.remediation.domain import ComponentId, ComponentKind, Finding
from fabric.remediation.kinds import SignalKind
from fabric.remediation.muting import Attribution, Muter, Muters, OwnActions
from fabric.remediation.rules import (
    COUNTED_RULES,
    FLAP,
    IMMEDIATE_RULES,
    LINK_DOWN,
    TICKET_ONLY_RULES,
    RuleSettings,
)
from fabric.remediation.signals import NO_EVENT, Signal
from topology.model import Fabric

# The immediate and ticket-only rules by the signal that raises them, as declared in fabric.remediation.rules.
IMMEDIATE: dict[SignalKind, str] = {rule.signal: rule.name for rule in IMMEDIATE_RULES if rule.signal is not None}
NEVER_AUTO_RESTORE = frozenset(rule.signal for rule in IMMEDIATE_RULES if rule.never_auto_restore)
TICKET_ONLY: dict[SignalKind, str] = {rule.signal: rule.name for rule in TICKET_ONLY_RULES if rule.signal is not None}
ATTRIBUTING = frozenset({SignalKind.SWITCH_REBOOTED, SignalKind.SWITCH_DOWN, SignalKind.SWITCH_UP,
                         SignalKind.NODE_DOWN, SignalKind.NODE_UP})
LINK_STATE = frozenset({SignalKind.LINK_DOWN, SignalKind.LINK_UP, SignalKind.PORT_DOWN, SignalKind.LINK_DOWNED})
_QUEUE = {**dict.fromkeys(LINK_STATE, 0), **{rule.signal: n for n, rule in enumerate(COUNTED_RULES, start=1)}}
"""Which of a track's queues a kind of the history goes to: link state (the flap rule), then one per counted rule
(``fabric.remediation.rules.COUNTED_RULES``), in the table's order."""
_QUEUES = 1 + len(COUNTED_RULES)
_NOTHING: tuple[Signal, ...] = ()
"""A track's queue no signal has come to yet (one object for all: a list is made at the first signal)."""
_FRESH_LINK_STATE = 1 << 0
_FRESH_COUNTED = sum(1 << n for n in range(1, _QUEUES))
_SWEEP_EVERY = timedelta(minutes=30)
"""How far the newest signal moves between two sweeps of what the detectors keep besides the tracks (``_sweep``): each
looks at every entry (a few milliseconds for a storm's tens of thousands)."""
_new_finding: Callable[[tuple[object, ...]], Finding] = partial(tuple.__new__, Finding)
"""``Finding(*fields)`` built in C (a named tuple's own ``__new__`` is a Python function)."""


# What ``observe`` does with a kind of signal, found with one lookup instead of a membership test per rule
# table: into the component's history (windowed rules); an attribution (reboots, node down/up; a switch-down
# also opens a ticket); a ticket-only finding; an immediate finding; a port action UFM carried out.
_HISTORY, _ATTRIBUTION, _TICKET_ONLY, _IMMEDIATE, _PORT_ACTION = range(5)
_ROUTE: dict[SignalKind, int] = {
    kind: _ATTRIBUTION if kind in ATTRIBUTING else _TICKET_ONLY if kind in TICKET_ONLY
    else _IMMEDIATE if kind in IMMEDIATE else _PORT_ACTION if kind is SignalKind.PORT_ACTION else _HISTORY
    for kind in SignalKind
}
# Enum members bound once: on Python 3.11 reading ``SignalKind.X`` costs ten times a global, and these are
# read for every signal.
_LINK = ComponentKind.LINK
_LINK_UP, _LINK_DOWNED, _UNHEALTHY_PORT = SignalKind.LINK_UP, SignalKind.LINK_DOWNED, SignalKind.UNHEALTHY_PORT
_PORT_LEVEL_DOWN = frozenset({SignalKind.PORT_DOWN, SignalKind.LINK_DOWNED})
"""Link-state signals one end reports: both ends must agree before they make an episode."""
_REPORTED_DOWN = frozenset({SignalKind.LINK_DOWN, SignalKind.PORT_DOWN})
"""A link or port reported down (329, 276): what a reboot does to all of a device's links at once (a link-downed
counter, 112, is also what a storm of threshold events raises on random ports)."""


@dataclass(frozen=True, slots=True)
class _CountedRule:
    """``count`` or more signals of one history queue within ``window`` of the newest: a finding."""

    rule: str
    queue: int
    fresh: int
    """``1 << queue``: the bit of ``_Track.fresh`` and ``_Track.unordered`` that concerns the rule."""
    count: int
    window: timedelta
    reason: str
    """What follows the number of signals in a finding's reason."""


@dataclass(slots=True)
class _Episode:
    down: datetime
    up: datetime | None
    evidence: list[int] = field(default_factory=list)
    reported_down: bool = False
    """A link or port down event (329, 276) is among its evidence, not only link-downed counters (112): only such
    an episode, when it lasts, says the link is down now."""


@dataclass(slots=True, eq=False)
class _Track:
    """One component's history and, in the same order, its link-state signals and those of each counted rule.

    Lists, not deques, and a queue made only when a signal comes to it: a storm makes a track per port it touches,
    most holding a signal or two of one kind, and an empty deque is 760 bytes (a block of 64 slots made with it). On
    h100-32k a storm's 41,713 tracks held 115 MiB in four deques each; pruning takes from the front once in a while
    (``_prune``), which a list does by one slice deletion."""

    history: list[Signal] = field(default_factory=list)
    queues: list[list[Signal] | tuple[Signal, ...]] = field(default_factory=lambda: [_NOTHING] * _QUEUES)
    fresh: int = 0
    """Bit ``1 << queue`` set: a counted signal of that queue arrived since the last evaluation."""
    unordered: int = 0
    """Bit ``1 << queue`` set: a signal arrived in that queue older than the one before it (sticky)."""
    devices: tuple[str, ...] = ()
    newest: datetime | None = None
    """The newest signal's time: pruning takes only signals older than the horizon, so while the track holds any,
    the newest is among them."""
    on_expiry_heap: bool = False
    """It has its one entry on the detectors' expiry heap (``Detectors._expire``)."""


@dataclass(slots=True)
class Explained:
    """A link-down the detectors did not count, and why: the operator sees it in ``replay``."""

    component: ComponentId
    at: datetime
    reason: str
    evidence: int


class Detectors:
    def __init__(self, fabric: Fabric, settings: RuleSettings | None = None, muter: Muter | None = None) -> None:
        """``muter``: silences and maintenance windows (the detectors add their own reboot attribution after it)."""
        self.fabric = fabric
        self.settings = settings or RuleSettings()
        self.attribution = Attribution(fabric, self.settings)
        self.own = OwnActions(self.settings.own_action_window)
        self.muter = Muters(*(m for m in (muter,) if m is not None), self.own, self.attribution)
        self._quiet = self.muter.for_signals()
        """How a signal that is not a link-state change asks the muters (``None``: nothing could mute it)."""
        self._explains = self.muter.for_links()
        # Ordered sets (dicts): components are evaluated in the order their signals arrived.
        self.dirty: dict[ComponentId, None] = {}
        self.pending: dict[ComponentId, None] = {}
        self.tracks: dict[ComponentId, _Track] = {}
        """Per component, its history and the same signals by kind: ``_prune`` removes from the queues what it
        removes from the history."""
        self.last_evidence: dict[tuple[ComponentId, str], tuple[datetime, int]] = {}
        """The newest evidence each (component, rule) fired on, as (time, UFM event id): time first, because
        UFM restarts its event ids from 1 and the ids alone would hide every new fault after a restart."""
        self.explained: list[Explained] = []
        """The link-downs explained since the last ``take_explained`` (a long run would otherwise keep them all)."""
        self._explained_evidence: deque[int] = deque(maxlen=64)
        """The newest explained link-downs' evidence (UFM event ids), so that each is noted once."""
        self._expiring: list[tuple[datetime, int, ComponentId, _Track]] = []
        """A heap of (a track's newest signal when it was put on, a tie-break, component, track), one entry per
        evaluated track: when the oldest is older than the horizon, so may be every signal of its track
        (``_expire``)."""
        self._expiring_order = itertools.count()
        self._newest: datetime | None = None
        """The newest signal's time (``_sweep``)."""
        self._swept: datetime | None = None
        """The ``limit`` of the last ``_sweep``."""
        self.fresh_since: dict[ComponentId, datetime] = {}
        """Components given back to service by our own enable (a repair, a cleared quarantine): their signals from
        before it are of the old hardware and never counted again (``own_action``)."""
        settings = self.settings
        self._kept = settings.history
        self._counted_rules = tuple(
            _CountedRule(rule.rule, _QUEUE[rule.signal], 1 << _QUEUE[rule.signal], threshold.count, threshold.window,
                         f"{rule.signal.value} events within {threshold.window} (threshold {threshold.count})")
            for rule in COUNTED_RULES for threshold in (settings.threshold(rule.rule),))

    # --- intake --------------------------------------------------------------------------------------

    def own_action(self, component: ComponentId, at: datetime, what: str, *, afresh: bool = False) -> None:
        """The engine wrote to ``component``'s port at ``at``: its link events within the own-action window are
        the write's effect. ``afresh``: it was given back to service (an enable, a reset), so its history starts
        again from here, and a repaired link's old faults cannot add up with a new one into a strike; from the newest
        such write, whatever order they are told in (a restart tells the intents' first, then the resets')."""
        self.own.note(component, at, what)
        if afresh and at >= self.fresh_since.get(component, at):
            self.fresh_since[component] = at
            self.tracks.pop(component, None)
            self.dirty.pop(component, None)
            self.pending.pop(component, None)

    def observe(self, signals: Iterable[Signal]) -> list[Finding]:
        """Record signals; immediate and ticket-only rules fire here, windowed rules in ``evaluate``."""
        findings: list[Finding] = []
        tracks, dirty, fresh_since = self.tracks, self.dirty, self.fresh_since
        newest = self._newest
        for signal in signals:
            if newest is None or signal.at > newest:
                newest = self._newest = signal.at
            route = _ROUTE[signal.kind]
            if route == _HISTORY:
                component = signal.component
                if fresh_since and (since := fresh_since.get(component)) is not None and signal.at < since:
                    continue  # from before our enable gave it back to service
                track = tracks.get(component)
                if track is None:
                    track = tracks[component] = _Track(devices=signal.devices)
                track.history.append(signal)
                if track.newest is None or signal.at > track.newest:
                    track.newest = signal.at
                dirty[component] = None
                devices = signal.devices
                if devices and devices is not track.devices and devices != track.devices:
                    track.devices = devices
                queue = _QUEUE.get(signal.kind)
                if queue is not None:
                    if queue == 0 and (signal.kind in _REPORTED_DOWN
                                       or (signal.telemetry and signal.kind is _LINK_DOWNED)):
                        # A link-down counter on both ends (telemetry's) says the link went down, as 329 does.
                        self.attribution.note_down(signal)
                    queued = track.queues[queue]
                    if type(queued) is list:
                        if queued and signal.at < queued[-1].at:
                            track.unordered |= 1 << queue
                        queued.append(signal)
                    else:
                        track.queues[queue] = [signal]
                    track.fresh |= 1 << queue
            elif route == _ATTRIBUTION:
                self.attribution.note(signal)
                if signal.kind in TICKET_ONLY:
                    findings += self._ticket_only(signal)
            elif route == _TICKET_ONLY:
                findings += self._ticket_only(signal)
            elif route == _PORT_ACTION:
                self.own.note(signal.component, signal.at, f"a port action UFM reports (336, event {signal.event})")
            else:
                if signal.kind is _UNHEALTHY_PORT and "MANUAL" in signal.detail.upper():
                    continue  # isolated by hand or by us: not a new fault
                quiet = self._quiet
                if quiet is not None and quiet(signal.component, signal.at, signal.devices, False) is not None:
                    continue
                findings += self._fire(signal.component, IMMEDIATE[signal.kind], signal.at,
                                       f"{signal.kind.value} reported by {signal.reporter or 'UFM'}: {signal.detail}",
                                       [signal.event], never_auto_restore=signal.kind in NEVER_AUTO_RESTORE)
        return findings

    def _ticket_only(self, signal: Signal) -> list[Finding]:
        quiet = self._quiet
        if quiet is not None and quiet(signal.component, signal.at, signal.devices, False) is not None:
            return []
        return self._fire(signal.component, TICKET_ONLY[signal.kind], signal.at,
                          f"{signal.kind.value}: {signal.detail}".rstrip(": "), [signal.event], ticket_only=True)

    def _fire(self, component: ComponentId, rule: str, at: datetime, reason: str, evidence: list[int],
              *, ticket_only: bool = False, never_auto_restore: bool = False) -> list[Finding]:
        newest = (at, max(evidence))
        previous = self.last_evidence.get((component, rule))
        if previous is not None and previous >= newest:
            return []
        self.last_evidence[(component, rule)] = newest
        if NO_EVENT in evidence:  # a telemetry signal's: evidence names UFM events only
            evidence = [event for event in evidence if event != NO_EVENT]
        return [_new_finding((component, rule, at, reason, tuple(evidence), ticket_only, never_auto_restore, False))]

    # --- windows -------------------------------------------------------------------------------------

    def evaluate(self, now: datetime) -> list[Finding]:
        """Windowed rules over the components that saw new signals (or wait for evidence to settle)."""
        findings: list[Finding] = []
        waiting = self.pending
        todo = waiting | self.dirty if waiting else self.dirty
        self.dirty, self.pending = {}, {}
        cutoff = now - self._kept
        for component in todo:
            track = self.tracks.get(component)
            if track is None:
                continue
            fresh, track.fresh = track.fresh, 0
            history = track.history
            if history and history[0].at < cutoff:
                self._prune(track, cutoff)
            if not history:  # every signal it held was older than the horizon
                del self.tracks[component]
                continue
            # Like the counted rules, the flap rule can only fire on a new link-state signal, or on an episode
            # that has since settled (then the component is waiting).
            if fresh & _FRESH_LINK_STATE or component in waiting:
                findings += self._flaps(component, track.queues[0], track.devices, now)
            if fresh & _FRESH_COUNTED:
                for counted in self._counted_rules:
                    if fresh & counted.fresh:
                        findings += self._counted(component, track, counted)
            if not track.on_expiry_heap and track.newest is not None:
                heappush(self._expiring, (track.newest, next(self._expiring_order), component, track))
                track.on_expiry_heap = True
        self._expire(cutoff)
        if self._newest is not None:
            limit = self._newest - self._kept
            if self._swept is None or limit - self._swept >= _SWEEP_EVERY:
                self._sweep(limit)
        return findings

    def _expire(self, cutoff: datetime) -> None:
        """Drop the tracks whose every signal is older than ``cutoff``, as ``_prune`` would empty them if they were
        evaluated again. A component no signal comes to again is never evaluated again: without this a storm's
        tracks (one per port it touched) would stay for the process's life. Never a scan of every track: a track's
        one entry comes off the heap once the time it was put on with ages out; a track that got newer signals
        since goes back on with its newest (a chronic port's, a few times a week rather than at every
        evaluation)."""
        expiring, tracks = self._expiring, self.tracks
        while expiring and expiring[0][0] < cutoff:
            _, _, component, track = heappop(expiring)
            if tracks.get(component) is not track:
                continue  # dropped since (given back to service, or emptied), perhaps made anew
            assert track.newest is not None  # it was put on the heap with it
            if track.newest < cutoff:
                del tracks[component]
            else:
                heappush(expiring, (track.newest, next(self._expiring_order), component, track))

    def _sweep(self, limit: datetime) -> None:
        """Forget what is kept by component or device besides the tracks once no signal can be told with it: the
        newest evidence each rule fired on, and the attribution's link-downs. Both were kept for good before, an
        entry for every component that fired and every device that lost a link, made among a storm's transient
        objects and keeping their memory from the system for the process's life.

        ``limit`` is the newest signal's time less the horizon. No signal older than it comes any more: events
        reach the detectors through ``SeenEvents``, which drops those older than the newest it counted, at least
        as new as the detectors' newest, less the horizon (UFM Telemetry's signals are its samples' times, the
        newest). A track may still hold an older one (a cycle's events can span more than the horizon, and a
        track is pruned from its front), so the line is the older of ``limit`` and the oldest signal a track
        holds. A finding is no older than one of its signals, so an evidence entry older than the line can no
        longer hold one back; what the attribution forgets is ``forget_before``'s."""
        line = min(limit, min((signal.at for track in self.tracks.values() for signal in track.history),
                              default=limit))
        self.last_evidence = {key: newest for key, newest in self.last_evidence.items() if newest[0] >= line}
        self.attribution.forget_before(line)
        self._swept = limit

    @staticmethod
    def _prune(track: _Track, cutoff: datetime) -> None:
        """The signals older than ``cutoff`` at the history's front taken out, and the same from the queues: each
        queue keeps history order, so what leaves the history's front leaves the queue's front."""
        history, queues = track.history, track.queues
        gone = 0
        taken = [0] * _QUEUES
        for signal in history:
            if signal.at >= cutoff:
                break
            gone += 1
            if (queue := _QUEUE.get(signal.kind)) is not None:
                taken[queue] += 1
        del history[:gone]
        for queue, count in enumerate(taken):
            if count:
                queued = queues[queue]
                assert type(queued) is list  # it held the signals taken
                del queued[:count]

    def _counted(self, component: ComponentId, track: _Track, counted: _CountedRule) -> list[Finding]:
        """``counted.count`` or more signals of its queue within ``counted.window`` of the last to arrive."""
        hits = track.queues[counted.queue]
        if len(hits) < counted.count:
            return []
        start = hits[-1].at - counted.window
        recent: list[Signal] = []
        if not track.unordered & counted.fresh:
            # In time order: the signals in the window are a suffix, no need to look at the older ones.
            for signal in reversed(hits):
                if signal.at < start:
                    break
                recent.append(signal)
            recent.reverse()
        else:
            recent = [s for s in hits if s.at >= start]
        if len(recent) < counted.count:
            return []
        quiet = self._quiet
        if quiet is not None and quiet(component, recent[-1].at, track.devices, False) is not None:
            return []
        return self._fire(component, counted.rule, recent[-1].at, f"{len(recent)} {counted.reason}",
                          [s.event for s in recent])

    def take_explained(self) -> list[Explained]:
        """The link-downs explained since the last call, forgotten here."""
        taken, self.explained = self.explained, []
        return taken

    # --- flaps ---------------------------------------------------------------------------------------

    def _flaps(self, component: ComponentId, history: Sequence[Signal], devices: tuple[str, ...],
               now: datetime) -> list[Finding]:
        """``history``: the component's link-state signals, in history order; ``devices``: those it sits on."""
        if not history or component.kind is not _LINK:
            return []  # no link-state signal: no episode, nothing pending or explained
        settled = now - self.settings.settle
        episodes: list[_Episode] = []
        for episode in self._episodes(history):
            if episode.down > settled:
                self.pending[component] = None  # look again once a late reboot event could have arrived
                continue
            why = self._explains(component, episode.down, devices, True)
            if why is not None:
                if episode.evidence[0] not in self._explained_evidence:
                    self._explained_evidence.append(episode.evidence[0])
                    self.explained.append(Explained(component, episode.down, why, episode.evidence[0]))
                continue
            awaited = self.attribution.awaiting_until(component, devices, episode.down)
            if awaited is not None and settled < awaited:
                # Its device lost several links at once: a reboot, whose 1312 (or 332) comes when it is back.
                self.pending[component] = None
                continue
            episodes.append(episode)
        s = self.settings
        findings: list[Finding] = []
        if episodes and episodes[-1].up is None and episodes[-1].reported_down:
            findings += self._stays_down(component, episodes[-1], now)
        done = [e for e in episodes if e.up is not None]
        if not done:
            return findings
        last = done[-1].up
        assert last is not None
        long = [e for e in done if e.down >= last - s.flap_window]
        burst = [e for e in done if e.down >= last - s.burst_window]
        downtime = sum(((e.up - e.down) for e in long if e.up is not None), timedelta())
        if len(burst) >= s.burst_cycles:
            chosen, reason = burst, f"{len(burst)} down/up cycles within {s.burst_window}"
        elif len(long) >= s.flap_cycles:
            chosen, reason = long, f"{len(long)} down/up cycles within {s.flap_window}"
        elif downtime >= s.downtime and len(long) >= 2:
            # One outage, however long, is not a flap: single transient link-downs happen every day at this
            # scale, and adaptive routing already routes around them (one that lasts is ``_stays_down``'s).
            chosen, reason = long, (f"{downtime.total_seconds():g} s down over {len(long)} down/up cycles within "
                                    f"{s.flap_window} (limit {s.downtime})")
        else:
            return findings
        evidence = [event for e in chosen for event in e.evidence]
        return findings + self._fire(component, FLAP, last, reason, evidence)

    def _stays_down(self, component: ComponentId, episode: _Episode, now: datetime) -> list[Finding]:
        """A link that went down and has not come back for ``down_ticket_after`` is a finding of its own (it is
        taken out, so that it cannot come back flapping into the routes, and ticketed)."""
        limit = self.settings.down_ticket_after
        due = episode.down + limit
        if now < due:
            self.pending[component] = None  # look again when it is due, signals or not
            return []
        return self._fire(component, LINK_DOWN, due, f"down since {episode.down.isoformat()} and not back "
                          f"after {limit}", episode.evidence)

    def _episodes(self, history: Iterable[Signal]) -> list[_Episode]:
        """Down/up episodes of a link. A Link event is both ends by itself; port-level downs need both ends."""
        episodes: list[_Episode] = []
        current: _Episode | None = None
        port_downs: dict[str, Signal] = {}
        for signal in history:
            if signal.kind not in LINK_STATE:
                continue
            if signal.kind is _LINK_UP:
                if current is not None:
                    current.up = signal.at
                    current.evidence.append(signal.event)
                    episodes.append(current)
                    current = None
                port_downs.clear()
                continue
            if signal.kind in _PORT_LEVEL_DOWN:
                port_downs[signal.reporter or ""] = signal
                fresh = [s for s in port_downs.values() if signal.at - s.at <= self.settings.both_ends_window]
                if len(fresh) < 2:
                    continue
                port_downs.clear()
            if current is None:
                current = _Episode(signal.at, None, [signal.event])
            elif signal.event not in current.evidence:
                current.evidence.append(signal.event)
            if signal.kind is not _LINK_DOWNED:
                current.reported_down = True
        if current is not None:
            episodes.append(current)
        return episodes
