"""The rule table: what the detectors look for, with every threshold a setting.

Every rule is declared once, here, with all it needs: ``RULES`` holds one ``Rule`` per name (its kind, its
severity, the usual repair its ticket suggests, the signal that raises it), and every other table is derived
from it: the detectors' immediate and ticket-only tables, the policy's severities (``SEVERITY``), a ticket's
priority (``ticket_severity``), its repair text (``fabric.controller.ticket_body``) and the rules a port reset may
answer (``RESETTABLE``, the reset ladder's). A rule cannot be declared without a severity, a repair and whether a
reset can cure what it finds (``Rule`` has no defaults for them), and one that the policy may rank cannot have
``None`` for severity, so no rule ranks 0 by being forgotten.

Counted rules ("N events of one kind within a window of the newest") are data: one ``CountedRule`` entry in
``COUNTED_RULES`` gives the rule its UFM event ids, its default count and window, its severity (how bad, for
reconsidering deferred links worst first), its repair and its configuration keys (``[rules] <key>_count`` and
``<key>_window``). The detectors, the signal table, the configuration and the policy's severities all read
it; nothing else needs an edit. An immediate or ticket-only rule is one ``Rule`` in ``IMMEDIATE_RULES`` or
``TICKET_ONLY_RULES`` and the UFM events of its signal in ``fabric.remediation.kinds``. The flap and link-down
rules have shapes of their own and settings of their own below.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from enum import StrEnum
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
    repair: str
    """The usual repair, as the rule's tickets suggest it."""
    resettable: bool = field(kw_only=True)
    """Whether a port reset can cure what the rule finds (``Rule.resettable``)."""


class RuleKind(StrEnum):
    """How a rule finds its fault, which says which of the detectors (or the correlation, or the breaker) raises it."""

    FLAP = "flap"
    """Down/up episodes of a link within a window (``RuleSettings.flap_cycles`` ...)."""
    LINK_DOWN = "link_down"
    """A link down for ``RuleSettings.down_ticket_after`` without coming back."""
    COUNTED = "counted"
    """N signals of one kind within a window of the newest (``COUNTED_RULES``)."""
    IMMEDIATE = "immediate"
    """One signal is a fault: the component is taken out (guard permitting) and ticketed."""
    TICKET_ONLY = "ticket_only"
    """One signal is a fault that automation cannot help: a ticket, nothing changed in UFM."""
    SWITCH_FAULT = "switch_fault"
    """Many cables of one switch with findings together (``fabric.remediation.correlate``)."""
    STORM = "storm"
    """The storm breaker halting automation."""


RANKED = frozenset({RuleKind.FLAP, RuleKind.LINK_DOWN, RuleKind.COUNTED, RuleKind.IMMEDIATE})
"""Kinds whose findings may leave a link deferred, which the policy reconsiders worst first: they need a severity."""
_SIGNALLED = frozenset({RuleKind.COUNTED, RuleKind.IMMEDIATE, RuleKind.TICKET_ONLY})
"""Kinds raised by one kind of signal, which the rule names."""


@dataclass(frozen=True, slots=True)
class Rule:
    name: str
    """The rule's name in findings, decisions and tickets."""
    kind: RuleKind
    severity: int | None
    """How bad its fault is (2 to 10, higher is worse): the order deferred links are reconsidered in, and the
    priority of its tickets (``[tickets] priorities``). ``None`` only for a ticket-only rule, whose ticket then
    takes the backend's default priority."""
    repair: str
    """The usual repair, as its tickets suggest it."""
    signal: SignalKind | None = None
    """The signal that raises it (counted, immediate and ticket-only rules), else ``None``."""
    never_auto_restore: bool = False
    """An immediate rule whose component is never put back automatically (a hot or failed module)."""
    resettable: bool = field(kw_only=True)
    """A port reset can cure what the rule finds (errors, drops, a link that flaps or does not train), so its link
    is reset before it is taken out (the reset ladder, ``fabric.remediation.escalation``). No default: a rule
    cannot be declared without saying; heat, a failed module, a lane or a speed lost cannot be reset away."""

    def __post_init__(self) -> None:
        if (self.signal is not None) != (self.kind in _SIGNALLED):
            wants = "names the signal that raises it" if self.kind in _SIGNALLED else "is raised by no one signal"
            raise ValueError(f"rule {self.name!r}: a {self.kind.value} rule {wants}")
        if self.severity is None and self.kind in RANKED:
            raise ValueError(f"rule {self.name!r}: a {self.kind.value} rule needs a severity (deferred links are "
                             "reconsidered worst first)")
        if not self.repair.strip():
            raise ValueError(f"rule {self.name!r}: the usual repair is empty")
        if self.never_auto_restore and self.kind is not RuleKind.IMMEDIATE:
            raise ValueError(f"rule {self.name!r}: only an immediate rule takes never_auto_restore")
        if self.resettable and self.kind not in RANKED:
            raise ValueError(f"rule {self.name!r}: a {self.kind.value} rule takes no link out, so it resets none")


