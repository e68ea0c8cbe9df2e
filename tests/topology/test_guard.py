from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from topology.capacity import leaf_paths
from topology.generate import PRESETS, fat_tree
from topology.guard import CapacityGuard, GuardSettings, Verdict
from topology.model import End, Tier

H100 = fat_tree(PRESETS["h100-4k"])
TIERS = {d.key: d.tier for d in H100.devices.values()}
SWITCH_CABLES = sorted(c.key for c in H100.cables if TIERS[c.a.device] is not Tier.HOST
                       and TIERS[c.b.device] is not Tier.HOST)
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def uplinks(leaf: str) -> list[tuple[End, End]]:
    return [c.key for c in H100.cables if c.a.device == leaf and TIERS[c.b.device] is Tier.SPINE]


def test_settings_cap() -> None:
    assert GuardSettings().cap(8192) == 40  # 0.5 % of the reference fabric's switch-switch cables
    assert GuardSettings().cap(1000) == 10  # the floor
    assert GuardSettings(cap_fraction=0.5).cap(8192) == 409  # the 5 % hard ceiling
    assert GuardSettings().cap(100) == 5  # the ceiling wins over the floor on a tiny fabric


def test_planned_paths_and_a_leaf_spine_cable() -> None:
    guard = CapacityGuard(H100)
    assert set(guard.planned.values()) == {1024} and set(guard.minimum.values()) == {768}
    cable = uplinks("pod01-leaf01")[0]
    verdict = guard.verdict(cable, T0)
    assert verdict.allowed and verdict.figures["affected_leaves"] == 1
    assert verdict.figures["worst_leaf_paths_after"] == 1024 - 32


def test_leaf_keeps_its_guard_under_critical_ber_on_ten_uplinks() -> None:
    guard = CapacityGuard(H100)
    taken, refused = 0, []
    for cable in uplinks("pod03-leaf05")[:10]:
        verdict = guard.verdict(cable, T0)
        if verdict.allowed:
            guard.take_out(cable, T0)
            taken += 1
        else:
            refused.append(verdict)
    # 1024 paths, minimum 768, 32 per uplink: 8 may go, the other 2 are deferred by the capacity limit.
    assert taken == 8 and [v.limit for v in refused] == ["capacity", "capacity"]
    assert "pod03-leaf05 would keep 736 of 1024 planned paths to core, below the guard's 768" in refused[0].reason
    assert guard.paths["pod03-leaf05"] == 768


def test_spine_core_cable_affects_every_leaf_under_the_spine() -> None:
    guard = CapacityGuard(H100)
    cable = next(k for k in SWITCH_CABLES if {TIERS[k[0].device], TIERS[k[1].device]} == {Tier.SPINE, Tier.CORE})
    verdict = guard.verdict(cable, T0)
    assert verdict.figures["affected_leaves"] == 8
    guard.take_out(cable, T0)
    spine = next(e.device for e in cable if TIERS[e.device] is Tier.SPINE)
    pod = spine.split("-")[0]
    assert {guard.paths[f"{pod}-leaf{r:02d}"] for r in range(1, 9)} == {1024 - 4}
    guard.put_back(cable)
    assert {guard.paths[leaf] for leaf in guard.planned} == {1024}


def test_blast_radius_and_rate_limit() -> None:
    guard = CapacityGuard(H100, GuardSettings(cap_floor=3, cap_fraction=0.0, hourly_limit=2))
    spread = [uplinks(f"pod{p:02d}-leaf01")[0] for p in range(1, 6)]
    assert guard.verdict(spread[0], T0).allowed
    guard.take_out(spread[0], T0)
    guard.take_out(spread[1], T0 + timedelta(minutes=1))
    rate = guard.verdict(spread[2], T0 + timedelta(minutes=2))
    assert (rate.allowed, rate.limit) == (False, "rate")
    later = T0 + timedelta(minutes=61)
    assert guard.verdict(spread[2], later).allowed
    guard.take_out(spread[2], later)
    capped = guard.verdict(spread[3], T0 + timedelta(hours=5))
    assert (capped.allowed, capped.limit) == (False, "blast_radius")
    assert "3 cables already disabled by automation, the cap is 3" in capped.reason


