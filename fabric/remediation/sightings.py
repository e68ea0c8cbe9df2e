"""One fault seen by UFM's event log and by UFM Telemetry's counters counts once; its finding says who saw it.

A lasting fault shows in both sources: UFM raises a port's BER event once per alarm period, and each telemetry
sample finds the port's BER over its threshold; a link that went down is a 329/328 pair in the event log and a
LinkDownedCounter step on both ends in the next sample. Counted twice, a counted rule would reach its threshold in
half the time and a flap would count each episode twice. So, per component and kind of fault:

- a telemetry signal is dropped when UFM reported a signal of that kind on the component within the sample's
  interval (after the previous sample, up to this one: the counters say something happened then, not when);
- a UFM signal is dropped when it falls within the interval of a telemetry signal of that kind counted already
  (the sample arrived first, the event was late).

Only the kinds telemetry raises are compared, and only when the pipeline reads telemetry at all: without it this
stage is not built, and the event path is what it was. A finding on a component on which telemetry counted a
signal of its rule's kind (within the detectors' history) says so in its reason, with whether UFM's events saw it
too.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from datetime import datetime, timedelta

from fabric.remediation.domain import ComponentId, Finding
from fabric.remediation.kinds import SignalKind
from fabric.remediation.rules import FLAP, LINK_DOWN, RULE_BY_NAME
from fabric.remediation.signals import Signal

_LINK_STATE = "link state"
_FAULT: dict[SignalKind, str] = {
    SignalKind.LINK_DOWN: _LINK_STATE, SignalKind.LINK_UP: _LINK_STATE, SignalKind.PORT_DOWN: _LINK_STATE,
    SignalKind.LINK_DOWNED: _LINK_STATE,
    SignalKind.BER_HIGH: SignalKind.BER_HIGH.value, SignalKind.TEMPERATURE: SignalKind.TEMPERATURE.value,
    SignalKind.PACKET_DROPS: SignalKind.PACKET_DROPS.value,
}
"""The kind of fault each signal UFM Telemetry can also raise is a sighting of."""
_RULE_FAULT: dict[str, str] = {
    FLAP: _LINK_STATE, LINK_DOWN: _LINK_STATE,
    **{rule.name: _FAULT[rule.signal] for rule in RULE_BY_NAME.values()
       if rule.signal is not None and rule.signal in _FAULT},
}
"""The kind of fault each rule's findings are of, for the rules telemetry can feed."""
_KEPT = 16
"""Sightings remembered per component and kind: more than a sample interval holds."""

_Key = tuple[ComponentId, str]


class Sightings:
    def __init__(self, kept: timedelta) -> None:
        """``kept``: how far back a telemetry sighting still names its source in a finding (the detectors'
        history)."""
        self.kept = kept
        self._reported: dict[_Key, deque[datetime]] = {}
        """Times of the UFM signals counted, per component and kind of fault."""
        self._sampled: dict[_Key, deque[tuple[datetime, datetime]]] = {}
        """Intervals (previous sample, sample) of the telemetry signals counted, per component and kind."""
        self.dropped = 0
        """Signals dropped as the other source's sighting of a fault counted already."""

    def reported(self, signals: Sequence[Signal]) -> list[Signal]:
        """UFM's signals, less those a telemetry signal counted already (their time within its interval)."""
        kept: list[Signal] = []
        for signal in signals:
            fault = _FAULT.get(signal.kind)
            if fault is not None:
                key = (signal.component, fault)
                if any(since < signal.at <= at for since, at in self._sampled.get(key, ())):
                    self.dropped += 1
                    continue
                self._reported.setdefault(key, deque(maxlen=_KEPT)).append(signal.at)
            kept.append(signal)
        return kept

    def sampled(self, signals: Sequence[Signal], since: datetime) -> list[Signal]:
        """One sample's telemetry signals (of what happened after ``since``), less those UFM reported already."""
        kept: list[Signal] = []
        for signal in signals:
            key = (signal.component, _FAULT[signal.kind])
            if any(since < at <= signal.at for at in self._reported.get(key, ())):
                self.dropped += 1
                continue
            intervals = self._sampled.setdefault(key, deque(maxlen=_KEPT))
            if not intervals or intervals[-1] != (since, signal.at):
                intervals.append((since, signal.at))
            kept.append(signal)
        return kept

    def name_sources(self, findings: Sequence[Finding]) -> list[Finding]:
        """The findings, each whose fault telemetry saw saying so in its reason."""
        named: list[Finding] = []
        for finding in findings:
            fault = _RULE_FAULT.get(finding.rule)
            intervals = self._sampled.get((finding.component, fault)) if fault is not None else None
            oldest = finding.at - self.kept
            if intervals and any(at >= oldest for _, at in intervals):
                times = self._reported.get((finding.component, fault or ""), ())
                both = any(at >= oldest for at in times)
                sources = "UFM events and UFM Telemetry" if both else "UFM Telemetry"
                named.append(finding._replace(reason=f"{finding.reason} (seen by {sources})"))
            else:
                named.append(finding)
        return named
