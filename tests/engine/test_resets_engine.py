"""The reset ladder end to end: the engine against a simulated UFM over HTTP resets a faulty link's port (an intent,
``POST /actions`` reset, settled by its job, told to UFM's event log), is not fooled by the reset's own link-down and
up, and takes the link out with a ticket when the fault persists; a reset UFM does not carry out takes it out too."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from engine_support import Rig, restart, rig
from test_crash_safety import Crash, CrashingUfm

from fabric.controller.engine import CycleReport
from fabric.remediation.domain import CONVERGE_RULE, ActionKind, ComponentId, Lifecycle
from fabric.remediation.escalation import ResetLadder
from fabric.store.records import IntentState
from tickets.base import TicketStatus
from topology.generate import PRESETS, fat_tree

TINY = fat_tree(PRESETS["tiny"])
CABLE = "core01-01/1"


def posted_actions(r: Rig) -> list[str]:
    """The port actions UFM received, oldest first."""
    return [job.action for job in r.state.jobs.all()]


def flapping_link_reset(r: Rig) -> tuple[ComponentId, str, CycleReport]:
    """A cable flaps five times: the cycle after the evidence settles resets it. Returns the link, its port and the
    cycle's report."""
    r.inject(fault="flap", link=CABLE, cycles=5, period="20s")
    r.advance(300)
    report = r.cycle()
    assert [a.kind for a in report.actions] == [ActionKind.RESET], report.actions
    link = report.actions[0].component
    assert link is not None and r.engine.view is not None
    port = r.engine.view.port_to_act_on(link)
    assert port is not None
    return link, port, report


def test_a_flapping_link_is_reset_once_then_taken_out_and_ticketed_when_it_flaps_on(tmp_path: Path) -> None:
    with rig(TINY, tmp_path, resets=ResetLadder()) as r:
        link, port, report = flapping_link_reset(r)
        # One POST /actions reset, its job completed within the cycle: the intent is done, nothing disabled.
        assert posted_actions(r) == ["reset"] and report.failed == [] and report.executed == 1
        [intent] = [i for i in r.store.intents(component=link) if i.kind is ActionKind.RESET]
        assert intent.state is IntentState.DONE and "the port was reset" in (intent.outcome or "")
        assert r.port_state(port) != "Disabled" and r.tickets.list() == []
        stored = r.store.get_component(link)
        assert stored is not None and stored.lifecycle is Lifecycle.RESET
        # UFM's own event log says what the service did, as for a disable.
        events = httpx.get(f"{r.url}/ufmRest/app/events", auth=("admin", "123456"), timeout=30).json()
        notes = [e["description"] for e in events if e["event_type"] == "551"]
        assert len(notes) == 1 and f"reset {port} ({link}), flap:" in notes[0]
        # The reset's own link-down and up (the link retrains, LinkDowned counted at both ends) are no fault.
        r.advance(60)
        quiet = r.cycle()
        assert quiet.findings == [] and quiet.actions == []
        assert any(e.component == link and e.reason.startswith("own action: ") for e in quiet.explained)
        # The fault persists: the link flaps on within its watch (after the reset's own-action window, within which
        # its link events are the reset's), and is taken out with a ticket.
        r.advance(120)
        assert r.cycle().actions == []
        r.inject(fault="flap", link=CABLE, cycles=5, period="20s")
        r.advance(240)
        out = r.cycle()
        assert [a.kind for a in out.actions] == [ActionKind.DISABLE, ActionKind.TICKET], out.actions
        assert "the fault persisted after its reset" in out.actions[0].reason
        assert posted_actions(r) == ["reset", "disable"] and r.port_state(port) == "Disabled"
        [ticket] = r.tickets.list(TicketStatus.OPEN)
        assert str(link) in ticket.summary
        stored = r.store.get_component(link)
        assert stored is not None and stored.lifecycle is Lifecycle.AWAITING_REPAIR


def test_the_evidence_a_reset_answered_never_adds_up_with_what_comes_after(tmp_path: Path) -> None:
    """The link's history starts again at its reset: one flap after it is one episode, not the sixth of a flap."""
    with rig(TINY, tmp_path, resets=ResetLadder()) as r:
        link, _, _ = flapping_link_reset(r)
        r.advance(180)  # past the reset's own-action window
        r.cycle()
        r.inject(fault="flap", link=CABLE, cycles=1, period="20s")
        for _ in range(4):
            r.advance(60)
            report = r.cycle()
            assert [f for f in report.findings if f.component == link] == [] and report.actions == []
        stored = r.store.get_component(link)
        assert stored is not None and stored.lifecycle is Lifecycle.RESET