def test_links_down_in_ufm_count_against_capacity_but_not_the_cap() -> None:
    guard = CapacityGuard(H100)
    links = uplinks("pod02-leaf02")
    for cable in links[:8]:
        guard.mark_down(cable)
    assert len(guard.disabled) == 0
    assert not guard.verdict(links[8], T0).allowed


def test_host_cables_are_not_guarded() -> None:
    guard = CapacityGuard(H100)
    host = next(c.key for c in H100.cables if TIERS[c.a.device] is Tier.HOST)
    assert not guard.guards(host) and guard.verdict(host, T0).allowed


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(SWITCH_CABLES), st.booleans()), max_size=120))
def test_counters_always_equal_a_recomputation(steps: list[tuple[tuple[End, End], bool]]) -> None:
    guard = CapacityGuard(H100)
    for cable, down in steps:
        if down:
            guard.mark_down(cable)
        else:
            guard.mark_up(cable)
    live = [c for c in H100.cables if c.key not in guard.out]
    expected = leaf_paths(TIERS, live)
    assert {leaf: guard.paths[leaf] for leaf in guard.planned} == {k: v.paths for k, v in expected.items()}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(SWITCH_CABLES), st.sampled_from([0, 1, 5, 30, 300]), st.booleans()),
                max_size=200),
       st.sampled_from([0.5, 0.75, 0.9]), st.sampled_from([(15, 0.005), (3, 0.0)]))
def test_obeying_the_guard_never_breaks_a_limit(requests: list[tuple[tuple[End, End], int, bool]], c: float,
                                                rate_and_cap: tuple[int, float]) -> None:
    """Whatever automation asks for, cables UFM already shows down included (a flapping link usually is)."""
    hourly, fraction = rate_and_cap
    limits = GuardSettings(c=c, hourly_limit=hourly, cap_fraction=fraction, cap_floor=10 if fraction else 5)
    guard = CapacityGuard(H100, limits)
    now = T0
    taken: list[datetime] = []
    for cable, minutes, down_in_ufm in requests:
        now += timedelta(minutes=minutes)
        if down_in_ufm:
            guard.mark_down(cable)
        if guard.verdict(cable, now).allowed:
            if cable not in guard.disabled and guard.guards(cable):
                taken.append(now)
            before = dict(guard.paths)
            guard.take_out(cable, now)
            # UFM may take a leaf below its guard; automation never does.
            assert all(guard.paths[leaf] >= guard.minimum[leaf] for leaf in guard.planned
                       if guard.paths[leaf] < before[leaf])
        assert len(guard.disabled) <= guard.cap
        assert sum(1 for t in taken if now - t < timedelta(hours=1)) <= limits.hourly_limit


def test_a_cable_already_down_still_counts_against_the_cap_and_the_rate() -> None:
    guard = CapacityGuard(H100, GuardSettings(cap_floor=2, cap_fraction=0.0, hourly_limit=10))
    spread = [uplinks(f"pod{p:02d}-leaf01")[0] for p in range(1, 5)]
    for cable in spread:
        guard.mark_down(cable)  # UFM shows them all down already
    for cable in spread[:2]:
        assert guard.verdict(cable, T0).allowed
        guard.take_out(cable, T0)
    capped = guard.verdict(spread[2], T0)
    assert (capped.allowed, capped.limit) == (False, "blast_radius")
    assert guard.verdict(spread[0], T0).allowed  # already ours: nothing changes


