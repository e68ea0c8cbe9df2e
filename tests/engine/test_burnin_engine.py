"""The engine's burn-in window in process (a simulated UFM, a real store): opened from the request, its findings
kept across a restart of the engine, handed at its end to the engine's own policy and guard."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from burnin_support import HOST_LINK, UPLINKS, plant
from engine_support import Rig, disabled_ports, restart, rig

from fabric.remediation.domain import ActionKind, Lifecycle
from fabric.remediation.escalation import ResetLadder
from fabric.store import RequestKind
from topology.generate import PRESETS, fat_tree

TINY = fat_tree(PRESETS["tiny"])


def _states(r: Rig) -> dict[str, Lifecycle]:
    return {str(c): record.lifecycle for c, record in r.store.components().items()}


def test_a_window_judges_what_came_before_a_restart_and_the_guard_decides(tmp_path: Path) -> None:
    with rig(TINY, tmp_path) as r:
        with r.store.transaction() as tx:
            request, _ = tx.ask_burnin(timedelta(minutes=10), reason="bring-up", requested_by="ops")
        r.cycle()
        (window,) = r.store.burnin_windows()
        assert window.started_at is not None and window.ends_at == window.started_at + timedelta(minutes=10)
        assert r.store.get_request(request.id).outcome.startswith(f"burn-in window {request.id} open until")
        assert r.store.pending_requests(RequestKind.BURNIN) == []

        plant(r.inject)
        r.advance(30)
        r.cycle()
        assert _states(r) == {}  # one event each: under the service's own thresholds
        restart(r)  # the window's pipeline is lost with the process: the new one judges the events again
        r.advance(10 * 60)
        r.cycle()
        (window,) = r.store.burnin_windows()
        assert window.ended_at is not None and window.ends_at is not None and window.ended_at >= window.ends_at
        assert window.report is not None
        assert {f["component"] for f in window.report["findings"]} == UPLINKS | {HOST_LINK}
        assert window.report["ports"]["failed"] == 5
        assert window.report["telemetry"] == {"compared": False,
                                              "why": "the engine reads no UFM Telemetry: no port told idle"}

        # The close decided them (their events' settling minute was long over): the guard let one uplink go.
        states = _states(r)
        assert sorted(states[c] for c in UPLINKS) == [Lifecycle.AWAITING_REPAIR, Lifecycle.DEFERRED]
        assert len(disabled_ports(r)) == 1


def test_one_window_at_a_time_and_a_dry_run_window_takes_nothing_out(tmp_path: Path) -> None:
    with rig(TINY, tmp_path, dry_run=True) as r:
        with r.store.transaction() as tx:
            first, _ = tx.ask_burnin(timedelta(minutes=5), reason="first", requested_by="ops")
            tx.ask_burnin(timedelta(minutes=5), reason="second", requested_by="ops")
        r.cycle()
        assert [w.started_at is not None for w in r.store.burnin_windows()] == [False, True]  # newest first
        plant(r.inject)
        r.advance(6 * 60)
        r.cycle()  # the first ends; the second waits for the next cycle
        newest, oldest = r.store.burnin_windows()
        assert oldest.dry_run is True and oldest.report is not None and newest.started_at is None
        r.cycle()
        assert r.store.burnin_windows()[0].started_at is not None
        r.advance(60)
        r.cycle()
        assert disabled_ports(r) == []
        assert r.store.get_request(first.id).outcome.startswith("dry run: burn-in window")


def test_what_a_window_finds_is_taken_out_without_a_reset_first(tmp_path: Path) -> None:
    """The service resets links first (the reset ladder); a burn-in's failures are taken out, guard permitting:
    reset, they would pass a watch once the load is gone."""
    with rig(TINY, tmp_path, resets=ResetLadder(max_resets=2)) as r:
        with r.store.transaction() as tx:
            tx.ask_burnin(timedelta(minutes=10), reason="bring-up", requested_by="ops")
        r.cycle()
        plant(r.inject)
        r.advance(10 * 60 + 30)
        r.cycle()
        r.advance(r.engine.settings.rules.immediate_settle.total_seconds())
        r.cycle()
        states = _states(r)
        assert sorted(states[c] for c in UPLINKS) == [Lifecycle.AWAITING_REPAIR, Lifecycle.DEFERRED]
        assert Lifecycle.RESET not in states.values()
        assert len(disabled_ports(r)) == 1


@pytest.mark.parametrize("restarted", [False, True], ids=["uninterrupted", "restarted"])
def test_a_window_finding_held_to_settle_is_taken_out_without_a_reset_across_a_restart(
        tmp_path: Path, restarted: bool) -> None:
    """Failures in the window's last minute reach the policy held to settle (uplinks: a switch fault would show on
    the switches' other cables). A restart meanwhile (a deploy) takes the held findings back from the store
    (``Pipeline.remember``): they are still the window's, taken out without the reset ladder's reset first."""
    with rig(TINY, tmp_path, resets=ResetLadder(max_resets=2)) as r:
        with r.store.transaction() as tx:
            tx.ask_burnin(timedelta(minutes=10), reason="bring-up", requested_by="ops")
        r.cycle()
        r.advance(9 * 60 + 40)
        plant(r.inject)
        r.advance(30)
        closing = r.cycle()
        assert r.store.burnin_windows()[0].ended_at is not None
        held = {str(a.component) for a in closing.actions if a.kind is ActionKind.RECORD and "settling" in a.reason}
        assert held == UPLINKS and _states(r) == {HOST_LINK: Lifecycle.TICKETED}
        if restarted:
            restart(r)
        r.advance(r.engine.settings.rules.immediate_settle.total_seconds())
        decided = r.cycle()
        assert ActionKind.RESET not in {a.kind for a in decided.actions}
        states = _states(r)
        assert sorted(states[c] for c in UPLINKS) == [Lifecycle.AWAITING_REPAIR, Lifecycle.DEFERRED]
        assert len(disabled_ports(r)) == 1
