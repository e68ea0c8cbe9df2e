"""UFM Telemetry's conditions -> the same signals UFM's events become, so that one rule table decides on both.

A judged sample (``fabric.telemetry``'s ``SampleVerdict``) names ports by UFM's port names; each condition is
placed on the fabric model exactly as a port event naming that port would be (``SignalMapper.place_port``) and
becomes the signal of the rule that already covers its fault:

- BER over a window above its threshold -> ``BER_HIGH`` (the ``ber_high`` counted rule, as UFM's 918/916): one
  signal per port per sample, whichever windows crossed, so that a lasting BER is counted once per sample as UFM
  raises its event once per alarm period;
- packet drops -> ``PACKET_DROPS`` (the ``packet_drops`` immediate rule; no UFM event raises it);
- module temperature above ``tmax`` or rising by more than ``d_tmax`` -> ``TEMPERATURE`` (as UFM's 919 ...);
- LinkDownedCounter moved on both ends of a cable -> that many down/up episodes (both ends' ``LINK_DOWNED``, then
  ``LINK_UP``) for the flap rule, at most ``burst_cycles`` a sample (enough for the burst rule; a counter that
  jumped by thousands is one bad link, not thousands of findings).

The counters say that a link went down some time between the previous sample and this one, not when: a
link-down is muted when anything would mute it at any time of that interval (our own reset or disable, a reboot,
a silence), not only at the sample's time (our reset bumps both ends' counters, and is read up to an interval
later). Explained link-downs are reported as the detectors report theirs.
"""

from __future__ import annotations

from datetime import datetime

from fabric.remediation.detectors import Explained
from fabric.remediation.kinds import SignalKind
from fabric.remediation.muting import Muter
from fabric.remediation.signals import NO_EVENT, Signal, SignalMapper
from fabric.telemetry.records import ConditionKind, SampleVerdict, TelemetryCondition, Verdict

_KIND = {ConditionKind.BER: SignalKind.BER_HIGH, ConditionKind.PACKET_DROPS: SignalKind.PACKET_DROPS,
         ConditionKind.MODULE_TEMPERATURE: SignalKind.TEMPERATURE,
         ConditionKind.TEMPERATURE_RISE: SignalKind.TEMPERATURE}
"""The signal of each condition of one port."""


class TelemetrySignals:
    """Places judged samples' conditions on the fabric model as signals; counts what it could not place."""

    def __init__(self, mapper: SignalMapper, links: Muter, *, most_episodes: int) -> None:
        """``links``: what mutes a link's change (the detectors' muters); ``most_episodes``: the most down/up
        episodes one sample's link-down on both ends makes."""
        self.mapper = mapper
        self.links = links
        self.most_episodes = most_episodes
        self.unplaced = 0
        """Conditions on ports UFM did not list (or a link-down whose ends are not one cable of the plan)."""

    def signals(self, verdict: SampleVerdict) -> tuple[list[Signal], list[Explained]]:
        """The signals of an accepted sample's conditions, in the conditions' order, and the link-downs muted;
        nothing for a sample the gate refused."""
        if verdict.verdict is not Verdict.ACCEPTED or verdict.since is None:
            return [], []
        signals: list[Signal] = []
        explained: list[Explained] = []
        per_port: dict[tuple[SignalKind, str], int] = {}
        """Where the one signal of a port and kind of this sample is, to add a second window's reason to it."""
        for condition in verdict.conditions:
            if condition.kind is ConditionKind.LINK_DOWN_BOTH_ENDS:
                self._link_down(condition, verdict.since, signals, explained)
                continue
            kind = _KIND[condition.kind]
            placed = self.mapper.place_port(condition.ports[0])
            if placed is None:
                self.unplaced += 1
                continue
            component, reporter, devices = placed
            known = per_port.get((kind, reporter))
            if known is not None:
                signals[known] = signals[known]._replace(detail=f"{signals[known].detail}; {condition.reason}")
                continue
            per_port[(kind, reporter)] = len(signals)
            signals.append(Signal(kind, component, condition.time, NO_EVENT, reporter, condition.reason, devices,
                                  telemetry=True))
        return signals, explained

    def _link_down(self, condition: TelemetryCondition, since: datetime, signals: list[Signal],
                   explained: list[Explained]) -> None:
        placed = [self.mapper.place_port(name) for name in condition.ports]
        ends = [p for p in placed if p is not None]
        if len(ends) != 2 or ends[0][0] is not ends[1][0]:
            self.unplaced += 1
            return
        component, devices, at = ends[0][0], ends[0][2], condition.time
        why = self.links.mutes(component, since, devices, True, at)
        if why is not None:
            explained.append(Explained(component, at, f"{why} (the link-down counters moved between the samples "
                                                      f"of {since.isoformat()} and {at.isoformat()})", NO_EVENT))
            return
        figures = condition.figures
        episodes = min(int(min(figures["link_downed_a"], figures["link_downed_b"])), self.most_episodes)
        detail = condition.reason
        for _ in range(episodes):
            signals.extend(Signal(SignalKind.LINK_DOWNED, component, at, NO_EVENT, reporter, detail, devices,
                                  telemetry=True) for _, reporter, _ in ends)
            signals.append(Signal(SignalKind.LINK_UP, component, at, NO_EVENT, None, detail, devices, telemetry=True))

