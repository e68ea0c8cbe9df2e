"""The burn-in window's core: thresholds only ever stricter, and the survivors report's verdicts."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fabric.config import ConfigError, load_config
from fabric.remediation.burnin import (
    BurninSettings,
    Decided,
    PortVerdict,
    WindowFacts,
    failures_decided,
    idle_ends,
    survivors,
)
from fabric.remediation.domain import ActionKind
from fabric.remediation.policy import PolicyConfig
from fabric.remediation.rules import COUNTED_RULES, RuleSettings, Threshold
from fabric.remediation.signals import link_id
from fabric.remediation.view import fabric_context
from topology.generate import PRESETS, fat_tree
from topology.model import End

counts = st.integers(1, 50)
minutes = st.integers(1, 600).map(lambda m: timedelta(minutes=m))


@given(service=st.builds(lambda flap, down, counted: RuleSettings(
    flap_cycles=flap, down_ticket_after=down,
    counted={rule.rule: Threshold(count, rule.window) for rule, count in zip(COUNTED_RULES, counted, strict=True)}),
    counts, minutes, st.lists(counts, min_size=len(COUNTED_RULES), max_size=len(COUNTED_RULES))),
    burnin=st.builds(BurninSettings, counted_count=counts, flap_cycles=counts, down_ticket_after=minutes))
def test_a_window_is_never_looser_than_the_service(service: RuleSettings, burnin: BurninSettings) -> None:
    strict = burnin.strict(service)
    assert strict.flap_cycles == min(service.flap_cycles, burnin.flap_cycles)
    assert strict.down_ticket_after == min(service.down_ticket_after, burnin.down_ticket_after)
    for rule in COUNTED_RULES:
        kept = service.threshold(rule.rule)
        assert strict.threshold(rule.rule) == Threshold(min(kept.count, burnin.counted_count), kept.window)
    assert strict.flap_window == service.flap_window and strict.settle == service.settle


def test_a_window_takes_out_without_resetting_first() -> None:
    assert BurninSettings.strict_policy(PolicyConfig()).resets.max_resets == 0


def test_verdicts_failed_before_down_before_idle_and_alerts_only_flag() -> None:
    plan = fat_tree(PRESETS["tiny"])
    context = fabric_context(plan)
    uplinks = [c for c in plan.cables if {c.a.device, c.b.device} == {"pod01-leaf01", "pod01-spine01"}]
    failed, down, idle_cable, alerted_cable = plan.cables[0], uplinks[0], uplinks[1], plan.cables[1]
    idle_end = next(e for e in idle_cable.key if e.device == "pod01-leaf01")
    alerted_end = next(e for e in alerted_cable.key if e.device.startswith("pod"))
    decided = [Decided(link_id(failed.key), ActionKind.TICKET, "port_errors", "1 event"),
               Decided(link_id(down.key), ActionKind.RECORD, "flap", "noted"),  # a record is no failure
               Decided(link_id(down.key), ActionKind.DEFER, "flap", "kept up")]
    facts = WindowFacts(down_at_start=frozenset({down.key, failed.key}), idle=frozenset({idle_end}),
                        alerted=frozenset({alerted_end}))
    ports, switches = survivors(plan, context, failures_decided(decided), facts)
    by_name = {p.port: p for p in ports}
    assert by_name["pod01-leaf01/Port 1"].verdict is PortVerdict.FAILED  # failed wins over down
    assert by_name["pod01-leaf01/Port 1"].why == "ticket: port_errors"
    assert {p.verdict for p in ports if p.port.startswith("pod01-leaf01/Port 5")} == {PortVerdict.FAILED}
    idle_name = f"pod01-leaf01/Port {idle_end.port}"
    assert by_name[idle_name].verdict is PortVerdict.IDLE
    alerted = [p for p in ports if p.utilisation_alert]
    assert len(alerted) == 1 and alerted[0].verdict is PortVerdict.SURVIVED
    # every planned switch port once: both ends of switch cables, the switch end of host cables
    switch_ends = sum(plan.devices[e.device].kind.value == "switch" for c in plan.cables for e in c.key)
    assert len(ports) == switch_ends == len(by_name)
    leaf = next(s for s in switches if s.switch == "pod01-leaf01")
    assert not leaf.survived and leaf.counts[PortVerdict.IDLE] == 1
    assert sum(sum(s.counts.values()) for s in switches) == len(ports)


def test_burnin_configuration_is_all_or_nothing(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[burnin]\ncounted_count = 0\nutilisation_events = [123, -4]\nduration = "soon"\n'
                    '[guard]\nc = 2\n')
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    found = caught.value.problems
    assert any("burnin.counted_count" in p for p in found)
    assert any("burnin.utilisation_events" in p and "positive" in p for p in found)
    assert any("burnin.duration" in p for p in found)
    assert any("guard.c" in p for p in found)
    assert len(found) == 4
    path.write_text('[burnin]\ncounted_count = 2\nmin_packets = 0\nutilisation_events = [122, 123]\n')
    built = load_config(path).burnin.build()
    assert (built.counted_count, built.min_packets, built.utilisation_events) == (2, 0, (122, 123))


@given(st.dictionaries(st.sampled_from([f"p{i}" for i in range(12)]),
                       st.tuples(st.none() | st.integers(0, 2**64 - 1), st.none() | st.integers(0, 2**64 - 1))),
       st.integers(1, 1000))
def test_a_port_is_idle_exactly_when_both_samples_hold_it_and_it_grew_less_than_asked(
        counts: dict[str, tuple[int | None, int | None]], least: int) -> None:
    ports = {name: End(name, 1) for name in counts}
    first = {name: before for name, (before, _) in counts.items() if before is not None}
    last = {name: after for name, (_, after) in counts.items() if after is not None}
    idle = idle_ends(ports, first, last, least)
    for name, (before, after) in counts.items():
        # A counter that went back was reset (the switch rebooted): what it counts since is what it carried.
        grown = None if before is None or after is None else (after - before if after >= before else after)
        assert (ports[name] in idle) == (grown is not None and grown < least), (name, before, after)
