"""A dry run's would-be state holds across restarts: what it would have disabled, the guard's counts, the breaker's
halt and storm window; live mode never acts on it (a simulated UFM over HTTP, a real SQLite store)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
import sqlalchemy as sa
from engine_support import Rig, disabled_ports, restart, rig
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabric.controller.dryrun import DRY_RUN_RULE
from fabric.controller.engine import Engine
from fabric.remediation.domain import ActionKind, ComponentId, Lifecycle
from fabric.remediation.policy import PolicyConfig
from fabric.store.records import RequestKind
from fabric.store.schema import operator_requests
from topology.generate import PRESETS, fat_tree
from topology.guard import GuardSettings

TINY = fat_tree(PRESETS["tiny"])  # its blast-radius cap: one cable
# Four cables from each leaf to each spine: the cap is three, and with capacity out of the way the rate decides.
ROOMY = fat_tree(replace(PRESETS["tiny"], leaf_spine_cables=4, spine_core_cables=4, radix=32))
RATE_OF_TWO = GuardSettings(c=0.0, cap_fraction=0.05, cap_floor=10, hourly_limit=2)
LEAF_SPINE = ["pod01-leaf01/5", "pod01-leaf02/5", "pod02-leaf01/5"]
# No switch with more than two of these and the first cable above (none of it is one switch's fault).
HOSTS = ["pod01-node01 mlx5_0", "pod01-node02 mlx5_1", "pod02-node01 mlx5_0", "pod02-node02 mlx5_1",
         "pod01-node03 mlx5_1", "pod02-node03 mlx5_0"]


def _ber(r: Rig, port: str) -> list[tuple[ActionKind, ComponentId | None]]:
    """A critical BER on ``port``'s cable, and the UFM-side decisions of the cycle that sees it."""
    report = r.critical_ber(port)
    return [(a.kind, a.component) for a in report.actions if a.kind in (ActionKind.DISABLE, ActionKind.DEFER)]


def _switch_mode(r: Rig, *, dry_run: bool) -> Engine:
    """The same engine restarted on the same database, in the other mode."""
    policy = replace(r.engine.settings.policy, dry_run=dry_run)
    r.engine.settings = replace(r.engine.settings, policy=policy)  # type: ignore[misc]
    return restart(r)


def test_a_dry_run_restarted_after_disabling_a_link_does_not_disable_it_again_and_counts_it(tmp_path: Path) -> None:
    with rig(TINY, tmp_path, dry_run=True) as r:  # the tiny fabric's cap: one cable
        [(kind, first)] = _ber(r, LEAF_SPINE[0])
        assert kind is ActionKind.DISABLE and disabled_ports(r) == []
        restart(r)
        assert r.engine.state.components[first].lifecycle is Lifecycle.DISABLED  # type: ignore[index]
        assert first in r.engine.context.cables and r.engine.context.cables[first] in r.engine.guard.disabled
        # The BER goes on: the link is already (would be) disabled, and the next cable's disable is refused by
        # the cap it already fills, as live mode would refuse it.
        r.advance(30)
        again = r.cycle()
        assert not any(a.kind is ActionKind.DISABLE and a.component == first for a in again.actions), again.actions
        [(kind, second)] = _ber(r, LEAF_SPINE[1])
        assert kind is ActionKind.DEFER
        decision = next(d.action for d in r.store.decisions(component=second) if d.action.kind is kind)
        assert decision.guard["disabled"] == 1 and "already disabled by automation" in decision.reason
        assert disabled_ports(r) == [] and r.store.components() == {}  # nothing real: all would-be


def test_a_restarted_dry_run_counts_its_disables_against_the_hourly_rate(tmp_path: Path) -> None:
    with rig(ROOMY, tmp_path, dry_run=True, guard=RATE_OF_TWO) as r:
        for port in LEAF_SPINE[:2]:
            assert [kind for kind, _ in _ber(r, port)] == [ActionKind.DISABLE]
        restart(r)
        [(kind, third)] = _ber(r, LEAF_SPINE[2])
        assert kind is ActionKind.DEFER
        decision = next(d.action for d in r.store.decisions(component=third) if d.action.kind is kind)
        assert decision.guard["disables_last_hour"] == 2 and "disables in the last hour" in decision.reason


def test_a_dry_run_restarted_mid_storm_trips_and_stays_halted_as_an_uninterrupted_one(tmp_path: Path) -> None:
    with rig(TINY, tmp_path, dry_run=True, storm_components=5, storm_window=timedelta(minutes=15)) as r:
        for host in HOSTS[:3]:
            r.inject(fault="ber", port=host, escalate_after=0)
        r.advance(30)
        assert not r.cycle().failed and not r.engine.state.breaker.halted
        restart(r)  # the storm window's three components are kept
        for host in HOSTS[3:5]:
            r.inject(fault="ber", port=host, escalate_after=0)
        r.advance(30)
        tripped = r.cycle()
        assert [a.kind for a in tripped.actions][:1] == [ActionKind.HALT], tripped.actions
        restart(r)
        assert r.engine.state.breaker.halted
        held = r.store.state_scope()
        assert held.would_be and held.breaker_state().halted and not r.store.breaker_state().halted
        r.inject(fault="ber", port=HOSTS[5], escalate_after=0)
        r.advance(30)
        report = r.cycle()
        assert r.engine.state.breaker.halted and not any(a.kind is ActionKind.DISABLE for a in report.actions)
        # `fabricctl resume` resumes a dry run's halt too.
        r.store.request(RequestKind.RESUME, reason="storm over", requested_by="test")
        r.advance(30)
        resumed = r.cycle()
        assert not r.engine.state.breaker.halted and not held.breaker_state().halted, resumed.actions
        assert r.store.pending_requests() == [] and "an operator resumed automation" in resumed.actions[0].reason
        with r.store.engine.connect() as conn:
            assert list(conn.execute(sa.select(operator_requests.c.outcome))) == [("dry run: automation resumed",)]


