"""The storm-speed shortcuts change nothing an operator sees.

- ``ComponentId`` is interned (hashing and equality by identity): equal ids must be the very same object
  however they were made (constructor, ``parse``, pickle, copy), and their order must stay (kind, name).
- The detectors run the flap rule only for components with a new link-state signal or an episode waiting to
  settle. A reference that runs it for every component seen in the cycle (the behaviour before the
  shortcut) must give the same findings, in the same order, on any stream of signals.
"""

from __future__ import annotations

import copy
import pickle
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric.remediation.detectors import _FRESH_LINK_STATE, Detectors
from fabric.remediation.domain import ComponentId, ComponentKind, Finding
from fabric.remediation.kinds import SignalKind
from fabric.remediation.rules import RuleSettings, Threshold
from fabric.remediation.signals import Signal, link_id
from topology.generate import PRESETS, fat_tree

PLAN = fat_tree(PRESETS["tiny"])
CABLES = [c for c in PLAN.cables if not c.a.device.endswith("mlx5_0")][:3]
T0 = datetime(2026, 4, 1, 10, 0, tzinfo=UTC)

# --- ComponentId ---------------------------------------------------------------------------------------

names = st.text(alphabet="abcz019/|-_ ", min_size=1, max_size=12)
ids = st.tuples(st.sampled_from(list(ComponentKind)), names)


@given(st.lists(ids, max_size=30))
def test_equal_ids_are_one_object_and_keep_their_order(pairs: list[tuple[ComponentKind, str]]) -> None:
    made = [ComponentId(kind, name) for kind, name in pairs]
    for (kind, name), component in zip(pairs, made, strict=True):
        assert ComponentId(kind.value, name) is component
        assert ComponentId.parse(str(component)) is component
        assert pickle.loads(pickle.dumps(component)) is component
        assert copy.deepcopy(component) is component
        assert (component.kind, component.name) == (kind, name)
    assert [(c.kind.value, c.name) for c in sorted(made)] == sorted((k.value, n) for k, n in pairs)
    assert len(set(made)) == len(set(pairs))


def test_component_ids_are_immutable_and_checked() -> None:
    component = ComponentId(ComponentKind.LINK, "a/1|b/2")
    with pytest.raises(AttributeError):
        component.name = "other"  # type: ignore[misc]
    with pytest.raises(ValueError):
        ComponentId("cable", "a/1|b/2")
    with pytest.raises(ValueError):
        ComponentId.parse("no-kind")


# --- the flap rule's shortcut ----------------------------------------------------------------------------

class _EveryCycle(Detectors):
    """The flap rule for every component with a signal this cycle, as before the shortcut."""

    def evaluate(self, now: datetime) -> list[Finding]:
        for component in self.dirty | self.pending:
            if (track := self.tracks.get(component)) is not None:
                track.fresh |= _FRESH_LINK_STATE
        return super().evaluate(now)


LINK_KINDS = [SignalKind.LINK_DOWN, SignalKind.LINK_UP, SignalKind.PORT_DOWN, SignalKind.LINK_DOWNED,
              SignalKind.PORT_ERRORS, SignalKind.BER_HIGH]
ATTRIBUTING = [SignalKind.SWITCH_REBOOTED, SignalKind.NODE_DOWN]

signal_specs = st.tuples(
    st.integers(0, len(CABLES) - 1),
    st.sampled_from(LINK_KINDS + ATTRIBUTING),
    st.integers(0, 1),  # which end reports a port-level signal
    st.sampled_from([-120, -5, 0, 1, 3, 10, 40, 90, 600]),  # seconds after the previous signal
)
# Cycles often come before a down has settled (60 s) and are often empty: the cases the shortcut must handle.
waits = st.sampled_from([0, 10, 30, 59, 61, 120, 3600])
cycles = st.lists(st.tuples(st.lists(signal_specs, max_size=10) | st.just([]), waits), min_size=1, max_size=14)


def _signals(specs: list[tuple[int, SignalKind, int, int]], at: datetime, ident: int) -> tuple[list[Signal],
                                                                                               datetime, int]:
    made: list[Signal] = []
    for cable_index, kind, end_index, gap in specs:
        cable = CABLES[cable_index]
        at += timedelta(seconds=gap)
        ident += 1
        if kind in ATTRIBUTING:
            device = (cable.a, cable.b)[end_index].device
            made.append(Signal(kind, ComponentId(ComponentKind.SWITCH, device), at, ident))
            continue
        end = (cable.a, cable.b)[end_index]
        made.append(Signal(kind, link_id(cable.key), at, ident, f"{end.device}/{end.port}", "",
                           (cable.a.device, cable.b.device)))
    return made, at, ident


def _side_by_side(plan: list[tuple[list[tuple[int, SignalKind, int, int]], int]], ours: Detectors,
                  reference: Detectors, horizon: timedelta | None = None,
                  behind: timedelta = timedelta()) -> Iterator[datetime]:
    """The plan's cycles fed to both; each finds what the other does, in the same order; each cycle's time.
    ``horizon``: a cycle's signals older than the newest before it less ``horizon`` are dropped, as
    ``SeenEvents`` drops their events before the detectors. ``behind``: how far the detectors' clock is behind
    the signals' (UFM's)."""
    at, ident, now = T0, 0, T0
    newest: datetime | None = None
    for specs, wait in plan:
        signals, at, ident = _signals(specs, at, ident)
        if horizon is not None:
            if newest is not None:
                signals = [s for s in signals if s.at >= newest - horizon]
            newest = max([s.at for s in signals] + ([newest] if newest else []), default=None)
        now = max(now, at - behind) + timedelta(seconds=wait)
        assert ours.observe(signals) == reference.observe(signals)
        assert ours.evaluate(now) == reference.evaluate(now)
        yield now


