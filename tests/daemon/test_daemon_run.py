"""``fabricctl run`` as operators run it: a subprocess, driven only through HTTP, stopped by a signal."""

from __future__ import annotations

import signal
from pathlib import Path

from daemon_support import daemon, free_port, migrate, simulator, write_config

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
            assert "fabric_cycle_duration_seconds_bucket" in text
            assert d.metric("fabric_cycle_duration_seconds_count") >= 2
            assert d.metric("fabric_components", state="healthy") == 0.0
            cap = CapacityGuard(read_ndt(tiny_plan)).cap
            assert d.metric("fabric_guard_cap") == cap and d.metric("fabric_guard_worst_leaf_fraction") == 1.0
            assert d.signal(signal.SIGTERM) == 0
        lines = d.lines()
        assert [line["message"] for line in lines][-1] == "stopped"
        cycle_lines = [line for line in lines if line["message"].startswith("cycle done")]
        assert cycle_lines and all(isinstance(line.get("cycle"), int) for line in cycle_lines)
        assert {line["cycle"] for line in cycle_lines} >= {1, 2}


def test_sighup_rereads_the_configuration_and_says_what_takes_a_restart(tiny_plan: Path, tmp_path: Path) -> None:
    migrate(tmp_path / "fabric.db")
    port = free_port()
    with simulator(tiny_plan) as sim:
        config = write_config(tmp_path, sim.url, tiny_plan, port=port)
        with daemon(config, port, tmp_path / "daemon.log") as d:
            d.wait_for("a cycle", lambda: d.cycles() >= 1)
            config.write_text(config.read_text() + "\n[rules]\nflap_cycles = 4\n")
            d.process.send_signal(signal.SIGHUP)
            d.wait_for("the reload's line", lambda: any(line["message"].startswith("reload:") for line in d.lines()))
            config.write_text(config.read_text() + "bad_key = 1\n")
            d.process.send_signal(signal.SIGHUP)
            d.wait_for("the second reload", lambda: sum(line["message"].startswith("reload:")
                                                         for line in d.lines()) == 2)
            reloads = [line["message"] for line in d.lines() if line["message"].startswith("reload:")]
            assert reloads[0] == ("reload: silences are read at every cycle; changed sections rules take a restart "
                                  "(not applied)")
            assert reloads[1].startswith(f"reload: {config} not applied: ")
            assert "rules.bad_key: unknown key" in reloads[1]
            assert d.get("/healthz").status_code == 200
            assert d.signal(signal.SIGTERM) == 0
