"""Answers a script can trust, from the real daemon: a refused token, a broken reload and a URL that is no daemon
are errors (exit 2, the problem named), never a success that did nothing."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import httpx
from daemon_support import command, daemon, daemon_env, migrate, simulator, write_config
from typer.testing import CliRunner

from fabric.cli.app import app
from fabric.simulator.server import free_port

ADMIN_TOKEN = "daemon-admin-token"
WHY = {"reason": "CHG-7", "by": "alice"}


def test_the_daemons_answers_say_what_went_wrong(tiny_plan: Path, tmp_path: Path) -> None:
    migrate(tmp_path / "fabric.db")
    port = free_port()
    operator = CliRunner(env={"FABRIC_API__ADMIN_TOKEN": ADMIN_TOKEN})
    intruder = CliRunner(env={"FABRIC_API__ADMIN_TOKEN": "not-the-token"})
    with simulator(tiny_plan) as sim:
        config = write_config(tmp_path, sim.url, tiny_plan, port=port)
        with daemon(config, port, tmp_path / "daemon.log", FABRIC_API__ADMIN_TOKEN=ADMIN_TOKEN) as d:
            d.wait_for("a cycle", lambda: d.cycles() >= 1)
            # No webhook secret is configured: said at start, where an operator looks.
            [unsigned] = [line for line in d.lines() if "tickets.webhook_secret: not set" in line["message"]]
            assert unsigned["level"] == "warning" and "accepts unsigned deliveries" in unsigned["message"]
            api = ["--api", d.api]
            # A wrong token is checked before anything else: it was "not halted", exit 0, the token never sent.
            refused = intruder.invoke(app, ["resume", "--reason", "r", *api])
            assert refused.exit_code == 2, refused.output
            assert "(set FABRIC_API__ADMIN_TOKEN to the daemon's admin token)" in refused.output
            not_halted = operator.invoke(app, ["resume", "--reason", "r", *api])
            assert not_halted.exit_code == 0 and "automation of fabric test is not halted" in not_halted.output
            # A reload of a file that does not load: 422 with its problem, the CLI exits 2; the daemon goes on.
            applied = operator.invoke(app, ["reload", "--reason", "r", *api])
            assert applied.exit_code == 0 and applied.output.startswith("reload: "), applied.output
            config.write_text(config.read_text() + "bad_key = 1\n")
            answer = httpx.post(f"{d.api}/api/v1/reload", json=WHY, timeout=10,
                                headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
            assert answer.status_code == 422 and "api.bad_key: unknown key" in answer.json()["detail"]
            broken = operator.invoke(app, ["reload", "--reason", "r", *api])
            assert broken.exit_code == 2 and "api.bad_key: unknown key" in broken.output, broken.output
            assert d.get("/healthz").status_code == 200
            # The simulator is a web service too, but no daemon: said so, not "Not Found".
            elsewhere = operator.invoke(app, ["status", "--api", sim.url])
            assert elsewhere.exit_code == 2
            assert f"{sim.url} does not answer as a fabric-remediation daemon does" in elsewhere.output
            assert d.signal(signal.SIGTERM) == 0


def test_ufm_failing_at_start_up_is_named_by_its_url_without_its_password(tiny_plan: Path, tmp_path: Path) -> None:
    """It said "UFM request failed: ConnectError" without saying which UFM."""
    migrate(tmp_path / "fabric.db")
    closed = free_port()
    config = write_config(tmp_path, f"http://admin:s3cret@127.0.0.1:{closed}", tiny_plan, port=free_port())
    on_the_wall_clock = [arg for arg in command(config) if arg not in ("--clock", "simulator")]
    done = subprocess.run(on_the_wall_clock, capture_output=True, env=daemon_env(), timeout=60, check=False)
    code, stderr = done.returncode, done.stderr.decode()
    assert code == 2 and "s3cret" not in stderr
    assert stderr.splitlines()[-1].startswith(f"fabricctl: error: UFM at http://admin:***@127.0.0.1:{closed}: "), stderr
