"""The guard's hourly rate and the storm breaker hold across a restart exactly as in an uninterrupted run."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from engine_support import Rig, restart, rig

from fabric.remediation.domain import ActionKind, ComponentId, Lifecycle
from tickets.base import TicketStatus
from topology.generate import PRESETS, fat_tree
from topology.guard import GuardSettings

TINY = fat_tree(PRESETS["tiny"])
# Capacity and the blast radius out of the way (the tiny fabric's cap is one cable), so that the rate decides.
RATE_OF_TWO = GuardSettings(c=0.0, cap_fraction=0.05, cap_floor=10, hourly_limit=2)
LEAF_SPINE = ["pod01-leaf01/5", "pod01-leaf02/5", "pod02-leaf01/5"]


def _ber(r: Rig, port: str) -> ComponentId:
    """A critical BER on ``port``'s cable; the cycle that sees it returns the component it acted on."""
    report = r.critical_ber(port)
    acted = {a.component for a in report.actions if a.kind in (ActionKind.DISABLE, ActionKind.DEFER)}
    assert len(acted) == 1, report.actions
    component = acted.pop()
    assert component is not None
    return component


def _repair(r: Rig, component: ComponentId) -> None:
    ticket = next(t for t in r.tickets.list(TicketStatus.OPEN) if str(component) in t.summary)
    r.tickets.resolve(ticket.key, "replaced the optic")
    r.advance(30)
    assert [a.kind for a in r.cycle().actions if a.component == component] == [ActionKind.ENABLE]


def test_disables_of_repaired_cables_still_count_against_the_hourly_rate_after_a_restart(tmp_path: Path) -> None:
    with rig(TINY, tmp_path, guard=RATE_OF_TWO) as r:
        for port in LEAF_SPINE[:2]:
            component = _ber(r, port)
            assert r.store.get_component(component).lifecycle is Lifecycle.AWAITING_REPAIR  # type: ignore[union-attr]
            _repair(r, component)  # back in service: nothing automation holds is out any more
        restart(r)
        third = _ber(r, LEAF_SPINE[2])
        # (its first decision after the hold that let the switches' other cables show first)
        decision = next(d.action for d in r.store.decisions(component=third) if d.action.kind is not ActionKind.RECORD)
        # Two disables in the last hour, the limit is two: the third waits, as it would without the restart.
        assert decision.kind is ActionKind.DEFER, decision
        assert decision.guard["disables_last_hour"] == 2 and "disables in the last hour" in decision.reason


def test_a_restart_mid_storm_trips_the_breaker_when_an_uninterrupted_run_would(tmp_path: Path) -> None:
    hosts = ["pod01-node01 mlx5_0", "pod01-node02 mlx5_0", "pod01-node03 mlx5_0", "pod02-node01 mlx5_0",
             "pod02-node02 mlx5_0"]
    with rig(TINY, tmp_path, storm_components=5, storm_window=timedelta(minutes=15),
             storm_quiet_period=timedelta(minutes=20)) as r:
        for host in hosts[:3]:
            r.inject(fault="ber", port=host, escalate_after=0)
        r.advance(30)
        assert not r.cycle().failed and not r.store.breaker_state().halted
        restart(r)
        for host in hosts[3:]:
            r.inject(fault="ber", port=host, escalate_after=0)
        r.advance(30)
        tripped = r.cycle()
        assert [a.kind for a in tripped.actions][:1] == [ActionKind.HALT], tripped.actions
        assert r.store.breaker_state().halted
        # Still in the storm after another restart: a held finding moves the quiet period's start, and it
        # survives the restart too.
        r.advance(600)
        r.inject(fault="ber", port="pod02-node03 mlx5_0", escalate_after=0)
        r.advance(30)
        r.cycle()
        held_at = r.store.breaker_state().last_held
        assert held_at is not None and r.store.breaker_state().held_count >= 1
        restart(r)
        assert r.engine.state.breaker.last_held == held_at
        r.advance(20 * 60 - 60)
        assert r.store.breaker_state().halted and r.cycle() and r.store.breaker_state().halted
        r.advance(120)
        r.cycle()
        assert not r.store.breaker_state().halted


def test_a_cable_enabled_by_hand_with_the_hour_full_is_taken_out_again_after_a_restart(tmp_path: Path) -> None:
    """Its disable is one the sliding hour already counts, so the rate cannot refuse taking it out again (it used to
    be deferred, as if a new disable were asked for): capacity and the blast radius are still checked."""
    with rig(TINY, tmp_path, guard=RATE_OF_TWO) as r:
        first = _ber(r, LEAF_SPINE[0])
        _repair(r, first)  # the tiny fabric's cap is one cable: the first makes room, and still counts in the hour
        second = _ber(r, LEAF_SPINE[1])
        assert r.engine.view is not None
        port = r.engine.view.port_to_act_on(second)
        assert port is not None
        r.runner.run(r.client.post_port_action(port, "enable"))  # an operator puts it back by hand
        r.advance(30)
        assert r.port_state(port) != "Disabled"
        restart(r)
        record = r.store.get_component(second)
        assert record is not None and record.lifecycle is Lifecycle.AWAITING_REPAIR, record
        assert r.engine.guard.disables_within_hour(r.state.now()) == 2
        r.advance(30)
        assert [(a.kind, a.component) for a in r.cycle().actions] == [(ActionKind.DISABLE, second)]
        r.advance(30)
        r.cycle()
        assert r.port_state(port) == "Disabled"


def test_a_deferred_cable_repaired_is_on_probation_after_a_restart_too(tmp_path: Path) -> None:
    """Its repair changes its record without an action (nothing to enable): the record is persisted all the same
    (it was not, and a restart read it back deferred, repaired it again and confirmed its link a second time)."""
    with rig(TINY, tmp_path) as r:
        _ber(r, LEAF_SPINE[0])  # the tiny fabric's cap is one cable: the next is deferred
        deferred = _ber(r, LEAF_SPINE[1])
        record = r.store.get_component(deferred)
        assert record is not None and record.lifecycle is Lifecycle.DEFERRED
        ticket = next(t for t in r.tickets.list(TicketStatus.OPEN) if str(deferred) in t.summary)
        r.tickets.resolve(ticket.key, "reseated")
        r.advance(30)
        r.cycle()
        record = r.store.get_component(deferred)
        assert record is not None and record.lifecycle is Lifecycle.PROBATION, record
        r.advance(30)
        r.cycle()  # its link confirmed up as planned
        checks = len([d for d in r.store.decisions(component=deferred) if d.action.rule == "link_check"])
        restart(r)
        r.advance(30)
        r.cycle()
        assert r.engine.state.components[deferred].lifecycle is Lifecycle.PROBATION
        assert len([d for d in r.store.decisions(component=deferred) if d.action.rule == "link_check"]) == checks
