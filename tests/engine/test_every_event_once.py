"""Every event counts once (issue 9, findings 2, 3 and 10): one identity, one de-duplication in the pipeline that
the engine and replay share, a cursor that believes a UFM restart only on evidence."""

from __future__ import annotations

import logging
from bisect import bisect_right
from datetime import UTC, datetime, timedelta
from operator import attrgetter
from pathlib import Path
from typing import Any

import pytest
from engine_support import restart, rig
from hypothesis import given, settings
from hypothesis import strategies as st

from fabric.remediation.domain import ActionKind, Finding
from fabric.remediation.identity import SeenEvents
from fabric.remediation.pipeline import Pipeline
from fabric.remediation.policy import PolicyConfig
from fabric.remediation.rules import RuleSettings
from fabric.remediation.signals import DEFAULT_EVENT_KINDS, EventLike
from fabric.remediation.view import build_view
from fabric.replay.events import LoadedEvents
from fabric.replay.run import REPEATED, ReplayModel, replay
from fabric.ufm.cursor import EventRead
from fabric.ufm.models import Event
from topology.formats.ufm_render import UfmView
from topology.generate import PRESETS, fat_tree
from topology.guard import GuardSettings
from topology.model import End

TINY = fat_tree(PRESETS["tiny"])
UFM = UfmView(TINY)
T0 = datetime(2026, 4, 1, 10, 0, tzinfo=UTC)
RULES = RuleSettings()
SWITCH_CABLES = [c for c in TINY.cables if "node" not in c.a.device and "node" not in c.b.device]
CABLES = [SWITCH_CABLES[i] for i in (0, 9, 18, 27)]
"""Four switch-switch cables of different switches: the guard lets each be disabled."""


def _model() -> ReplayModel:
    """The tiny plan joined with the GUIDs and port names its simulated UFM shows, as replay builds it."""
    plan = fat_tree(PRESETS["tiny"])
    for key, guid in UFM.guids.items():
        plan.devices[key].guid = guid
    plan.port_names.update({ref.name: end for end, ref in UFM.ports.items()})
    return ReplayModel(plan, build_view(plan, plan), "tiny")


MODEL = _model()


def event(event_type: int, at: datetime, ident: int, object_type: str, object_name: str, path: str = "") -> Event:
    return Event.model_validate({"id": ident, "event_type": str(event_type), "type": object_type, "name": "x",
                                 "timestamp": at.strftime("%Y-%m-%d %H:%M:%S"), "severity": "Warning",
                                 "object_name": object_name, "object_path": path, "description": ""})


def link_event(event_type: int, cable_index: int, at: datetime, ident: int) -> Event:
    cable = CABLES[cable_index]
    a, b = UFM.ports[cable.a].name, UFM.ports[cable.b].name
    return event(event_type, at, ident, "Link", f"{a}:{b}", f"Source {a}  TO Dest: {b}")


def port_event(event_type: int, end: End, at: datetime, ident: int) -> Event:
    return event(event_type, at, ident, "IBPort", UFM.ports[end].name)


# --- the identity ----------------------------------------------------------------------------------------------


def test_an_id_ufm_uses_again_after_a_restart_is_another_event() -> None:
    seen = SeenEvents(RULES.history, DEFAULT_EVENT_KINDS)
    before = port_event(918, CABLES[0].a, T0, 7)
    after = port_event(918, CABLES[0].a, T0 + timedelta(minutes=5), 7)  # id 7 again, after a UFM restart
    other_type = port_event(110, CABLES[0].a, T0, 7)
    other_port = port_event(918, CABLES[1].a, T0, 7)
    fresh, repeated = seen.first_time([before, before, after, other_type, other_port])
    assert fresh == [before, after, other_type, other_port] and repeated == 1
    again = port_event(918, CABLES[0].a, T0, 7)  # the same event, parsed again from another answer
    assert seen.first_time([again, after]) == ([], 2)


def test_the_memory_holds_the_detectors_horizon_and_no_more() -> None:
    seen = SeenEvents(RULES.history, DEFAULT_EVENT_KINDS)
    old = port_event(918, CABLES[0].a, T0, 1)
    seen.first_time([old, *(port_event(110, CABLES[1].a, T0 + timedelta(minutes=m), 1 + m) for m in range(1, 60))])
    assert len(seen) == 60
    late = T0 + RULES.history + timedelta(minutes=30)
    assert seen.first_time([port_event(918, CABLES[0].a, late, 100)]) == ([port_event(918, CABLES[0].a, late, 100)],
                                                                          0)
    assert len(seen) == 31  # the identities older than the newest event less the horizon are forgotten...
    assert seen.first_time([old]) == ([], 1)  # ...and an event that old is dropped: it may have counted already


