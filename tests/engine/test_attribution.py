"""Reboots attributed in the order UFM reports them: 1312 (or 332) comes when the device is back, minutes after its
links went down, and 907 (or 331) may or may not come first."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st
from test_signals_detectors import PLAN, RESOLVER, T0, VIEW, event, link_event

from fabric.remediation.detectors import Detectors
from fabric.remediation.domain import ComponentId, ComponentKind, Finding
from fabric.remediation.kinds import SignalKind
from fabric.remediation.muting import Attribution
from fabric.remediation.rules import RuleSettings
from fabric.remediation.signals import Signal, SignalMapper, link_id
from fabric.ufm.models import Event
from topology.model import Cable

SPINE = "pod01-spine01"
HOST = "pod01-node01"
SPINE_CABLES = sorted((c for c in PLAN.cables if SPINE in (c.a.device, c.b.device)), key=lambda c: c.key)
HOST_CABLES = sorted((c for c in PLAN.cables if PLAN.devices[c.a.device].host_name == HOST), key=lambda c: c.key)
NARROW = RuleSettings(attribution_window=timedelta(minutes=1))
"""UFM reports a device's events within a minute of its links' (the default boot_time, 10 min, unchanged)."""
CYCLE = timedelta(seconds=60)


@dataclass(frozen=True)
class Device:
    name: str
    down: int
    up: int
    cables: Sequence[Cable]

    def event(self, event_id: int, at: datetime, ident: int) -> Event:
        if self.name == HOST:
            return event(event_id, at, ident=ident, object_type="Computer", object_name="x",
                         object_path=f"default / Computer: {HOST}")
        return event(event_id, at, ident=ident, object_type="Switch", object_name=VIEW.guids[SPINE],
                     object_path=f"default / Switch: {SPINE}")


SWITCH = Device(SPINE, 907, 1312, SPINE_CABLES)
NODE = Device(HOST, 331, 332, HOST_CABLES)


def reboot(device: Device, *, down_event: bool, downtime: timedelta, raised_after: timedelta,
           bounces: int = 2, cables: int | None = None, up_events: Sequence[int] | None = None) -> list[Event]:
    """A reboot as UFM reports it: every link of ``device`` down at T0 (with its down event 3 s later when
    ``down_event``), back after ``downtime``, the first link bouncing ``bounces`` times as it trains, and the up
    event (1312 or 332) ``raised_after`` the links came back."""
    chosen = device.cables[:cables] if cables is not None else device.cables
    events: list[Event] = []
    ident = iter(range(1, 10_000))
    events += [link_event(329, T0, next(ident), cable) for cable in chosen]
    if down_event:
        events.append(device.event(device.down, T0 + timedelta(seconds=3), next(ident)))
    back = T0 + downtime
    events += [link_event(328, back, next(ident), cable) for cable in chosen]
    for n in range(bounces):
        start = back + timedelta(seconds=10 + 20 * n)
        events += [link_event(329, start, next(ident), chosen[0]),
                   link_event(328, start + timedelta(seconds=10), next(ident), chosen[0])]
    for up in up_events or (device.up,):
        events.append(device.event(up, back + raised_after, next(ident)))
    return events


def run(detectors: Detectors, deliveries: Sequence[tuple[datetime, Sequence[Event]]], until: datetime,
        start: datetime = T0) -> list[Finding]:
    """Cycles every minute from ``start`` to ``until``; each delivery is handed over at the first cycle at or
    after its time."""
    mapper = SignalMapper(RESOLVER)
    findings: list[Finding] = []
    pending = sorted(deliveries, key=lambda d: d[0])
    now = start
    while now <= until:
        while pending and pending[0][0] <= now:
            findings += detectors.observe(mapper.map(pending.pop(0)[1]))
        findings += detectors.evaluate(now)
        now += CYCLE
    return findings


def as_they_happen(events: Sequence[Event]) -> list[tuple[datetime, Sequence[Event]]]:
    return [(e.timestamp, [e]) for e in events]


def at_once(events: Sequence[Event], at: datetime) -> list[tuple[datetime, Sequence[Event]]]:
    """One cycle sees the whole reboot (a long interval, or the engine was down): the up event first."""
    ups = [e for e in events if e.event_id in (1312, 332)]
    return [(at, ups + [e for e in events if e not in ups])]


def explained_links(detectors: Detectors) -> set[ComponentId]:
    return {e.component for e in detectors.explained}


def on_links(findings: Sequence[Finding]) -> list[Finding]:
    """Findings on cables (a 907 or a 331 is a ticket-only finding of its own on the device)."""
    return [f for f in findings if f.component.kind is ComponentKind.LINK]


def scenario(device: Device, down_event: bool, delivery: str) -> tuple[list[Finding], Detectors]:
    """A 7-minute reboot whose up event comes 2.5 min after the links are back (within boot_time of the downs)."""
    events = reboot(device, down_event=down_event, downtime=timedelta(minutes=7),
                    raised_after=timedelta(minutes=2, seconds=30))
    detectors = Detectors(PLAN, NARROW)
    deliveries = as_they_happen(events) if delivery == "live" else at_once(events, T0 + timedelta(minutes=10))
    return run(detectors, deliveries, T0 + timedelta(minutes=40)), detectors


# --- both orders, with and without the down event ------------------------------------------------------


def test_a_switch_reboot_reported_by_1312_after_the_downs_explains_its_links() -> None:
    """No 907: the link-downs wait for the 1312, which explains them from boot_time before it."""
    findings, detectors = scenario(SWITCH, down_event=False, delivery="live")
    assert on_links(findings) == []
    assert explained_links(detectors) == {link_id(c.key) for c in SPINE_CABLES}
    assert all(f"switch_rebooted of {SPINE}" in e.reason for e in detectors.explained)


def test_a_switch_reboot_with_907_explains_links_bouncing_before_its_1312() -> None:
    """907 first: the switch is down from then on, until its 1312 (the links bounce as it comes back)."""
    findings, detectors = scenario(SWITCH, down_event=True, delivery="live")
    assert on_links(findings) == []
    assert explained_links(detectors) == {link_id(c.key) for c in SPINE_CABLES}
    bounces = [e for e in detectors.explained if e.at > T0]
    assert len(bounces) == 2 and all(f"switch_down of {SPINE}" in e.reason and "not back yet" in e.reason
                                      for e in bounces)


def test_a_switch_reboot_seen_at_once_1312_first_without_907() -> None:
    findings, detectors = scenario(SWITCH, down_event=False, delivery="at once")
    assert on_links(findings) == []
    assert explained_links(detectors) == {link_id(c.key) for c in SPINE_CABLES}


def test_a_switch_reboot_seen_at_once_1312_first_with_907() -> None:
    findings, detectors = scenario(SWITCH, down_event=True, delivery="at once")
    assert on_links(findings) == []
    assert explained_links(detectors) == {link_id(c.key) for c in SPINE_CABLES}
    assert all(f"switch_down of {SPINE}" in e.reason and "until switch_rebooted" in e.reason
               for e in detectors.explained)


def test_a_host_reboot_reported_by_332_after_the_downs_explains_its_rails() -> None:
    findings, detectors = scenario(NODE, down_event=False, delivery="live")
    assert on_links(findings) == []
    assert explained_links(detectors) == {link_id(c.key) for c in HOST_CABLES}
    assert all(f"node_up of {HOST}" in e.reason for e in detectors.explained)


def test_a_host_reboot_with_331_explains_rails_bouncing_before_its_332() -> None:
    findings, detectors = scenario(NODE, down_event=True, delivery="live")
    assert on_links(findings) == []
    assert explained_links(detectors) == {link_id(c.key) for c in HOST_CABLES}


def test_a_host_reboot_seen_at_once_332_first_without_331() -> None:
    findings, detectors = scenario(NODE, down_event=False, delivery="at once")
    assert on_links(findings) == []
    assert explained_links(detectors) == {link_id(c.key) for c in HOST_CABLES}


def test_a_host_reboot_seen_at_once_332_first_with_331() -> None:
    findings, detectors = scenario(NODE, down_event=True, delivery="at once")
    assert on_links(findings) == []
    assert all(f"node_down of {HOST}" in e.reason and "until node_up" in e.reason for e in detectors.explained)


# --- what waits, and for how long ----------------------------------------------------------------------


def test_links_down_together_wait_for_a_reboot_event_only_until_boot_time() -> None:
    """Two links of one switch down together and back, twice, and no reboot event: counted, but only once a
    1312 can no longer come (boot_time + settle after the downs), not after settle alone."""
    cables = SPINE_CABLES[:2]
    events = [link_event(kind, T0 + offset, n, cable) for n, (kind, offset, cable) in enumerate(
        [(329, timedelta(), c) for c in cables] + [(328, timedelta(seconds=20), c) for c in cables]
        + [(329, timedelta(seconds=40), c) for c in cables] + [(328, timedelta(seconds=60), c) for c in cables],
        start=1)]
    detectors = Detectors(PLAN)
    early = run(detectors, as_they_happen(events), T0 + timedelta(minutes=10, seconds=59))
    assert early == [] and detectors.pending, "waiting for a 1312 that may still come"
    late = run(detectors, [], T0 + timedelta(minutes=12), start=T0 + timedelta(minutes=11))
    assert sorted(f.component for f in late) == sorted(link_id(c.key) for c in cables)
    assert {f.rule for f in late} == {"flap"}


def test_a_flap_on_one_link_is_not_held_back_for_a_reboot() -> None:
    """A cable fault takes one link down at a time: its flap is found once settled, as before."""
    cable = SPINE_CABLES[3]
    events = [link_event(329 if n % 2 == 0 else 328, T0 + timedelta(seconds=10 * n), n + 1, cable)
              for n in range(10)]
    # The third cycle went down at 40 s: settled (60 s) at the cycle of 2 min.
    findings = run(Detectors(PLAN), as_they_happen(events), T0 + timedelta(minutes=2))
    assert {(f.rule, f.component) for f in findings} == {("flap", link_id(cable.key))}


def test_a_reboot_longer_than_boot_time_without_907_is_not_explained() -> None:
    """boot_time bounds what a 1312 explains: a switch down for 25 min was not rebooting (with default settings
    its links are `link_down` findings after 10 minutes, and the reboot event explains only its own surroundings)."""
    events = reboot(SWITCH, down_event=False, downtime=timedelta(minutes=25), raised_after=timedelta(seconds=30),
                    bounces=0)
    findings = run(Detectors(PLAN), as_they_happen(events), T0 + timedelta(minutes=40))
    assert {f.rule for f in findings} == {"link_down"}
    assert len(findings) == len(SPINE_CABLES)
    configured = Detectors(PLAN, RuleSettings(boot_time=timedelta(minutes=30)))
    assert run(configured, as_they_happen(events), T0 + timedelta(minutes=40)) == []


# --- any order within the windows ----------------------------------------------------------------------


def messy_delivery(events: Sequence[Event], lags: Sequence[int], rng: random.Random
                   ) -> list[tuple[datetime, Sequence[Event]]]:
    """Each event handed over ``lags[i]`` seconds after its time, the objects interleaved at random within a
    delivery; one object's events stay in UFM's order (its ids rise), only their delivery may be later."""
    by_object: dict[str | None, list[Event]] = {}
    for e in sorted(events, key=lambda e: (e.timestamp, e.id)):
        by_object.setdefault(e.object_name, []).append(e)
    handed: dict[datetime, dict[str | None, list[Event]]] = {}
    lag = iter(lags)
    for key, own in by_object.items():
        last = None
        for e in own:
            at = e.timestamp + timedelta(seconds=next(lag, 0))
            last = at = max(at, last) if last is not None else at
            handed.setdefault(at, {}).setdefault(key, []).append(e)
    deliveries: list[tuple[datetime, Sequence[Event]]] = []
    for at, groups in sorted(handed.items()):
        queues, batch = [list(g) for g in groups.values()], []
        while queues:
            queue = rng.choice(queues)
            batch.append(queue.pop(0))
            if not queue:
                queues.remove(queue)
        deliveries.append((at, batch))
    return deliveries


@settings(max_examples=60, deadline=None)
@given(device=st.sampled_from([SWITCH, NODE]), down_event=st.booleans(),
       downtime=st.integers(60, 420), raised_after=st.integers(0, 150), bounces=st.integers(0, 2),
       cables=st.integers(2, 8), both_up_events=st.booleans(),
       lags=st.lists(st.integers(0, 59), min_size=40, max_size=40), phase=st.integers(0, 59),
       seed=st.integers(0, 2**16))
def test_any_delivery_order_of_a_reboot_within_the_windows_explains_the_same(
        device: Device, down_event: bool, downtime: int, raised_after: int, bounces: int, cables: int,
        both_up_events: bool, lags: list[int], phase: int, seed: int) -> None:
    """Each event handed over up to a minute (``settle``) after its time, the device's events and its links'
    in any order, the cycles at any phase: the same links explained as by a clean delivery, and no finding."""
    up_events = (908, 1312) if device is SWITCH and both_up_events else None
    chosen = min(cables, len(device.cables))
    events = reboot(device, down_event=down_event, downtime=timedelta(seconds=downtime),
                    raised_after=timedelta(seconds=raised_after), bounces=bounces, cables=chosen,
                    up_events=up_events)
    clean = Detectors(PLAN)
    assert on_links(run(clean, as_they_happen(events), T0 + timedelta(minutes=30))) == []
    messy = Detectors(PLAN)
    late = messy_delivery(events, lags, random.Random(seed))
    assert on_links(run(messy, late, T0 + timedelta(minutes=30), start=T0 + timedelta(seconds=phase))) == []
    assert {(e.component, e.evidence) for e in messy.explained} == {(e.component, e.evidence)
                                                                    for e in clean.explained}
    assert explained_links(clean) == {link_id(c.key) for c in device.cables[:chosen]}


# --- forgetting downs no signal can be told with -------------------------------------------------------------

LEAF_CABLES = sorted((c for c in PLAN.cables if "leaf" in c.a.device + c.b.device), key=lambda c: c.key)[:4]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(LEAF_CABLES) - 1), st.integers(-1500, 300)), min_size=1, max_size=12),
       st.lists(st.tuples(st.integers(0, len(LEAF_CABLES) - 1), st.integers(0, 900)), min_size=1, max_size=6))
def test_forgotten_downs_change_nothing_a_signal_at_or_after_the_line_is_told(
        before: list[tuple[int, int]], after: list[tuple[int, int]]) -> None:
    """``forget_before(line)``: downs noted around the line (seconds from it), forgotten, then downs at or after
    the line (as the detectors promise): every reboot noted and every wait for an up event is as if nothing had
    been forgotten, and nothing older than the downs kept for comparison is left."""
    rules = RuleSettings()
    line = T0 + timedelta(hours=1)
    forgetting, reference = Attribution(PLAN, rules), Attribution(PLAN, rules)

    def down(cable: Cable, seconds: int, ident: int) -> Signal:
        return Signal(SignalKind.LINK_DOWN, link_id(cable.key), line + timedelta(seconds=seconds), ident, None, "",
                      (cable.a.device, cable.b.device))

    for ident, (index, seconds) in enumerate(before, start=1):
        for attribution in (forgetting, reference):
            attribution.note_down(down(LEAF_CABLES[index], seconds, ident))
    forgetting.forget_before(line)
    kept_from = line - rules.longest_settle - rules.both_ends_window
    assert all(at >= kept_from for downs in forgetting.downs.values() for at, _ in downs)
    for ident, (index, seconds) in enumerate(after, start=100):
        signal = down(LEAF_CABLES[index], seconds, ident)
        for attribution in (forgetting, reference):
            attribution.note_down(signal)
        # A device's reboots as the reference holds them, or none that any signal from the line is told with.
        assert all(forgetting.reboots[device] == reference.reboots[device] for device in forgetting.reboots)
        assert all(began < kept_from for device, times in reference.reboots.items() if device not in forgetting.reboots
                   for began in times)
        assert forgetting.awaiting_until(signal.component, signal.devices, signal.at) == \
            reference.awaiting_until(signal.component, signal.devices, signal.at)

