"""A live daemon stopped by SIGTERM while it acts, then started again: every side effect happens exactly once. A dry
run's daemon restarted goes on from what it would have done; started live, the same database acts on none of it."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from daemon_support import HTTP, PASSWORD, daemon, live, migrate, simulator, write_config

from fabric import wiring
from fabric.remediation.domain import ActionKind
from fabric.simulator.server import free_port


def _disabled(ufm: str) -> list[str]:
    ports = HTTP.get(f"{ufm}/ufmRest/resources/ports", auth=("admin", PASSWORD), timeout=30).json()
    return sorted(p["name"] for p in ports if p["physical_state"] == "Disabled")


@pytest.mark.parametrize("stop", ["at_once", "after_acting"])
def test_sigterm_while_acting_then_restart_loses_and_repeats_nothing(stop: str, tiny_plan: Path,
                                                                     tmp_path: Path) -> None:
    with live(tiny_plan, tmp_path) as setup:
        sim, config, db, port = setup.sim, setup.config, setup.db, setup.port
        with daemon(config, port, tmp_path / "first.log") as first:
            first.wait_for("a first cycle", lambda: first.cycles() >= 1)
            sim.inject(fault="flap", link="core01-01/1", cycles=5, period="20s")
            sim.advance(300)  # the flaps, settled: the next cycle disables the cable and opens its ticket
            # Stopped at once, the cycle that acts may be running, about to start, or done: it is finished (or not
            # started) and the process exits 0. After acting: the restart must not act again.
            if stop == "after_acting":
                first.wait_for("the disable", lambda: first.metric("fabric_decisions_total", kind="disable") == 1)
                assert first.metric("fabric_findings_total", rule="flap") == 1
                first.wait_for("its ticket sent", lambda: first.metric("fabric_components", state="awaiting_repair")
                               == 1)
            assert first.signal(signal.SIGTERM) == 0
        with daemon(config, port, tmp_path / "second.log") as second:
            second.wait_for("ready", lambda: second.get("/readyz").status_code == 200)
            second.wait_for("three cycles", lambda: second.cycles() >= 3)
            sends = second.metric("fabric_job_runs_total", job_name="ticket_send", outcome="ok")
            second.wait_for("the ticket outbox sent after them", lambda: second.metric(
                "fabric_job_runs_total", job_name="ticket_send", outcome="ok") > sends)
            disabled = _disabled(sim.url)
            leads = second.get("/status").json()["leadership"]
            assert (leads["role"], leads["epoch"]) == ("leader", 2)  # SQLite: one instance, an epoch per start
            assert second.signal(signal.SIGTERM) == 0
        assert len(disabled) == 1, disabled
    with wiring.open_existing_store(f"sqlite:///{db}", fabric="test") as store:
        kinds = [record.action.kind for record in store.decisions(limit=1000)]
        assert {i.epoch for i in store.intents(limit=1000)} <= {1, 2}
        tickets = wiring.local_tickets(store).list()
    assert kinds.count(ActionKind.DISABLE) == 1 and kinds.count(ActionKind.TICKET) == 1, kinds
    assert len(tickets) == 1


def test_a_dry_run_daemon_restarted_keeps_what_it_would_have_disabled_and_live_ignores_it(tiny_plan: Path,
                                                                                          tmp_path: Path) -> None:
    db = tmp_path / "fabric.db"
    migrate(db)
    port = free_port()
    with simulator(tiny_plan) as sim:
        config = write_config(tmp_path, sim.url, tiny_plan, port=port)
        with daemon(config, port, tmp_path / "first.log") as first:
            first.wait_for("a first cycle", lambda: first.cycles() >= 1)
            sim.inject(fault="flap", link="core01-01/1", cycles=5, period="20s")
            sim.advance(300)
            first.wait_for("the would-be disable", lambda: first.metric("fabric_decisions_total", kind="disable") == 1)
            assert first.signal(signal.SIGTERM) == 0
        with daemon(config, port, tmp_path / "second.log") as second:
            second.wait_for("three cycles", lambda: second.cycles() >= 3)
            status = second.get("/status").json()
            assert status["would_be"] and status["components"]["disabled"] == 1, status
            assert second.metric("fabric_decisions_total", kind="disable") == 0  # not decided again
            assert second.signal(signal.SIGTERM) == 0
        live = write_config(tmp_path, sim.url, tiny_plan, port=port, dry_run=False)
        with daemon(live, port, tmp_path / "live.log") as third:
            third.wait_for("three cycles", lambda: third.cycles() >= 3)
            status = third.get("/status").json()
            assert not status["would_be"] and status["components"]["disabled"] == 0, status
            assert third.signal(signal.SIGTERM) == 0
        assert _disabled(sim.url) == []
