"""``[ufm] method = "isolate"`` end to end over real HTTP: a fault taken out by marking its port unhealthy (the
cable stays up), settled by reading ``/app/unhealthy_ports``, remembered across a restart, put back the way it was
taken out; an isolation automation did not make is recorded and never undone, and counted by the guard."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from engine_support import Rig, disabled_ports, restart, rig, unhealthy_ports

from fabric.controller.reconcile import OUTSIDE_RULE
from fabric.remediation.domain import ActionKind, ComponentId, Lifecycle
from fabric.remediation.signals import link_id
from fabric.simulator.state import RequestSeen
from fabric.store.records import IntentState
from fabric.ufm.client import PortActionMethod
from tickets.base import TicketStatus
from topology.generate import PRESETS, fat_tree

TINY = fat_tree(PRESETS["tiny"])
ISOLATE = PortActionMethod.ISOLATE


def _flap(r: Rig, link: str = "core01-01/1") -> ComponentId:
    """A cable flaps until automation takes it out; returns it."""
    r.inject(fault="flap", link=link, cycles=5, period="20s")
    r.advance(300)
    [taken] = [a.component for a in r.cycle().actions if a.kind is ActionKind.DISABLE]
    assert taken is not None
    return taken


def _port(r: Rig, component: ComponentId) -> str:
    assert r.engine.view is not None
    port = r.engine.view.port_to_act_on(component)
    assert port is not None
    return port


def _listed(r: Rig) -> set[str]:
    """Every port the rig's UFM lists unhealthy, either side of each entry."""
    return {port for e in unhealthy_ports(r) for port in (e["PeerPort"], e["UnhealthyPort"]) if port != "N/A"}


def _writes_seen(r: Rig) -> list[str]:
    """The port writes UFM receives from now on (``PUT /app/unhealthy_ports``, ``POST /actions``)."""
    seen: list[str] = []

    def observe(request: RequestSeen) -> None:
        if request.prefix is not None and request.moment == "received" and request.method in ("PUT", "POST") \
                and request.path in ("/app/unhealthy_ports", "/actions"):
            seen.append(f"{request.method} {request.path}")
    r.state.request_observers.append(observe)
    return seen


def _isolate_by_hand(r: Rig, port: str) -> None:
    response = httpx.put(f"{r.url}/ufmRest/app/unhealthy_ports", auth=("admin", "123456"), timeout=30,
                         json={"ports": [port], "ports_policy": "UNHEALTHY", "action": "isolate"})
    assert response.status_code == 200


def _notes(r: Rig) -> list[str]:
    events = httpx.get(f"{r.url}/ufmRest/app/events", auth=("admin", "123456"), timeout=30).json()
    return [e["description"] for e in events if e["event_type"] == "551"]


def test_a_fault_is_taken_out_by_isolation_its_cable_staying_up_and_put_back_after_the_repair(tmp_path: Path) -> None:
    with rig(TINY, tmp_path, method=ISOLATE) as r:
        component = _flap(r)
        port = _port(r, component)
        # Listed at once (the PUT is synchronous) and settled by reading the list in the same cycle.
        assert port in _listed(r) and [e["Condition"] for e in unhealthy_ports(r)] == ["MANUAL"]
        [intent] = [i for i in r.store.intents(component=component) if i.kind is ActionKind.DISABLE]
        assert (intent.state, intent.payload["method"]) == (IntentState.DONE, "isolate")
        assert disabled_ports(r) == [] and r.port_state(port) == "Link Up"  # nothing disabled: the cable stays up
        assert any(note.startswith(f"fabric-remediation: isolate {port} ({component}), flap:") for note in _notes(r))
        r.advance(r.state.settings.sweep_seconds)  # OpenSM isolates it at its next sweep
        assert r.state.fabric.isolated == {port: None}
        r.cycle()
        record = r.store.get_component(component)
        assert record is not None and record.lifecycle is Lifecycle.AWAITING_REPAIR
        [ticket] = r.tickets.list(TicketStatus.OPEN)
        r.tickets.resolve(ticket.key, "replaced the cable")
        r.advance(30)
        assert [a.kind for a in r.cycle().actions] == [ActionKind.ENABLE]
        assert unhealthy_ports(r) == []
        assert any(note.startswith(f"fabric-remediation: restore {port} ({component})") for note in _notes(r))
        r.advance(r.state.settings.sweep_seconds)
        assert r.state.fabric.isolated == {}
        r.advance(30)
        r.cycle()
        record = r.store.get_component(component)
        assert record is not None and record.lifecycle is Lifecycle.PROBATION
        assert not r.engine.guard.disabled


def test_after_a_restart_every_isolated_port_is_still_known(tmp_path: Path) -> None:
    with rig(TINY, tmp_path, method=ISOLATE) as r:  # on this fabric the cap is one cable
        component = _flap(r)
        r.advance(3700)  # past the sliding hour: a restart that forgot the isolation would decide it afresh
        r.cycle()
        decided = len(r.store.decisions(limit=1000))
        writes = _writes_seen(r)
        engine = restart(r)
        cable = engine.context.cables[component]
        assert engine.guard.disabled == {cable} and cable in engine.guard.out
        assert engine.state.components[component].lifecycle is Lifecycle.AWAITING_REPAIR
        r.advance(60)
        assert r.cycle().actions == []
        assert len(r.store.decisions(limit=1000)) == decided and writes == []  # nothing decided or sent again
        # A second fault meets the cap the isolation holds.
        r.inject(fault="flap", link="core02-02/3", cycles=5, period="20s")
        r.advance(300)
        deferred = [a for a in r.cycle().actions if a.kind in (ActionKind.DISABLE, ActionKind.DEFER)]
        assert [a.kind for a in deferred] == [ActionKind.DEFER] and "the cap is 1" in deferred[0].reason


