"""The engine against a simulated UFM over HTTP: the scenarios operators care about."""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from engine_support import disabled_ports, rig

from fabric.remediation.domain import ActionKind, ComponentId, ComponentKind, Lifecycle
from fabric.remediation.rules import RuleSettings
from fabric.remediation.signals import link_id
from tickets.base import TicketStatus
from topology.generate import PRESETS, fat_tree
from topology.model import End

TINY = fat_tree(PRESETS["tiny"])


def spine_core(plan_cable_end: str) -> End:
    device, _, port = plan_cable_end.partition("/")
    return End(device, port)


def test_flapping_spine_core_cable_is_disabled_and_ticketed(tmp_path: Path) -> None:
    with rig(TINY, tmp_path) as r:
        r.inject(fault="flap", link="core01-01/1", cycles=5, period="20s")
        r.advance(30)
        early = r.cycle()
        assert not [a for a in early.actions if a.kind is ActionKind.DISABLE]  # one cycle so far, and unsettled
        r.advance(270)
        report = r.cycle()
        kinds = [a.kind for a in report.actions]
        assert kinds == [ActionKind.DISABLE, ActionKind.TICKET], report.actions
        assert report.failed == [] and report.executed == 2
        component = report.actions[0].component
        assert component is not None and "core01-01/1" in component.name
        # UFM really disabled the spine side of the cable, and one ticket is open for it.
        port = r.engine.view.port_to_act_on(component) if r.engine.view else None
        assert port is not None and r.port_state(port) == "Disabled"
        open_tickets = r.tickets.list(TicketStatus.OPEN)
        assert len(open_tickets) == 1 and str(component) in open_tickets[0].summary
        stored = r.store.get_component(component)
        assert stored is not None and stored.lifecycle is Lifecycle.AWAITING_REPAIR
        # Idempotent: another cycle with nothing new changes nothing.
        again = r.cycle()
        assert again.actions == [] and len(r.tickets.list()) == 1
        # The technician resolves the ticket: the port comes back, on probation.
        r.tickets.resolve(open_tickets[0].key, "replaced the transceiver")
        repaired = r.cycle()
        assert [a.kind for a in repaired.actions] == [ActionKind.ENABLE]
        assert r.port_state(port) != "Disabled"
        back = r.store.get_component(component)
        assert back is not None and back.lifecycle is Lifecycle.PROBATION


def test_single_link_down_is_only_recorded(tmp_path: Path) -> None:
    with rig(TINY, tmp_path) as r:
        r.inject(fault="link_down", link="core01-01/1")
        r.advance(300)
        r.cycle()
        r.advance(240)  # nine minutes down: below down_ticket_after (10 min)
        report = r.cycle()
        assert not [a for a in report.actions if a.kind in (ActionKind.DISABLE, ActionKind.TICKET)]
        assert r.tickets.list() == []


def test_a_link_down_for_ten_minutes_is_disabled_and_ticketed(tmp_path: Path) -> None:
    with rig(TINY, tmp_path) as r:
        r.inject(fault="link_down", link="core01-01/1")
        r.advance(300)
        assert not [a for a in r.cycle().actions if a.kind is not ActionKind.RECORD]
        r.advance(330)
        report = r.cycle()
        assert [(a.kind, a.rule) for a in report.actions if a.kind is not ActionKind.RECORD] == [
            (ActionKind.DISABLE, "link_down"), (ActionKind.TICKET, "link_down")]
        # It was down already: only the capacity check is moot; the cap and the hourly rate count it.
        other = next(c.key for c in TINY.cables if c.a.device == "pod01-leaf01" and "spine" in c.b.device)
        figures = r.engine.guard.verdict(other, r.state.now()).figures
        assert (figures["disabled"], figures["disables_last_hour"]) == (1, 1)
        assert [t.status for t in r.tickets.list()] == [TicketStatus.OPEN]


def test_host_and_switch_reboots_disable_nothing(tmp_path: Path) -> None:
    with rig(TINY, tmp_path) as r:
        r.inject(fault="host_reboot", count=8, stagger="10s", downtime="4m")
        r.inject(fault="switch_reboot", switch="pod01-spine02", downtime="3m")
        explained = []
        for _ in range(4):
            r.advance(180)
            report = r.cycle()
            assert not [a for a in report.actions if a.kind in (ActionKind.DISABLE, ActionKind.DEFER)], report.actions
            explained += report.explained
        assert explained, "the link downs were attributed to the reboots"
        assert all(("node_down" in e.reason or "switch" in e.reason) for e in explained)
        assert r.engine.detectors.explained == []  # handed over with each cycle's report: nothing piles up


