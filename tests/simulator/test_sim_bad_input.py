"""Bad input to the simulator: its admin API (real HTTP over loopback), its clock and its scenario files.

Whatever a request carries, the answer is 2xx or 4xx with a reason, and the simulator keeps serving UFM's API.
"""

from __future__ import annotations

import dataclasses
import json
import socket
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sim_support import PASSWORD, START, USER, Sim, make_state
from typer.testing import CliRunner

from fabric.cli.app import app
from fabric.simulator import SimClock, SimSettings, SimState, parse_scenario
from fabric.simulator.clock import HORIZON, MAX_RATE
from fabric.simulator.faults import STEP_TYPES
from topology.generate import PRESETS, fat_tree

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "scenarios"
HUGE = "9" * 5000
"""A number of more digits than Python converts (4300)."""


def _still_serving(sim: Sim) -> None:
    """UFM's API answers: the clock frozen and injected API faults cleared first, as those fail it on purpose."""
    assert sim.http.put("/simulator/clock", json={"rate": 0}).status_code == 200
    assert sim.http.delete("/simulator/api_faults").status_code == 200
    response = sim.http.get("/ufmRest/resources/systems", auth=(USER, PASSWORD))
    assert response.status_code == 200, response.text


@pytest.mark.parametrize(("method", "path", "body", "message"), [
    ("PUT", "/simulator/clock", '{"rate": NaN}', "body: rate: NaN is not a number JSON has"),
    ("PUT", "/simulator/clock", '{"rate": Infinity}', "body: rate: Infinity is not a number JSON has"),
    ("PUT", "/simulator/clock", '{"rate": 1e308}', "rate must be"),
    ("PUT", "/simulator/clock", '{"rate": 1e12}', "rate must be"),
    ("PUT", "/simulator/clock", '{"rate": ' + "9" * 400 + "}", "rate must be"),
    ("POST", "/simulator/clock/advance", '{"seconds": 1e308}', "is longer than 3650 days"),
    ("POST", "/simulator/clock/advance", '{"by": "99999999999d"}', "is longer than 3650 days"),
    ("POST", "/simulator/clock/advance", '{"seconds": ' + HUGE + "}", "a number of more than 4300 digits"),
    ("POST", "/simulator/faults", '{"fault": "flap", "cycles": -5}', "'cycles': must be from 1 to 10,000, got -5"),
    ("POST", "/simulator/faults", '{"fault": "flap", "cycles": 100000000}', "'cycles': must be from 1 to 10,000"),
    ("POST", "/simulator/faults", '{"fault": "flap", "period": "10s", "down_for": "20s"}', "shorter than 'period'"),
    ("POST", "/simulator/faults", '{"fault": "flap", "at": "9999999d"}', "'at': not a duration: '9999999d' is longer"),
    ("POST", "/simulator/faults", '{"fault": "storm", "count": -5}', "'count': must be from 1 to 2,000,000"),
    ("POST", "/simulator/faults", '{"fault": "storm", "count": 100000000000}', "'count': must be from 1"),
    ("POST", "/simulator/faults", '{"fault": "storm", "batches": -1, "duration": 5}', "'batches'"),
    ("POST", "/simulator/faults", '{"fault": "storm", "events": [1]}', "'events' must be"),
    ("POST", "/simulator/faults", '{"fault": "action_failure", "count": -5}', "'count': must be from 1"),
    ("POST", "/simulator/faults", '{"fault": "host_reboot", "count": -1}', "'count': must be from 0"),
    ("POST", "/simulator/faults", '{"fault": "host_reboot"}', "name 'hosts' or give a 'count'"),
    ("POST", "/simulator/faults", '{"fault": "miswire", "count": -1}', "'count': must be from 1"),
    ("POST", "/simulator/faults", '{"fault": "miswire", "count": 1000}', "1000 swaps need 2000"),
    ("POST", "/simulator/faults", '{"fault": "api", "status": 99999, "requests": 1}', "'status': must be from 400"),
    ("POST", "/simulator/faults", '{"fault": "api", "requests": -1}', "'requests': must be from 1"),
    ("POST", "/simulator/faults", '{"fault": "api", "keep": -0.5, "requests": 1}', "'keep': must be from 0.0 to 1.0"),
    ("POST", "/simulator/faults", '{"fault": "api", "keep": NaN, "requests": 1}', "body: keep: NaN is not a number"),
    ("POST", "/simulator/faults", '{"fault": "api", "duration": "99999999999d"}', "'duration'"),
    ("POST", "/simulator/faults", '{"fault": "api", "delay": "1h", "requests": 1}', "'delay': must be from 0 to 600"),
    ("POST", "/simulator/faults", '{"fault": "api", "mode": "explode", "requests": 1}', "'mode' must be one of"),
    ("POST", "/simulator/faults", '{"fault": "degrade", "width": "banana"}', "'width' must be one of 1x, 2x"),
    ("POST", "/simulator/faults", '{"fault": "degrade", "speed": "warp"}', "'speed' must be one of"),
    ("POST", "/simulator/faults", '{"fault": "hot_module", "temperature": ' + HUGE + "}", "a number of more than"),
    ("POST", "/simulator/faults", '{"fault": "hot_module", "temperature": 1e400}', "temperature: the number '1e400'"),
    ("POST", "/simulator/faults", '{"fault": "unhealthy", "action": "reboot"}', "'action' must be one of isolate"),
    ("POST", "/simulator/scenario", '{"name": {"a": 1}, "steps": [{"fault": "flap"}]}', "'name' must be text"),
    ("POST", "/simulator/scenario", '{"steps": [{"fault": "flap"}], "seed": ' + HUGE + "}", "a number of more than"),
    ("GET", "/ufmRest/jobs/" + HUGE, None, "not found"),
    # A scenario nested 100,000 deep was a 500 (RecursionError); a key given twice took the second.
    ("POST", "/simulator/scenario", '{"steps": ' + "[" * 100_000 + "]" * 100_000 + "}", "body: nested deeper than 100"),
    ("POST", "/simulator/faults", "[" * 100_000 + "]" * 100_000, "body: nested deeper than 100"),
    ("POST", "/simulator/faults", '{"fault": "flap", "fault": "storm"}', "body: fault: duplicate key 'fault'"),
    ("POST", "/ufmRest/actions", '{"action": "disable", "action": "enable"}', "body: action: duplicate key"),
    ("POST", "/simulator/scenario", '{"name": 0, "steps": [{"fault": "flap"}]}', "'name' must be text"),
    ("POST", "/simulator/scenario", '{"description": [], "steps": [{"fault": "flap"}]}', "'description' must be"),
    ("POST", "/simulator/clock/advance", '{"seconds": {}, "by": "90s"}', "give seconds or by, not both"),
])
def test_bad_admin_input_is_a_4xx_with_a_reason(sim: Sim, method: str, path: str, body: str | None,
                                                message: str) -> None:
    response = sim.http.request(method, path, content=body, auth=(USER, PASSWORD),
                                headers={"content-type": "application/json"})
    assert 400 <= response.status_code < 500, response.text
    assert message in response.json()["detail"]
    _still_serving(sim)


