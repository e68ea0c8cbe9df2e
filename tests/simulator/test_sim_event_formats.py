"""Events in both REST payload shapes (before and from UFM 6.17), and as UFM ``event.log`` lines."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from sim_support import Sim, make_state, run

from fabric.ufm import Event, EventLogStats, iter_event_log
from fabric.ufm.objects import link_ends

# UFM's own event.log line pattern (fluentd config of NVIDIA's events dashboard plugin), rewritten here.
UFM_LINE = re.compile(
    r"^(?P<ts>[\d\-]+ [\d:.]+) \[\d+\] \[\d+\] (?P<severity>\w+) (?:Site \[[\w-]*\] )?\[(?P<category>\w+)\] "
    r"(?P<otype>\w+) \[(?P<oid>.*)\]: (?P<text>.*)$")
UFM_LINK_ID = re.compile(r"([a-f0-9]+_[0-9]+)[\w ]+: ([a-f0-9]+_[0-9]+)")
UFM_PORT_ID = re.compile(r"(?:Computer|Switch): (?P<device>[^/]+) / (?P<port>[^\]]+)\] \[dev_id: (?P<guid>[a-f0-9]+)")


def _some_events(sim: Sim) -> None:
    sim.inject(fault="link_down", link="pod01-node01 mlx5_0")
    sim.inject(fault="ber", port="pod01-spine01/1", escalate_after=None)
    sim.inject(fault="switch_reboot", switch="pod01-spine02", downtime="1m")
    sim.inject(fault="host_reboot", hosts=["pod02-node01"], downtime="1m")
    sim.inject(fault="hot_module", port="pod01-spine01/2", module_fault=True)
    sim.advance(61)


@pytest.mark.parametrize(("version", "legacy"), [("6.16.1", True), ("6.17.0", False), ("6.22", False)])
def test_rest_event_shape_follows_the_ufm_version(sim_factory: Callable[..., Sim], version: str,
                                                  legacy: bool) -> None:
    sim = sim_factory(make_state(version))
    _some_events(sim)
    raw = sim.get("/ufmRest/app/events")
    link = next(e for e in raw if e["name"] == "Link is Down")
    if legacy:
        assert link["type"] == "329" and "event_type" not in link
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}", link["timestamp"])
        assert link["counter"] is None
    else:
        assert link["type"] == "Link" and link["event_type"] == "329"
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", link["timestamp"])
        assert link["counter"] == "N/A"
    assert {"id", "name", "severity", "category", "object_name", "object_path", "description"} <= set(link)

    async def parse() -> list[Event]:
        async with sim.client() as ufm:
            return await ufm.events()
    events = run(parse())
    assert [e.event_id for e in events] == [int(e["type"] if legacy else e["event_type"]) for e in raw]
    down = next(e for e in events if e.event_id == 329)
    assert down.object_type == (None if legacy else "Link")  # the legacy shape carries no object type
    # Either way both ends are named in the object path (and the description).
    ends = link_ends(down.object_path, down.description)
    assert ends is not None and f"{ends[0].name}:{ends[1].name}" == down.object_name


def test_switching_version_at_runtime_changes_the_shape(sim: Sim) -> None:
    sim.inject(fault="link_down", link="pod01-spine01/1")
    assert sim.get("/ufmRest/app/events")[0]["type"] == "Link"
    assert sim.http.put("/simulator/ufm_version", json={"version": "6.15.2"}).json()["event_shape"] == "legacy"
    assert sim.get("/ufmRest/app/events")[0]["type"] == "329"
    assert sim.http.put("/simulator/ufm_version", json={"version": "six"}).status_code == 400


def test_event_log_lines_match_ufm_and_the_project_parser(sim: Sim) -> None:
    _some_events(sim)
    rest = sim.get("/ufmRest/app/events")
    text = sim.http.get("/simulator/event.log").text
    lines = text.splitlines()
    assert len(lines) == len(rest) > 20
    for line, event in zip(lines, rest, strict=True):
        match = UFM_LINE.match(line)
        assert match, line
        assert match["otype"] == event["type"]
        assert match["severity"] == event["severity"].upper()
        assert match["category"] == event["category"].replace(" ", "_")
        assert match["text"] == event["description"]
        if match["otype"] == "Link":
            ends = UFM_LINK_ID.search(match["oid"])
            assert ends and f"{ends.group(1)}:{ends.group(2)}" == event["object_name"]
        if match["otype"] == "IBPort":
            port = UFM_PORT_ID.search(match["oid"] + "] [dev_id: 0]")
            assert port and port["device"].startswith("pod")
    stats = EventLogStats()
    parsed = list(iter_event_log(lines, stats=stats))
    assert stats.malformed_count == 0 and stats.parsed == len(rest)
    assert [(e.id, e.event_id, e.object_type) for e in parsed] == [
        (e["id"], int(e["event_type"]), e["type"]) for e in rest]
    down = next(e for e in parsed if e.event_id == 329)
    assert down.link_ends is not None
    by_id = {e["id"]: e for e in rest}
    assert f"{down.link_ends[0].name}:{down.link_ends[1].name}" == by_id[down.id]["object_name"]


def test_event_log_file_from_the_cli_offline_run(tmp_path: object) -> None:
    from pathlib import Path

    from fabric.simulator.cli import SimulateOptions
    from fabric.simulator.cli import run as run_cli

    out = Path(str(tmp_path)) / "event.log"
    scenario = Path(__file__).resolve().parents[2] / "examples" / "scenarios" / "switch-reboot.yaml"
    lines: list[str] = []
    code = run_cli(SimulateOptions(preset="tiny", scenarios=[scenario], event_log=out, offline=3600.0), lines.append)
    assert code == 0 and "19 events" in lines[0]
    parsed = list(iter_event_log(out))
    assert [e.event_id for e in parsed][:2] == [907, 329] and len(parsed) == 19


def test_alarm_ttl_expires(sim: Sim) -> None:
    state = sim.state
    sim.inject(fault="hot_module", port="pod01-spine01/1")
    assert sorted(a["event_type"] for a in sim.get("/ufmRest/app/alarms")) == [392, 911, 919]
    version = sim.get("/ufmRest/app/versioning")["alarms_version"]
    sim.advance(300)  # 392 and 911 have a 300 s TTL in UFM's policy; 919 has none
    assert [a["event_type"] for a in sim.get("/ufmRest/app/alarms")] == [919]
    assert sim.get("/ufmRest/app/versioning")["alarms_version"] > version
    assert state.alarms.get(1) is not None and state.alarms.get(2) is None
    assert sim.get("/ufmRest/app/alarms/1")["event_type"] == 919