def test_a_link_quiet_through_its_watch_is_healthy_again_and_a_restart_remembers_its_reset(tmp_path: Path) -> None:
    with rig(TINY, tmp_path, resets=ResetLadder()) as r:
        link, _, _ = flapping_link_reset(r)
        r.advance(600)
        cured = r.cycle()
        assert [(a.kind, a.rule) for a in cured.actions] == [(ActionKind.RECORD, "reset_watch")]
        stored = r.store.get_component(link)
        assert stored is not None and stored.lifecycle is Lifecycle.HEALTHY
        # A restart counts the reset again from the decision log: one of two left within the week.
        restart(r)
        assert len(r.engine.state.resets[link]) == 1
        r.inject(fault="flap", link=CABLE, cycles=5, period="20s")
        r.advance(300)
        second = r.cycle()
        assert [a.kind for a in second.actions] == [ActionKind.RESET]
        assert "reset 2 of 2" in second.actions[0].reason


def test_a_reset_ufm_does_not_carry_out_takes_the_link_out(tmp_path: Path) -> None:
    with rig(TINY, tmp_path, resets=ResetLadder()) as r:
        r.inject(fault="action_failure", count=1)
        _, port, report = flapping_link_reset(r)
        assert [f.action for f in report.failed] == ["reset"]
        out = r.cycle()
        assert [a.kind for a in out.actions] == [ActionKind.DISABLE, ActionKind.TICKET], out.actions
        assert "was not carried out" in out.actions[0].reason
        assert posted_actions(r) == ["reset", "disable"] and r.port_state(port) == "Disabled"
        assert len(r.tickets.list(TicketStatus.OPEN)) == 1


@pytest.mark.parametrize("when", ["before_ufm", "after_ufm"])
def test_a_crash_around_the_reset_loses_it_not_and_sends_it_once(tmp_path: Path, when: str) -> None:
    """Killed before the reset's POST: recovery rolls its intent back as never carried out, and reconciliation sends
    it, recorded as a convergence (the ladder counted it once). Killed while its job ran: recovery waits for the job,
    and nothing is sent again. Either way the link is watched from the reset's decision and ends healthy."""
    with rig(TINY, tmp_path, resets=ResetLadder()) as r:
        r.engine.ufm = r.engine.writes.ufm = CrashingUfm(r.client, when)
        r.inject(fault="flap", link=CABLE, cycles=5, period="20s")
        r.advance(300)
        with pytest.raises(Crash):
            r.cycle()
        [pending] = r.store.unfinished_intents()
        assert pending.kind is ActionKind.RESET
        restart(r)
        decided = [(d.action.kind, d.action.rule) for d in r.store.decisions() if d.action.kind is ActionKind.RESET]
        assert decided == [(ActionKind.RESET, "flap")]
        for _ in range(3):
            r.advance(30)
            r.cycle()
        settled = r.store.get_intent(pending.id)
        assert settled is not None
        assert settled.state is (IntentState.DONE if when == "after_ufm" else IntentState.ROLLED_BACK)
        resent = [(d.action.kind, d.action.rule) for d in r.store.decisions() if d.action.kind is ActionKind.RESET]
        assert resent == [(ActionKind.RESET, "flap"), *([(ActionKind.RESET, CONVERGE_RULE)] * (when == "before_ufm"))]
        assert posted_actions(r) == ["reset"]  # UFM was sent it once
        assert [len(times) for times in r.engine.state.resets.values()] == [1]  # counted once by the ladder
        r.advance(600)
        cured = r.cycle()
        assert [(a.kind, a.rule) for a in cured.actions] == [(ActionKind.RECORD, "reset_watch")]
        assert r.store.unfinished_intents() == [] and r.tickets.list() == []


def test_a_dry_run_decides_and_counts_the_reset_and_sends_nothing(tmp_path: Path) -> None:
    with rig(TINY, tmp_path, dry_run=True, resets=ResetLadder()) as r:
        link, _, report = flapping_link_reset(r)
        assert report.actions[0].dry_run and posted_actions(r) == [] and r.store.intents(component=link) == []
        restart(r)  # its would-be state and its count are its own, across a restart
        assert [len(times) for times in r.engine.state.resets.values()] == [1]
        r.advance(600)
        cured = r.cycle()
        assert [(a.kind, a.rule, a.dry_run) for a in cured.actions] == [(ActionKind.RECORD, "reset_watch", True)]
        assert posted_actions(r) == []