def test_a_refused_scenario_schedules_nothing(sim_factory: Callable[..., Sim]) -> None:
    """A scenario whose last step would fall past the clock's horizon is refused whole, not half-scheduled."""
    state = SimState.from_plan(fat_tree(PRESETS["tiny"]), clock=SimClock(HORIZON - timedelta(days=1)))
    sim = sim_factory(state)
    response = sim.http.post("/simulator/scenario", json={"steps": [
        {"at": "1h", "fault": "link_down", "link": "pod01-spine01/1"},
        {"at": "2d", "fault": "link_down", "link": "pod01-spine01/2"}]})
    assert response.status_code == 400 and "past the simulator's horizon" in response.json()["detail"]
    assert len(state.scheduler) == 0
    for path, body in (("/simulator/faults", {"fault": "flap", "at": "2d"}),
                       ("/simulator/clock/advance", {"by": "2d"})):
        refused = sim.http.post(path, json=body)
        assert refused.status_code == 400 and "horizon" in refused.json()["detail"], refused.text
    _still_serving(sim)


def test_a_running_clock_stops_at_the_horizon() -> None:
    ticks = [0.0]
    clock = SimClock(HORIZON - timedelta(seconds=10), rate=MAX_RATE, monotonic=lambda: ticks[0])
    ticks[0] = 1e9  # a thousand million real seconds at the highest rate: far past what a datetime holds
    assert clock.now() == HORIZON
    with pytest.raises(ValueError, match="horizon"):
        clock.advance(1)
    for rate in (float("nan"), float("inf"), -1.0, MAX_RATE * 2):
        with pytest.raises(ValueError, match="clock rate"):
            clock.set_rate(rate)
    assert clock.rate == MAX_RATE


@pytest.mark.parametrize("job_seconds", [float("nan"), float("inf"), -1.0, 1e300])
def test_settings_refuse_job_seconds_that_cannot_be_scheduled(job_seconds: float) -> None:
    with pytest.raises(ValueError, match="job_seconds"):
        SimSettings(job_seconds=job_seconds)


