"""Kill the engine between an intent and its outcome, restart it, and check that the store, UFM and the ticket
system agree, with exactly one ticket."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from engine_support import restart, rig

from fabric.controller.engine import Engine
from fabric.remediation.domain import CONVERGE_RULE, ActionKind, ComponentRecord, Lifecycle
from fabric.store import TicketWriteKind
from fabric.store.records import IntentState
from tickets.base import Ticket, TicketStatus
from topology.generate import PRESETS, fat_tree

TINY = fat_tree(PRESETS["tiny"])


class Crash(BaseException):
    """The process dies here (a BaseException, so no handler on the way up can swallow it)."""


class CrashingUfm:
    """The real client, dying before it sends a port action, or after UFM accepted it (waiting for its job)."""

    def __init__(self, inner: Any, when: str) -> None:
        self.inner, self.when = inner, when

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def take_out(self, port: str, method: Any) -> Any:
        if self.when == "before_ufm":
            raise Crash
        return await self.inner.take_out(port, method)

    async def put_back(self, port: str, method: Any) -> Any:
        if self.when == "before_ufm":
            raise Crash
        return await self.inner.put_back(port, method)

    async def post_port_action(self, port: str, action: str) -> Any:  # a reset's
        if self.when == "before_ufm":
            raise Crash
        return await self.inner.post_port_action(port, action)

    async def await_jobs(self, job_ids: Sequence[str], within: float) -> Any:
        if self.when == "after_ufm":
            raise Crash
        return await self.inner.await_jobs(job_ids, within)


class CrashingTickets:
    """The real ticket backend, dying before or after it creates a ticket."""

    def __init__(self, inner: Any, when: str) -> None:
        self.inner, self.when = inner, when

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def open(self, dedup_key: str, summary: str, description: str, labels: Sequence[str] = (), *,
             severity: int | None = None) -> Ticket:
        if self.when == "before_ticket":
            raise Crash
        ticket = self.inner.open(dedup_key, summary, description, labels, severity=severity)
        if self.when == "after_ticket":
            raise Crash
        return ticket


@pytest.mark.parametrize("when", ["before_ufm", "after_ufm", "before_ticket", "after_ticket"])
def test_crash_then_restart_converges_with_one_ticket(tmp_path: Path, when: str) -> None:
    with rig(TINY, tmp_path) as r:
        r.engine.ufm = r.engine.writes.ufm = CrashingUfm(r.client, when)
        r.engine.ticketing.backend = CrashingTickets(r.tickets, when)
        r.inject(fault="flap", link="core01-01/1", cycles=5, period="20s")
        r.advance(300)
        with pytest.raises(Crash):
            r.cycle()
        pending = r.store.unfinished_intents()
        if when.endswith("ufm"):
            assert [p.kind for p in pending] == [ActionKind.DISABLE]
        else:  # every UFM write settled before the outbox was sent: the ticket write waits in it, as queued
            assert pending == []
            assert [e.kind for e in r.store.pending_ticket_writes()] == [TicketWriteKind.OPEN]

        engine = restart(r)
        if when == "before_ufm":
            # No answer was noted: for all the restart can tell, UFM took the POST and its job still runs, so the
            # intent stays in flight (nothing is sent again) until UFM shows no job on the port's switch, once a
            # POST on its way would have arrived (``job_wait``): then it is rolled back and reconciliation sends
            # the disable.
            assert [p.id for p in r.store.unfinished_intents()] == [pending[0].id]
            r.advance(30)
            assert [a.kind for a in r.cycle().actions] == []  # settled at the end of the cycle: rolled back
            r.advance(30)
            assert [(a.kind, a.rule) for a in r.cycle().actions] == [(ActionKind.DISABLE, CONVERGE_RULE)]
        assert r.store.unfinished_intents() == []
        if pending:
            settled = r.store.get_intent(pending[0].id)
            assert settled is not None
            # after_ufm: UFM did it, recovery waited for its job and saw the port disabled.
            assert settled.state is (IntentState.DONE if when == "after_ufm" else IntentState.ROLLED_BACK)
        r.advance(30)
        report = r.cycle()
        assert report.failed == []

        components = r.store.components()
        assert len(components) == 1
        [(component_id, component)] = components.items()
        assert component.lifecycle is Lifecycle.AWAITING_REPAIR
        port = engine.view.port_to_act_on(component_id) if engine.view else None
        assert port is not None and r.port_state(port) == "Disabled"  # UFM agrees with the store
        tickets = r.tickets.list()
        assert len(tickets) == 1 and tickets[0].status is TicketStatus.OPEN  # exactly one ticket
        assert [t.state.value for t in r.store.tickets()] == ["open"]
        # And it stays converged.
        r.advance(30)
        assert r.cycle().actions == []
        assert len(r.tickets.list()) == 1
        assert r.store.pending_ticket_writes() == []


def test_operator_clears_a_quarantined_link(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from fabric.cli.app import app
    from fabric.remediation.signals import link_id

    with rig(TINY, tmp_path) as r:
        cable = next(c for c in TINY.cables if c.a.device == "pod01-spine01" and c.b.device == "core01-01")
        component = link_id(cable.key)
        r.store.put_component(component,
                              ComponentRecord(Lifecycle.QUARANTINED, r.state.now(), "flap", "3 strikes", strikes=3))
        engine = restart(r)
        first = r.cycle()  # converges UFM to the desired state: the quarantined cable is disabled
        assert [a.kind for a in first.actions if a.kind is ActionKind.DISABLE] == [ActionKind.DISABLE]
        port = engine.view.port_to_act_on(component) if engine.view else None
        assert port is not None and r.port_state(port) == "Disabled"
        url = f"sqlite:///{tmp_path / 'fabric.db'}"
        cleared = CliRunner().invoke(app, ["components", "clear", str(component), "--reason", "new optics",
                                           "--store", url, "--fabric", "test"])
        assert cleared.exit_code == 0, cleared.output
        released = r.cycle()
        assert [a.kind for a in released.actions] == [ActionKind.ENABLE]
        assert r.port_state(port) != "Disabled"
        record = r.store.get_component(component)
        assert record is not None and record.lifecycle is Lifecycle.PROBATION and record.strikes == 0
        again = CliRunner().invoke(app, ["components", "clear", str(component), "--reason", "x", "--store", url,
                                         "--fabric", "test"])
        assert again.exit_code == 2 and "not quarantined" in again.output


def test_a_clear_requested_while_halted_waits_for_the_resume(tmp_path: Path) -> None:
    """The policy cannot release a quarantine while the breaker is halted: the request stays pending, asked again
    every cycle, and is carried out once automation resumes (it must not be marked done and forgotten)."""
    from fabric.remediation.signals import link_id
    from fabric.store.records import RequestKind

    with rig(TINY, tmp_path) as r:
        cable = next(c for c in TINY.cables if c.a.device == "pod01-spine01" and c.b.device == "core01-01")
        component = link_id(cable.key)
        r.store.put_component(component,
                              ComponentRecord(Lifecycle.QUARANTINED, r.state.now(), "flap", "3 strikes", strikes=3))
        r.store.halt("a storm")
        restart(r)
        r.store.request(RequestKind.CLEAR, component=component, reason="new optics", requested_by="alice")
        for _ in range(2):
            r.cycle()
            assert [q.kind for q in r.store.pending_requests()] == [RequestKind.CLEAR]
            record = r.store.get_component(component)
            assert record is not None and record.lifecycle is Lifecycle.QUARANTINED
        r.store.request(RequestKind.RESUME, reason="storm over", requested_by="alice")
        r.cycle()
        assert r.store.pending_requests() == []
        record = r.store.get_component(component)
        assert record is not None and record.lifecycle is Lifecycle.PROBATION


def test_restart_re_applies_the_guard_to_what_ufm_shows_up(tmp_path: Path) -> None:
    from fabric.remediation.signals import link_id

    with rig(TINY, tmp_path) as r:
        # The store says three uplinks of one leaf are out, UFM shows all three up (say, enabled by hand while
        # the daemon was down). Only one of them fits under the guard today.
        uplinks = [link_id(c.key) for c in TINY.cables if c.a.device == "pod01-leaf01" and "spine" in c.b.device]
        for component in uplinks[:3]:
            r.store.put_component(component,
                                  ComponentRecord(Lifecycle.AWAITING_REPAIR, r.state.now(), "ber_critical", "BER"))
        engine = restart(r)
        lifecycles = sorted(engine.state.components[c].lifecycle.value for c in uplinks[:3])
        assert lifecycles == ["awaiting_repair", "deferred", "deferred"]
        assert all(engine.guard.paths[leaf] >= engine.guard.minimum[leaf] for leaf in engine.guard.planned)
        r.cycle()
        ports = [engine.view.port_to_act_on(c) for c in uplinks[:3]] if engine.view else []
        assert sorted(r.port_state(p) for p in ports if p) == ["Disabled", "Link Up", "Link Up"]
        deferred = [d for d in r.store.decisions() if d.action.kind is ActionKind.DEFER]
        assert len(deferred) == 2 and "after a restart" in deferred[0].action.reason


def test_restart_counts_what_ufm_shows_disabled_before_it_rechecks_the_rest(tmp_path: Path) -> None:
    from dataclasses import replace

    from fabric.remediation.signals import link_id
    from topology.guard import GuardSettings

    with rig(TINY, tmp_path) as r:
        # One uplink on each of three leaves (capacity is no issue), a cap of two. UFM shows the two that sort
        # last disabled and the first up: counted in sort order, the first would pass the guard before the other
        # two were counted, and the restart would hold three cables out under a cap of two.
        leaves = ["pod01-leaf01", "pod01-leaf02", "pod02-leaf01"]
        chosen = sorted(link_id(next(c.key for c in TINY.cables if c.a.device == leaf and "spine" in c.b.device))
                        for leaf in leaves)
        for component in chosen:
            r.store.put_component(component,
                                  ComponentRecord(Lifecycle.AWAITING_REPAIR, r.state.now(), "ber_critical", "BER"))
        assert r.engine.view is not None
        ports = [r.engine.view.port_to_act_on(c) for c in chosen]
        for port in ports[1:]:
            assert port is not None
            r.state.fabric.set_disabled(port, True)
        settings = replace(r.engine.settings, guard=GuardSettings(cap_floor=2, cap_fraction=0.0))
        engine = Engine(r.engine.plan, r.client, r.store, r.tickets, settings, clock=r.state.now)
        r.runner.run(engine.start())
        r.engine = engine
        assert len(engine.guard.disabled) == 2
        assert [engine.state.components[c].lifecycle for c in chosen] == [
            Lifecycle.DEFERRED, Lifecycle.AWAITING_REPAIR, Lifecycle.AWAITING_REPAIR]
        r.cycle()
        assert r.port_state(ports[0] or "") == "Link Up"


def test_restart_keeps_a_quarantine_the_guard_keeps_up(tmp_path: Path) -> None:
    from fabric.remediation.signals import link_id

    with rig(TINY, tmp_path) as r:
        # Three uplinks of one leaf quarantined in the store, UFM shows them up: only one fits under the guard.
        uplinks = sorted(link_id(c.key) for c in TINY.cables if c.a.device == "pod01-leaf01" and "spine" in c.b.device)
        for component in uplinks[:3]:
            r.store.put_component(component,
                                  ComponentRecord(Lifecycle.QUARANTINED, r.state.now(), "flap", "flap", strikes=3))
        engine = restart(r)
        assert all(engine.state.components[c].lifecycle is Lifecycle.QUARANTINED for c in uplinks[:3])
        assert len(engine.guard.disabled) == 1
        assert all(engine.guard.paths[leaf] >= engine.guard.minimum[leaf] for leaf in engine.guard.planned)
        kept = [c for c in uplinks[:3] if "the guard keeps it so" in engine.state.components[c].reason]
        assert len(kept) == 2
