"""Why a signal is not counted as a fault: one ``Muter`` protocol, as Alertmanager's silences and inhibitions.

A muter answers "muted, and why" for a component at a time: ``None`` when it has nothing to say, else the
reason recorded beside the signal it mutes. The detectors ask one muter (``Muters`` composes several, the first
reason wins) and know nothing of what is behind it:

- ``SilenceMuter``: operator silences and scheduled maintenance windows (a silence that starts later), on
  every signal of the components they match;
- ``OwnActions``: a port write the engine made, or a port action UFM reports (event 336, an operator's
  disable, enable or reset), explains the link-state changes of its component within the own-action window;
- ``Attribution``: a switch reboot or a host's node down/up explains the link-state changes of the cables on
  it, within the attribution window (a reboot does not explain a high BER, so other signals are not muted).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from fnmatch import fnmatchcase
from typing import Protocol

from fabric.remediation.domain import ComponentId, ComponentKind
from fabric.remediation.signals import Signal
from topology.model import Fabric
from topology.ports import Kind

MuteCheck = Callable[[ComponentId, datetime, Sequence[str], bool], str | None]
"""A ``Muter.mutes`` as the detectors call it, positionally (they ask for every immediate signal of a storm)."""


class Muter(Protocol):
    link_state_only: bool
    """True when it only ever explains link-state changes (then other signals need not ask it)."""

    def mutes(self, component: ComponentId, at: datetime, devices: Sequence[str] = (),
              link_state: bool = False) -> str | None:
        """Why a signal of ``component`` at ``at`` is not a fault (``None``: it may be). ``devices``: the devices
        the component sits on; ``link_state``: the signal is a link going down or up."""
        ...


class Muters:
    """Several muters as one: the first that mutes gives the reason."""

    link_state_only = False

    def __init__(self, *muters: Muter) -> None:
        self.muters = muters
        self._others = tuple(m for m in muters if not m.link_state_only)

    def mutes(self, component: ComponentId, at: datetime, devices: Sequence[str] = (),
              link_state: bool = False) -> str | None:
        for muter in self.muters if link_state else self._others:
            reason = muter.mutes(component, at, devices, link_state)
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

    def covers(self, component: ComponentId, at: datetime) -> bool:
        return self.starts_at <= at < self.ends_at and silence_matches(self.matcher, component)


class SilenceMuter:
    """Silences and maintenance windows. Replaced whole each cycle (``load``): the detectors ask for every
    signal, and a storm must not mean a query each."""

    link_state_only = False

    def __init__(self, windows: Iterable[SilenceWindow] = ()) -> None:
        self.windows: tuple[SilenceWindow, ...] = tuple(windows)

    def load(self, windows: Iterable[SilenceWindow]) -> None:
        self.windows = tuple(windows)

    def mutes(self, component: ComponentId, at: datetime, devices: Sequence[str] = (),
              link_state: bool = False) -> str | None:
        if self.windows and any(window.covers(component, at) for window in self.windows):
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
              link_state: bool = False) -> str | None:
        if not link_state:
            return None
        for when, what in reversed(self.actions.get(component, ())):
            if when - OWN_ACTION_LEAD <= at <= when + self.window:
                return f"own action: {what} at {when.isoformat()}"
        return None


class Attribution:
    """Reboots and node down/up events, by the device they name, explaining link-state changes near them."""

    link_state_only = True

    def __init__(self, fabric: Fabric, window: timedelta) -> None:
        self.fabric, self.window = fabric, window
        self.events: dict[str, list[tuple[datetime, Signal]]] = defaultdict(list)

    def note(self, signal: Signal) -> None:
        """An attributing signal (switch rebooted/down/up, node down/up) on a device."""
        self.events[signal.component.name].append((signal.at, signal))

    def mutes(self, component: ComponentId, at: datetime, devices: Sequence[str] = (),
              link_state: bool = False) -> str | None:
        if not link_state:
            return None
        window = self.window
        for device in self._attributors(devices):
            for when, signal in self.events.get(device, ()):
                if abs(when - at) <= window:
                    return f"{signal.kind.value} of {device} at {when.isoformat()} (event {signal.event})"
        return None

    def _attributors(self, devices: Sequence[str]) -> list[str]:
        """Names whose reboot or down/up explains a change on these devices: the switches and the hosts."""
        names: list[str] = []
        for device_key in devices:
            device = self.fabric.devices.get(device_key)
            if device is not None and device.kind is Kind.ADAPTER:
                names.append(device.host_name.casefold())
            names.append(device_key)
        return names
