"""The engine with its tickets in Jira: the simulator over HTTP, a real SQLite store, and the Jira backend (the
real ``jira`` library) against the fake Jira over loopback. A disabled cable gets one Jira issue; a technician
resolving it brings the cable back on probation at the next poll; Jira refusing every call delays the ticket,
never the disable, and creates it once when it answers again."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from engine_support import Rig, rig
from jira_support import backend_for, fake_jira

from fabric.remediation.domain import ActionKind, ComponentId, Lifecycle
from fabric.simulator.jira import Fault, RunningJira
from fabric.store.records import TicketState
from topology.generate import PRESETS, fat_tree

TINY = fat_tree(PRESETS["tiny"])


@pytest.fixture
def loop(tmp_path: Path) -> Iterator[tuple[Rig, RunningJira]]:
    with rig(TINY, tmp_path) as r, fake_jira() as jira:
        r.engine.ticketing.backend = backend_for(jira, priorities=((5, "High"), (9, "Highest")))
        yield r, jira


def flap(r: Rig) -> None:
    r.inject(fault="flap", link="core01-01/1", cycles=5, period="20s")
    r.advance(30)
    r.cycle()
    r.advance(270)


def lifecycle(r: Rig, component: ComponentId) -> Lifecycle:
    record = r.store.get_component(component)
    assert record is not None
    return record.lifecycle


def test_a_jira_resolution_found_by_the_poll_brings_the_cable_back(loop: tuple[Rig, RunningJira]) -> None:
    r, jira = loop
    flap(r)
    report = r.cycle()
    assert [a.kind for a in report.actions] == [ActionKind.DISABLE, ActionKind.TICKET], report.actions
    component = report.actions[0].component
    assert component is not None
    (issue,) = jira.state.issues.values()
    assert issue.labels[-1] == r.engine.ticketing.key(component)
    assert issue.extra["priority"] == {"name": "High"}, "a flap's severity (5) reaches High, not Highest"
    body = issue.description.splitlines()
    assert f"What failed: {component} (rule flap)" in body
    assert "Where: core01-01 port 1, its peer pod01-spine01 port 5" in body
    assert any(line.startswith("Evidence: ") and "UFM event(s), ids " in line for line in body), body
    assert any(line.startswith("What the service did: disabled it in UFM at ") for line in body), body
    assert any(line.startswith("Capacity guard: ") for line in body), body
    assert "Strikes: 1 of 3 (at the last one it is quarantined until an operator clears it)" in body
    assert any(line.startswith("Usual repair: reseat both ends") for line in body), body
    assert [a.kind for a in r.cycle().actions] == []  # still waiting: nothing more in Jira
    assert len(jira.state.issues) == 1
    jira.state.resolve(issue.key)
    assert [a.kind for a in r.cycle().actions] == [ActionKind.ENABLE]
    assert lifecycle(r, component) is Lifecycle.PROBATION
    (row,) = r.store.tickets()
    assert (row.state, row.external_key) == (TicketState.RESOLVED, issue.key)


def test_jira_refusing_every_call_delays_the_ticket_not_the_disable(loop: tuple[Rig, RunningJira]) -> None:
    r, jira = loop
    flap(r)
    jira.state.inject(Fault(status=503, count=1000))
    report = r.cycle()
    assert [a.kind for a in report.actions][:1] == [ActionKind.DISABLE], report.actions
    assert report.failed and all(f.action == "open" and "HTTP 503" in f.cause for f in report.failed), \
        report.failed
    assert jira.state.issues == {}
    r.advance(60)
    r.cycle()
    jira.state.clear_faults()
    r.advance(60)
    r.cycle()
    r.advance(60)
    r.cycle()
    assert len(jira.state.issues) == 1
    (row,) = r.store.tickets()
    assert (row.state, row.external_key) == (TicketState.OPEN, "OPS-1")


def test_a_fault_found_again_is_commented_on_the_open_ticket_at_most_once_an_hour(
        loop: tuple[Rig, RunningJira]) -> None:
    """A cable the guard keeps up (the tiny fabric lets one go: the first flapping cable) goes on failing: its
    ticket hears of it, once an hour at most."""
    r, jira = loop
    flap(r)
    r.cycle()

    def flap_kept_up() -> None:
        r.inject(fault="flap", link="core02-02/2", cycles=5, period="20s")
        r.advance(300)
        r.cycle()

    flap_kept_up()
    kept_up = next(i for i in jira.state.issues.values() if "core02-02/2" in i.summary)
    assert "kept it up: the capacity guard refused" in kept_up.description
    flap_kept_up()  # within the hour of its ticket: no comment
    assert kept_up.comments == []
    r.advance(3600)
    flap_kept_up()
    comments = [d.action for d in r.store.decisions(limit=200) if d.action.kind is ActionKind.COMMENT]
    assert [a.rule for a in comments] == ["recurrence"], comments
    assert len(kept_up.comments) == 1 and kept_up.comments[0].body.startswith("found again (flap): ")
    assert "still deferred" in kept_up.comments[0].body
    r.advance(1800)
    flap_kept_up()
    assert len(kept_up.comments) == 1, "the next one waits an hour from the last"
    assert len(jira.state.issues) == 2