def test_unused_and_malformed_events_pass_unremembered() -> None:
    seen = SeenEvents(RULES.history, DEFAULT_EVENT_KINDS)
    routine = event(64, T0, 1, "IBPort", UFM.ports[CABLES[0].a].name)  # GID address in service: no rule reads it
    junk: Any = "not an event"
    assert seen.first_time([routine, routine, junk]) == ([routine, routine, junk], 0)
    assert len(seen) == 0


# --- any duplication or interleaving of deliveries gives the findings of one clean delivery --------------------

HAPPENING = st.tuples(st.sampled_from(["flap", "ber", "errors", "critical"]), st.integers(0, len(CABLES) - 1),
                      st.integers(0, 900), st.integers(1, 20), st.booleans())
"""(what, on which cable, seconds after the previous happening, seconds down for a flap, UFM restarts first)."""


def stream(happenings: list[tuple[str, int, int, int, bool]]) -> list[Event]:
    """The events of ``happenings`` in time order; UFM's ids start again from 1 after each of its restarts."""
    at, ident, timed = T0, 0, []
    for what, cable, gap, down_for, restarted in happenings:
        at += timedelta(seconds=gap + (60 if restarted else 0))  # a restart takes time
        ident = 0 if restarted else ident
        end = CABLES[cable].a
        if what == "flap":
            timed += [(at, link_event(329, cable, at, ident + 1)),
                      (at + timedelta(seconds=down_for), link_event(328, cable, at + timedelta(seconds=down_for),
                                                                    ident + 2))]
            ident += 2
        else:
            ident += 1
            timed.append((at, port_event({"ber": 918, "errors": 110, "critical": 917}[what], end, at, ident)))
    timed.sort(key=lambda pair: pair[0])
    return [e for _, e in timed]