@pytest.mark.parametrize("down_event", [False, True], ids=["1312 only", "907 first"])
def test_a_switch_reboot_reported_when_the_switch_is_back_disables_nothing(tmp_path: Path, down_event: bool) -> None:
    """UFM raises 1312 when the switch is back, minutes after its links went down: a cable of it that blipped
    earlier must not become a flap (2 down/up cycles, 190 s down) before the 1312 arrives to explain the reboot."""
    with rig(TINY, tmp_path) as r:
        r.inject(fault="flap", link="pod01-spine02/1", cycles=1, period="20s")
        r.advance(60)
        r.inject(fault="switch_reboot", switch="pod01-spine02", downtime="3m", down_event=down_event,
                 rebooted_after="60s")
        actions, explanations = [], []
        for _ in range(8):
            r.advance(60)
            report = r.cycle()
            actions += report.actions
            explanations += report.explained
        taken = [a for a in actions if a.kind in (ActionKind.DISABLE, ActionKind.DEFER)]
        assert taken == [] and disabled_ports(r) == []
        explained = {e.component for e in explanations}
        assert len(explained) == 8, "all of spine02's cables on tiny"
        assert all("pod01-spine02" in e.reason for e in explanations)
        switch_tickets = [a for a in actions if a.kind is ActionKind.TICKET]
        assert [a.rule for a in switch_tickets] == (["switch_down"] if down_event else [])


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    with rig(TINY, tmp_path, dry_run=True) as r:
        r.inject(fault="flap", link="core01-01/1", cycles=5, period="20s")
        r.advance(300)
        report = r.cycle()
        assert ActionKind.DISABLE in [a.kind for a in report.actions]
        assert all(a.dry_run for a in report.actions)
        assert report.executed == 0 and r.tickets.list() == []
        ports = httpx.get(f"{r.url}/ufmRest/resources/ports", auth=("admin", "123456"), timeout=30).json()
        assert Counter(p["physical_state"] for p in ports)["Disabled"] == 0
        assert r.store.unfinished_intents() == [] and r.store.intents() == []
        decisions = r.store.decisions()
        assert any(d.action.kind is ActionKind.DISABLE and d.action.dry_run for d in decisions)


def test_plan_link_ids_match_simulated_events() -> None:
    # The cable the scenarios name exists in the plan under the id the signals use.
    ids = {link_id(c.key) for c in TINY.cables}
    assert any("core01-01/1|" in i.name or "|core01-01/1" in i.name for i in ids)


H100 = fat_tree(PRESETS["h100-4k"])


def test_critical_ber_on_ten_uplinks_of_one_leaf_respects_the_guard(tmp_path: Path) -> None:
    # Ten uplinks of one leaf at once are the leaf's fault (below): here the correlation is out of the way, so
    # that each cable meets the guard.
    with rig(H100, tmp_path, rules=RuleSettings(switch_fault_cables=11)) as r:
        for port in range(33, 43):
            r.inject(fault="ber", port=f"pod03-leaf05/{port}", escalate_after="30s")
        r.advance(120)
        report = r.cycle()
        counts = Counter(a.kind for a in report.actions)
        # 1,024 planned paths to core, 768 required (c = 0.75), 32 per uplink: 8 may go, 2 are deferred.
        assert (counts[ActionKind.DISABLE], counts[ActionKind.DEFER], counts[ActionKind.TICKET]) == (8, 2, 10)
        assert report.failed == []
        assert r.engine.guard.paths["pod03-leaf05"] == 768
        deferred = [a for a in report.actions if a.kind is ActionKind.DEFER]
        assert all("pod03-leaf05 would keep 736 of 1024" in a.reason for a in deferred)
        assert len(r.tickets.list(TicketStatus.OPEN)) == 10


