"""Scenario files (TOML and YAML), the shipped examples, the simulated clock and the event catalog."""

from __future__ import annotations

import csv
from datetime import timedelta
from pathlib import Path

import pytest
import yaml
from sim_support import START, make_state

from fabric.simulator import SimClock, load_scenario, parse_duration, parse_scenario
from fabric.simulator.catalog import SPECS
from fabric.simulator.faults import STEP_TYPES, Flap
from fabric.simulator.scenario import ScenarioError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "scenarios"
EXAMPLE_FILES = sorted(p for p in EXAMPLES.iterdir() if p.suffix in (".toml", ".yaml", ".yml"))


@pytest.mark.parametrize(("text", "seconds"), [
    ("90s", 90.0), ("10m", 600.0), ("1h30m", 5400.0), ("500ms", 0.5), ("2.5s", 2.5), ("45", 45.0), (12, 12.0),
    ("1d", 86400.0), (" 2m 30s ", 150.0),
])
def test_durations(text: object, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "ten minutes", "5x", "-3s", "1h-2m", True, None, -1, "3s5"])
def test_bad_durations(text: object) -> None:
    with pytest.raises(ValueError):
        parse_duration(text)


def test_toml_and_yaml_give_the_same_scenario(tmp_path: Path) -> None:
    (tmp_path / "a.toml").write_text(
        'name = "x"\nseed = 4\n[[steps]]\nat = "2m"\nfault = "flap"\nlink = "pod01-spine01/1"\ncycles = 2\n'
        'period = "30s"\n[[steps]]\nat = "1m"\nfault = "ber"\nport = "pod01-spine01/2"\n')
    (tmp_path / "a.yaml").write_text(
        "name: x\nseed: 4\nsteps:\n  - {at: 2m, fault: flap, link: pod01-spine01/1, cycles: 2, period: 30s}\n"
        "  - {at: 1m, fault: ber, port: pod01-spine01/2}\n")
    toml, yaml = load_scenario(tmp_path / "a.toml"), load_scenario(tmp_path / "a.yaml")
    assert toml.steps == yaml.steps and toml.seed == yaml.seed == 4
    assert [s.at for s in toml.steps] == [60.0, 120.0]  # sorted by time
    assert toml.steps[1].step == Flap(link="pod01-spine01/1", cycles=2, period=30.0)
    assert toml.length == 120.0


@pytest.mark.parametrize(("data", "message"), [
    ({"steps": []}, "non-empty list"),
    ({"steps": [{"fault": "explode"}]}, "'fault' must be one of"),
    ({"steps": [{"fault": "flap", "at": "soon"}]}, "'at'"),
    ({"steps": [{"fault": "flap", "colour": "red"}]}, "unknown parameters ['colour']"),
    ({"steps": [{"fault": "flap", "cycles": 2.5}]}, "expected an integer"),
    ({"steps": [{"fault": "hot_module", "module_fault": "yes"}]}, "expected true or false"),
    ({"steps": [{"fault": "host_reboot", "hosts": [1.5]}]}, "expected text"),
    ({"steps": [{"fault": "flap"}], "when": 1}, "unknown keys"),
    ({"steps": [{"fault": "flap"}], "seed": "x"}, "'seed' must be an integer"),
    ([1, 2], "a table/mapping"),
])
def test_bad_scenarios_say_why(data: object, message: str) -> None:
    with pytest.raises(ScenarioError, match=None) as failed:
        parse_scenario(data, "test.toml")
    assert message in str(failed.value) and "test.toml" in str(failed.value)


