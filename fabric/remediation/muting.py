"""Why a signal is not counted as a fault: one ``Muter`` protocol, as Alertmanager's silences and inhibitions.

A muter answers "muted, and why" for a component at a time: ``None`` when it has nothing to say, else the
reason recorded beside the signal it mutes. The detectors ask one muter (``Muters`` composes several, the first
reason wins) and know nothing of what is behind it:

- ``SilenceMuter``: operator silences and scheduled maintenance windows (a silence that starts later), on
  every signal of the components they match;
- ``OwnActions``: a port write the engine made, or a port action UFM reports (event 336, an operator's
  disable, enable or reset), explains the link-state changes of its component within the own-action window;
- ``Attribution``: a switch's or a host's outage (its down event to its reboot or up event) explains the
  link-state changes of the cables on it (a reboot does not explain a high BER, so other signals are not muted).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from fnmatch import fnmatchcase
from typing import Protocol

from fabric.remediation.domain import ComponentId, ComponentKind
from fabric.remediation.kinds import SignalKind
from fabric.remediation.rules import RuleSettings
from fabric.remediation.signals import Signal
from fabric.remediation.textlimits import MATCHER_MAX, within
from topology.model import Fabric
from topology.ports import Kind

MuteCheck = Callable[[ComponentId, datetime, Sequence[str], bool], str | None]
"""A ``Muter.mutes`` as the detectors call it, positionally (they ask for every immediate signal of a storm)."""


class Muter(Protocol):
    link_state_only: bool
    """True when it only ever explains link-state changes (then other signals need not ask it)."""

    def mutes(self, component: ComponentId, at: datetime, devices: Sequence[str] = (),
              link_state: bool = False, until: datetime | None = None) -> str | None:
        """Why a signal of ``component`` at ``at`` is not a fault (``None``: it may be). ``devices``: the devices
        the component sits on; ``link_state``: the signal is a link going down or up; ``until``: it happened at
        some time from ``at`` to ``until``, not known when (a counter that moved between two telemetry samples),
        and is muted when anything that would mute it at one of those times does."""
        ...


class Muters:
    """Several muters as one: the first that mutes gives the reason."""

    link_state_only = False

    def __init__(self, *muters: Muter) -> None:
        self.muters = muters
        self._others = tuple(m for m in muters if not m.link_state_only)

    def mutes(self, component: ComponentId, at: datetime, devices: Sequence[str] = (),
              link_state: bool = False, until: datetime | None = None) -> str | None:
        for muter in self.muters if link_state else self._others:
            reason = muter.mutes(component, at, devices, link_state, until)
            if reason is not None:
                return reason
        return None

    def for_signals(self) -> MuteCheck | None:
        """The check for signals that are not link-state changes: ``None`` when no muter could mute one, the one
        muter's own ``mutes`` when only one could (no composition to pay for per signal)."""
        if not self._others:
            return None
        return self._others[0].mutes if len(self._others) == 1 else self.mutes

    def for_links(self) -> MuteCheck:
        """The check for link-state changes: the one muter's own ``mutes`` when there is only one."""
        return self.muters[0].mutes if len(self.muters) == 1 else self.mutes


def check_matcher(matcher: str) -> str:
    """``matcher`` if it can match components (``kind:name``, the name a glob); else ``ValueError`` saying why."""
    within(matcher, MATCHER_MAX, "matcher")
    kind, sep, name = matcher.strip().partition(":")
    example = "e.g. 'link:pod01-leaf01/*' or 'switch:core03-*'"
    if not sep or not name:
        raise ValueError(f"not a component matcher: {matcher!r} ({example})")
    kinds = [k.value for k in ComponentKind]
    if not any(fnmatchcase(k, kind.casefold()) for k in kinds):
        raise ValueError(f"not a component matcher: {matcher!r}: {kind!r} matches none of {', '.join(kinds)}")
    if name.count("[") != name.count("]"):
        raise ValueError(f"not a component matcher: {matcher!r}: unbalanced '[' ']' in the glob")
    return matcher.strip()


def silence_matches(matcher: str, component: ComponentId | str) -> bool:
    """Whether a silence matcher (a component id or an ``fnmatch`` glob over ids) covers ``component``.

    Case-insensitive, like component names.
    """
    return fnmatchcase(str(component).casefold(), matcher.casefold())


@dataclass(frozen=True, slots=True)
class SilenceWindow:
    """A silence as the muter needs it: what it matches and when (a future start is a maintenance window)."""

    matcher: str
    starts_at: datetime
    ends_at: datetime

    def covers(self, component: ComponentId, at: datetime, until: datetime | None = None) -> bool:
        """Whether it covers ``component`` at ``at`` (or at any time from ``at`` to ``until``)."""
        return (self.starts_at <= (until or at) and at < self.ends_at
                and silence_matches(self.matcher, component))