def test_switching_to_live_acts_on_nothing_the_dry_run_would_have_done(tmp_path: Path) -> None:
    with rig(TINY, tmp_path, dry_run=True, storm_components=5) as r:
        [(kind, link)] = _ber(r, LEAF_SPINE[0])
        for host in HOSTS[:5]:
            r.inject(fault="ber", port=host, escalate_after=0)
        r.advance(30)
        r.cycle()
        assert kind is ActionKind.DISABLE and r.engine.state.breaker.halted
        _switch_mode(r, dry_run=False)
        # Live starts from what UFM shows: no would-be disable, no would-be halt; the dry run's scope is dropped.
        assert link not in r.engine.state.components and not r.engine.state.breaker.halted
        assert r.engine.guard.disabled == set() and not r.store.dry_run_kept()
        r.advance(30)
        report = r.cycle()
        assert disabled_ports(r) == [] and not any(a.component == link for a in report.actions), report.actions
        assert r.store.state_scope().would_be is False


def test_a_dry_run_after_live_mode_begins_from_live_modes_state(tmp_path: Path) -> None:
    with rig(ROOMY, tmp_path, dry_run=True, guard=RATE_OF_TWO) as r:
        assert [kind for kind, _ in _ber(r, LEAF_SPINE[0])] == [ActionKind.DISABLE]  # would be, in the first dry run
        _switch_mode(r, dry_run=False)
        [(kind, live_link)] = _ber(r, LEAF_SPINE[1])
        assert kind is ActionKind.DISABLE and len(disabled_ports(r)) == 1
        _switch_mode(r, dry_run=True)
        began = [d.action for d in r.store.decisions() if d.action.rule == DRY_RUN_RULE]
        assert len(began) == 2 and "1 components held" in began[-1].reason, began
        assert r.engine.state.components[live_link].lifecycle in (Lifecycle.DISABLED, Lifecycle.AWAITING_REPAIR)
        # The hour holds live mode's disable, not the first dry run's: one more fits under the limit of two.
        [(kind, _)] = _ber(r, LEAF_SPINE[2])
        assert kind is ActionKind.DISABLE and len(disabled_ports(r)) == 1
        assert PolicyConfig().dry_run  # dry run stays the default


# --- the property: restarts change nothing a dry run decides ----------------------------------------------------

POOL = ["pod01-leaf01/5", "pod01-leaf02/6", "pod02-leaf01/7", "pod02-leaf02/8", "pod01-spine01/9",
        "pod02-spine02/10", "pod01-node01 mlx5_0", "pod02-node02 mlx5_1"]
"""Cables of eight different leaf and spine ports of the roomy fabric, at most two a switch."""
CYCLES = 8
UFM_SIDE = (ActionKind.DISABLE, ActionKind.DEFER, ActionKind.HALT, ActionKind.QUARANTINE, ActionKind.ENABLE)


Decided = tuple[list[list[tuple[ActionKind, str]]], dict[str, Lifecycle], bool]


def _dry_run(tmp_path: Path, faults: dict[int, list[str]], restarts: set[int]) -> Decided:
    """The UFM-side decisions of each cycle of a dry run restarted before the cycles in ``restarts``, the would-be
    lifecycles it ends with and whether it ends halted."""
    decided = []
    with rig(ROOMY, tmp_path, dry_run=True, guard=RATE_OF_TWO, storm_components=4,
             storm_window=timedelta(minutes=2)) as r:
        for cycle in range(CYCLES):
            if cycle in restarts:
                restart(r)
            for port in faults.get(cycle, []):
                r.inject(fault="ber", port=port, escalate_after=0)
            r.advance(30)
            report = r.cycle()
            decided.append([(a.kind, str(a.component)) for a in report.actions if a.kind in UFM_SIDE])
        held = r.store.state_scope()
        states = {str(c): record.lifecycle for c, record in held.components().items()}
        return decided, states, held.breaker_state().halted


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(faults=st.dictionaries(st.integers(0, CYCLES - 1), st.lists(st.sampled_from(POOL), min_size=1, max_size=3,
                                                                     unique=True), min_size=1, max_size=4),
       restarts=st.sets(st.integers(1, CYCLES - 1), min_size=1, max_size=3))
def test_a_dry_run_restarted_at_any_cycles_decides_as_an_uninterrupted_one(
        tmp_path_factory: pytest.TempPathFactory, faults: dict[int, list[str]], restarts: set[int]) -> None:
    uninterrupted = _dry_run(tmp_path_factory.mktemp("once"), faults, set())
    assert _dry_run(tmp_path_factory.mktemp("restarted"), faults, restarts) == uninterrupted
