"""The reset ladder end to end: the engine against a simulated UFM over HTTP resets a faulty link's port (an intent,
``POST /actions`` reset, settled by its job, told to UFM's event log), is not fooled by the reset's own link-down and
up, and takes the link out with a ticket when the fault persists; a reset UFM does not carry out takes it out too."""

from __future__ import annotations

from pathlib import Path

import httpx
from engine_support import Rig, restart, rig

from fabric.controller.engine import CycleReport
from fabric.remediation.domain import ActionKind, ComponentId, Lifecycle
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