@pytest.mark.parametrize("method", list(PortActionMethod))
def test_an_operators_isolation_is_recorded_once_counted_and_never_undone(tmp_path: Path,
                                                                          method: PortActionMethod) -> None:
    with rig(TINY, tmp_path, method=method) as r:
        cable = next(c for c in TINY.cables if c.a.device == "pod01-leaf01" and c.a.port == "5")
        component = link_id(cable.key)
        port = _port(r, component)
        _isolate_by_hand(r, port)
        r.advance(1)  # before OpenSM's sweep: no change counter of UFM's has moved
        first = r.cycle()
        assert [(a.kind, a.rule, a.component) for a in first.actions] == [(ActionKind.RECORD, OUTSIDE_RULE,
                                                                            component)]
        assert first.ports_out_unheld == 1 and f"UFM shows {port} isolated" in first.actions[0].reason
        assert cable.key in r.engine.guard.out  # it carries no traffic: capacity counts it
        writes = _writes_seen(r)
        r.advance(30)
        assert r.cycle().actions == []  # once
        restart(r)
        assert cable.key in r.engine.guard.out
        r.advance(30)
        again = r.cycle()
        assert again.actions == [] and again.ports_out_unheld == 1  # once across a restart too
        assert port in _listed(r) and writes == []  # never undone
        assert r.store.get_component(component) is None


def test_a_port_disabled_before_the_method_became_isolate_is_still_out_and_enabled_at_its_repair(
        tmp_path: Path) -> None:
    with rig(TINY, tmp_path) as r:
        component = _flap(r)
        port = _port(r, component)
        r.advance(60)
        r.cycle()
        assert disabled_ports(r) == [port]
        r.engine.settings = replace(r.engine.settings, method=ISOLATE)
        writes = _writes_seen(r)
        engine = restart(r)
        assert engine.state.components[component].lifecycle is Lifecycle.AWAITING_REPAIR
        assert engine.guard.disabled == {engine.context.cables[component]}
        r.advance(60)
        assert r.cycle().actions == [] and writes == []  # known out: not isolated as well
        _isolate_by_hand(r, port)  # an operator isolates it too, for maintenance of their own
        writes.clear()
        [ticket] = r.tickets.list(TicketStatus.OPEN)
        r.tickets.resolve(ticket.key, "replaced the cable")
        r.advance(30)
        assert [a.kind for a in r.cycle().actions] == [ActionKind.ENABLE]
        r.advance(30)
        r.cycle()
        # Put back the way automation took it out (enabled); the operator's isolation stays.
        assert writes == ["POST /actions"] and disabled_ports(r) == [] and port in _listed(r)
        [enable] = [i for i in r.store.intents(component=component) if i.kind is ActionKind.ENABLE]
        assert (enable.state, enable.payload["method"]) == (IntentState.DONE, "disable")


class CrashAfterThePut:
    """The real client; the process dies once UFM has answered an isolation, before the answer is noted."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def take_out(self, port: str, method: PortActionMethod) -> Any:
        await self.inner.take_out(port, method)
        raise KeyboardInterrupt  # a BaseException: no handler on the way up swallows it


def test_a_crash_after_ufm_took_the_isolation_settles_it_from_the_list_without_a_second_put(tmp_path: Path) -> None:
    with rig(TINY, tmp_path, method=ISOLATE) as r:
        writes = _writes_seen(r)
        r.engine.ufm = r.engine.writes.ufm = CrashAfterThePut(r.client)
        r.inject(fault="flap", link="core01-01/1", cycles=5, period="20s")
        r.advance(300)
        with pytest.raises(KeyboardInterrupt):
            r.cycle()
        [pending] = r.store.unfinished_intents()
        engine = restart(r)
        settled = r.store.get_intent(pending.id)
        assert settled is not None and settled.state is IntentState.DONE and "lists" in (settled.outcome or "")
        component = pending.component
        assert component is not None and engine.context.cables[component] in engine.guard.disabled
        for _ in range(2):
            r.advance(30)
            r.cycle()
        record = r.store.get_component(component)
        assert record is not None and record.lifecycle is Lifecycle.AWAITING_REPAIR
        assert writes == ["PUT /app/unhealthy_ports"] and len(r.tickets.list()) == 1


def test_a_dry_run_isolates_nothing(tmp_path: Path) -> None:
    with rig(TINY, tmp_path, dry_run=True, method=ISOLATE) as r:
        writes = _writes_seen(r)
        r.inject(fault="flap", link="core01-01/1", cycles=5, period="20s")
        r.advance(300)
        report = r.cycle()
        assert [a.kind for a in report.actions if a.kind is ActionKind.DISABLE] == [ActionKind.DISABLE]
        assert all(a.dry_run for a in report.actions)
        restart(r)
        r.advance(60)
        r.cycle()
        assert writes == [] and unhealthy_ports(r) == [] and r.store.intents() == []
