"""One declaration per rule (``fabric.remediation.rules.RULES``): every rule a detector, the correlation or the
breaker raises is declared, with a kind, a severity where the policy ranks it and a repair for its tickets; the
other tables are derived from it, and a rule declared without one of them is refused where it is declared."""

from __future__ import annotations

import pytest

from fabric.controller.ticket_body import REPAIRS
from fabric.remediation.detectors import IMMEDIATE, NEVER_AUTO_RESTORE, TICKET_ONLY
from fabric.remediation.kinds import SignalKind
from fabric.remediation.rules import (
    COUNTED_RULES,
    FLAP,
    LINK_DOWN,
    RANKED,
    RESETTABLE,
    RULE_BY_NAME,
    RULES,
    SEVERITY,
    STORM_BREAKER,
    SWITCH_FAULT,
    Rule,
    RuleKind,
    ticket_severity,
)

RAISED = {FLAP, LINK_DOWN, SWITCH_FAULT, STORM_BREAKER, *IMMEDIATE.values(), *TICKET_ONLY.values(),
          *(rule.rule for rule in COUNTED_RULES)}
"""Every rule name the detectors, the correlation and the breaker put on a finding or an action."""


def test_every_rule_raised_is_declared_once_with_all_it_needs() -> None:
    assert set(RULE_BY_NAME) == RAISED and len(RULES) == len(RULE_BY_NAME)
    for rule in RULES:
        assert REPAIRS[rule.name] == rule.repair and rule.repair.strip()
        if rule.kind in RANKED:
            assert SEVERITY[rule.name] == rule.severity and 2 <= SEVERITY[rule.name] <= 10, rule
        assert ticket_severity(rule.name) == rule.severity


def test_the_detectors_tables_are_the_declarations() -> None:
    immediate = {r.signal: r.name for r in RULES if r.kind is RuleKind.IMMEDIATE}
    assert immediate == IMMEDIATE
    assert {r.signal: r.name for r in RULES if r.kind is RuleKind.TICKET_ONLY} == TICKET_ONLY
    assert {SignalKind.TEMPERATURE, SignalKind.MODULE_FAULT} == NEVER_AUTO_RESTORE


def test_what_is_no_rule_has_no_severity() -> None:
    assert ticket_severity(None) is None and ticket_severity("link_check") is None
    assert ticket_severity(SWITCH_FAULT) == 9 and ticket_severity(STORM_BREAKER) == 10


@pytest.mark.parametrize(("declare", "refusal"), [
    (lambda: Rule("hot_cage", RuleKind.IMMEDIATE, None, "cool it", SignalKind.TEMPERATURE, resettable=False),
     "needs a severity"),
    (lambda: Rule("hot_cage", RuleKind.IMMEDIATE, 5, "  ", SignalKind.TEMPERATURE, resettable=False),
     "repair is empty"),
    (lambda: Rule("hot_cage", RuleKind.IMMEDIATE, 5, "cool it", resettable=False), "names the signal"),
    (lambda: Rule("hot_cage", RuleKind.FLAP, 5, "cool it", SignalKind.TEMPERATURE, resettable=False),
     "no one signal"),
    (lambda: Rule("hot_cage", RuleKind.TICKET_ONLY, None, "cool it", SignalKind.TEMPERATURE,
                  never_auto_restore=True, resettable=False), "only an immediate rule"),
    (lambda: Rule("hot_cage", RuleKind.TICKET_ONLY, None, "cool it", SignalKind.TEMPERATURE, resettable=True),
     "takes no link out"),
])
def test_a_rule_missing_what_it_needs_is_refused_where_it_is_declared(declare: object, refusal: str) -> None:
    with pytest.raises(ValueError, match=refusal):
        declare()  # type: ignore[operator]


def test_a_rule_cannot_be_declared_without_a_severity_or_a_repair() -> None:
    with pytest.raises(TypeError):
        Rule("hot_cage", RuleKind.IMMEDIATE)  # type: ignore[call-arg]


def test_a_rule_cannot_be_declared_without_saying_whether_a_reset_can_help() -> None:
    with pytest.raises(TypeError, match="resettable"):
        Rule("hot_cage", RuleKind.IMMEDIATE, 5, "cool it", SignalKind.TEMPERATURE)  # type: ignore[call-arg]


def test_a_reset_answers_errors_drops_and_flaps_never_heat_a_failed_module_or_a_lost_lane() -> None:
    """PDR's ladder: BER, drops and link-downs reset first; what a reset cannot cure goes out at once, and what
    changes nothing in UFM (a ticket, a switch's fault, the breaker) resets nothing either."""
    assert set(RESETTABLE) == {FLAP, LINK_DOWN, "ber_high", "port_errors", "ber_critical", "high_retransmission",
                               "packet_drops", "unhealthy_port"}
    assert not RESETTABLE & {"temperature", "module_fault", "degraded_width", "degraded_speed", SWITCH_FAULT,
                             STORM_BREAKER, *TICKET_ONLY.values()}


def test_a_rule_the_table_does_not_declare_ranks_below_every_declared_one() -> None:
    from fabric.remediation.policy import LINK_CHECK
    from fabric.remediation.rules import SEVERITY, deferral_rank

    assert all(deferral_rank(rule) == severity > deferral_rank(LINK_CHECK) for rule, severity in SEVERITY.items())
    assert deferral_rank("a_rule_retired_since") == deferral_rank(LINK_CHECK)
