"""The engine's own disables and enables, and port actions UFM reports, are never counted as faults."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine_support import Rig, restart, rig

from fabric.remediation.detectors import Explained
from fabric.remediation.domain import ActionKind, ComponentId, Lifecycle
from fabric.remediation.kinds import SignalKind
from fabric.ufm.cursor import CursorState, Lookback
from tickets.base import TicketStatus
from topology.generate import PRESETS, fat_tree

TINY = fat_tree(PRESETS["tiny"])
LINK_EVENTS = frozenset({329, 328, 276, 112})


def _flap_disable_repair(r: Rig, explained: list[Explained] | None = None) -> ComponentId:
    """A flapping cable disabled, ticketed and repaired: returns it, back in service on probation (and the cycles'
    explained link-downs added to ``explained``)."""
    r.inject(fault="flap", link="core01-01/1", cycles=5, period="20s")
    r.advance(300)
    reports = [r.cycle()]
    disabled = [a.component for a in reports[0].actions if a.kind is ActionKind.DISABLE]
    assert len(disabled) == 1 and disabled[0] is not None
    ticket = r.tickets.list(TicketStatus.OPEN)[0]
    r.advance(600)
    reports.append(r.cycle())
    r.tickets.resolve(ticket.key, "replaced the cable")
    r.advance(30)
    reports.append(r.cycle())
    assert [a.kind for a in reports[-1].actions] == [ActionKind.ENABLE]
    if explained is not None:
        explained += [e for report in reports for e in report.explained]
    return disabled[0]


def _strikes_after(r: Rig, component: ComponentId, minutes: int, explained: list[Explained] | None = None,
                   ) -> list[str]:
    """Cycle every 30 s for ``minutes``: the rules of findings on ``component`` (and the cycles' explained
    link-downs added to ``explained``)."""
    rules: list[str] = []
    for _ in range(minutes * 2):
        r.advance(30)
        report = r.cycle()
        rules += [f.rule for f in report.findings if f.component == component]
        if explained is not None:
            explained += report.explained
    return rules


def test_a_repaired_link_gets_no_strike_from_our_own_disable_and_enable(tmp_path: Path) -> None:
    with rig(TINY, tmp_path) as r:
        explanations: list[Explained] = []
        link = _flap_disable_repair(r, explanations)
        # UFM reported the link down after our disable and up after our enable: neither is a fault, and the
        # flaps from before the repair belong to the old cable.
        assert _strikes_after(r, link, 20, explanations) == []
        record = r.store.get_component(link)
        assert record is not None and (record.lifecycle, record.strikes) == (Lifecycle.PROBATION, 1)
        explained = [e for e in explanations if e.component == link]
        assert explained and all(e.reason.startswith("own action: ") for e in explained)
        # One flap after the repair is one episode, not a strike: the old episodes do not add up with it.
        r.inject(fault="flap", link="core01-01/1", cycles=1, period="20s")
        assert _strikes_after(r, link, 5) == []


class WithoutPortActionEvents:
    """UFM as the engine reads it, without event 336: the engine must know its own writes by itself."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def events(self, *, handed_over: CursorState | None = None, lookback: Lookback | None = None,
                     **filters: str) -> list[Any]:
        return [e for e in await self.inner.events(handed_over=handed_over, lookback=lookback, **filters)
                if e.event_id != 336]


def test_own_actions_are_remembered_across_a_restart(tmp_path: Path) -> None:
    with rig(TINY, tmp_path) as r:
        r.client = WithoutPortActionEvents(r.client)  # type: ignore[assignment]
        r.engine.ufm = r.engine.effects.ufm = r.client
        r.inject(fault="flap", link="core01-01/1", cycles=5, period="20s")
        r.advance(300)
        link = next(a.component for a in r.cycle().actions if a.kind is ActionKind.DISABLE)
        assert link is not None
        ticket = r.tickets.list(TicketStatus.OPEN)[0]
        r.tickets.resolve(ticket.key, "replaced the cable")
        r.advance(30)
        assert [a.kind for a in r.cycle().actions] == [ActionKind.ENABLE]
        # Killed right after the enable: the link-up UFM reports is read by a new process, which knows of the
        # enable from its intent.
        restart(r)
        assert _strikes_after(r, link, 20) == []


def test_a_port_action_ufm_reports_explains_the_link_events_after_it(tmp_path: Path) -> None:
    with rig(TINY, tmp_path, dry_run=True) as r:
        component = r.engine.view.context.cables and next(  # type: ignore[union-attr]
            c for c in r.engine.view.context.cables if "core01-01/1" in c.name)  # type: ignore[union-attr]
        port = r.engine.view.port_to_act_on(component)  # type: ignore[union-attr]
        assert port is not None
        # An operator disables and re-enables the port through UFM, three times: 336 then the link events.
        for _ in range(3):
            assert r.runner.run(r.client.take_out(port, r.engine.settings.method))
            r.advance(20)
            r.runner.run(r.client.put_back(port, r.engine.settings.method))
            r.advance(20)
        explanations: list[Explained] = []
        assert _strikes_after(r, component, 5, explanations) == []
        assert any(e.component == component and "(336, event" in e.reason for e in explanations)
        assert SignalKind.PORT_ACTION in {s.kind for s in r.engine.pipeline.mapper.map(r.runner.run(r.client.events()))}


def test_history_starts_again_from_the_newest_write_that_gave_the_link_back_whatever_order_they_are_told_in() -> None:
    """A restart tells the detectors of the intents' writes first and of the resets the policy counts after: an older
    reset told last must not bring back what a newer enable left behind (a repaired link's old faults would add up
    with a new one into a strike)."""
    from datetime import timedelta

    from test_signals_detectors import PLAN, SPINE_CORE, T0, flap

    from fabric.remediation.detectors import Detectors
    from fabric.remediation.signals import link_id

    detectors = Detectors(PLAN)
    link = link_id(SPINE_CORE.key)
    detectors.own_action(link, T0 + timedelta(hours=2), "our enable", afresh=True)
    detectors.own_action(link, T0 + timedelta(hours=1), "our reset", afresh=True)
    ident = flap(detectors, T0 + timedelta(minutes=90), 2, timedelta(seconds=2), timedelta(minutes=5), 1)
    flap(detectors, T0 + timedelta(hours=3), 1, timedelta(seconds=2), timedelta(minutes=5), ident)
    assert detectors.evaluate(T0 + timedelta(hours=4)) == []  # one episode since the enable: no flap
