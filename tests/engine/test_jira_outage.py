"""Jira down for an hour of simulated time, through the real ``jira`` library against the fake Jira over loopback,
the engine on the UFM simulator: every disable happens in the cycle that decided it, the ticket writes wait in the
store's outbox (Jira asked once per backoff, not once per cycle), and once Jira answers each component has exactly
one issue. A create whose answer was lost, on a Cloud whose search lags, is adopted and not repeated."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
from engine_support import Rig, rig
from jira_support import SettableTime, backend_for, fake_jira, requests_to

from fabric.controller.effects import CycleReport
from fabric.controller.outbox import OutboxSettings, TicketOutbox
from fabric.remediation.domain import ActionKind, ComponentId
from fabric.simulator.jira import Fault, RunningJira
from fabric.store.records import TicketState
from topology.generate import PRESETS, fat_tree

TINY = fat_tree(PRESETS["tiny"])
LINKS = ("core01-01/1", "core02-02/2", "core01-02/1")
OUTAGE = 3600
CYCLE = 30


def _outbox(r: Rig, **settings: object) -> None:
    """The engine's outbox with a seeded jitter (the test is the same every run) and ``settings``."""
    chosen = replace(OutboxSettings(rng=random.Random(7)), **settings)  # type: ignore[arg-type]
    r.engine.outbox = TicketOutbox(r.store, r.engine.ticketing, chosen)
    r.engine.effects.outbox = r.engine.outbox


@pytest.fixture
def loop(tmp_path: Path) -> Iterator[tuple[Rig, RunningJira, SettableTime]]:
    clock = SettableTime()
    with rig(TINY, tmp_path) as r, fake_jira(clock=clock) as jira:
        r.engine.ticketing.backend = backend_for(jira, timeout=0.5)
        _outbox(r)
        yield r, jira, clock


def _advance(r: Rig, clock: SettableTime, seconds: float) -> None:
    """The simulator's clock and the fake Jira's, moved together."""
    r.advance(seconds)
    clock.now += seconds


def _decided(report: CycleReport, kind: ActionKind) -> list[ComponentId]:
    return [a.component for a in report.actions if a.kind is kind and a.component is not None]


def test_jira_down_for_an_hour_delays_tickets_and_loses_duplicates_and_delays_nothing(
        loop: tuple[Rig, RunningJira, SettableTime]) -> None:
    """The first cable is disabled (the tiny fabric's guard allows one), the two after it are deferred by the guard:
    all three need a ticket. Jira's gateway first times out in front of it (a 504 after a second), then Jira
    answers 503 for half an hour, 429 with ``Retry-After`` for a while, and 503 again until the hour is over."""
    r, jira, clock = loop
    jira.state.inject(Fault(status=504, delay=1.0, count=2))
    jira.state.inject(Fault(status=503, count=10**6))
    flaps = {0: LINKS[0], 600: LINKS[1], 1500: LINKS[2]}
    """When, in seconds into the outage, each link starts flapping."""
    ticketed: set[ComponentId] = set()
    disabled: list[ComponentId] = []
    elapsed = 0
    while elapsed < OUTAGE:
        if elapsed in flaps:
            r.inject(fault="flap", link=flaps[elapsed], cycles=5, period="20s")
        if elapsed == 1800:
            jira.state.clear_faults()
            jira.state.inject(Fault(status=429, retry_after=120, count=3))
            jira.state.inject(Fault(status=503, count=10**6))
        _advance(r, clock, CYCLE)
        elapsed += CYCLE
        report = r.cycle()
        for component in _decided(report, ActionKind.DISABLE):
            # Not delayed: UFM shows the port disabled at the end of the cycle that decided it, Jira down or not.
            port = r.engine.view.port_to_act_on(component) if r.engine.view else None
            assert port is not None and r.port_state(port) == "Disabled"
            disabled.append(component)
        ticketed.update(_decided(report, ActionKind.TICKET))
        assert not [f for f in report.failed if f.kind.value != "ticket"], report.failed
    assert len(disabled) == 1 and len(ticketed) == len(LINKS), (disabled, ticketed)
    assert jira.state.issues == {}, "Jira was down: nothing was created"
    waiting = r.store.pending_ticket_writes()
    assert {e.component for e in waiting if e.kind.value == "open"} == ticketed
    figures = r.store.outbox_figures()
    assert figures.pending == len(waiting) and figures.oldest_seconds >= OUTAGE - 11 * CYCLE
    # One request per backoff for the whole outbox, not one per write and cycle: the backoff doubles from 10 s to
    # its 10 min cap, so an hour takes about 15 to 20 attempts (the client's first request, serverInfo, refused
    # each time); 120 cycles asking for 3 tickets without it would be 360.
    assert len(jira.state.requests) <= 25, len(jira.state.requests)
    assert requests_to(jira, "POST", "/issue") == 0

    jira.state.clear_faults()
    for _ in range(25):  # the longest backoff (10 min) and its cycles
        _advance(r, clock, CYCLE)
        r.cycle()
    assert r.store.pending_ticket_writes() == []
    assert r.store.outbox_figures().pending == 0 and r.store.outbox_figures().oldest_seconds == 0.0
    issues = list(jira.state.issues.values())
    assert len(issues) == len(LINKS), [i.key for i in issues]  # one each: nothing lost, nothing duplicated
    keys = {r.engine.ticketing.key(c) for c in ticketed}
    assert {next(label for label in i.labels if label.startswith("ibdedup-")) for i in issues} == keys
    rows = r.store.tickets()
    assert sorted((row.state, row.external_key) for row in rows) == sorted(
        (TicketState.OPEN, i.key) for i in issues)
    record = r.store.get_component(disabled[0])
    assert record is not None and record.lifecycle.value == "awaiting_repair"


