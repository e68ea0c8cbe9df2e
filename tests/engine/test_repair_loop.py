"""The repair loop against a simulated UFM over HTTP: a resolved ticket re-enables the link, the link must come up
as planned (else it is backed out), a clean probation ends healthy with a closing comment, a finding on probation
is a strike, and the last strike quarantines."""

from __future__ import annotations

from pathlib import Path

from engine_support import Rig, restart, rig

from fabric.remediation.domain import ActionKind, ComponentId, Lifecycle
from fabric.remediation.policy import LINK_CHECK
from tickets.base import TicketStatus
from topology.generate import PRESETS, fat_tree

TINY = fat_tree(PRESETS["tiny"])
CABLE = "core01-01/1"


def kinds(actions: list[object]) -> list[str]:
    return [a.kind.value for a in actions]  # type: ignore[attr-defined]


def flap_out(r: Rig) -> tuple[ComponentId, str, str]:
    """Flap the cable until automation disables it: its component, UFM port and ticket key."""
    r.inject(fault="flap", link=CABLE, cycles=5, period="20s")
    r.advance(30)
    r.cycle()
    r.advance(270)
    report = r.cycle()
    disable = next(a for a in report.actions if a.kind is ActionKind.DISABLE)
    assert disable.component is not None and r.engine.view is not None
    port = r.engine.view.port_to_act_on(disable.component)
    assert port is not None and r.port_state(port) == "Disabled"
    ticket = r.tickets.list(TicketStatus.OPEN)[0].key
    return disable.component, port, ticket


def lifecycle(r: Rig, component: ComponentId) -> Lifecycle:
    record = r.store.get_component(component)
    assert record is not None
    return record.lifecycle


def repair(r: Rig, ticket: str) -> None:
    r.tickets.resolve(ticket, "replaced the transceiver")
    assert kinds(r.cycle().actions) == ["enable"]


def test_a_repair_whose_link_comes_back_narrow_is_backed_out_and_stays_awaiting_repair(tmp_path: Path) -> None:
    with rig(TINY, tmp_path) as r:
        component, port, ticket = flap_out(r)
        r.inject(fault="degrade", link=CABLE, width="1x")  # the bad module stays: the link trains at 1x
        r.cycle()
        repair(r, ticket)
        assert r.port_state(port) != "Disabled" and lifecycle(r, component) is Lifecycle.PROBATION
        r.advance(60)
        waiting = r.cycle()  # within link_up_wait (2 min): UFM is given time to train the link
        assert not [a for a in waiting.actions if a.kind is not ActionKind.RECORD], waiting.actions
        r.advance(90)
        report = r.cycle()
        assert report.repairs_backed_out == 1
        backed = [a for a in report.actions if a.rule == LINK_CHECK]
        assert kinds(backed) == ["disable", "reopen"], report.actions
        assert "the link came up at 1x/NDR instead of 4x/NDR" in backed[1].reason
        assert "backed out" in backed[1].reason
        assert r.port_state(port) == "Disabled"
        assert lifecycle(r, component) is Lifecycle.AWAITING_REPAIR
        # The same ticket is open again, with what UFM showed; nothing is re-enabled until it is resolved again.
        assert [t.key for t in r.tickets.list(TicketStatus.OPEN)] == [ticket]
        assert any("1x/NDR instead of 4x/NDR" in body for _, body in r.tickets.comments(ticket))
        record = r.store.get_component(component)
        assert record is not None and record.strikes == 1  # the repair failed, the link did not: no strike
        r.advance(60)
        assert not [a for a in r.cycle().actions if a.kind is ActionKind.ENABLE]


def test_a_good_repair_is_confirmed_and_a_clean_soak_ends_healthy_with_a_closing_comment(tmp_path: Path) -> None:
    with rig(TINY, tmp_path) as r:
        component, port, ticket = flap_out(r)
        repair(r, ticket)
        r.advance(30)
        confirmed = r.cycle()
        assert [(a.kind, a.rule) for a in confirmed.actions] == [(ActionKind.RECORD, LINK_CHECK)]
        assert "up at 4x/NDR as planned" in confirmed.actions[0].reason
        for _ in range(4):  # clean cycles through the probation (2 h by default): nothing is done, nothing said
            r.advance(25 * 60)
            assert r.cycle().actions == []
            assert lifecycle(r, component) is Lifecycle.PROBATION
        r.advance(30 * 60)
        soak = r.cycle()
        assert [(a.kind, a.reason) for a in soak.actions] == [(ActionKind.COMMENT, "clean soak of 2h: healthy")]
        assert lifecycle(r, component) is Lifecycle.HEALTHY and r.port_state(port) != "Disabled"
        assert r.tickets.comments(ticket)[-1][1] == "clean soak of 2h: healthy"
        assert r.tickets.list(TicketStatus.OPEN) == []


def test_a_finding_on_probation_disables_again_reopens_and_the_last_strike_quarantines(tmp_path: Path) -> None:
    with rig(TINY, tmp_path) as r:
        component, port, ticket = flap_out(r)
        for strike in (2, 3):
            repair(r, ticket)
            r.advance(30)
            r.cycle()  # confirmed: up as planned
            r.advance(20 * 60)  # past the flaps the re-enable itself caused (the detectors' own-action window)
            r.cycle()
            r.inject(fault="flap", link=CABLE, cycles=5, period="20s")
            r.advance(30)
            r.cycle()
            r.advance(270)
            report = r.cycle()
            record = r.store.get_component(component)
            assert record is not None and record.strikes == strike
            assert r.port_state(port) == "Disabled"
            assert [t.key for t in r.tickets.list(TicketStatus.OPEN)] == [ticket], "the same ticket, reopened"
            if strike < 3:
                assert kinds([a for a in report.actions if a.component == component]) == ["disable", "reopen"]
                assert lifecycle(r, component) is Lifecycle.AWAITING_REPAIR
        assert lifecycle(r, component) is Lifecycle.QUARANTINED
        r.tickets.resolve(ticket, "replaced it again")
        r.cycle()
        assert r.port_state(port) == "Disabled", "a quarantined link waits for an operator"


def test_a_confirmation_survives_a_restart(tmp_path: Path) -> None:
    with rig(TINY, tmp_path) as r:
        component, _, ticket = flap_out(r)
        repair(r, ticket)
        r.advance(30)
        assert [a.rule for a in r.cycle().actions] == [LINK_CHECK]
        restart(r)
        r.advance(30)
        assert r.cycle().actions == [], "read back from the decision log: not confirmed twice"
        assert lifecycle(r, component) is Lifecycle.PROBATION
