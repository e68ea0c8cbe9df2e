"""``fabricctl run`` as operators run it: a subprocess, driven only through HTTP, stopped by a signal."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import httpx
from daemon_support import Daemon, daemon, migrate, simulator, write_config

from fabric.simulator.server import free_port
from topology.formats.ndt import read_ndt
from topology.guard import CapacityGuard


def test_daemon_serves_health_readiness_and_metrics_then_stops_cleanly_on_sigterm(tiny_plan: Path,
                                                                                  tmp_path: Path) -> None:
    migrate(tmp_path / "fabric.db")
    port = free_port()
    with simulator(tiny_plan) as sim:
        config = write_config(tmp_path, sim.url, tiny_plan, port=port)
        with daemon(config, port, tmp_path / "daemon.log") as d:
            assert d.get("/healthz").json() == {"alive": True}
            d.wait_for("/readyz after a cycle", lambda: d.get("/readyz").status_code == 200)
            assert d.get("/readyz").json() == {"ready": True, "reasons": []}
            d.wait_for("two cycles", lambda: d.cycles() >= 2)
            text = d.get("/metrics").text
            assert 'fabric_job_duration_seconds_bucket{job_name="cycle"' in text
            assert d.metric("fabric_job_duration_seconds_count", job_name="cycle") >= 2
            assert d.metric("fabric_poll_duration_seconds_count") >= 2
            assert d.metric("fabric_components", state="healthy") == 0.0
            cap = CapacityGuard(read_ndt(tiny_plan)).cap
            assert d.metric("fabric_guard_cap") == cap and d.metric("fabric_guard_worst_leaf_fraction") == 1.0
            assert d.metric("fabric_guard_min_leaf_fraction") == CapacityGuard(read_ndt(tiny_plan)).settings.c
            # The API's routes and the webhook receiver are served by the daemon, over its runtime.
            status = d.get("/status").json()
            assert status["dry_run"] is True and status["guard"]["cap"] == cap
            assert status["last_cycle_at"] is not None
            assert d.get("/hosts/pod01-node01/health").json()["healthy"] is True
            assert "/webhooks/jira" in d.get("/openapi.json").json()["paths"]
            assert d.signal(signal.SIGTERM) == 0
        lines = d.lines()
        assert [line["message"] for line in lines][-1] == "stopped"
        cycle_lines = [line for line in lines if line["message"].startswith("cycle done")]
        assert cycle_lines and all(isinstance(line.get("cycle"), int) for line in cycle_lines)
        assert {line["cycle"] for line in cycle_lines} >= {1, 2}


def test_sighup_applies_changed_rules_and_says_what_takes_a_restart(tiny_plan: Path, tmp_path: Path) -> None:
    migrate(tmp_path / "fabric.db")
    port = free_port()
    with simulator(tiny_plan) as sim:
        strict = '\n[rules]\nflap_cycles = 20\nburst_cycles = 20\ndowntime = "1h"\n'
        config = write_config(tmp_path, sim.url, tiny_plan, port=port, extra=strict)
        with daemon(config, port, tmp_path / "daemon.log") as d:
            d.wait_for("a cycle", lambda: d.cycles() >= 1)
            sim.inject(fault="flap", link="core01-01/1", cycles=5, period="20s")
            sim.advance(300)
            seen = d.cycles()
            d.wait_for("the flaps' cycles", lambda: d.cycles() >= seen + 2)
            assert d.metric("fabric_findings_total", rule="flap") == 0  # 5 flaps: under 20
            config.write_text(config.read_text().replace(strict, "\n")  # the default rules: 3 flaps are a fault
                              .replace('shutdown_wait = "20s"', 'shutdown_wait = "21s"'))
            d.process.send_signal(signal.SIGHUP)
            d.wait_for("the reload's line", lambda: any(line["message"].startswith("reload:") for line in d.lines()))
            sim.inject(fault="flap", link="core01-01/1", cycles=5, period="20s")
            sim.advance(300)
            d.wait_for("a flap found under the new rule", lambda: d.metric("fabric_findings_total", rule="flap") == 1)
            config.write_text(config.read_text() + "bad_key = 1\n")
            d.process.send_signal(signal.SIGHUP)
            d.wait_for("the second reload", lambda: sum(line["message"].startswith("reload:")
                                                         for line in d.lines()) == 2)
            reloads = [line["message"] for line in d.lines() if line["message"].startswith("reload:")]
            assert reloads[0] == ("reload: applied rules; not applied, they take a restart: daemon; silences are "
                                  "read at every cycle")
            assert reloads[1].startswith(f"reload: {config} not applied: ")
            assert "api.bad_key: unknown key" in reloads[1]
            assert d.get("/healthz").status_code == 200
            assert d.signal(signal.SIGTERM) == 0


def test_the_api_answers_while_the_engine_starts_and_says_it_is_starting(tiny_plan: Path, tmp_path: Path) -> None:
    """Start-up may wait for UFM (a crash's pending jobs, up to ``job_deadline``): a health check must not find the
    process dead meanwhile, nor ready."""
    migrate(tmp_path / "fabric.db")
    port = free_port()
    with simulator(tiny_plan) as sim:
        sim.inject(fault="api", endpoint="/app/events", mode="delay", delay=6, requests=1)  # start-up's read
        config = write_config(tmp_path, sim.url, tiny_plan, port=port)
        with daemon(config, port, tmp_path / "daemon.log") as d:
            assert d.get("/healthz").status_code == 200
            starting = d.get("/readyz")
            assert starting.status_code == 503, starting.text
            assert "the engine is starting (settling what the last run left pending)" in starting.json()["reasons"]
            assert d.get("/status").json()["starting"] is True and d.cycles() == 0
            d.wait_for("ready", lambda: d.get("/readyz").status_code == 200)
            assert d.get("/status").json()["starting"] is False
            assert d.signal(signal.SIGTERM) == 0


def test_ufm_failing_makes_the_daemon_unready_until_it_answers_again(tiny_plan: Path, tmp_path: Path) -> None:
    migrate(tmp_path / "fabric.db")
    port = free_port()
    with simulator(tiny_plan) as sim:
        config = write_config(tmp_path, sim.url, tiny_plan, port=port)
        with daemon(config, port, tmp_path / "daemon.log") as d:
            d.wait_for("ready", lambda: d.get("/readyz").status_code == 200)
            sim.inject(fault="api", endpoint="*", mode="error", status=503, requests=1_000_000)
            d.wait_for("a failed cycle", lambda: d.metric("fabric_job_errors_total", job_name="cycle", kind="ufm") >= 1)
            unready = d.get("/readyz")
            assert unready.status_code == 503 and unready.json()["ready"] is False
            assert any(reason.startswith("UFM did not answer the last cycle (ufm: ")
                       for reason in unready.json()["reasons"]), unready.json()
            assert d.get("/healthz").status_code == 200  # alive: a failed cycle does not end the process
            httpx.delete(f"{sim.url}/simulator/api_faults", timeout=10).raise_for_status()
            d.wait_for("ready again", lambda: d.get("/readyz").status_code == 200)
            assert d.signal(signal.SIGTERM) == 0


def test_sigterm_waits_for_a_running_cycle_only_as_long_as_shutdown_wait(tiny_plan: Path, tmp_path: Path) -> None:
    migrate(tmp_path / "fabric.db")
    port = free_port()
    with simulator(tiny_plan) as sim:
        config = write_config(tmp_path, sim.url, tiny_plan, port=port)
        config.write_text(config.read_text().replace('shutdown_wait = "20s"', 'shutdown_wait = "1s"'))
        with daemon(config, port, tmp_path / "daemon.log") as d:
            d.wait_for("a cycle", lambda: d.cycles() >= 1)
            sim.inject(fault="api", endpoint="/app/events", mode="delay", delay=4, requests=1)
            d.wait_for("a cycle stuck on UFM", lambda: _stuck(d))
            assert d.signal(signal.SIGTERM) == 0
        messages = [line["message"] for line in d.lines()]
        assert "the running cycle did not finish within 1s: stopping anyway (the next start settles what it left " \
               "pending)" in messages
        assert messages[-1] == "stopped"


def _stuck(d: Daemon) -> bool:
    """The cycle started after the fault was injected is still running: no cycle completed for a second."""
    before = d.cycles()
    time.sleep(1.5)
    return d.cycles() == before
