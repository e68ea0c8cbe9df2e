"""Signals over time windows -> findings with their evidence (the rule table of DESIGN.md).

Every number is a setting. Link-down evidence is only counted once it is older than ``settle`` (a switch
reboot or node-down event may arrive a little after the link-down it explains) and only when no reboot,
node down/up or silence explains it. A finding is emitted again for the same rule only when new evidence
arrived, so a component on probation gets one strike per new fault, not one per cycle.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from fabric.domain import ComponentId, ComponentKind, Finding
from fabric.signals import Signal, SignalKind
from topology.model import Fabric
from topology.ports import Kind


@dataclass(frozen=True, slots=True)
class RuleSettings:
    flap_cycles: int = 3
    flap_window: timedelta = timedelta(hours=12)
    burst_cycles: int = 5
    burst_window: timedelta = timedelta(minutes=10)
    downtime: timedelta = timedelta(seconds=7)
    both_ends_window: timedelta = timedelta(seconds=60)
    ber_high_count: int = 2
    ber_high_window: timedelta = timedelta(minutes=125)
    errors_count: int = 3
    errors_window: timedelta = timedelta(hours=2)
    attribution_window: timedelta = timedelta(minutes=10)
    settle: timedelta = timedelta(seconds=60)

    @property
    def history(self) -> timedelta:
        return max(self.flap_window, self.ber_high_window, self.errors_window) + self.attribution_window


IMMEDIATE: dict[SignalKind, str] = {
    SignalKind.UNHEALTHY_PORT: "unhealthy_port",
    SignalKind.BER_CRITICAL: "ber_critical",
    SignalKind.RETRANSMISSION: "high_retransmission",
    SignalKind.TEMPERATURE: "temperature",
    SignalKind.MODULE_FAULT: "module_fault",
    SignalKind.WIDTH_DEGRADED: "degraded_width",
    SignalKind.SPEED_DEGRADED: "degraded_speed",
}
NEVER_AUTO_RESTORE = frozenset({SignalKind.TEMPERATURE, SignalKind.MODULE_FAULT})
TICKET_ONLY: dict[SignalKind, str] = {
    SignalKind.SWITCH_DOWN: "switch_down",
    SignalKind.ASIC_FAILURE: "partial_asic_failure",
    SignalKind.DUPLICATE_GUID: "duplicate_guid",
    SignalKind.DUPLICATE_CABLE: "duplicate_cable",
}
ATTRIBUTING = frozenset({SignalKind.SWITCH_REBOOTED, SignalKind.SWITCH_DOWN, SignalKind.SWITCH_UP,
                         SignalKind.NODE_DOWN, SignalKind.NODE_UP})
LINK_STATE = frozenset({SignalKind.LINK_DOWN, SignalKind.LINK_UP, SignalKind.PORT_DOWN, SignalKind.LINK_DOWNED})

Silenced = Callable[[ComponentId, datetime], bool]


def _never_silenced(component: ComponentId, at: datetime) -> bool:
    return False


@dataclass(slots=True)
class _Episode:
    down: datetime
    up: datetime | None
    evidence: list[int] = field(default_factory=list)


@dataclass(slots=True)
class Explained:
    """A link-down the detectors did not count, and why: the operator sees it in ``replay``."""

    component: ComponentId
    at: datetime
    reason: str
    evidence: int


class Detectors:
    def __init__(self, fabric: Fabric, settings: RuleSettings | None = None,
                 silenced: Silenced = _never_silenced) -> None:
        self.fabric = fabric
        self.settings = settings or RuleSettings()
        self.silenced = silenced
        self.history: dict[ComponentId, deque[Signal]] = defaultdict(deque)
        self.attributions: dict[str, list[tuple[datetime, Signal]]] = defaultdict(list)
        self.dirty: set[ComponentId] = set()
        self.pending: set[ComponentId] = set()
        self.last_evidence: dict[tuple[ComponentId, str], int] = {}
        self.explained: list[Explained] = []
        self.devices_of: dict[ComponentId, tuple[str, ...]] = {}

    # --- intake --------------------------------------------------------------------------------------

    def observe(self, signals: Iterable[Signal]) -> list[Finding]:
        """Record signals; immediate and ticket-only rules fire here, windowed rules in ``evaluate``."""
        findings: list[Finding] = []
        for signal in signals:
            if signal.kind in ATTRIBUTING:
                self.attributions[signal.component.name].append((signal.at, signal))
            if signal.kind in TICKET_ONLY:
                findings += self._fire(signal.component, TICKET_ONLY[signal.kind], signal.at,
                                       f"{signal.kind.value}: {signal.detail}".rstrip(": "), [signal.event],
                                       ticket_only=True)
                continue
            if signal.kind in IMMEDIATE:
                if signal.kind is SignalKind.UNHEALTHY_PORT and "MANUAL" in signal.detail.upper():
                    continue  # isolated by hand or by us: not a new fault
                if self.silenced(signal.component, signal.at):
                    continue
                findings += self._fire(signal.component, IMMEDIATE[signal.kind], signal.at,
                                       f"{signal.kind.value} reported by {signal.reporter or 'UFM'}: {signal.detail}",
                                       [signal.event], never_auto_restore=signal.kind in NEVER_AUTO_RESTORE)
                continue
            if signal.kind in ATTRIBUTING:
                continue
            self.history[signal.component].append(signal)
            self.dirty.add(signal.component)
            if signal.devices:
                self.devices_of[signal.component] = signal.devices
        return findings

    def _fire(self, component: ComponentId, rule: str, at: datetime, reason: str, evidence: list[int],
              *, ticket_only: bool = False, never_auto_restore: bool = False) -> list[Finding]:
        newest = max(evidence)
        if self.last_evidence.get((component, rule), -1) >= newest:
            return []
        self.last_evidence[(component, rule)] = newest
        return [Finding(component, rule, at, reason, tuple(evidence), ticket_only, never_auto_restore)]

    # --- windows -------------------------------------------------------------------------------------

    def evaluate(self, now: datetime) -> list[Finding]:
        """Windowed rules over the components that saw new signals (or wait for evidence to settle)."""
        findings: list[Finding] = []
        todo, self.dirty = self.dirty | self.pending, set()
        self.pending = set()
        for component in todo:
            history = self.history.get(component)
            if not history:
                continue
            self._prune(history, now)
            findings += self._flaps(component, history, now)
            findings += self._counted(component, history, SignalKind.BER_HIGH, self.settings.ber_high_count,
                                      self.settings.ber_high_window, "ber_high")
            findings += self._counted(component, history, SignalKind.PORT_ERRORS, self.settings.errors_count,
                                      self.settings.errors_window, "port_errors")
        return findings

    def _prune(self, history: deque[Signal], now: datetime) -> None:
        cutoff = now - self.settings.history
        while history and history[0].at < cutoff:
            history.popleft()

    def _counted(self, component: ComponentId, history: deque[Signal], kind: SignalKind, count: int,
                 window: timedelta, rule: str) -> list[Finding]:
        hits = [s for s in history if s.kind is kind]
        if len(hits) < count:
            return []
        recent = [s for s in hits if s.at >= hits[-1].at - window]
        if len(recent) < count:
            return []
        return self._fire(component, rule, recent[-1].at,
                          f"{len(recent)} {kind.value} events within {window} (threshold {count})",
                          [s.event for s in recent])

    # --- flaps ---------------------------------------------------------------------------------------

    def _flaps(self, component: ComponentId, history: deque[Signal], now: datetime) -> list[Finding]:
        if component.kind is not ComponentKind.LINK:
            return []
        settled = now - self.settings.settle
        episodes: list[_Episode] = []
        for episode in self._episodes(history):
            if episode.down > settled:
                self.pending.add(component)  # look again once a late reboot event could have arrived
                continue
            why = self._explanation(component, episode.down)
            if why is not None:
                if not any(e.evidence == episode.evidence[0] for e in self.explained[-64:]):
                    self.explained.append(Explained(component, episode.down, why, episode.evidence[0]))
                continue
            episodes.append(episode)
        done = [e for e in episodes if e.up is not None]
        if not done:
            return []
        s = self.settings
        last = done[-1].up
        assert last is not None
        long = [e for e in done if e.down >= last - s.flap_window]
        burst = [e for e in done if e.down >= last - s.burst_window]
        downtime = sum(((e.up - e.down) for e in long if e.up is not None), timedelta())
        if len(burst) >= s.burst_cycles:
            chosen, reason = burst, f"{len(burst)} down/up cycles within {s.burst_window}"
        elif len(long) >= s.flap_cycles:
            chosen, reason = long, f"{len(long)} down/up cycles within {s.flap_window}"
        elif downtime >= s.downtime:
            chosen, reason = long, f"{downtime.total_seconds():g} s down within {s.flap_window} (limit {s.downtime})"
        else:
            return []
        evidence = [event for e in chosen for event in e.evidence]
        return self._fire(component, "flap", last, reason, evidence)

    def _episodes(self, history: Iterable[Signal]) -> list[_Episode]:
        """Down/up episodes of a link. A Link event is both ends by itself; port-level downs need both ends."""
        episodes: list[_Episode] = []
        current: _Episode | None = None
        port_downs: dict[str, Signal] = {}
        for signal in history:
            if signal.kind not in LINK_STATE:
                continue
            if signal.kind is SignalKind.LINK_UP:
                if current is not None:
                    current.up = signal.at
                    current.evidence.append(signal.event)
                    episodes.append(current)
                    current = None
                port_downs.clear()
                continue
            if signal.kind in (SignalKind.PORT_DOWN, SignalKind.LINK_DOWNED):
                port_downs[signal.reporter or ""] = signal
                fresh = [s for s in port_downs.values() if signal.at - s.at <= self.settings.both_ends_window]
                if len(fresh) < 2:
                    continue
                port_downs.clear()
            if current is None:
                current = _Episode(signal.at, None, [signal.event])
            elif signal.event not in current.evidence:
                current.evidence.append(signal.event)
        if current is not None:
            episodes.append(current)
        return episodes

    def _explanation(self, component: ComponentId, at: datetime) -> str | None:
        if self.silenced(component, at):
            return "an active silence"
        window = self.settings.attribution_window
        for device in self._attributors(component):
            for when, signal in self.attributions.get(device, ()):
                if abs(when - at) <= window:
                    return f"{signal.kind.value} of {device} at {when.isoformat()} (event {signal.event})"
        return None

    def _attributors(self, component: ComponentId) -> list[str]:
        """Names whose reboot or down/up explains this link's downs: its switches and its hosts."""
        names: list[str] = []
        for device_key in self.devices_of.get(component, ()):
            device = self.fabric.devices.get(device_key)
            if device is not None and device.kind is Kind.ADAPTER:
                names.append((device.host or device.name.split(maxsplit=1)[0]).casefold())
            names.append(device_key)
        return names