@settings(max_examples=300, deadline=None)
@given(cycles)
def test_flap_shortcut_gives_the_same_findings_in_the_same_order(
        plan: list[tuple[list[tuple[int, SignalKind, int, int]], int]]) -> None:
    rules = RuleSettings(flap_cycles=2, burst_cycles=3, downtime=timedelta(seconds=30),
                         counted={"port_errors": Threshold(2, timedelta(hours=2))})
    for _ in _side_by_side(plan, Detectors(PLAN, rules), _EveryCycle(PLAN, rules)):
        pass


# --- dropping the tracks that aged out ----------------------------------------------------------------------

class _KeepsEveryTrack(Detectors):
    """Never drops a track, as before ``_expire``: a track is only pruned when its component is evaluated again."""

    def _expire(self, cutoff: datetime) -> None:
        return None


long_waits = st.sampled_from([0, 30, 61, 300, 600, 1200, 1800, 2400, 3600, 4 * 3600])
aging_cycles = st.lists(st.tuples(st.lists(signal_specs, max_size=10) | st.just([]), long_waits), min_size=1,
                        max_size=14)


@settings(max_examples=600, deadline=None)
@given(aging_cycles)
def test_dropping_the_tracks_that_aged_out_gives_the_same_findings_and_keeps_none_of_them(
        plan: list[tuple[list[tuple[int, SignalKind, int, int]], int]]) -> None:
    """The horizon here is 40 minutes (the longest window, 30, and attribution's 10), so the waits cross it: the
    tracks a storm left that no signal comes to again are dropped, and nothing an operator sees changes."""
    rules = RuleSettings(flap_cycles=2, burst_cycles=3, downtime=timedelta(seconds=30),
                         flap_window=timedelta(minutes=30), burst_window=timedelta(minutes=10),
                         attribution_window=timedelta(minutes=10),
                         counted={"port_errors": Threshold(2, timedelta(minutes=20)),
                                  "ber_high": Threshold(2, timedelta(minutes=20))})
    assert rules.history == timedelta(minutes=40)
    dropping, reference = Detectors(PLAN, rules), _KeepsEveryTrack(PLAN, rules)
    for now in _side_by_side(plan, dropping, reference):
        cutoff = now - rules.history
        # Exactly the tracks that hold a signal inside the horizon stay, each as the reference holds it.
        assert {c: list(t.history) for c, t in dropping.tracks.items()} == {
            c: list(t.history) for c, t in reference.tracks.items() if any(s.at >= cutoff for s in t.history)}


# --- forgetting what is kept beside the tracks ----------------------------------------------------------------

late_specs = st.tuples(
    st.integers(0, len(CABLES) - 1),
    st.sampled_from(LINK_KINDS + ATTRIBUTING),
    st.integers(0, 1),
    # Late by as much as the horizon (40 minutes) too: a down read by what the sweep left must be read the same.
    st.sampled_from([-2500, -2350, -1200, -120, -5, 0, 1, 3, 10, 40, 90, 600]),
)
late_cycles = st.lists(st.tuples(st.lists(late_specs, max_size=10) | st.just([]), long_waits), min_size=1,
                       max_size=14)


class _NeverSweeps(Detectors):
    """Keeps every rule's newest evidence and every device's link-downs for good, as before ``_sweep``."""

    def _sweep(self, cutoff: datetime) -> None:
        return None


@settings(max_examples=1000, deadline=None)
@given(late_cycles, st.sampled_from([0, 300, 2100, 2500]))
def test_forgetting_old_evidence_and_downs_gives_the_same_findings_and_keeps_nothing_older(
        plan: list[tuple[list[tuple[int, SignalKind, int, int]], int]], behind: int) -> None:
    """A storm's devices and components each left an entry for good (the rules' newest evidence, the devices'
    link-downs); swept once past the horizon, with out-of-order signals and reboots among them and UFM's clock
    ahead of ours, nothing an operator sees changes, and what the sweep leaves is no older than it may be."""
    rules = RuleSettings(flap_cycles=2, burst_cycles=3, downtime=timedelta(seconds=30),
                         flap_window=timedelta(minutes=30), burst_window=timedelta(minutes=10),
                         attribution_window=timedelta(minutes=10), boot_time=timedelta(minutes=5),
                         counted={"port_errors": Threshold(2, timedelta(minutes=20)),
                                  "ber_high": Threshold(2, timedelta(minutes=20))})
    sweeping, reference = Detectors(PLAN, rules), _NeverSweeps(PLAN, rules)
    kept_downs = rules.longest_settle + rules.both_ends_window
    sweeps: list[datetime] = []
    for _ in _side_by_side(plan, sweeping, reference, rules.history, timedelta(seconds=behind)):
        swept = sweeping._swept
        if swept is None or (sweeps and swept == sweeps[-1]):
            continue  # not swept at this evaluation: a late signal may have brought an older down since
        sweeps.append(swept)
        line = min([swept] + [s.at for track in sweeping.tracks.values() for s in track.history])
        assert all(newest[0] >= line for newest in sweeping.last_evidence.values())
        attribution = sweeping.attribution
        assert all(downs and all(at >= line - kept_downs for at, _ in downs) for downs in attribution.downs.values())
        # A device's reboots go all together (``forget_before``): none is left whose newest is older.
        assert all(max(reboots) >= line - kept_downs for reboots in attribution.reboots.values())
        # What it forgot is only what the reference still holds from before the line.
        assert set(sweeping.last_evidence.items()) <= set(reference.last_evidence.items())
