"""The real daemon SIGKILLed at the moments a restart used to lose or repeat what it did (issue 20): right after a
UFM action was posted (UFM carried it out, the daemon never had the answer: the cycle's findings and decisions
recorded, its side effects under way), and between the cycle that counted a
switch's cable findings and the one that completes its switch fault. Each test fails without its fix."""

from __future__ import annotations

import signal
import time
from contextlib import ExitStack
from pathlib import Path

import pytest
from daemon_support import BOUND, HTTP, Daemon, daemon, live

from fabric import wiring
from fabric.remediation.domain import CONVERGE_RULE, ActionKind, ComponentId, Lifecycle
from fabric.remediation.signals import link_id
from fabric.simulator.driver import SimulatorDriver
from fabric.store.records import IntentState
from topology.generate import PRESETS, fat_tree

CABLE = "core01-01/1"


def _sim_state(sim: SimulatorDriver) -> dict[str, object]:
    return dict(HTTP.get(f"{sim.url}/simulator/state", timeout=30).json())


def _wait_sim(sim: SimulatorDriver, what: str, check: object) -> dict[str, object]:
    deadline = time.monotonic() + BOUND
    while time.monotonic() < deadline:
        state = _sim_state(sim)
        if callable(check) and check(state):
            return state
        time.sleep(0.02)
    raise AssertionError(f"the simulator never showed {what}: {_sim_state(sim)}")


def _port_actions(sim: SimulatorDriver) -> int:
    """``POST /actions`` the simulated UFM has received (each is one job)."""
    return int(str(_sim_state(sim)["jobs"]))


@pytest.mark.parametrize("hourly_limit", [1, 20], ids=["hourly-limit-reached", "room-in-the-hour"])
def test_a_disable_whose_job_runs_through_a_sigkill_is_settled_by_the_job_not_rolled_back(
        hourly_limit: int, tiny_plan: Path, tmp_path: Path) -> None:
    """SIGKILLed after UFM took the disable and before its answer came back: the intent has no job id. The restart
    must neither roll it back while the job runs (the component was then deferred, with the hour full, while UFM
    went on to disable the port), nor post the disable a second time (with room in the hour)."""
    with live(tiny_plan, tmp_path, extra=f"\n[guard]\nhourly_limit = {hourly_limit}\n") as setup:
        sim, config, db, port = setup.sim, setup.config, setup.db, setup.port
        with daemon(config, port, tmp_path / "first.log") as first:
            first.wait_for("a first cycle", lambda: first.cycles() >= 1)
            # The disable's job runs for two simulated minutes, and its POST is carried out at once but answered
            # only after 30 real seconds: the daemon is killed while it waits for the answer.
            sim.inject(fault="job_stall", count=1, runs_for="120s")
            sim.inject(fault="api", endpoint="/actions", method="POST", mode="late", delay=30, requests=1)
            sim.inject(fault="flap", link=CABLE, cycles=5, period="20s")
            sim.advance(300)
            _wait_sim(sim, "the disable's job", lambda s: s["jobs"] == 1)
            first.process.send_signal(signal.SIGKILL)
            first.process.wait(BOUND)
        with daemon(config, port, tmp_path / "second.log") as second:
            second.wait_for("ready", lambda: second.get("/readyz").status_code == 200)
            cycles = second.cycles()
            second.wait_for("a cycle after start-up", lambda: second.cycles() >= cycles + 1)
            sim.advance(180)  # the job completes: UFM disables the port
            _settled(second, sim)
            status = second.get("/status").json()
            assert second.signal(signal.SIGTERM) == 0
        assert _port_actions(sim) == 1, "the disable was posted again"
    with wiring.open_existing_store(f"sqlite:///{db}", fabric="test") as store:
        component = _component(CABLE)
        record = store.get_component(component)
        intents = [i for i in store.intents(component=component) if i.kind is ActionKind.DISABLE]
        decisions = [d.action for d in store.decisions(component=component)]
        findings = store.findings()
    assert record is not None and record.lifecycle in (Lifecycle.DISABLED, Lifecycle.AWAITING_REPAIR), (record, status)
    assert [i.state for i in intents] == [IntentState.DONE], intents
    assert [a.kind for a in decisions if a.kind is ActionKind.DISABLE] == [ActionKind.DISABLE], decisions
    assert not [a for a in decisions if a.rule == CONVERGE_RULE], decisions
    # The cycle killed had recorded its findings and decisions: its events are not counted again after the restart.
    counted = [event for finding in findings for event in finding.evidence]
    assert len(counted) == len(set(counted)), findings
    assert not [a for a in decisions if a.kind is ActionKind.COMMENT], decisions


def _settled(running: Daemon, sim: SimulatorDriver) -> None:
    """Cycles until UFM shows the port disabled and the daemon has no write in flight."""
    def done() -> bool:
        cycles = running.cycles()
        running.wait_for("one more cycle", lambda: running.cycles() > cycles)
        disabled = _sim_state(sim)["disabled_ports"]
        return bool(disabled) and running.metric("fabric_writes_pending") == 0
    running.wait_for("UFM's port disabled and nothing in flight", done)