COUNTED_RULES: tuple[CountedRule, ...] = (
    CountedRule("ber_high", SignalKind.BER_HIGH, (918, 916), 2, timedelta(minutes=125), 4, "ber_high",
                "high symbol or effective BER",
                "clean the optics at both ends (fibre) or reseat (copper); replace the transceiver if the errors "
                "stay, then the cable", resettable=True),
    CountedRule("port_errors", SignalKind.PORT_ERRORS, (110, 111, 113, 114), 3, timedelta(hours=2), 2, "errors",
                "symbol errors, link error recovery, receive errors",
                "clean or replace the optic; replace the cable if the errors stay", resettable=True),
)
COUNTED_BY_RULE: Mapping[str, CountedRule] = MappingProxyType({r.rule: r for r in COUNTED_RULES})
EVENT_KINDS: Mapping[int, SignalKind] = MappingProxyType(
    {**BASE_EVENT_KINDS, **{event: rule.signal for rule in COUNTED_RULES for event in rule.events}})
"""Every UFM event id a rule reads, and the signal it raises."""

FLAP = "flap"
LINK_DOWN = "link_down"
SWITCH_FAULT = "switch_fault"
"""The rule of a finding on a switch many of whose cables failed together (``fabric.remediation.correlate``)."""
STORM_BREAKER = "storm_breaker"
"""The rule of the breaker's halt, its ticket and its resume."""

IMMEDIATE_RULES: tuple[Rule, ...] = (
    Rule("unhealthy_port", RuleKind.IMMEDIATE, 6, "reseat; replace the transceiver, then the cable",
         SignalKind.UNHEALTHY_PORT, resettable=True),
    Rule("ber_critical", RuleKind.IMMEDIATE, 7, "replace the transceiver; if the errors stay, replace the cable",
         SignalKind.BER_CRITICAL, resettable=True),
    Rule("high_retransmission", RuleKind.IMMEDIATE, 6, "clean or replace the optic; replace the cable if it stays",
         SignalKind.RETRANSMISSION, resettable=True),
    Rule("packet_drops", RuleKind.IMMEDIATE, 6,
         "clean the optics at both ends or reseat; replace the transceiver, then the cable, if drops continue",
         SignalKind.PACKET_DROPS, resettable=True),
    Rule("temperature", RuleKind.IMMEDIATE, 8,
         "check the switch's airflow and fans; replace the transceiver if it alone runs hot",
         SignalKind.TEMPERATURE, never_auto_restore=True, resettable=False),
    Rule("module_fault", RuleKind.IMMEDIATE, 9, "replace the transceiver (module)", SignalKind.MODULE_FAULT,
         never_auto_restore=True, resettable=False),
    Rule("degraded_width", RuleKind.IMMEDIATE, 3, "a lane is down: reseat, then replace the transceiver or the cable",
         SignalKind.WIDTH_DEGRADED, resettable=False),
    Rule("degraded_speed", RuleKind.IMMEDIATE, 3,
         "reseat; check both transceivers are of the planned speed, replace the one that is not",
         SignalKind.SPEED_DEGRADED, resettable=False),
)
"""One signal is the fault (``RuleKind.IMMEDIATE``)."""
TICKET_ONLY_RULES: tuple[Rule, ...] = (
    Rule("switch_down", RuleKind.TICKET_ONLY, None,
         "the switch stopped answering: check its power and management link, then RMA it if it stays down",
         SignalKind.SWITCH_DOWN, resettable=False),
    Rule("partial_asic_failure", RuleKind.TICKET_ONLY, None, "an ASIC of the switch failed: RMA the switch",
         SignalKind.ASIC_FAILURE, resettable=False),
    Rule("duplicate_guid", RuleKind.TICKET_ONLY, None,
         "two devices report one GUID: find the one set wrongly (a replaced board, a cloned setting) and correct it",
         SignalKind.DUPLICATE_GUID, resettable=False),
    Rule("duplicate_cable", RuleKind.TICKET_ONLY, None,
         "UFM sees one cable twice: check the cabling against the plan at both ends", SignalKind.DUPLICATE_CABLE,
         resettable=False),
)
"""One signal is a fault automation cannot help (``RuleKind.TICKET_ONLY``): a ticket only."""
QUOTED: frozenset[SignalKind] = frozenset(
    rule.signal for rule in (*IMMEDIATE_RULES, *TICKET_ONLY_RULES) if rule.signal is not None)