# --------------------------------------------------------------------------------------------- any body

# Valid but large counts (storms of a million events, ten thousand flap cycles) are left out: they are
# accepted, as they should be, and only slow; the test is about what is refused, and how.
_INTEGERS = (st.integers(max_value=100) | st.integers(min_value=10_000_000)
             | st.sampled_from([399, 400, 429, 500, 503, 599, 600, 2_000_001, 10_001]))
_DURATIONS = st.sampled_from(["90s", "1h30m", "500ms", "3650d", "3651d", "99999999999d", "-1s", "1e400", "nan",
                              "inf", "9" * 400, ""])
_SCALARS = (st.none() | st.booleans() | _INTEGERS | st.floats() | _DURATIONS
            | st.sampled_from(["random", "random:switch", "pod01-spine01/1", "pod01-node01 mlx5_0", "1x", "HDR",
                               "error", "delay", "truncate", "*", "/resources/ports", "isolate"])
            | st.text(max_size=12))
_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=6)


def _step(kind: str) -> st.SearchStrategy[dict[str, Any]]:
    keys = [f.name for f in dataclasses.fields(STEP_TYPES[kind])] + ["at"]
    return st.dictionaries(st.sampled_from(keys), _VALUES, max_size=4).map(lambda body: {**body, "fault": kind})


_STEPS = st.sampled_from(sorted(STEP_TYPES)).flatmap(_step)
_REQUESTS = st.one_of(
    st.tuples(st.just("PUT"), st.just("/simulator/clock"), st.fixed_dictionaries({"rate": _VALUES}) | _VALUES),
    st.tuples(st.just("POST"), st.just("/simulator/clock/advance"),
              st.dictionaries(st.sampled_from(["seconds", "by"]), _VALUES, max_size=2) | _VALUES),
    st.tuples(st.just("POST"), st.just("/simulator/faults"), _STEPS | _VALUES),
    st.tuples(st.just("POST"), st.just("/simulator/scenario"),
              st.fixed_dictionaries({"steps": st.lists(_STEPS, max_size=3)},
                                    optional={"name": _VALUES, "seed": _VALUES, "description": _VALUES}) | _VALUES),
    st.tuples(st.just("POST"), st.just("/simulator/events/bulk"),
              st.fixed_dictionaries({}, optional={"count": _VALUES, "events": _VALUES}) | _VALUES),
    st.tuples(st.just("PUT"), st.just("/simulator/ufm_version"), st.fixed_dictionaries({"version": _VALUES})),
    st.tuples(st.sampled_from(["POST", "DELETE", "GET"]),
              st.sampled_from(["/simulator/restart", "/simulator/api_faults", "/simulator/state"]), _VALUES),
)


def test_any_json_to_any_admin_endpoint_is_2xx_or_4xx(sim: Sim) -> None:
    @settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(request=_REQUESTS)
    def check(request: tuple[str, str, Any]) -> None:
        method, path, body = request
        response = sim.http.request(method, path, content=json.dumps(body),
                                    headers={"content-type": "application/json"})
        assert response.status_code < 500, (method, path, body, response.text)
        _still_serving(sim)

    check()


# --------------------------------------------------------------------------------------------- files


@pytest.mark.parametrize(("name", "text", "message"), [
    ("neg.yaml", "steps:\n - fault: flap\n   cycles: -3\n",
     "step 1 (flap): 'cycles': must be from 1 to 10,000, got -3"),
    ("long.toml", '[[steps]]\nfault = "flap"\nat = "99999999999d"\n',
     "step 1: 'at': not a duration: '99999999999d' is longer than 3650 days"),
    ("big.toml", f'[[steps]]\nfault = "flap"\ncycles = {HUGE}\n', "not valid TOML: Exceeds the limit"),
    ("big.yaml", f"steps:\n - fault: flap\n   cycles: {HUGE}\n", "not valid YAML: Exceeds the limit"),
    ("float.toml", f'[[steps]]\nfault = "ber"\nescalate_after = {"9" * 400}\n',
     "step 1 (ber): 'escalate_after': not a duration: 9999"),
    ("nan.yaml", "steps:\n - fault: api\n   keep: .nan\n   requests: 1\n",
     "step 1 (api): 'keep': must be from 0.0 to 1.0, got nan"),
    ("storm.yaml", "steps:\n - fault: storm\n   count: 0\n", "step 1 (storm): 'count': must be from 1 to 2,000,000"),
    ("named.yaml", "name: [1]\nsteps:\n - fault: flap\n", "'name' must be text"),
])
def test_bad_scenario_files_are_one_line_naming_file_and_key(tmp_path: Path, name: str, text: str,
                                                             message: str) -> None:
    path = tmp_path / name
    path.write_text(text)
    result = CliRunner().invoke(app, ["simulate", "--preset", "tiny", "--offline", "1s", "--scenario", str(path)])
    lines = result.output.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1, result.output
    assert lines[0].startswith(f"fabricctl: error: {path}: {message}"), lines[0]