def test_unreadable_files(tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text("steps = [")
    (tmp_path / "s.json").write_text("{}")
    for name, message in (("bad.toml", "not valid TOML"), ("s.json", ".toml, .yaml or .yml"),
                          ("missing.yaml", "no such file")):
        with pytest.raises(ScenarioError, match=message):
            load_scenario(tmp_path / name)


@pytest.mark.parametrize(("name", "text", "message"), [
    ("dup.yaml", "steps:\n  - fault: flap\n    link: a\n    link: b\n", ":4: not valid YAML: the key 'link'"),
    ("dup.yaml", "name: a\nsteps: []\nname: b\n", ":3: not valid YAML: the key 'name' is given twice"),
    ("dup.toml", '[[steps]]\nfault = "flap"\nfault = "storm"\n', "not valid TOML: Cannot overwrite a value"),
    ("deep.yaml", "steps: " + "[" * 5000 + "]" * 5000 + "\n", "nested deeper than 100 levels"),
    ("deep.yaml", "steps: " + "[" * 150 + "]" * 150 + "\n", "steps[0][0]"),
    ("deep.toml", "steps = " + "[" * 5000 + "]" * 5000 + "\n", "nested deeper than 100 levels"),
])
def test_a_key_given_twice_or_nesting_past_the_bound_is_refused_naming_the_file(
        tmp_path: Path, name: str, text: str, message: str) -> None:
    """PyYAML keeps the last of two keys (a flap on link b, while its author wrote a); tomllib and PyYAML recurse."""
    (tmp_path / name).write_text(text)
    with pytest.raises(ScenarioError) as refused:
        load_scenario(tmp_path / name)
    assert str(refused.value).startswith(f"{tmp_path / name}:") and message in str(refused.value)


def test_yaml_merge_keys_still_override() -> None:
    from fabric.simulator.scenario import _StrictYamlLoader

    text = "base: &b {fault: flap, cycles: 2}\nstep: {<<: *b, cycles: 3}\n"
    assert yaml.load(text, Loader=_StrictYamlLoader)["step"] == {"fault": "flap", "cycles": 3}


# Events each shipped example must produce on the tiny plan within three simulated hours.
EXPECTED = {
    "flapping-link.toml": {329: 5, 328: 5},
    "ber-degradation.toml": {918: 1, 916: 1, 917: 1, 915: 1},
    "link-down.toml": {329: 2, 328: 1},
    "degraded-link.yaml": {130: 2, 701: 2},
    "hot-module.toml": {919: 2, 392: 2, 911: 2, 394: 1},
    "switch-reboot.yaml": {907: 1, 329: 8, 908: 1, 1312: 1, 328: 8},
    "mass-host-reboot.toml": {331: 6, 332: 6, 329: 12, 328: 12},
    "miswire.toml": {329: 2, 328: 2},
    "sm-unhealthy.yaml": {329: 6, 328: 6, 702: 1},
    "event-storm.toml": None,
    "ufm-restart.toml": {329: 2, 328: 2},  # after the restart: only the flap of 7m is left
    "api-failures.toml": {},
    "combined.toml": None,
    "telemetry-counters.toml": {},
    "telemetry-feed.toml": {},
    "burnin-weak-ports.toml": {110: 2, 113: 1, 123: 1},
}


def test_every_fault_kind_has_an_example() -> None:
    used: set[str] = set()
    for path in EXAMPLE_FILES:
        used |= {type(s.step).kind for s in load_scenario(path).steps}
    assert used == set(STEP_TYPES)
    assert {p.name for p in EXAMPLE_FILES} == set(EXPECTED)


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.name)
def test_examples_load_and_run(path: Path) -> None:
    scenario = load_scenario(path)
    assert scenario.steps and scenario.name
    state = make_state()
    scenario.schedule(state)
    state.advance(3 * 3600)
    assert state.errors == []
    counts: dict[int, int] = {}
    for record in state.events.records():
        counts[record.event_type] = counts.get(record.event_type, 0) + 1
    expected = EXPECTED[path.name]
    if expected is not None:
        assert counts == expected
    elif path.name == "event-storm.toml":
        assert sum(counts.values()) == 100_000
    else:
        assert state.counters.restarts == 1 and len(state.events.log_lines()) > 5000
    times = [r.when for r in state.events.records()]
    assert times == sorted(times)


def test_step_errors_are_recorded_not_raised() -> None:
    state = make_state()
    parse_scenario({"steps": [{"at": "1m", "fault": "link_down", "link": "nowhere/1"},
                              {"at": "2m", "fault": "link_down", "link": "pod01-spine01/1"}]}).schedule(state)
    state.advance(180)
    assert len(state.errors) == 1 and "nowhere" in state.errors[0]
    assert [r.event_type for r in state.events.records()] == [329]


def test_clock_rate_and_advance() -> None:
    ticks = [100.0]
    clock = SimClock(START, rate=0.0, monotonic=lambda: ticks[0])
    ticks[0] += 50
    assert clock.now() == START
    clock.set_rate(60.0)
    ticks[0] += 2
    assert clock.now() == START + timedelta(seconds=120)
    assert clock.advance(30) == START + timedelta(seconds=150)
    clock.set_rate(0)
    ticks[0] += 1000
    assert clock.now() == START + timedelta(seconds=150)
    assert clock.advance_to(START) == START + timedelta(seconds=150)
    with pytest.raises(ValueError):
        clock.advance(-1)
    with pytest.raises(ValueError):
        clock.set_rate(-2)


def test_real_time_clock_drives_a_scenario() -> None:
    ticks = [0.0]
    state = make_state()
    state.clock = SimClock(START, rate=10.0, monotonic=lambda: ticks[0])
    parse_scenario({"steps": [{"at": "30s", "fault": "link_down", "link": "pod01-spine01/1"}]}).schedule(state)
    ticks[0] = 2.9
    state.tick()
    assert len(state.events) == 0
    ticks[0] = 3.0
    state.tick()
    assert [(r.event_type, r.when) for r in state.events.records()] == [(329, START + timedelta(seconds=30))]


def test_catalog_matches_ufm_policy_table(conformance: Path) -> None:
    rows = {int(r[0]): r for r in csv.reader((conformance / "events" / "policy.csv").open()) if r}
    for event_id, item in SPECS.items():
        row = rows[event_id]
        assert item.name == row[1]
        assert item.severity == row[14]
        assert int(row[11]) == item.alarm_type and bool(int(row[12])) == item.raises_alarm
        assert int(row[16]) == item.ttl
        assert item.template == row[19], event_id
        assert item.category == row[20]
