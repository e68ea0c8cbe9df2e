"""Replay as a stream: the clock that jumps decides as one stepping every boundary, an event.log read as it goes
decides as its events sorted in memory, and the report written piece by piece is the report."""

from __future__ import annotations

import io
import json
import random
from dataclasses import replace as changed
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from replay_support import SCENARIOS, Recording, fabricctl, record_file

from fabric.config import load_config
from fabric.remediation.policy import PolicyConfig
from fabric.remediation.signals import DEFAULT_EVENT_KINDS, EventLike
from fabric.replay.events import LoadedEvents, load_events, stream_events
from fabric.replay.report import DecisionLines, KeptDecisions, SpooledDecisions
from fabric.replay.run import OutOfOrder, ReplayModel, ReplayReport, load_model, replay, run_replay
from fabric.ufm.models import Event
from topology.errors import InputError

USED = frozenset(DEFAULT_EVENT_KINDS)
TINY_STORM = PolicyConfig(storm_components=8)
"""tiny's storm breaker trips as a fabric of hundreds of switches does at the default (see test_replay_scenarios)."""
GAPS = [timedelta(0), timedelta(seconds=1), timedelta(seconds=59), timedelta(seconds=61), timedelta(minutes=7),
        timedelta(hours=1), timedelta(hours=3), timedelta(hours=26)]
"""Stretches put between parts of a recording: within a cycle, across one, past every window and probation."""
STORM = frozenset({110, 111, 112, 113})


@pytest.fixture(scope="module")
def combined(tmp_path_factory: pytest.TempPathFactory) -> Recording:
    return record_file(tmp_path_factory.mktemp("combined"), SCENARIOS / "combined.toml", 7200)


@pytest.fixture(scope="module")
def recorded(combined: Recording) -> tuple[ReplayModel, list[Event]]:
    loaded = load_events(combined.files["event.log"], used=USED)
    assert all(isinstance(event, Event) for event in loaded.events)
    return load_model(combined.snapshot), [event for event in loaded.events if isinstance(event, Event)]


def without_steps(report: ReplayReport) -> dict[str, Any]:
    document = report.to_dict()
    # Boundaries jumped while nothing waits are not counted as steps.
    document["summary"] = {key: value for key, value in report.summary.items() if key != "steps"}
    return document


@settings(max_examples=50, deadline=None)
@given(data=st.data())
def test_jumping_the_clock_decides_as_stepping_every_boundary(recorded: tuple[ReplayModel, list[Event]],
                                                             data: st.DataObject) -> None:
    """Whatever the stretches between events, the breaker's quiet period and the cycle, the clock that jumps to
    the next event or timer takes the decisions, in order, with the reasons, of one stepping every boundary."""
    model, events = recorded
    # Stretches mostly just before or after the events other than the storm's counter thresholds (a few dozen
    # link, node and module events among 5,000): where evidence settles and timers run.
    faults = sorted({index + after for index, event in enumerate(events) if event.event_id not in STORM
                     for after in (0, 1) if 0 < index + after < len(events)})
    cuts = sorted(data.draw(st.lists(st.sampled_from(faults) | st.integers(1, len(events) - 1), max_size=12,
                                     unique=True), label="cuts"))
    gaps = data.draw(st.lists(st.sampled_from(GAPS), min_size=len(cuts), max_size=len(cuts)), label="gaps")
    shifted: list[EventLike] = []
    shift = timedelta(0)
    for index, event in enumerate(events):
        if index in cuts:
            shift += gaps[cuts.index(index)]
        shifted.append(event.model_copy(update={"timestamp": event.timestamp + shift}))
    policy = changed(TINY_STORM, storm_quiet_period=data.draw(
        st.sampled_from([None, timedelta(minutes=20), timedelta(hours=2)]), label="quiet period"))
    interval = data.draw(st.sampled_from([timedelta(seconds=60), timedelta(minutes=5)]),
                         label="interval")
    loaded = LoadedEvents("shifted", "json", shifted, len(shifted))
    jumping = replay(model, loaded, policy=policy, interval=interval)
    stepping = replay(model, loaded, policy=policy, interval=interval, every_boundary=True)
    assert without_steps(jumping) == without_steps(stepping)
    assert jumping.summary["steps"] <= stepping.summary["steps"]


# --- an event.log read as it goes ----------------------------------------------------------------------------