"""The signals whose event's description a finding quotes (an immediate or ticket-only rule's reason). The others
carry none: a storm's signals stay in the detectors' windows for the horizon, and each kept its event's text."""
RULES: tuple[Rule, ...] = (
    Rule(FLAP, RuleKind.FLAP, 5,
         "reseat both ends; if it flaps again, clean the optics or replace the transceiver, then the cable",
         resettable=True),
    Rule(LINK_DOWN, RuleKind.LINK_DOWN, 5,
         "check the cable is seated at both ends; replace the transceiver, then the cable", resettable=True),
    *(Rule(r.rule, RuleKind.COUNTED, r.severity, r.repair, r.signal, resettable=r.resettable)
      for r in COUNTED_RULES),
    *IMMEDIATE_RULES,
    *TICKET_ONLY_RULES,
    Rule(SWITCH_FAULT, RuleKind.SWITCH_FAULT, 9,
         "many of the switch's cables failed together: check its power and fans, then RMA the switch",
         resettable=False),
    Rule(STORM_BREAKER, RuleKind.STORM, 10,
         "find the common cause (power, a switch or UFM restart, firmware); then `fabricctl resume`",
         resettable=False),
)
"""Every rule a finding or the breaker can carry, each once: the table every other one is derived from."""
RULE_BY_NAME: Mapping[str, Rule] = MappingProxyType({r.name: r for r in RULES})
if len(RULE_BY_NAME) != len(RULES):
    raise ValueError("a rule is declared twice in RULES")
if len({r.signal for r in RULES if r.signal is not None}) != sum(r.signal is not None for r in RULES):
    raise ValueError("a signal raises two rules in RULES")
RESETTABLE: frozenset[str] = frozenset(r.name for r in RULES if r.resettable)
"""The rules whose links a port reset may cure: the reset ladder's rules by default, and all it may take."""
SEVERITY: Mapping[str, int] = MappingProxyType(
    {r.name: r.severity for r in RULES if r.kind in RANKED and r.severity is not None})
"""How bad a rule's fault is, to reconsider deferred links worst first (every rule of a ``RANKED`` kind)."""


def deferral_rank(rule: str) -> int:
    """How soon a deferred link is reconsidered against others (higher first): its rule's severity. A record can
    carry a rule the table does not declare: the link check's back-out of a repair that did not take (``link_check``,
    a repair to redo, not a fault getting worse) or a rule retired since the record was stored; those rank below every
    rule of the table, never by a forgotten entry (every ranked kind must declare a severity)."""
    return SEVERITY.get(rule, 0)


def ticket_severity(rule: str | None) -> int | None:
    """How bad the fault ``rule`` found is, for its ticket's priority; ``None`` for a ticket-only rule, and for
    what is no rule of the table (an action's label such as ``link_check``, or ``None``)."""
    found = RULE_BY_NAME.get(rule) if rule is not None else None
    return found.severity if found is not None else None


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
    immediate_settle: timedelta = timedelta(seconds=60)
    """An immediate or counted rule's finding on a switch-to-switch cable waits this long before it is acted on, so
    that a failing switch's other cables reach the correlation first (``fabric.remediation.settling``); 0: never."""
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
