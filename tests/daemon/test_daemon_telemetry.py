"""UFM Telemetry through the real daemon: ``fabricctl run`` in live mode reads the simulator's telemetry CSV over
HTTP, on the simulator's clock, and decides on what no UFM event reported.

Faults are raised with the simulator's telemetry steps only (no UFM event of their own), so whatever the daemon
does about them it learnt from the counters.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from daemon_support import HTTP, PASSWORD, Daemon, daemon, migrate, simulator, telemetry_section, write_config

from fabric.simulator.driver import SimulatorDriver
from fabric.simulator.server import free_port

SAMPLE_EVERY = 60
"""Simulated seconds between two samples (``[telemetry] interval``, its smallest)."""
BER_WINDOW = 12 * 60
"""The shorter BER window, in seconds."""


@dataclass
class Feed:
    daemon: Daemon
    sim: SimulatorDriver

    def samples(self, count: int, every: float = SAMPLE_EVERY) -> None:
        """``count`` sample intervals of ``every`` seconds pass, each followed by cycles that read a sample and act
        on it."""
        for _ in range(count):
            self.sim.advance(every)
            self.next_cycles(2)

    def next_cycles(self, count: int) -> None:
        target = self.daemon.cycles() + count
        self.daemon.wait_for(f"{count} more cycles", lambda: self.daemon.cycles() >= target)

    def components(self) -> dict[str, dict[str, Any]]:
        response = self.daemon.get("/components")
        assert response.status_code == 200, response.text
        return {c["id"]: c for c in response.json()["items"]}

    def telemetry(self) -> dict[str, Any]:
        status = self.daemon.get("/status").json()
        assert status["telemetry"] is not None, status
        return dict(status["telemetry"])

    def disabled_ports(self) -> list[str]:
        ports = HTTP.get(f"{self.sim.url}/ufmRest/resources/ports", auth=("admin", PASSWORD), timeout=30).json()
        return sorted(p["name"] for p in ports if p["physical_state"] == "Disabled")


@contextmanager
def feed(tiny_plan: Path, tmp_path: Path) -> Iterator[Feed]:
    db = tmp_path / "fabric.db"
    migrate(db)
    port = free_port()
    with simulator(tiny_plan) as sim:
        config = write_config(tmp_path, sim.url, tiny_plan, port=port, dry_run=False,
                              extra=telemetry_section(sim.url, SAMPLE_EVERY))
        with daemon(config, port, tmp_path / "daemon.log") as running:
            running.wait_for("a first cycle", lambda: running.cycles() >= 1)
            yield Feed(running, sim)
            assert running.signal(signal.SIGTERM) == 0


def test_a_ber_no_event_reported_is_taken_out_and_ticketed_a_link_down_counted_on_one_end_is_nothing(
        tiny_plan: Path, tmp_path: Path) -> None:
    with feed(tiny_plan, tmp_path) as f:
        f.samples(1)  # the first sample: a baseline, no interval yet
        assert f.telemetry()["outcome"] == "accepted"
        f.sim.inject(fault="ber_ramp", port="core01-01/1", ber=1e-12)
        f.sim.inject(fault="link_down_counter", port="core01-02/2", both_ends=False, count=3)
        f.samples(1, BER_WINDOW)  # a BER is judged over a window once the samples span it
        f.samples(2)
        held = f.components()
        [ber] = held.values()
        assert ber["rule"] == "ber_high" and "core01-01/1" in ber["id"], held
        assert ber["lifecycle"] in {"disabled", "awaiting_repair"} and "seen by UFM Telemetry" in ber["reason"]
        f.daemon.wait_for("the cable taken out in UFM", lambda: len(f.disabled_ports()) == 1)
        f.daemon.wait_for("its ticket opened", lambda: len(f.daemon.get(f"/components/{ber['id']}").json()[
            "tickets"]) == 1)
        assert f.daemon.metric("fabric_telemetry_samples_total", outcome="accepted") >= 4
        assert f.daemon.metric("fabric_telemetry_conditions_total") >= 2


def test_a_stale_feed_acts_on_nothing_a_hot_module_goes_out_once_it_is_sound_a_malformed_sample_is_skipped(
        tiny_plan: Path, tmp_path: Path) -> None:
    with feed(tiny_plan, tmp_path) as f:
        f.samples(1)
        f.sim.inject(fault="telemetry_stale", duration="20m")
        f.sim.inject(fault="module_temperature", port="pod02-spine02/5", temperature=85)
        f.samples(3)
        assert f.telemetry()["outcome"] == "stale"
        assert f.components() == {}
        assert f.daemon.metric("fabric_telemetry_samples_total", outcome="stale") >= 2
        f.samples(1, 20 * 60)  # the stale answer ends: a sound sample is read, the module is hot
        f.samples(1)  # (a spine's cable: acted on once it has settled a minute for its switch's other cables)
        [hot] = f.components().values()
        assert hot["rule"] == "temperature" and "pod02-spine02/5" in hot["id"] and hot["never_auto_restore"], hot
        f.daemon.wait_for("the cable taken out in UFM", lambda: len(f.disabled_ports()) == 1)
        f.sim.inject(fault="telemetry_malformed", how="text_in_number", requests=1)
        f.samples(1)
        said = f.telemetry()
        assert said["outcome"] == "refused" and "low_freq_debug:2: column 'Symbol_Errors'" in said["reason"], said
        assert f.daemon.metric("fabric_telemetry_samples_total", outcome="refused") == 1
        assert list(f.components()) == [hot["id"]]
        assert any("sample skipped" in line.get("message", "") for line in f.daemon.lines())


def test_the_same_ber_on_five_ports_of_one_switch_is_one_switch_fault(tiny_plan: Path, tmp_path: Path) -> None:
    with feed(tiny_plan, tmp_path) as f:
        f.samples(1)
        for port in range(1, 6):  # four leaf uplinks and a core downlink of one spine
            f.sim.inject(fault="ber_ramp", port=f"pod01-spine01/{port}", ber=1e-12)
        f.samples(1, BER_WINDOW)
        f.samples(2)
        held = f.components()
        assert [(c["id"], c["rule"], c["lifecycle"]) for c in held.values()] == [
            ("switch:pod01-spine01", "switch_fault", "ticketed")], held
        assert f.disabled_ports() == []


def test_a_ber_ramp_is_reset_once_then_isolated_and_ticketed(tiny_plan: Path, tmp_path: Path) -> None:
    db = tmp_path / "fabric.db"
    migrate(db)
    port = free_port()
    with simulator(tiny_plan) as sim:
        config = write_config(tmp_path, sim.url, tiny_plan, port=port, dry_run=False, max_resets=2,
                              extra=telemetry_section(sim.url, SAMPLE_EVERY))
        config.write_text(config.read_text().replace('[ufm]\n', '[ufm]\nmethod = "isolate"\n'))
        with daemon(config, port, tmp_path / "daemon.log") as running:
            running.wait_for("a first cycle", lambda: running.cycles() >= 1)
            f = Feed(running, sim)
            f.samples(1)
            f.sim.inject(fault="ber_ramp", port="core01-01/1", ber=1e-12)  # a reset does not cure it
            f.samples(1, BER_WINDOW)
            f.samples(2)
            [watched] = f.components().values()
            assert watched["lifecycle"] == "reset", watched
            f.samples(4)  # the fault goes on after the reset: two more BER samples
            [held] = f.components().values()
            kinds = [d["kind"] for d in running.get(f"/components/{held['id']}").json()["decisions"]]
            assert kinds.count("reset") == 1 and "disable" in kinds, kinds
            assert held["lifecycle"] in {"disabled", "awaiting_repair"}, held
            unhealthy = HTTP.get(f"{sim.url}/ufmRest/app/unhealthy_ports", auth=("admin", PASSWORD), timeout=30)
            assert len(unhealthy.json()) == 1, unhealthy.text
            assert f.disabled_ports() == []  # isolated, not disabled: the link stays up for diagnosis
            running.wait_for("its ticket opened", lambda: len(running.get(f"/components/{held['id']}").json()[
                "tickets"]) == 1)
            assert running.signal(signal.SIGTERM) == 0