@pytest.mark.parametrize("settle", [timedelta(minutes=2), timedelta(0)], ids=["settled", "blind"])
def test_a_create_whose_answer_was_lost_is_adopted_not_repeated_while_search_lags(tmp_path: Path,
                                                                                  settle: timedelta) -> None:
    """Cloud's search lags 90 s behind a create; the create's answer is lost (the client times out after Jira made
    the issue). Waiting ``search_settle`` before trying again, the search finds it and it is adopted; without the
    wait (``blind``) the retry creates a second issue, which is what the rule is there to prevent."""
    clock = SettableTime()
    with rig(TINY, tmp_path) as r, fake_jira(cloud=True, search_lag=90, clock=clock) as jira:
        r.engine.ticketing.backend = backend_for(jira, timeout=0.5)
        _outbox(r, search_settle=settle)
        jira.state.inject(Fault(delay=1.0, method="POST", path="/issue", count=1))
        r.inject(fault="flap", link=LINKS[0], cycles=5, period="20s")
        _advance(r, clock, 300)
        report = r.cycle()
        assert _decided(report, ActionKind.DISABLE), report.actions
        assert len(jira.state.issues) == 1, "Jira made the issue; its answer was lost"
        (entry,) = r.store.pending_ticket_writes()
        assert entry.uncertain_at is not None
        for _ in range(8):  # four minutes of cycles
            _advance(r, clock, CYCLE)
            r.cycle()
        if settle:
            assert len(jira.state.issues) == 1
            (row,) = r.store.tickets()
            assert (row.state, row.external_key) == (TicketState.OPEN, "OPS-1")
        else:
            assert len(jira.state.issues) == 2
        assert r.store.pending_ticket_writes() == []


def test_the_daemons_cycle_asks_nothing_of_a_stalling_jira(loop: tuple[Rig, RunningJira, SettableTime]) -> None:
    """As the daemon runs it (the outbox sent by a job of its own), the cycle that disables a cable sends nothing to
    Jira, which here takes a second to refuse every request: the disable cannot wait on it."""
    r, jira, clock = loop
    jira.state.inject(Fault(status=504, delay=1.0, count=10**6))
    r.inject(fault="flap", link=LINKS[0], cycles=5, period="20s")
    _advance(r, clock, 300)
    report = r.runner.run(r.engine.cycle(poll_tickets=False, send_tickets=False))
    (component,) = _decided(report, ActionKind.DISABLE)
    port = r.engine.view.port_to_act_on(component) if r.engine.view else None
    assert port is not None and r.port_state(port) == "Disabled"
    assert jira.state.requests == [], "the cycle sent nothing to Jira"
    assert [e.kind.value for e in r.store.pending_ticket_writes()] == ["open"]
    sent = r.runner.run(r.engine.send_tickets())  # the daemon's ticket_send job, beside the cycle
    assert sent.sent == 0 and len(sent.failed) == 1 and len(jira.state.requests) == 1
    assert sent.figures.pending == 1