def test_host_links_count_against_the_blast_radius_and_the_rate() -> None:
    """With host links not ticket-only, automation may disable them: no path to core depends on one, but each
    costs a GPU node a rail, so they are capped and rate-limited like switch cables."""
    hosts = [c.key for c in H100.cables if TIERS[c.a.device] is Tier.HOST or TIERS[c.b.device] is Tier.HOST]
    capped = CapacityGuard(H100, GuardSettings(cap_floor=2, cap_fraction=0.0, hourly_limit=100))
    for cable in hosts[:2]:
        assert capped.verdict(cable, T0).allowed
        capped.take_out(cable, T0)
    refused = capped.verdict(hosts[2], T0)
    assert (refused.allowed, refused.limit) == (False, "blast_radius")
    assert capped.verdict(SWITCH_CABLES[0], T0).limit == "blast_radius"  # one budget for every cable
    rated = CapacityGuard(H100, GuardSettings(hourly_limit=1))
    rated.take_out(hosts[0], T0)
    assert rated.verdict(hosts[1], T0 + timedelta(minutes=30)).limit == "rate"
    assert rated.verdict(hosts[1], T0 + timedelta(minutes=61)).allowed


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(SWITCH_CABLES), st.sampled_from(["down", "up", "take_out", "put_back"]),
                          st.sampled_from([0, 1, 7])), max_size=80),
       st.sampled_from([0.5, 0.75, 0.9]))
def test_a_guard_carried_over_to_new_settings_counts_what_one_built_on_them_saw(
        steps: list[tuple[tuple[End, End], str, int]], c: float) -> None:
    """A reload's new guard judges with its own settings exactly what a guard under them all along would have."""
    before, all_along = CapacityGuard(H100), CapacityGuard(H100, GuardSettings(c=c))
    now = T0
    for cable, step, minutes in steps:
        now += timedelta(minutes=minutes)
        for guard in (before, all_along):
            if step == "take_out":
                guard.take_out(cable, now)
            else:
                {"down": guard.mark_down, "up": guard.mark_up, "put_back": guard.put_back}[step](cable)
    carried = CapacityGuard(H100, GuardSettings(c=c))
    carried.carry_over(before)
    assert (carried.paths, carried.out, carried.disabled, list(carried.recent)) == (
        all_along.paths, all_along.out, all_along.disabled, list(all_along.recent))
    assert [carried.verdict(cable, now) for cable in SWITCH_CABLES[:40]] == [
        all_along.verdict(cable, now) for cable in SWITCH_CABLES[:40]]


HOST_CABLES = sorted(c.key for c in H100.cables if Tier.HOST in (TIERS[c.a.device], TIERS[c.b.device]))
"""The cables not in ``SWITCH_CABLES``, told by their ends' tiers (a set of those per cable was 10 s of import)."""
PROBED = [*SWITCH_CABLES[::97], *HOST_CABLES[::501]]
"""The cables whose verdicts are compared: a spread over the tiers, and host links (the blast radius's)."""
OPERATIONS = ["down", "up", "take_out", "put_back", "restore", "remember", "verdict"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([*uplinks("pod01-leaf01")[:6], *SWITCH_CABLES[::1500], *HOST_CABLES[:3]]),
                          st.sampled_from(OPERATIONS), st.sampled_from([0, 1, 20, 61])), max_size=60),
       st.sampled_from([2, 5, 20]))
def test_while_the_generation_stays_the_verdicts_at_a_time_stay(steps: list[tuple[tuple[End, End], str, int]],
                                                              hourly: int) -> None:
    """What lets the policy skip asking the guard again about its deferred links: two moments with the same
    ``generation`` and the same disables of the sliding hour give every cable the same verdict."""
    guard = CapacityGuard(H100, GuardSettings(hourly_limit=hourly, cap_fraction=0.002))
    now = T0
    seen: dict[tuple[int, int], list[Verdict]] = {}
    for cable, operation, minutes in steps:
        now += timedelta(minutes=minutes)
        if operation == "down":
            guard.mark_down(cable)
        elif operation == "up":
            guard.mark_up(cable)
        elif operation == "take_out":
            guard.take_out(cable, now)
        elif operation == "put_back":
            guard.put_back(cable)
        elif operation == "restore":
            guard.restore(cable)
        elif operation == "remember":
            guard.remember_disables([now - timedelta(minutes=minutes)])
        key = (guard.generation, guard.disables_within_hour(now))
        verdicts = [guard.verdict(probe, now) for probe in PROBED]  # their figures too: decisions carry them
        assert seen.setdefault(key, verdicts) == verdicts
    assert CapacityGuard(H100).generation != guard.generation
