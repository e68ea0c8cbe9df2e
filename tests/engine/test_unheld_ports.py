"""A port UFM shows disabled that no component holds out is never left unexplained: adopted when automation's own
disable did it, recorded once as an operator's action otherwise (``reconcile.explain_unheld``)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from engine_support import restart, rig

from fabric.controller.reconcile import OUTSIDE_RULE
from fabric.remediation.domain import CONVERGE_RULE, ActionKind, Lifecycle
from fabric.remediation.signals import link_id
from topology.generate import PRESETS, fat_tree
from topology.guard import GuardSettings

TINY = fat_tree(PRESETS["tiny"])


def test_a_port_an_operator_disabled_is_recorded_once_and_left_alone(tmp_path: Path) -> None:
    with rig(TINY, tmp_path) as r:
        cable = next(c for c in TINY.cables if c.a.device == "pod01-leaf01" and c.a.port == "5")
        component = link_id(cable.key)
        assert r.engine.view is not None
        port = r.engine.view.port_to_act_on(component)
        assert port is not None
        r.runner.run(r.client.post_port_action(port, "disable"))  # maintenance, by hand
        r.advance(30)
        first = r.cycle()
        assert [(a.kind, a.rule, a.component) for a in first.actions] == [(ActionKind.RECORD, OUTSIDE_RULE,
                                                                            component)]
        assert first.ports_out_unheld == 1 and "operator" in first.actions[0].reason
        r.advance(30)
        assert r.cycle().actions == []  # once
        restart(r)
        r.advance(30)
        again = r.cycle()
        assert again.actions == [] and again.ports_out_unheld == 1  # once across a restart too
        assert r.port_state(port) == "Disabled"  # never undone
        assert r.store.get_component(component) is None


def test_a_port_automation_disabled_and_lost_track_of_is_adopted_within_the_guard(tmp_path: Path) -> None:
    # The hour is full after its disable: the policy's reconsideration of a deferred link waits, so only the
    # adoption can hold it out.
    with rig(TINY, tmp_path, guard=GuardSettings(c=0.0, cap_fraction=0.05, cap_floor=10, hourly_limit=1)) as r:
        r.inject(fault="flap", link="core01-01/1", cycles=5, period="20s")
        r.advance(300)
        disabled = [a.component for a in r.cycle().actions if a.kind is ActionKind.DISABLE]
        assert len(disabled) == 1 and disabled[0] is not None
        component = disabled[0]
        record = r.store.get_component(component)
        assert record is not None and record.lifecycle in (Lifecycle.DISABLED, Lifecycle.AWAITING_REPAIR)
        # What a restart that lost track of the write left (issue 20): deferred, while UFM shows it disabled.
        r.store.put_component(component, replace(record, lifecycle=Lifecycle.DEFERRED))
        restart(r)
        assert not r.engine.guard.disabled  # nothing counted as held out
        r.advance(30)
        adopted = r.cycle()
        assert [(a.kind, a.rule) for a in adopted.actions if a.component == component] == [
            (ActionKind.DISABLE, CONVERGE_RULE)], adopted.actions
        assert adopted.ports_out_unheld == 0
        assert len(r.engine.guard.disabled) == 1
        after = r.store.get_component(component)
        assert after is not None and after.lifecycle in (Lifecycle.DISABLED, Lifecycle.AWAITING_REPAIR)
        r.advance(30)
        r.cycle()
        after = r.store.get_component(component)
        assert after is not None and after.lifecycle is Lifecycle.AWAITING_REPAIR
        assert len(r.tickets.list()) == 1