def boundary(when: datetime) -> datetime:
    return T0 + -((T0 - when) // timedelta(minutes=1)) * timedelta(minutes=1)


def cycles(events: list[Event]) -> list[tuple[datetime, list[Event]]]:
    """What a daemon cycling every minute is handed: each boundary's new events, and a cycle once evidence has
    settled (boundaries with nothing to do are left out alike from both deliveries)."""
    times = sorted({boundary(e.timestamp) for e in events} | {boundary(e.timestamp + RULES.settle) +
                                                              timedelta(minutes=1) for e in events})
    start, out = 0, []
    for at in times:
        stop = bisect_right(events, at, lo=start, key=attrgetter("timestamp"))
        out.append((at, events[start:stop]))
        start = stop
    return out


def decided(pipeline: Pipeline, batches: list[tuple[datetime, list[Event]]]) -> tuple[list[Any], int]:
    """Per cycle, the findings and the actions; and how many events the pipeline dropped as counted already."""
    out, repeated = [], 0
    for at, events in batches:
        step = pipeline.step(events, at)
        repeated += step.repeated
        out.append((at, [_finding(f) for f in step.findings],
                    [(a.kind, a.rule, a.component, a.reason) for a in step.decision.actions]))
    return out, repeated


def _finding(finding: Finding) -> tuple[Any, ...]:
    return finding.component, finding.rule, finding.at, finding.evidence, finding.reason


def fresh_pipeline() -> Pipeline:
    return Pipeline(MODEL.view, PolicyConfig(dry_run=True), RULES, GuardSettings())


@settings(max_examples=60, deadline=None)
@given(happenings=st.lists(HAPPENING, min_size=1, max_size=25), data=st.data())
def test_the_pipeline_counts_each_event_once_however_often_it_is_delivered(
        happenings: list[tuple[str, int, int, int, bool]], data: st.DataObject) -> None:
    clean = cycles(stream(happenings))
    expected, dropped = decided(fresh_pipeline(), clean)
    assert dropped == 0, "an id UFM uses again after a restart is a new event"
    delivered: list[Event] = []
    messy = []
    for at, events in clean:
        # Events delivered before come again anywhere: a UFM answer repeated, a cursor misled by a short answer or
        # a restart, start-up's warm history handed over again; each event also again right after itself.
        batch = data.draw(st.lists(st.sampled_from(delivered), max_size=4)) if delivered else []
        for item in events:
            delivered.append(item)
            batch += [item, *data.draw(st.lists(st.sampled_from(delivered), max_size=2))]
        messy.append((at, batch))
    got, repeated = decided(fresh_pipeline(), messy)
    assert got == expected
    assert repeated == sum(len(b) for _, b in messy) - sum(len(b) for _, b in clean)


@settings(max_examples=30, deadline=None)
@given(happenings=st.lists(HAPPENING, min_size=1, max_size=25), data=st.data())
def test_replay_decides_as_on_one_clean_delivery(happenings: list[tuple[str, int, int, int, bool]],
                                                 data: st.DataObject) -> None:
    events = stream(happenings)
    twice = data.draw(st.lists(st.sampled_from(events), max_size=30))
    # A file holding some events again (a list saved twice, lines repeated): replay sorts by time, stably.
    messy: list[EventLike] = sorted([*events, *twice], key=attrgetter("timestamp"))
    clean_report = replay(MODEL, LoadedEvents("clean", "json", list[EventLike](events), len(events)))
    messy_report = replay(MODEL, LoadedEvents("messy", "json", messy, len(messy)))
    assert messy_report.decisions == clean_report.decisions
    assert messy_report.summary["signals"] == clean_report.summary["signals"]
    assert messy_report.summary["skipped_events"] == ({REPEATED: len(twice)} if twice else {})


# --- the engine: a UFM restart while it was down, a short event answer -----------------------------------------

BLIP = {"cycles": 2, "period": "20s", "down_for": "1s"}
"""Two down/up cycles of a second: below every rule (3 cycles for a flap, 7 s of downtime)."""


def evidence_repeats(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if len(set(f.evidence)) != len(f.evidence)]


def test_a_ufm_restart_while_the_engine_was_down_repeats_no_event(tmp_path: Path) -> None:
    with rig(TINY, tmp_path) as r:
        for link in ("pod01-spine01/3", "pod02-spine01/3", "pod01-spine02/3"):
            r.inject(fault="flap", link=link, cycles=1, period="20s", down_for="1s")
        r.advance(120)
        assert r.cycle().events == 6 and r.engine.cursor.state.high_water_id == 6
        # The engine goes down; UFM restarts (its ids start again from 1) and a canary link blips twice.
        r.inject(fault="ufm_restart")
        r.inject(fault="flap", link="core01-01/1", **BLIP)
        r.advance(120)
        restart(r)
        report = r.cycle()
        # Before: start-up warmed the detectors with ids 1..4 (at or below the saved mark), the cycle took the ids
        # going backwards for a restart and handed the same four events over again: "4 down/up cycles", evidence
        # [1, 2, 3, 4, 1, 2, 3, 4], a healthy link disabled and ticketed.
        assert report.events == 4 and report.repeated_events == 0
        assert [a for a in report.actions if a.kind is not ActionKind.RECORD] == []
        assert evidence_repeats(report.findings) == [] and r.tickets.list() == []


def test_a_ufm_restart_while_the_engine_was_down_drops_no_event(tmp_path: Path) -> None:
    with rig(TINY, tmp_path) as r:
        for link in ("pod01-spine01/3", "pod02-spine01/3", "pod01-spine02/3"):
            r.inject(fault="flap", link=link, cycles=1, period="20s", down_for="1s")
        r.advance(120)
        r.cycle()
        r.inject(fault="ufm_restart")
        r.inject(fault="flap", link="core01-01/1", cycles=3, period="20s", down_for="4s")  # ids 1..6: a real flap
        r.advance(300)
        restart(r)
        report = r.cycle()
        # Before: the flap's events (ids at or below the saved mark 6) were only warmed; handed over again, their
        # newest evidence was no newer than what the warm history had found: the flap was never acted on.
        assert [(a.kind, a.rule) for a in report.actions if a.kind is not ActionKind.RECORD] == [
            (ActionKind.DISABLE, "flap"), (ActionKind.TICKET, "flap")]
        [flap] = [f for f in report.findings if f.rule == "flap"]
        assert sorted(flap.evidence) == [1, 2, 3, 4, 5, 6]


def test_a_short_event_answer_hands_nothing_over_again(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with rig(TINY, tmp_path) as r:
        for link in ("pod01-spine01/3", "pod02-spine01/3"):
            r.inject(fault="flap", link=link, cycles=1, period="20s", down_for="1s")
        r.advance(5)
        r.inject(fault="flap", link="core01-01/1", **BLIP)  # the canary: ids 5..8
        r.advance(120)
        first = r.cycle()
        assert first.events == 8 and not [a for a in first.actions if a.kind is not ActionKind.RECORD]
        r.inject(fault="api", endpoint="/app/events", mode="oldest", count=4, requests=1)
        with caplog.at_level(logging.WARNING, logger="fabric.ufm.cursor"):
            short = r.cycle()
        assert (short.events, short.event_read) == (0, EventRead.SHORT)
        assert r.engine.cursor.state.high_water_id == 8 and r.engine.cursor.state.restart_count == 0
        assert [rec.levelno for rec in caplog.records] == [logging.WARNING]
        r.advance(60)
        # Before: the short answer lowered the mark to 4 and this cycle handed events 5..8 over again: the canary's
        # evidence became [5, 6, 7, 8, 5, 6, 7, 8], a flap, a live disable and a ticket.
        after = r.cycle()
        assert (after.events, after.event_read) == (0, EventRead.OK)
        assert after.actions == [] and r.tickets.list() == []