def reordered(combined: Recording, tmp_path: Path, name: str, move: int) -> Path:
    """The recording's event.log with lines of one second shuffled among themselves and, with ``move``, the
    first ``move`` lines put at the end of the file (hours before the lines they now follow)."""
    lines = combined.files["event.log"].read_text().splitlines()
    rng = random.Random(7)
    seconds: dict[str, list[str]] = {}
    for line in lines:
        seconds.setdefault(line[:19], []).append(line)
    shuffled = [line for group in seconds.values() for line in rng.sample(group, len(group))]
    path = tmp_path / name
    path.write_text("\n".join(shuffled[move:] + shuffled[:move]) + "\n")
    return path


def test_an_event_log_out_of_order_decides_as_sorted(combined: Recording, tmp_path: Path) -> None:
    """Read as it goes, an event.log decides as its events sorted in memory: lines out of order within a cycle
    are sorted in it; a block of lines hours out of place makes the replay start again from the sorted events
    (a ``DecisionLines`` that wrote already cannot: an input error)."""
    model, defaults = load_model(combined.snapshot), load_config(None)
    options: dict[str, Any] = {"policy": defaults.policy_config(), "rules": defaults.rule_settings(),
                               "guard": defaults.guard_settings(), "interval": defaults.daemon.interval}
    within, moved = reordered(combined, tmp_path, "within.log", 0), reordered(combined, tmp_path, "moved.log", 300)
    for path in (within, moved):
        in_memory = replay(model, load_events(path, USED), **options).to_dict()
        assert run_replay(combined.snapshot, path, decisions=SpooledDecisions()).to_dict() == in_memory, path.name
    assert in_memory["decisions"], "the moved block holds the first faults"
    replay(model, stream_events(within, USED), decisions=DecisionLines(io.StringIO()), **options)
    with pytest.raises(OutOfOrder):
        replay(model, stream_events(moved, USED), **options)
    with pytest.raises(InputError, match="time order"):
        run_replay(combined.snapshot, moved, decisions=DecisionLines(io.StringIO()))


def test_the_document_written_piece_by_piece_is_the_document(combined: Recording) -> None:
    kept, spooled = io.StringIO(), io.StringIO()
    run_replay(combined.snapshot, combined.files["event.log"], decisions=KeptDecisions()).write_json(kept)
    report = run_replay(combined.snapshot, combined.files["event.log"], decisions=SpooledDecisions())
    report.write_json(spooled)
    assert spooled.getvalue() == kept.getvalue()
    document = json.loads(kept.getvalue())
    assert document["decisions"] == list(report.decision_entries()) and document["explained"] == report.explained
    assert document["decisions"] and document["explained"]


def test_json_lines(combined: Recording) -> None:
    document = fabricctl("replay", "-a", combined.snapshot, "-e", combined.files["event.log"], "--format", "json")
    lines = fabricctl("replay", "-a", combined.snapshot, "-e", combined.files["event.log"], "--format", "jsonl")
    assert lines.returncode == document.returncode == 1, lines.stderr
    expected = json.loads(document.stdout)
    records = [json.loads(line) for line in lines.stdout.splitlines()]
    assert [list(item) for item in records] == ([["decision"]] * len(expected["decisions"])
                                                + [["explained"]] * len(expected["explained"]) + [["summary"]])
    assert [item["decision"] for item in records if "decision" in item] == expected["decisions"]
    assert [item["explained"] for item in records if "explained" in item] == expected["explained"]
    assert records[-1]["summary"] == expected["summary"]


def test_explanations_go_to_their_file_in_order_even_one_that_comes_late(combined: Recording) -> None:
    """Written once the clock is a horizon past them; one that comes before what was written (the detectors
    prune their histories to the horizon, so none should) is put in its place all the same."""
    from fabric.remediation.detectors import Explained
    from fabric.remediation.domain import ComponentId, ComponentKind
    from fabric.replay.run import _Describer, _Explanations

    start, horizon = datetime(2026, 6, 1, tzinfo=UTC), timedelta(hours=1)
    explanations = _Explanations(_Describer(load_model(combined.snapshot)), horizon)

    def explained(minutes: int, link: str, evidence: int) -> Explained:
        at = start + timedelta(minutes=minutes)
        return Explained(ComponentId(ComponentKind.LINK, link), at, "a reboot", evidence)

    explanations.add([explained(10, "b", 2), explained(5, "a", 1), explained(5, "a", 1)], start + timedelta(minutes=20))
    assert len(explanations.log) == 0, "within the horizon: waiting"
    explanations.add([explained(70, "c", 3)], start + timedelta(minutes=75))
    assert len(explanations.log) == 2, "the first two, a horizon behind the clock"
    explanations.add([explained(7, "d", 4), explained(1, "e", 5)], start + timedelta(minutes=80))
    order = [(entry["device"], entry["evidence"]) for entry in map(json.loads, explanations.done())]
    assert order == [("e", 5), ("a", 1), ("d", 4), ("b", 2), ("c", 3)]
