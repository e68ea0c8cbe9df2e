"""UFM events -> signals -> findings, on the tiny fabric with UFM's GUIDs as the renderer assigns them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric.remediation.detectors import Detectors
from fabric.remediation.domain import ComponentId, ComponentKind
from fabric.remediation.kinds import SignalKind
from fabric.remediation.rules import EVENT_KINDS, QUOTED, RuleSettings
from fabric.remediation.signals import Resolver, SignalMapper, link_id
from fabric.ufm.eventlog import parse_event_line
from fabric.ufm.models import Event
from fabric.ufm.objects import link_ends
from topology.formats.ufm_render import UfmView
from topology.generate import PRESETS, fat_tree
from topology.model import End

PLAN = fat_tree(PRESETS["tiny"])
VIEW = UfmView(PLAN)
RESOLVER = Resolver(PLAN, {guid: key for key, guid in VIEW.guids.items()},
                    {ref.name: end for end, ref in VIEW.ports.items()})
T0 = datetime(2026, 4, 1, 10, 0, tzinfo=UTC)
SPINE_CORE = next(c for c in PLAN.cables if c.a.device == "pod01-spine01" and c.b.device.startswith("core"))
LEAF_SPINE = next(c for c in PLAN.cables if c.a.device == "pod01-leaf01" and c.b.device == "pod01-spine01")
HOST = next(c for c in PLAN.cables if c.a.device == "pod01-node01 mlx5_0")


class CallbackMuter:
    """A muter from a predicate: silences without a store."""

    link_state_only = False

    def __init__(self, silenced: Callable[[ComponentId, datetime], bool]) -> None:
        self.silenced = silenced

    def mutes(self, component: ComponentId, at: datetime, devices: Sequence[str] = (),
              link_state: bool = False, until: datetime | None = None) -> str | None:
        return "an active silence" if self.silenced(component, at) else None

def name(end: End) -> str:
    return VIEW.ports[end].name


def event(event_id: int, at: datetime, *, ident: int, shape: str = "6.17", **fields: Any) -> Event:
    payload: dict[str, Any] = {"id": ident, "timestamp": at.strftime("%Y-%m-%d %H:%M:%S"), "severity": "Warning",
                               "name": "x", "description": fields.pop("description", ""), **fields}
    if shape == "6.17":
        payload |= {"event_type": str(event_id), "type": fields.get("object_type", "Port")}
    else:
        payload |= {"type": str(event_id)}
    return Event.model_validate(payload)


def link_event(event_id: int, at: datetime, ident: int, cable: Any = SPINE_CORE, shape: str = "6.17") -> Event:
    path = f"Source {name(cable.a)}  TO Dest: {name(cable.b)}"
    return event(event_id, at, ident=ident, shape=shape, object_type="Link", object_name=f"{name(cable.a)}:"
                 f"{name(cable.b)}", object_path=path)


def port_event(event_id: int, end: End, at: datetime, ident: int, **fields: Any) -> Event:
    return event(event_id, at, ident=ident, object_type="IBPort", object_name=name(end), **fields)


@pytest.mark.parametrize("shape", ["6.17", "6.16"])
def test_link_events_of_both_shapes_land_on_the_cable(shape: str) -> None:
    mapper = SignalMapper(RESOLVER)
    [signal] = mapper.map([link_event(329, T0, 1, shape=shape)])
    assert signal.kind is SignalKind.LINK_DOWN
    assert signal.component == link_id(SPINE_CORE.key)
    assert set(signal.devices) == {"pod01-spine01", SPINE_CORE.b.device}


def test_port_event_lands_on_its_cable_with_the_reporter() -> None:
    [signal] = SignalMapper(RESOLVER).map([port_event(917, LEAF_SPINE.b, T0, 2)])
    assert signal.kind is SignalKind.BER_CRITICAL and signal.component == link_id(LEAF_SPINE.key)
    assert signal.reporter == f"{LEAF_SPINE.b.device}/{LEAF_SPINE.b.port}"


def test_event_log_line_maps_like_the_rest_api() -> None:
    path = f"Source {name(SPINE_CORE.a)}  TO Dest: {name(SPINE_CORE.b)}"
    line = (f"2026-04-01 10:00:00.000 [5] [329] WARNING [Fabric_Topology] Link [{path}] "
            f"[dev_id: {name(SPINE_CORE.a).split('_')[0]}]: Link went down")
    parsed = parse_event_line(line)
    assert parsed is not None
    [signal] = SignalMapper(RESOLVER).map([parsed])
    assert signal.component == link_id(SPINE_CORE.key)


def test_malformed_and_unknown_events_are_counted_not_fatal() -> None:
    mapper = SignalMapper(RESOLVER)
    bogus_port = event(917, T0, ident=1, object_type="IBPort", object_name="00000000deadbeef_3")
    unused = event(1500, T0, ident=2, object_type="Site")
    no_ends = event(329, T0, ident=3, object_type="Link", object_path="nothing here")
    assert mapper.map([bogus_port, unused, no_ends]) == []
    assert mapper.skipped == {"port not in the fabric model": 1, "event type not used": 1,
                              "link event without two port ends": 1}


def flap(detectors: Detectors, start: datetime, cycles: int, down_for: timedelta, gap: timedelta, ident: int,
         cable: Any = SPINE_CORE) -> int:
    mapper = SignalMapper(RESOLVER)
    at = start
    for _ in range(cycles):
        detectors.observe(mapper.map([link_event(329, at, ident, cable)]))
        detectors.observe(mapper.map([link_event(328, at + down_for, ident + 1, cable)]))
        at += down_for + gap
        ident += 2
    return ident


def test_three_cycles_in_twelve_hours_is_a_flap() -> None:
    detectors = Detectors(PLAN)
    flap(detectors, T0, 3, timedelta(seconds=2), timedelta(hours=3), 1)
    [finding] = detectors.evaluate(T0 + timedelta(hours=10))
    assert finding.rule == "flap" and "3 down/up cycles" in finding.reason
    assert detectors.evaluate(T0 + timedelta(hours=11)) == []  # no new evidence, no new finding


def test_two_short_cycles_are_not_a_flap_but_long_downtime_over_two_is() -> None:
    short = Detectors(PLAN)
    flap(short, T0, 2, timedelta(seconds=2), timedelta(minutes=30), 1)
    assert short.evaluate(T0 + timedelta(hours=2)) == []
    long = Detectors(PLAN)
    flap(long, T0, 2, timedelta(seconds=5), timedelta(minutes=30), 1)
    [finding] = long.evaluate(T0 + timedelta(hours=1))
    assert finding.rule == "flap" and "10 s down over 2 down/up cycles" in finding.reason
    assert finding.evidence == (1, 2, 3, 4)


@pytest.mark.parametrize("down_for", [timedelta(seconds=9), timedelta(seconds=20), timedelta(minutes=9)])
def test_one_outage_however_long_is_recorded_never_a_finding(down_for: timedelta) -> None:
    detectors = Detectors(PLAN)
    flap(detectors, T0, 1, down_for, timedelta(minutes=1), 1)
    assert detectors.observe([]) == []
    assert detectors.evaluate(T0 + timedelta(hours=1)) == []
    assert detectors.evaluate(T0 + timedelta(hours=13)) == []


def test_a_link_that_stays_down_is_a_finding_once_it_is_due() -> None:
    detectors = Detectors(PLAN)
    mapper = SignalMapper(RESOLVER)
    detectors.observe(mapper.map([link_event(329, T0, 7, SPINE_CORE)]))
    assert detectors.evaluate(T0 + timedelta(minutes=9, seconds=59)) == []  # back within 10 min: nothing yet
    # No new signal: the link waits to be looked at again, and is, when it is due.
    [finding] = detectors.evaluate(T0 + timedelta(minutes=10, seconds=30))
    assert (finding.rule, finding.evidence, finding.at) == ("link_down", (7,), T0 + timedelta(minutes=10))
    assert detectors.evaluate(T0 + timedelta(minutes=11)) == []  # once
    assert detectors.pending == {}  # and it no longer needs looking at


def test_a_link_that_comes_back_before_it_is_due_is_only_recorded() -> None:
    detectors = Detectors(PLAN, RuleSettings(down_ticket_after=timedelta(minutes=5)))
    mapper = SignalMapper(RESOLVER)
    detectors.observe(mapper.map([link_event(329, T0, 7, SPINE_CORE)]))
    assert detectors.evaluate(T0 + timedelta(minutes=4)) == []
    detectors.observe(mapper.map([link_event(328, T0 + timedelta(minutes=4, seconds=30), 8, SPINE_CORE)]))
    assert detectors.evaluate(T0 + timedelta(minutes=6)) == []
    assert detectors.evaluate(T0 + timedelta(hours=2)) == []


def test_evidence_waits_to_settle_so_a_late_reboot_can_explain_it() -> None:
    detectors = Detectors(PLAN, RuleSettings(settle=timedelta(seconds=60)))
    end = flap(detectors, T0, 5, timedelta(seconds=1), timedelta(seconds=5), 1)
    assert detectors.evaluate(T0 + timedelta(seconds=31)) == []  # too fresh
    reboot = event(1312, T0 + timedelta(seconds=40), ident=end, object_type="Switch",
                   object_name=VIEW.guids["pod01-spine01"], object_path="default / Switch: pod01-spine01")
    detectors.observe(SignalMapper(RESOLVER).map([reboot]))
    assert detectors.evaluate(T0 + timedelta(minutes=5)) == []
    assert detectors.explained and "switch_rebooted of pod01-spine01" in detectors.explained[0].reason


def test_host_link_downs_explained_by_node_down() -> None:
    detectors = Detectors(PLAN)
    mapper = SignalMapper(RESOLVER)
    node_down = event(331, T0, ident=1, object_type="Computer", object_name="x",
                      object_path="default / Computer: pod01-node01")
    detectors.observe(mapper.map([node_down]))
    flap(detectors, T0 + timedelta(seconds=5), 1, timedelta(minutes=4), timedelta(minutes=1), 2, cable=HOST)
    assert detectors.evaluate(T0 + timedelta(hours=1)) == []
    assert "node_down of pod01-node01" in detectors.explained[0].reason


def test_silenced_component_is_not_flagged() -> None:
    silenced = {link_id(SPINE_CORE.key)}
    detectors = Detectors(PLAN, muter=CallbackMuter(lambda component, at: component in silenced))
    flap(detectors, T0, 5, timedelta(seconds=2), timedelta(seconds=10), 1)
    assert detectors.evaluate(T0 + timedelta(hours=1)) == []
    critical = SignalMapper(RESOLVER).map([port_event(917, SPINE_CORE.a, T0, 99)])
    assert detectors.observe(critical) == []


def test_high_ber_twice_within_125_minutes() -> None:
    detectors = Detectors(PLAN)
    mapper = SignalMapper(RESOLVER)
    detectors.observe(mapper.map([port_event(918, LEAF_SPINE.a, T0, 1)]))
    assert detectors.evaluate(T0) == []
    detectors.observe(mapper.map([port_event(918, LEAF_SPINE.a, T0 + timedelta(minutes=130), 2)]))
    assert detectors.evaluate(T0 + timedelta(minutes=130)) == []  # too far apart
    detectors.observe(mapper.map([port_event(916, LEAF_SPINE.b, T0 + timedelta(minutes=150), 3)]))
    [finding] = detectors.evaluate(T0 + timedelta(minutes=150))
    assert finding.rule == "ber_high" and finding.evidence == (2, 3)


def test_immediate_rules_and_manual_isolation() -> None:
    detectors = Detectors(PLAN)
    mapper = SignalMapper(RESOLVER)
    hot = detectors.observe(mapper.map([port_event(919, LEAF_SPINE.a, T0, 1)]))
    assert [(f.rule, f.never_auto_restore) for f in hot] == [("temperature", True)]
    manual = port_event(702, LEAF_SPINE.b, T0, 2, description="Peer Port x is considered by SM as unhealthy "
                        "due to MANUAL.")
    assert detectors.observe(mapper.map([manual])) == []
    flapping = port_event(702, LEAF_SPINE.b, T0, 3, description="... unhealthy due to FLAPPING.")
    assert [f.rule for f in detectors.observe(mapper.map([flapping]))] == ["unhealthy_port"]


def test_switch_down_is_a_ticket_only_switch_finding() -> None:
    detectors = Detectors(PLAN)
    down = event(907, T0, ident=1, object_type="Switch", object_name=VIEW.guids["core01-01"],
                 object_path="default / Switch: core01-01")
    [finding] = detectors.observe(SignalMapper(RESOLVER).map([down]))
    assert finding.component == ComponentId(ComponentKind.SWITCH, "core01-01") and finding.ticket_only


def test_a_fault_after_a_ufm_restart_is_not_hidden_by_old_event_ids() -> None:
    detectors = Detectors(PLAN)
    mapper = SignalMapper(RESOLVER)
    assert detectors.observe(mapper.map([port_event(917, LEAF_SPINE.a, T0, 5000)]))
    # UFM restarted: ids begin again at 1, but this is a new fault an hour later.
    again = detectors.observe(mapper.map([port_event(917, LEAF_SPINE.a, T0 + timedelta(hours=1), 3)]))
    assert [f.rule for f in again] == ["ber_critical"]
    # The same evidence seen twice (a re-read of the list) still fires once.
    assert detectors.observe(mapper.map([port_event(917, LEAF_SPINE.a, T0 + timedelta(hours=1), 3)])) == []


def test_a_silence_mutes_the_counted_and_ticket_only_rules_too() -> None:
    """A silence says "findings on these components are not acted on": every rule asks, not only the flap rule."""
    silenced = Detectors(PLAN, muter=CallbackMuter(lambda component, at: True))
    loud = Detectors(PLAN)
    mapper = SignalMapper(RESOLVER)
    errors = [port_event(110, LEAF_SPINE.b, T0 + timedelta(minutes=n), 50 + n) for n in range(3)]
    down = event(907, T0, ident=60, object_type="Switch", object_name=VIEW.guids["pod01-spine01"],
                 object_path="default / Switch: pod01-spine01")
    for detectors in (silenced, loud):
        found = detectors.observe(mapper.map([*errors, down])) + detectors.evaluate(T0 + timedelta(minutes=5))
        rules = sorted(f.rule for f in found)
        assert rules == ([] if detectors is silenced else ["port_errors", "switch_down"]), rules


_KNOWN_NAMES = sorted(VIEW.ports[end].name for end in VIEW.ports)


@given(st.lists(st.one_of(st.sampled_from(_KNOWN_NAMES), st.just("0badc0ffee000000_3")), min_size=0, max_size=3),
       st.sampled_from(["", "0x"]), st.booleans(), st.sampled_from(["Source {}  TO Dest: {}", "{} {} x", "{}"]))
@settings(max_examples=300, deadline=None)
def test_a_link_is_placed_from_ufm_s_port_names_as_from_its_parsed_ends(
        names: list[str], prefix: str, upper: bool, template: str) -> None:
    """The placement the mapper makes from UFM's port names (``_known_link``, made once per port) is the one
    ``_place_link`` makes from the path's parsed ends: an unlisted end, an end without a cable, one end named
    twice, ``0x`` and upper-case GUIDs included."""
    written = [(prefix + n).upper() if upper else prefix + n for n in names]
    path = template.format(*written, *[""] * (template.count("{}") - len(written))) if written else "Source"
    mapper = SignalMapper(RESOLVER)
    ends = link_ends(path, None)
    reference = mapper._place_link(ends) if ends is not None else None
    placed = mapper._link_placement(event(329, T0, ident=1, object_type="Link", object_name=None, object_path=path))
    if reference is not None:
        assert placed == reference


def test_only_a_signal_a_finding_quotes_keeps_its_events_text() -> None:
    """A storm's signals stay in the detectors' windows for the horizon: only those of an immediate or ticket-only
    rule, whose finding quotes the event's description, keep it."""
    mapper = SignalMapper(RESOLVER)
    placed: dict[bool, int] = {True: 0, False: 0}
    for ident, (event_id, kind) in enumerate(sorted(EVENT_KINDS.items()), start=1):
        for signal in mapper.map([port_event(event_id, SPINE_CORE.a, T0, ident, description="what UFM said")]):
            assert signal.detail == ("what UFM said" if kind in QUOTED else ""), kind
            placed[kind in QUOTED] += 1
    assert placed[True] and placed[False]