class SilenceMuter:
    """Silences and maintenance windows. Replaced whole each cycle (``load``): the detectors ask for every
    signal, and a storm must not mean a query each."""

    link_state_only = False

    def __init__(self, windows: Iterable[SilenceWindow] = ()) -> None:
        self.windows: tuple[SilenceWindow, ...] = tuple(windows)

    def load(self, windows: Iterable[SilenceWindow]) -> None:
        self.windows = tuple(windows)

    def mutes(self, component: ComponentId, at: datetime, devices: Sequence[str] = (),
              link_state: bool = False, until: datetime | None = None) -> str | None:
        if self.windows and any(window.covers(component, at, until) for window in self.windows):
            return "an active silence"
        return None


OWN_ACTION_LEAD = timedelta(seconds=5)
"""How long before an own action its window opens: UFM's clock and ours are not the same clock."""
_OWN_ACTIONS_KEPT = 8
"""Own actions remembered per component: more than any window holds (a write, its retry, UFM's 336)."""


class OwnActions:
    """Port writes of the engine and port actions UFM reports, by component: the link going down after a disable
    and coming up after an enable are their effects, not a fault of the link."""

    link_state_only = True

    def __init__(self, window: timedelta) -> None:
        self.window = window
        self.actions: dict[ComponentId, list[tuple[datetime, str]]] = {}

    def note(self, component: ComponentId, at: datetime, what: str) -> None:
        actions = self.actions.setdefault(component, [])
        actions.append((at, what))
        del actions[:-_OWN_ACTIONS_KEPT]

    def mutes(self, component: ComponentId, at: datetime, devices: Sequence[str] = (),
              link_state: bool = False, until: datetime | None = None) -> str | None:
        if not link_state:
            return None
        latest = until or at
        for when, what in reversed(self.actions.get(component, ())):
            if when - OWN_ACTION_LEAD <= latest and at <= when + self.window:
                return f"own action: {what} at {when.isoformat()}"
        return None


_WENT_DOWN = frozenset({SignalKind.SWITCH_DOWN, SignalKind.NODE_DOWN})
"""A device's down events (907/909, 331): its outage starts. Every other attributing signal says it is back."""


@dataclass(frozen=True, slots=True)
class _Outage:
    """When a device's link changes are explained: ``start`` to ``end`` (``None``: it has not come back yet)."""

    start: datetime
    end: datetime | None
    reason: str


