"""The rule table: what the detectors look for, with every threshold a setting.

Counted rules ("N events of one kind within a window of the newest") are data: one ``CountedRule`` entry in
``COUNTED_RULES`` gives the rule its UFM event ids, its default count and window, its severity (how bad, for
reconsidering deferred links worst first) and its configuration keys (``[rules] <key>_count`` and
``<key>_window``). The detectors, the signal table, the configuration and the policy's severities all read
it; nothing else needs an edit. The other rules (flaps, immediate and ticket-only findings) have shapes of their
own and settings of their own below.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from types import MappingProxyType

from fabric.remediation.kinds import BASE_EVENT_KINDS, SignalKind


@dataclass(frozen=True, slots=True)
class CountedRule:
    rule: str
    """The rule's name in findings, decisions and tickets."""
    signal: SignalKind
    events: tuple[int, ...]
    """UFM event policy ids that raise the signal."""
    count: int
    """Default: this many signals within ``window`` of the newest make a finding."""
    window: timedelta
    severity: int
    key: str
    """Configuration keys ``[rules] <key>_count`` and ``<key>_window``."""
    describes: str
    """What the events are, for the configuration's documentation."""


COUNTED_RULES: tuple[CountedRule, ...] = (
    CountedRule("ber_high", SignalKind.BER_HIGH, (918, 916), 2, timedelta(minutes=125), 4, "ber_high",
                "high symbol or effective BER"),
    CountedRule("port_errors", SignalKind.PORT_ERRORS, (110, 111, 113, 114), 3, timedelta(hours=2), 2, "errors",
                "symbol errors, link error recovery, receive errors"),
)
COUNTED_BY_RULE: Mapping[str, CountedRule] = MappingProxyType({r.rule: r for r in COUNTED_RULES})
EVENT_KINDS: Mapping[int, SignalKind] = MappingProxyType(
    {**BASE_EVENT_KINDS, **{event: rule.signal for rule in COUNTED_RULES for event in rule.events}})
"""Every UFM event id a rule reads, and the signal it raises."""
SEVERITY: Mapping[str, int] = MappingProxyType({
    "module_fault": 9, "temperature": 8, "ber_critical": 7, "unhealthy_port": 6, "high_retransmission": 6,
    "flap": 5, "link_down": 5, "degraded_width": 3, "degraded_speed": 3,
    **{rule.rule: rule.severity for rule in COUNTED_RULES}})
"""How bad a rule's fault is, to reconsider deferred links worst first."""


SWITCH_FAULT = "switch_fault"
"""The rule of a finding on a switch many of whose cables failed together (``fabric.remediation.correlate``)."""


@dataclass(frozen=True, slots=True)
class Threshold:
    count: int
    window: timedelta


def _default_thresholds() -> Mapping[str, Threshold]:
    return MappingProxyType({r.rule: Threshold(r.count, r.window) for r in COUNTED_RULES})


@dataclass(frozen=True, slots=True)
class RuleSettings:
    flap_cycles: int = 3
    flap_window: timedelta = timedelta(hours=12)
    burst_cycles: int = 5
    burst_window: timedelta = timedelta(minutes=10)
    downtime: timedelta = timedelta(seconds=7)
    """Cumulative downtime within ``flap_window`` that makes a flap, over at least two down/up episodes."""
    both_ends_window: timedelta = timedelta(seconds=60)
    attribution_window: timedelta = timedelta(minutes=10)
    """A reboot, switch down/up or node down/up explains its cables' link changes this long either side of it."""
    boot_time: timedelta = timedelta(minutes=10)
    """How long a reboot may take, from its links going down to UFM's "switch was rebooted" (1312) or "node is up"
    (332): without a down event (907/909, 331), the outage explained starts this long before the up event."""
    settle: timedelta = timedelta(seconds=60)
    """Link-down evidence is counted once it is this old (a late reboot event can still explain it); a link that
    went down with another link of the same device waits ``boot_time`` longer, for a 1312 or 332."""
    down_ticket_after: timedelta = timedelta(minutes=10)
    """A link down this long without coming back is a finding of its own (disabled, ticketed)."""
    own_action_window: timedelta = timedelta(minutes=2)
    """Link events on a component this long after a port write of ours (or a port action UFM reports, 336) are
    its effect, never counted: it covers the UFM job and UFM's delay in reporting the link's change."""
    switch_fault_cables: int = 4
    """This many distinct cables of one switch with findings within ``switch_fault_window`` are the switch's fault."""
    switch_fault_window: timedelta = timedelta(minutes=5)
    """UFM raises a port's threshold events once per alarm period (300 s): a failing switch shows on its cables
    within one period."""
    counted: Mapping[str, Threshold] = field(default_factory=_default_thresholds)
    """Per counted rule (``COUNTED_RULES``), its count and window; rules not named keep their defaults."""

    def __post_init__(self) -> None:
        unknown = sorted(set(self.counted) - set(COUNTED_BY_RULE))
        if unknown:
            raise ValueError(f"unknown counted rules {unknown}: the rules are {sorted(COUNTED_BY_RULE)}")
        object.__setattr__(self, "counted", MappingProxyType({**_default_thresholds(), **self.counted}))

    def threshold(self, rule: str) -> Threshold:
        return self.counted[rule]

    @property
    def longest_settle(self) -> timedelta:
        """The longest link-down evidence waits before it is counted (a link of a device that may be rebooting)."""
        return self.settle + self.boot_time

    @property
    def history(self) -> timedelta:
        """How far back a component's signals are kept: the longest window any rule reads, plus attribution."""
        windows = [self.flap_window, self.down_ticket_after, *(t.window for t in self.counted.values())]
        return max(windows) + self.attribution_window