def test_critical_ber_on_all_core_uplinks_of_one_spine_is_one_switch_fault(tmp_path: Path) -> None:
    """32 cables of one spine in the same minute are the spine (its optics cage, ASIC or firmware), not 32 bad
    cables: one switch ticket listing them, no cable disabled, the breaker not tripped (it was: 20 cables
    disabled, the hourly limit, 4 deferred, then the storm breaker)."""
    spine = "pod01-spine01"
    uplinks = [c for c in H100.cables if spine in (c.a.device, c.b.device) and "core" in f"{c.a.device}{c.b.device}"]
    assert len(uplinks) == 32
    with rig(H100, tmp_path) as r:
        for port in range(33, 65):
            r.inject(fault="ber", port=f"{spine}/{port}", escalate_after="30s")
        r.advance(120)
        report = r.cycle()
        counts = Counter(a.kind for a in report.actions)
        assert (counts[ActionKind.DISABLE], counts[ActionKind.DEFER], counts[ActionKind.HALT]) == (0, 0, 0)
        [ticket] = [a for a in report.actions if a.kind is ActionKind.TICKET]
        assert (ticket.rule, str(ticket.component)) == ("switch_fault", f"switch:{spine}")
        assert all(str(link_id(c.key)).removeprefix("link:") in ticket.reason for c in uplinks)
        assert (report.switch_faults, report.folded) == (1, 96), "ber_high, symbol and effective critical BER x 32"
        folded = [a for a in report.actions if a.kind is ActionKind.RECORD]
        assert len(folded) == 96 and all(f"folded into the switch_fault of {spine}" in a.reason for a in folded)
        [fault] = [f for f in report.findings if f.rule == "switch_fault"]
        assert len(fault.evidence) == 32 * 4, "918, 916, 917 and 915 of each cable"
        assert disabled_ports(r) == [] and not r.store.breaker_state().halted
        [open_ticket] = r.tickets.list(TicketStatus.OPEN)
        assert spine in open_ticket.summary
        record = r.store.get_component(ComponentId(ComponentKind.SWITCH, spine))
        assert record is not None and (record.lifecycle, record.rule) == (Lifecycle.TICKETED, "switch_fault")
        # While its ticket is open, a new finding on one of its cables is the switch's too.
        r.inject(fault="ber", port=f"{spine}/33", escalate_after=None)
        r.advance(60)
        later = r.cycle()
        assert [a.kind for a in later.actions] == [ActionKind.RECORD] and later.folded == 1
        assert "folded into the open switch_fault" in later.actions[0].reason
        assert disabled_ports(r) == []


def test_storm_of_200_components_halts_within_the_cap(tmp_path: Path) -> None:
    with rig(H100, tmp_path) as r:
        ports = [f"pod{pod:02d}-leaf{leaf:02d}/{port}" for pod in range(1, 17) for leaf in range(1, 9)
                 for port in (33, 45)][:200]  # 200 distinct cables across the fabric
        for port in ports:
            r.inject(fault="ber", port=port, escalate_after="10s")
        r.advance(60)
        report = r.cycle()
        counts = Counter(a.kind for a in report.actions)
        assert counts[ActionKind.HALT] == 1
        assert counts[ActionKind.DISABLE] <= r.engine.guard.cap
        assert r.store.breaker_state().halted
        storm_tickets = [t for t in r.tickets.list() if "the fabric" in t.summary]
        assert len(storm_tickets) == 1
        # Nothing more is written to UFM while halted.
        before = len(r.store.intents(limit=10_000))
        r.inject(fault="ber", port="pod01-leaf01/50", escalate_after="1s")
        r.advance(60)
        quiet = r.cycle()
        assert not [a for a in quiet.actions if a.kind in (ActionKind.DISABLE, ActionKind.ENABLE)]
        assert len(r.store.intents(limit=10_000)) == before


def test_unchanged_ufm_is_not_read_again(tmp_path: Path) -> None:
    with rig(TINY, tmp_path) as r:
        reads: list[str] = []
        topology_list = r.client.topology_list

        async def counting_reads(name: str) -> object:
            reads.append(name)
            return await topology_list(name)

        r.engine.ufm = type("Counting", (), {"__getattr__": lambda _, n: getattr(r.client, n),
                                             "topology_list": staticmethod(counting_reads)})()
        r.cycle()
        r.cycle()
        assert reads == []  # versioning unchanged since start(): no 24k-port read on a quiet fabric
        r.inject(fault="link_down", link="core01-01/1")
        r.advance(5)
        r.cycle()
        assert sorted(reads) == ["links", "ports", "systems"], reads  # read again, each once


def test_a_silence_keeps_maintenance_from_becoming_findings(tmp_path: Path) -> None:
    with rig(TINY, tmp_path) as r:
        r.store.add_silence("link:core01-01/*", reason="re-cabling core01-01", created_by="alice",
                            duration=timedelta(hours=1))
        r.inject(fault="flap", link="core01-01/1", cycles=5, period="20s")
        r.advance(300)
        report = r.cycle()
        assert not [a for a in report.actions if a.kind in (ActionKind.DISABLE, ActionKind.TICKET)]
        assert any("silence" in e.reason for e in report.explained)


