"""UFM writes that hold up when UFM misbehaves (issue 9, items 6, 11 and 12), through the simulator over HTTP.

A job that never completes, a job that fails, a POST whose answer comes too late, and a restart while a job
runs: each write is bounded and backed off, never blocks the cycle for the job's deadline, and is settled by
reading UFM rather than by sending it again.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from engine_support import Rig, restart, rig

from fabric.controller.engine import CycleReport
from fabric.controller.writes import WAITED_FOR
from fabric.remediation.domain import ActionKind, ComponentId, Lifecycle
from fabric.remediation.signals import link_id
from fabric.store.records import IntentState
from topology.generate import PRESETS, FatTreeSpec, fat_tree
from topology.model import Fabric

TINY = fat_tree(PRESETS["tiny"])
EIGHT_LEAVES = fat_tree(FatTreeSpec(pods=2, hosts_per_pod=2, rails=4, spines_per_pod=4, cores_per_group=2,
                                    leaf_spine_cables=3, spine_core_cables=2, radix=16))
"""128 switch-switch cables: a blast-radius cap of 6, so five cables may be out at once."""

# The engine's defaults ([ufm] in the configuration), which these scenarios rely on.
ATTEMPTS = 3
BACKOFF = timedelta(minutes=1)
JOB_WAIT = timedelta(seconds=10)
JOB_DEADLINE = timedelta(minutes=5)


class Crash(BaseException):
    """The engine process dies here (a BaseException: nothing on the way up may swallow it)."""


def posts(r: Rig) -> int:
    """``POST /actions`` UFM has received."""
    return r.state.counters.requests.get("/actions", 0)


def timed_cycle(r: Rig) -> tuple[timedelta, CycleReport]:
    """A cycle, and the simulated time it took (the client's waits advance the simulator's clock)."""
    before = r.state.now()
    report = r.cycle()
    return r.state.now() - before, report


def one_uplink_per_leaf(plan: Fabric, count: int) -> list[tuple[str, ComponentId]]:
    """``count`` leaf-spine cables on distinct leaves and distinct spines (so that no switch's cables fail
    together: that would be the switch's fault): (the leaf's port as the simulator names it, the link)."""
    chosen: dict[str, tuple[str, ComponentId]] = {}
    spines: set[str] = set()
    for cable in plan.cables:
        leaf, spine = (cable.a, cable.b) if "leaf" in cable.a.device else (cable.b, cable.a)
        if ("leaf" in leaf.device and "spine" in spine.device and leaf.device not in chosen
                and spine.device not in spines):
            chosen[leaf.device] = (f"{leaf.device}/{leaf.port}", link_id(cable.key))
            spines.add(spine.device)
    return sorted(chosen.values())[:count]


@pytest.fixture
def warnings(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    with caplog.at_level(logging.WARNING, logger="fabric"):
        yield caplog


# --- 11: a job that never completes ------------------------------------------------------------------------


def test_jobs_that_never_complete_are_bounded_backed_off_and_never_block_a_cycle(
        tmp_path: Path, warnings: pytest.LogCaptureFixture) -> None:
    with rig(EIGHT_LEAVES, tmp_path) as r:
        links = one_uplink_per_leaf(EIGHT_LEAVES, 5)
        r.inject(fault="job_stall", count=1_000)  # no job UFM starts from now on ever completes
        for port, _ in links:
            r.inject(fault="ber", port=port, escalate_after="30s")
        r.advance(120)
        took, report = timed_cycle(r)
        # Five jobs posted, waited for together, at most job_wait: not five times the job's deadline.
        assert posts(r) == 5 and took <= JOB_WAIT + timedelta(seconds=2), (posts(r), took)
        assert [a.kind for a in report.actions].count(ActionKind.DISABLE) == 5
        assert report.writes_pending == 5
        cables = [r.engine.context.cables[link] for _, link in links]
        # While a disable may still land, it counts against capacity as well as the blast radius.
        assert all(c in r.engine.guard.out and c in r.engine.guard.disabled for c in cables)

        for _ in range(30):  # half an hour of cycles, one a minute
            r.advance(60)
            took, report = timed_cycle(r)
            assert took < JOB_DEADLINE / 10, took  # no cycle waits for a job's deadline
            assert posts(r) == len(links)  # never a second job on a port while UFM still runs the first

        assert posts(r) == len(links)
        assert report.writes_given_up == len(links) and report.writes_pending == 0
        for (_, link), cable in zip(links, cables, strict=True):
            record = r.store.get_component(link)
            assert record is not None and record.lifecycle is Lifecycle.DISABLED, record  # not awaiting repair
            assert r.port_state(r.engine.view.port_to_act_on(link)) == "Link Up"  # type: ignore[union-attr]
            assert cable not in r.engine.guard.out  # UFM shows it up: capacity counts it up
            assert cable in r.engine.guard.disabled  # a disable decided still counts against the blast radius
            failed = [i for i in r.store.intents(component=link) if i.kind is ActionKind.DISABLE]
            # Every attempt is in the log: the first sent, the others waited out behind its job.
            assert [i.state for i in failed] == [IntentState.FAILED] * ATTEMPTS
            assert [WAITED_FOR in i.payload for i in reversed(failed)] == [False] + [True] * (ATTEMPTS - 1)
        given_up = [d for d in r.store.decisions() if d.action.rule == "write_unconfirmed"]
        assert sorted(str(d.action.component) for d in given_up) == sorted(str(link) for _, link in links)
        shouted = [m.getMessage() for m in warnings.records if m.levelno >= logging.WARNING]
        assert sum("has not confirmed the disable" in m for m in shouted) == len(links)

        # The attempts are the intent log's: a restart does not start them again.
        restart(r)
        for _ in range(3):
            r.advance(60)
            r.cycle()
        assert posts(r) == len(links)
        assert not [c for c in cables if c in r.engine.guard.out]


# --- a job that ends with errors ---------------------------------------------------------------------------


def test_a_failed_job_is_tried_again_only_after_the_backoff(tmp_path: Path) -> None:
    with rig(TINY, tmp_path) as r:
        r.inject(fault="action_failure", count=1, reason="switch did not answer")
        r.inject(fault="flap", link="core01-01/1", cycles=5, period="20s")
        r.advance(300)
        report = r.cycle()
        assert posts(r) == 1  # the job failed within the cycle's wait: not posted again at once
        assert [f.action for f in report.failed] == ["disable"] and "Completed With Errors" in report.failed[0].cause
        assert report.writes_backing_off == 1
        [component] = [a.component for a in report.actions if a.kind is ActionKind.DISABLE]
        assert component is not None
        record = r.store.get_component(component)
        assert record is not None and record.lifecycle is Lifecycle.DISABLED  # UFM has not confirmed it

        r.advance(30)
        assert r.cycle().writes_backing_off == 1 and posts(r) == 1  # within the backoff: nothing sent
        r.advance(40)
        converged = r.cycle()
        assert posts(r) == 2 and converged.failed == []
        record = r.store.get_component(component)
        assert record is not None and record.lifecycle is Lifecycle.AWAITING_REPAIR
        assert r.port_state(r.engine.view.port_to_act_on(component)) == "Disabled"  # type: ignore[union-attr]


# --- 12: an answer that comes too late ---------------------------------------------------------------------


def test_a_post_answered_too_late_is_settled_by_reading_ufm_not_sent_again(tmp_path: Path) -> None:
    with rig(TINY, tmp_path, timeout=2.0) as r:
        r.inject(fault="flap", link="core01-01/1", cycles=5, period="20s")
        r.advance(300)
        # UFM carries the disable out but answers after the client gave up: the outcome is unknown.
        r.inject(fault="api", endpoint="/actions", method="POST", mode="late", delay="4s", requests=1)
        report = r.cycle()
        assert posts(r) == 1  # not sent again in the same cycle
        assert report.failed == [] and report.writes_pending == 1
        [intent] = [i for i in r.store.intents() if i.kind is ActionKind.DISABLE]
        assert intent.state is IntentState.PENDING and "no_answer" in intent.payload

        r.advance(30)
        settled = r.cycle()
        assert posts(r) == 1 and settled.failed == [] and settled.writes_pending == 0
        [intent] = [i for i in r.store.intents() if i.kind is ActionKind.DISABLE]
        assert intent.state is IntentState.DONE, intent  # one write, recorded as what UFM shows: done
        assert len(r.state.jobs) == 1
        record = r.store.get_component(intent.component) if intent.component else None
        assert record is not None and record.lifecycle is Lifecycle.AWAITING_REPAIR


# --- 6: a restart while a job runs -------------------------------------------------------------------------


def test_a_restart_while_the_job_runs_waits_for_its_outcome(tmp_path: Path) -> None:
    with rig(TINY, tmp_path) as r:
        r.inject(fault="flap", link="core01-01/1", cycles=5, period="20s")
        r.advance(300)
        r.sleep.fail_with = Crash()  # the engine dies while it waits for UFM's job
        with pytest.raises(Crash):
            r.cycle()
        [pending] = [i for i in r.store.unfinished_intents() if i.kind is ActionKind.DISABLE]
        assert posts(r) == 1 and r.state.jobs.all()[0].status == "Running"

        restart(r)  # the job is still running: recovery waits for it, it does not roll the intent back
        settled = r.store.get_intent(pending.id)
        assert settled is not None and settled.state is IntentState.DONE, settled
        r.advance(30)
        report = r.cycle()
        assert posts(r) == 1 and len(r.state.jobs) == 1 and report.failed == []  # nothing sent twice
        assert pending.component is not None
        record = r.store.get_component(pending.component)
        assert record is not None and record.lifecycle is Lifecycle.AWAITING_REPAIR