class Attribution:
    """Reboots and node down/up events, by the device they name, explaining the link changes of its cables.

    UFM raises a switch's 907/909 (down) when it goes, if at all, and 1312 (rebooted) or 908/910 (up) when it is
    back, minutes after its peers' link-downs; a host's 331 and 332 alike. An outage runs from the down event to
    the up event after it; an up event without a down event before it was down for up to ``boot_time``; a down
    event without an up event yet is still down. Every outage explains link changes from ``window`` before it to
    ``window`` after it (UFM reports a device's events and its links' at slightly different times). Which events
    arrived first does not matter: the outages are rebuilt from all of a device's events in time order.

    It also tells the detectors until when a link-down may yet be explained by an up event not seen yet
    (``awaiting_until``): a reboot takes all of a device's links down at once, a cable fault one.
    """

    link_state_only = True

    def __init__(self, fabric: Fabric, settings: RuleSettings) -> None:
        self.fabric = fabric
        self.window, self.boot_time, self.together = (settings.attribution_window, settings.boot_time,
                                                      settings.both_ends_window)
        self.kept = settings.history
        self.events: dict[str, list[Signal]] = defaultdict(list)
        self._outages: dict[str, tuple[_Outage, ...]] = {}
        """Per device, its outages, rebuilt when one of its events arrives."""
        # Lists, and an entry only for a device that has something to hold: an empty deque is 760 bytes, and
        # these were two per device that ever lost a link (35,072 devices on h100-32k).
        self.downs: dict[str, list[tuple[datetime, ComponentId]]] = {}
        """Per device, its links' recent downs (time, link)."""
        self.reboots: dict[str, list[datetime]] = {}
        """Per device, when it lost a link together with another: a reboot may have begun then."""
        self._kept_downs = settings.longest_settle + settings.both_ends_window
        self._links: Counter[str] | None = None

    def note(self, signal: Signal) -> None:
        """An attributing signal (switch rebooted/down/up, node down/up) on a device."""
        device = signal.component.name
        events = self.events[device]
        events.append(signal)
        oldest = max(s.at for s in events) - self.kept  # a device's events are few: its reboots of half a day
        if any(s.at < oldest for s in events):
            events[:] = [s for s in events if s.at >= oldest]
        self._outages.pop(device, None)

    def note_down(self, signal: Signal) -> None:
        """A link or port of a cable went down (329, 276)."""
        together, at, link = self.together, signal.at, signal.component
        oldest = at - self._kept_downs
        for device in self._owners(signal.devices):
            downs = self.downs.get(device)
            if downs is None:
                downs = self.downs[device] = []
            reboots = self.reboots.get(device)
            if ((not reboots or abs(at - reboots[-1]) > together)
                    and any(other is not link and abs(when - at) <= together for when, other in downs)):
                # With another of its links: what a reboot looks like (noted once).
                reboots = self.reboots.setdefault(device, [])
                reboots.append(at)
            downs.append((at, link))
            gone = 0
            while downs[gone][0] < oldest:  # ends at the down just added at the latest
                gone += 1
            if gone:
                del downs[:gone]
            if reboots:
                gone = 0
                while gone < len(reboots) and reboots[gone] < oldest:
                    gone += 1
                if gone == len(reboots):
                    del self.reboots[device]
                elif gone:
                    del reboots[:gone]

    def forget_before(self, line: datetime) -> None:
        """Forget the downs and reboots that no signal at or after ``line`` can be told with (the detectors
        hold none older, and none older comes): ``note_down`` compares a down with those within ``together`` of
        it, ``awaiting_until`` a reboot up to ``boot_time`` after it, and ``_kept_downs`` is longer than both. A
        device's list left empty goes with its entry: a storm leaves one for each device it touched. A device's
        reboots go only all together: ``note_down`` notes a reboot once by the last noted, whatever its time."""
        oldest = line - self._kept_downs
        downs: dict[str, list[tuple[datetime, ComponentId]]] = {}
        for device, noted in self.downs.items():
            if recent := [down for down in noted if down[0] >= oldest]:
                downs[device] = recent
        self.downs = downs  # a new dict: a dict does not shrink as entries leave it
        self.reboots = {device: began for device, began in self.reboots.items() if max(began) >= oldest}

    def mutes(self, component: ComponentId, at: datetime, devices: Sequence[str] = (),
              link_state: bool = False, until: datetime | None = None) -> str | None:
        if not link_state:
            return None
        latest = until or at
        for device in self._owners(devices):
            if device not in self.events:
                continue
            for outage in self.outages(device):
                if outage.start <= latest and (outage.end is None or at <= outage.end):
                    return outage.reason
        return None

    def awaiting_until(self, component: ComponentId, devices: Sequence[str], at: datetime) -> datetime | None:
        """The latest time at which an up event not seen yet could be raised that would explain ``component``
        going down at ``at`` (``None``: none is expected): ``boot_time`` after its device lost several links at
        once (a reboot; a cable fault takes one) at or before ``at``, or after ``at`` itself when the device has
        no other link to lose."""
        ends: list[datetime] = []
        links, boot, together = self._link_counts(), self.boot_time, self.together
        for device in self._owners(devices):
            if links[device] <= 1:
                ends.append(at + boot)
            ends += [began + boot for began in self.reboots.get(device, ()) if began - together <= at <= began + boot]
        return max(ends, default=None)

    def outages(self, device: str) -> tuple[_Outage, ...]:
        found = self._outages.get(device)
        if found is None:
            found = self._outages[device] = self._build(device)
        return found

    def _build(self, device: str) -> tuple[_Outage, ...]:
        window = self.window
        outages: list[_Outage] = []
        down: Signal | None = None
        for signal in sorted(self.events.get(device, ()), key=lambda s: (s.at, s.event)):
            if signal.kind in _WENT_DOWN:
                down = down or signal
            elif down is not None:
                outages.append(_Outage(down.at - window, signal.at + window,
                                       f"{_said(down, device)} until {signal.kind.value} at {signal.at.isoformat()} "
                                       f"(event {signal.event})"))
                down = None
            else:
                outages.append(_Outage(signal.at - max(self.boot_time, window), signal.at + window,
                                       f"{_said(signal, device)}, down for up to {self.boot_time} before it"))
        if down is not None:
            outages.append(_Outage(down.at - window, None, f"{_said(down, device)}, not back yet"))
        return tuple(outages)

    def _owners(self, devices: Sequence[str]) -> list[str]:
        """The names attributing events give the devices a component sits on: a switch's, an adapter's host."""
        names: list[str] = []
        for device_key in devices:
            device = self.fabric.devices.get(device_key)
            names.append(device.host_name.casefold() if device is not None and device.kind is Kind.ADAPTER
                         else device_key)
        return names

    def _link_counts(self) -> Counter[str]:
        """How many cables each switch and host has (made on first use: most cycles never ask)."""
        if self._links is None:
            self._links = Counter(owner for cable in self.fabric.cables
                                  for owner in self._owners((cable.a.device, cable.b.device)))
        return self._links


def _said(signal: Signal, device: str) -> str:
    return f"{signal.kind.value} of {device} at {signal.at.isoformat()} (event {signal.event})"
