"""The guard's figures the daemon reports (``/status``, ``/metrics``): the worst leaf, the cap, the sliding hour."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from fabric.daemon.runtime import guard_figures
from fabric.remediation.signals import end_name
from topology.generate import PRESETS, fat_tree
from topology.guard import CableKey, CapacityGuard

PLAN = fat_tree(PRESETS["tiny"])
GUARDED = sorted((c.key for c in PLAN.cables if CapacityGuard(PLAN).guards(c.key)), key=str)
NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


def test_an_intact_fabric_has_every_leaf_whole_and_nothing_disabled() -> None:
    guard = CapacityGuard(PLAN)
    figures = guard_figures(guard, NOW)
    assert figures.worst_leaf_fraction == 1.0
    assert figures.worst_leaf == min(guard.names[leaf] for leaf in guard.planned)  # ties: the first by name
    assert (figures.disabled, figures.cap, figures.disables_last_hour) == (0, guard.cap, 0)
    assert figures.hourly_limit == guard.settings.hourly_limit
    assert figures.min_leaf_fraction == guard.settings.c


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(GUARDED), st.integers(0, 180)), max_size=12, unique_by=lambda t: t[0]))
def test_the_worst_leaf_is_the_lowest_fraction_and_the_hour_slides(taken: list[tuple[object, int]]) -> None:
    guard = CapacityGuard(PLAN)
    for cable, minutes_ago in taken:
        guard.take_out(cable, NOW - timedelta(minutes=minutes_ago))  # type: ignore[arg-type]
    figures = guard_figures(guard, NOW)
    fractions = {guard.names[leaf]: guard.paths[leaf] / planned for leaf, planned in guard.planned.items()}
    lowest = min(fractions.values())
    assert figures.worst_leaf_fraction == lowest
    assert figures.worst_leaf == min(name for name, fraction in fractions.items() if fraction == lowest)
    assert figures.disabled == len(taken)
    assert figures.disables_last_hour == sum(1 for _, minutes_ago in taken if minutes_ago < 60)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.sampled_from(GUARDED), max_size=12, unique=True), st.lists(st.sampled_from(GUARDED), max_size=8,
                                                                              unique=True))
def test_the_console_is_told_every_leaf_below_its_plan_and_every_cable_down_not_by_automation(
        disabled: list[CableKey], down: list[CableKey]) -> None:
    guard = CapacityGuard(PLAN)
    for cable in disabled:
        guard.take_out(cable, NOW)
    for cable in down:
        guard.mark_down(cable)
    figures = guard_figures(guard, NOW)
    assert {leaf.leaf: (leaf.paths, leaf.minimum, leaf.planned) for leaf in figures.reduced_leaves} == {
        leaf: (guard.paths[leaf], guard.minimum[leaf], planned) for leaf, planned in guard.planned.items()
        if guard.paths[leaf] < planned}
    not_ours = {cable for cable in down if cable not in disabled}
    assert figures.down_total == len(not_ours)
    assert set(figures.down_not_ours) == {(end_name(a), end_name(b)) for a, b in not_ours}