def _component(end: str) -> ComponentId:
    """The component of the planned cable with ``end`` (``device/port``)."""
    plan = fat_tree(PRESETS["tiny"])
    device, _, number = end.partition("/")
    cable = next(c for c in plan.cables if any(e.device == device and e.port == number for e in c.key))
    return link_id(cable.key)


SPINE = "pod01-spine01"
UPLINKS = [f"{SPINE}/{port}" for port in (5, 6, 7, 8)]


@pytest.mark.parametrize("stop", [None, signal.SIGTERM, signal.SIGKILL], ids=["no-restart", "sigterm", "sigkill"])
def test_a_switch_fault_spanning_a_restart_is_one_switch_ticket(stop: signal.Signals | None, tiny_plan: Path,
                                                              tmp_path: Path) -> None:
    """Four critical-BER cables of one spine, 80 s apart: one switch fault and one switch ticket, whether or not
    the daemon is stopped (a deploy) or killed after the second; the correlation's window used to live only in
    memory, and the restart disabled or deferred the last two cables one by one."""
    with live(tiny_plan, tmp_path) as setup, ExitStack() as lives:
        sim, config, db, port = setup.sim, setup.config, setup.db, setup.port
        running = lives.enter_context(daemon(config, port, tmp_path / "first.log"))
        running.wait_for("a first cycle", lambda: running.cycles() >= 1)
        for index, uplink in enumerate(UPLINKS):
            if index == 2 and stop is not None:
                running.process.send_signal(stop)
                running.process.wait(BOUND)
                running = lives.enter_context(daemon(config, port, tmp_path / "second.log"))
            _critical_ber(running, sim, uplink)
        last = running
        last.wait_for("the switch fault", lambda: last.get("/status").json()["components"].get("ticketed", 0) >= 1)
        cycles = last.cycles()
        last.wait_for("two more cycles", lambda: last.cycles() >= cycles + 2)
        assert last.signal(signal.SIGTERM) == 0
    with wiring.open_existing_store(f"sqlite:///{db}", fabric="test") as store:
        switch_faults = [f for f in store.findings() if f.rule == "switch_fault"]
        decisions = [d.action for d in store.decisions()]
    assert [str(f.component) for f in switch_faults] == [f"switch:{SPINE}"], switch_faults
    ticketed = [a for a in decisions if a.kind is ActionKind.TICKET]
    assert [str(a.component) for a in ticketed if a.component.kind.value == "switch"] == [f"switch:{SPINE}"]
    # The cables found before the switch's fault was known are acted on as they came (one disabled, two deferred
    # by the tiny fabric's cap of one); the fourth completes the fault and is folded into it.
    shown = "\n".join(f"{a.at:%H:%M:%S} {a.kind} {a.component} {a.rule} {a.reason[:80]}" for a in decisions)
    assert len([a for a in decisions if a.kind in (ActionKind.DISABLE, ActionKind.DEFER)]) == 3, shown
    last = _component(UPLINKS[-1])
    assert {a.kind for a in decisions if a.component == last} == {ActionKind.RECORD}, shown
    assert all(a.reason.startswith("folded into") for a in decisions if a.component == last), shown


def _critical_ber(running: Daemon, sim: SimulatorDriver, port: str) -> None:
    """A critical BER on ``port``, 80 simulated seconds, and the daemon's finding on it."""
    running.wait_for("ready", lambda: running.get("/readyz").status_code == 200)
    found = running.metric("fabric_findings_total", rule="ber_critical")
    sim.inject(fault="ber", port=port, escalate_after=0)
    sim.advance(80)
    running.wait_for(f"the finding on {port}", lambda: running.metric("fabric_findings_total",
                                                                      rule="ber_critical") > found)


def test_a_stuck_job_is_not_doubled_by_the_retry(tiny_plan: Path, tmp_path: Path) -> None:
    """A disable's job still Running past the write's deadline is an attempt UFM did not confirm, but while UFM
    still runs it a retry would be a second job on one port: nothing is posted until the job ends. Here it
    completes after twenty simulated minutes, and the port is disabled by that one job."""
    with live(tiny_plan, tmp_path) as setup:
        sim = setup.sim
        with daemon(setup.config, setup.port, tmp_path / "daemon.log") as running:
            running.wait_for("a first cycle", lambda: running.cycles() >= 1)
            sim.inject(fault="job_stall", count=1, runs_for="20m")
            sim.inject(fault="flap", link=CABLE, cycles=5, period="20s")
            sim.advance(300)
            _wait_sim(sim, "the disable's job", lambda s: s["jobs"] == 1)
            for _ in range(8):  # past the job's deadline (5 min) and the retry's backoff (1 min), in steps
                cycles = running.cycles()
                running.wait_for("a cycle", lambda: running.cycles() > cycles)  # noqa: B023
                sim.advance(120)
            assert _port_actions(sim) == 1, "a second disable was posted while the first job ran"
            sim.advance(300)  # the job completes
            _settled(running, sim)
            assert running.signal(signal.SIGTERM) == 0
        assert _port_actions(sim) == 1