def test_parameters_at_their_limits_are_accepted() -> None:
    state = make_state()
    steps = [{"fault": "api", "status": 429, "delay": "600s", "keep": 1, "requests": 1},
             {"fault": "api", "status": 599, "keep": 0, "duration": "3650d"},
             {"fault": "degrade", "link": "pod01-spine01/1", "width": "12X", "speed": "ndr"},
             {"fault": "storm", "count": 2_000_000, "batches": 10_000, "duration": "1h"},
             {"fault": "flap", "cycles": 10_000, "period": "1s", "down_for": "999ms"},
             {"fault": "host_reboot", "count": 0, "hosts": ["random"]}]
    parse_scenario({"steps": [{**step, "at": "3650d"} for step in steps]}).schedule(state)
    assert len(state.scheduler) == len(steps) and state.clock.now() == START


# --------------------------------------------------------------------------------------------- command line


@pytest.mark.parametrize(("args", "message"), [
    (["--speed", "nan"], "--speed: the clock rate must be a number from 0 to 1,000,000"),
    (["--speed", "inf"], "--speed: the clock rate must be"),
    (["--speed", "1e12"], "--speed: the clock rate must be"),
    (["--job-seconds", "inf"], "--job-seconds must be from 0 to 315,360,000 seconds"),
    (["--job-seconds", "nan"], "--job-seconds must be from 0"),
    (["--offline", "99999999999d"], "--offline: not a duration: '99999999999d' is longer than 3650 days"),
    (["--offline", "9" * 400], "--offline: "),
    (["--miswire", "100000"], "--miswire 100000: "),
])
def test_fabricctl_simulate_names_the_option_it_refuses(args: list[str], message: str) -> None:
    result = CliRunner().invoke(app, ["simulate", "--preset", "tiny", "--offline", "1s", *args])
    lines = result.output.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1, result.output
    assert lines[0].startswith(f"fabricctl: error: {message}"), lines[0]


def test_fabricctl_simulate_on_a_busy_port_is_one_line_before_any_banner() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(app, ["simulate", "--preset", "tiny", "--port", str(port)])
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines() == [
        f"fabricctl: error: cannot listen on 127.0.0.1:{port}: Address already in use"]


def test_offline_snapshot_is_what_replay_reads(tmp_path: Path) -> None:
    """``--snapshot`` is taken before the first step: the cable that dies for good is still in links.json, so
    replay places every event (a snapshot taken at the end would not have it)."""
    snapshot, log = tmp_path / "snap", tmp_path / "event.log"
    result = CliRunner().invoke(app, ["simulate", "--preset", "tiny", "--offline", "2h", "--event-log", str(log),
                                      "--snapshot", str(snapshot), "--scenario", str(EXAMPLES / "link-down.toml")])
    assert result.exit_code == 0, result.output
    assert "47/48 links up" in result.output
    assert sorted(p.name for p in snapshot.iterdir()) == ["links.json", "ports.json", "systems.json"]
    expected = make_state()
    assert json.loads((snapshot / "links.json").read_bytes()) == json.loads(expected.fabric.links_json())
    assert json.loads((snapshot / "ports.json").read_bytes()) == json.loads(expected.fabric.ports_json())
    assert json.loads((snapshot / "systems.json").read_bytes()) == json.loads(expected.fabric.systems_json())
    replayed = CliRunner().invoke(app, ["replay", "--as-built", str(snapshot), "--events", str(log),
                                        "--format", "json"])
    assert replayed.exit_code in (0, 1), replayed.output
    summary = json.loads(replayed.output)["summary"]
    assert (summary["events"], summary["skipped_events"], summary["model"]["cables"]) == (3, {}, 48), summary


def test_fabricctl_simulate_names_the_file_option_it_cannot_write(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    for option, message in (("--snapshot", "cannot write: Not a directory"), ("--event-log", "cannot open: ")):
        target = blocker / "inside"
        result = CliRunner().invoke(app, ["simulate", "--preset", "tiny", "--offline", "1s", option, str(target)])
        lines = result.output.strip().splitlines()
        assert result.exit_code == 2 and len(lines) == 1, result.output
        assert lines[0].startswith(f"fabricctl: error: {option} {target}: {message}"), lines[0]
