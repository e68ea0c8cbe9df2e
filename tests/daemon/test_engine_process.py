"""The daemon's two processes: the API answers while the engine's process is killed and started again; SIGTERM
stops both; a reload asked of the API reaches the engine's process through the store; the engine's process ends
with the API's."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import httpx
import sqlalchemy as sa
from daemon_support import BOUND, Daemon, daemon, migrate, ready_daemon, simulator, write_config

from fabric.simulator.server import free_port
from fabric.store import RequestKind

ADMIN_TOKEN = "engine-process-token"


def _engine_pid(d: Daemon) -> int:
    engine = d.get("/status").json()["engine"]
    assert engine is not None and engine["state"] == "running", engine
    return int(engine["pid"])


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # A zombie until its parent reaps it: gone for this purpose.
    return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z")


def _wait_gone(pid: int) -> None:
    deadline = time.monotonic() + BOUND
    while time.monotonic() < deadline:
        if _gone(pid):
            return
        time.sleep(0.05)
    raise AssertionError(f"process {pid} still runs")


def test_the_api_answers_while_the_engine_process_is_killed_and_started_again(tiny_plan: Path,
                                                                               tmp_path: Path) -> None:
    with ready_daemon(tiny_plan, tmp_path) as d:
        first = _engine_pid(d)
        os.kill(first, signal.SIGKILL)
        d.wait_for("not ready", lambda: d.get("/readyz").status_code == 503)
        unready = d.get("/readyz").json()["reasons"]
        assert any(reason.startswith("the engine process is ") for reason in unready), unready
        # Reads go on from the store meanwhile.
        assert d.get("/components").status_code == 200
        assert d.get("/decisions").status_code == 200
        assert d.get("/healthz").status_code == 200
        d.wait_for("ready again", lambda: d.get("/readyz").status_code == 200)
        engine = d.get("/status").json()["engine"]
        assert engine["pid"] != first and engine["restarts"] == 1
        assert engine["last_exit"] == "killed by SIGKILL"
        assert d.metric("fabric_engine_process_restarts") == 1.0
        assert d.metric("fabric_engine_process_up") == 1.0
        cycles = d.cycles()
        d.wait_for("the new engine's cycles", lambda: d.cycles() >= cycles + 2)
        assert d.signal(signal.SIGTERM) == 0


def test_sigterm_stops_both_processes_within_the_shutdown_wait(tiny_plan: Path, tmp_path: Path) -> None:
    with ready_daemon(tiny_plan, tmp_path) as d:  # shutdown_wait = "20s"
        engine = _engine_pid(d)
        started = time.monotonic()
        assert d.signal(signal.SIGTERM) == 0
        assert time.monotonic() - started < 20
        assert _gone(engine)
        messages = [line["message"] for line in d.lines()]
        assert "the engine process stopped" in messages and messages[-1] == "stopped"


def test_the_engine_process_ends_with_the_api_process(tiny_plan: Path, tmp_path: Path) -> None:
    with ready_daemon(tiny_plan, tmp_path) as d:
        engine = _engine_pid(d)
        d.process.kill()
        d.process.wait(BOUND)
        _wait_gone(engine)


def test_a_reload_asked_of_the_api_reaches_the_engine_process_through_the_store(tiny_plan: Path,
                                                                                tmp_path: Path) -> None:
    db = tmp_path / "fabric.db"
    migrate(db)
    port = free_port()
    strict = '\n[rules]\nflap_cycles = 20\n'
    with simulator(tiny_plan) as sim:
        config = write_config(tmp_path, sim.url, tiny_plan, port=port, extra=strict)
        with daemon(config, port, tmp_path / "daemon.log", FABRIC_API__ADMIN_TOKEN=ADMIN_TOKEN) as d:
            d.wait_for("ready", lambda: d.get("/readyz").status_code == 200)
            config.write_text(config.read_text().replace(strict, "\n"))
            answer = httpx.post(f"{d.api}/api/v1/reload", json={"reason": "looser rules", "by": "alice"},
                                headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=BOUND)
            assert answer.status_code == 200, answer.text
            assert answer.json()["changed"].startswith("reload: applied rules"), answer.text
            config.write_text(config.read_text() + "bad_key = 1\n")
            broken = httpx.post(f"{d.api}/api/v1/reload", json={"reason": "typo", "by": "bob"},
                                headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=BOUND)
            assert broken.status_code == 422 and "api.bad_key: unknown key" in broken.text, broken.text
            assert d.signal(signal.SIGTERM) == 0
    with sa.create_engine(f"sqlite:///{db}").connect() as conn:
        rows = conn.execute(sa.text("SELECT kind, requested_by, reason, instance, handled_at, outcome "
                                    "FROM operator_requests ORDER BY id")).all()
    assert [(row.kind, row.requested_by, row.reason) for row in rows] == [
        (RequestKind.RELOAD.value, "alice", "looser rules"), (RequestKind.RELOAD.value, "bob", "typo")]
    assert all(row.instance and row.handled_at is not None for row in rows)
    assert rows[0].outcome.startswith("applied: reload: applied rules")
    assert rows[1].outcome.startswith("invalid: reload: ")


def _niceness(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1].split()[16])


def test_the_engine_process_runs_nicer_than_the_api_by_engine_niceness(tiny_plan: Path, tmp_path: Path) -> None:
    """The API's requests get a core before the engine's cycle does (``[daemon] engine_niceness``)."""
    with ready_daemon(tiny_plan, tmp_path, FABRIC_DAEMON__ENGINE_NICENESS="3") as d:
        assert _niceness(_engine_pid(d)) == _niceness(d.process.pid) + 3
        assert d.signal(signal.SIGTERM) == 0