class OffTheLoop:
    """A ticket backend that notes every call made on a thread running an event loop: a blocking backend (Jira
    over HTTP) called there would stall the loop the engine shares with the API and the webhooks."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.on_loop = inner, []

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.inner, name)
        if not callable(attribute):
            return attribute

        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                asyncio.get_running_loop()
                self.on_loop.append(name)
            except RuntimeError:
                pass
            return attribute(*args, **kwargs)
        return call


def test_the_engine_never_calls_the_ticket_backend_on_its_event_loop(tmp_path: Path) -> None:
    with rig(TINY, tmp_path) as r:
        watched = OffTheLoop(r.tickets)
        r.engine.ticketing.backend = watched
        r.inject(fault="flap", link="core01-01/1", cycles=5, period="20s")
        r.advance(300)
        assert [a.kind for a in r.cycle().actions] == [ActionKind.DISABLE, ActionKind.TICKET]
        [ticket] = r.tickets.list(TicketStatus.OPEN)
        r.tickets.resolve(ticket.key, "replaced the transceiver")
        assert [a.kind for a in r.cycle().actions] == [ActionKind.ENABLE]  # found by polling the backend
        assert watched.on_loop == []


def test_every_open_ticket_follows_the_backend_whatever_its_component(tmp_path: Path) -> None:
    """A ticket resolved while its component is quarantined does not stay "open" in the store for ever."""
    from engine_support import restart

    from fabric.remediation.domain import ComponentRecord
    from fabric.store.records import TicketState

    with rig(TINY, tmp_path) as r:
        cable = next(c for c in TINY.cables if c.a.device == "pod01-spine01" and c.b.device == "core01-01")
        component = link_id(cable.key)
        r.store.put_component(component,
                              ComponentRecord(Lifecycle.QUARANTINED, r.state.now(), "flap", "3 strikes", strikes=3))
        restart(r)
        r.cycle()  # UFM converged (the cable disabled) and a ticket opened for the quarantine
        [ticket] = r.tickets.list(TicketStatus.OPEN)
        r.tickets.resolve(ticket.key, "replaced, but the operator has not cleared it")
        r.cycle()
        # The store follows the backend; the component stays quarantined (only a clear releases it), so it gets a
        # ticket again: a held component always has one.
        assert [t.state for t in r.store.tickets()] == [TicketState.RESOLVED, TicketState.OPEN]
        record = r.store.get_component(component)
        assert record is not None and record.lifecycle is Lifecycle.QUARANTINED


def test_a_ticket_closed_without_a_repair_brings_nothing_back(tmp_path: Path) -> None:
    from fabric.store.records import TicketState

    with rig(TINY, tmp_path) as r:
        r.inject(fault="flap", link="core01-01/1", cycles=5, period="20s")
        r.advance(300)
        report = r.cycle()
        [disabled] = [a.component for a in report.actions if a.kind is ActionKind.DISABLE]
        [ticket] = r.tickets.list(TicketStatus.OPEN)
        r.tickets.close(ticket.key, "duplicate of another ticket")
        after = r.cycle()
        assert not [a for a in after.actions if a.kind is ActionKind.ENABLE]  # closed is not repaired
        port = r.engine.view.port_to_act_on(disabled) if r.engine.view and disabled else None
        assert port is not None and r.port_state(port) == "Disabled"
        states = [t.state for t in r.store.tickets()]
        assert states == [TicketState.CLOSED, TicketState.OPEN]  # and it has a ticket again
        assert len(r.tickets.list(TicketStatus.OPEN)) == 1


def test_each_port_write_is_reported_in_ufms_own_event_log_and_not_counted_back(tmp_path: Path) -> None:
    with rig(TINY, tmp_path) as r:
        r.inject(fault="flap", link="core01-01/1", cycles=5, period="20s")
        r.advance(300)
        report = r.cycle()
        [disable] = [a for a in report.actions if a.kind is ActionKind.DISABLE]
        port = r.engine.view.port_to_act_on(disable.component) if r.engine.view and disable.component else None
        events = httpx.get(f"{r.url}/ufmRest/app/events", auth=("admin", "123456"), timeout=30).json()
        notes = [e for e in events if e["event_type"] == "551"]
        assert len(notes) == 1 and f"disable {port} ({disable.component}), flap:" in notes[0]["description"]
        r.advance(60)
        again = r.cycle()
        assert again.findings == [] and r.engine.pipeline.mapper.skipped["event type not used"] >= 1
