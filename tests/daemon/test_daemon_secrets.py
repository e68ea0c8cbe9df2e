"""The daemon's secrets under their ``FABRIC_<SECTION>__<KEY>`` names: read, never shown (log, status, metrics,
error answers), and a secret set under its new and its older name to different values refused before anything
starts."""

from __future__ import annotations

import signal
from pathlib import Path

import httpx
from daemon_support import PASSWORD, daemon, migrate, refused, simulator, write_config
from webhook_support import jira_body, signed

from fabric.simulator.server import free_port

ADMIN_TOKEN = "admin-t0ken-never-shown"
WEBHOOK_SECRET = "hmac-k3y-never-shown"
WEBHOOK_TOKEN = "bearer-t0ken-never-shown"


def test_a_secret_set_under_both_names_to_different_values_is_refused(tiny_plan: Path, tmp_path: Path) -> None:
    migrate(tmp_path / "fabric.db")
    with simulator(tiny_plan) as sim:  # daemon_env sets FABRIC_UFM_PASSWORD, the older name
        code, stderr = refused(write_config(tmp_path, sim.url, tiny_plan, port=free_port()),
                               FABRIC_UFM__PASSWORD="rotated-password")
    assert code == 2
    assert stderr.strip().splitlines() == [
        "fabricctl: error: FABRIC_UFM__PASSWORD and FABRIC_UFM_PASSWORD are both set, to different values: unset "
        "one (FABRIC_UFM_PASSWORD is the older name of FABRIC_UFM__PASSWORD)"]
    assert "rotated-password" not in stderr and PASSWORD not in stderr


def test_the_daemon_reads_its_secrets_under_the_new_names_and_shows_none(tiny_plan: Path, tmp_path: Path) -> None:
    migrate(tmp_path / "fabric.db")
    port = free_port()
    with simulator(tiny_plan) as sim:
        config = write_config(tmp_path, sim.url, tiny_plan, port=port)
        with daemon(config, port, tmp_path / "daemon.log", FABRIC_UFM_PASSWORD="", FABRIC_UFM__PASSWORD=PASSWORD,
                    FABRIC_API__ADMIN_TOKEN=ADMIN_TOKEN, FABRIC_TICKETS__WEBHOOK_SECRET=WEBHOOK_SECRET,
                    FABRIC_TICKETS__WEBHOOK_TOKEN=WEBHOOK_TOKEN) as d:
            d.wait_for("ready (UFM took the password)", lambda: d.get("/readyz").status_code == 200)
            reload = httpx.post(f"{d.api}/api/v1/reload", json={"reason": "test", "by": "alice"},
                                headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=10)
            assert reload.status_code == 200, reload.text
            wrong = httpx.post(f"{d.api}/api/v1/reload", json={"reason": "test", "by": "mallory"},
                               headers={"Authorization": "Bearer guess"}, timeout=10)
            body = jira_body("LOCAL-1")
            unsigned = httpx.post(f"{d.api}/webhooks/jira", content=body,
                                  headers=signed(body, "d-1", secret="guess"), timeout=10)
            generic = httpx.post(f"{d.api}/webhooks/generic", json={"ticket": "LOCAL-1", "status": "resolved"},
                                 headers={"Authorization": "Bearer guess"}, timeout=10)
            assert (wrong.status_code, unsigned.status_code, generic.status_code) == (401, 401, 401)
            shown = [wrong.text, unsigned.text, generic.text, d.get("/status").text, d.get("/metrics").text]
            assert d.signal(signal.SIGTERM) == 0
        shown.append(d.log.read_text())
    for secret in (ADMIN_TOKEN, WEBHOOK_SECRET, WEBHOOK_TOKEN):
        assert not [text for text in shown if secret in text], secret


def test_the_daemon_reads_the_ufm_password_from_its_systemd_credential(tiny_plan: Path, tmp_path: Path) -> None:
    migrate(tmp_path / "fabric.db")
    credentials = tmp_path / "credentials"
    credentials.mkdir()
    (credentials / "FABRIC_UFM__PASSWORD").write_text(PASSWORD + "\n")
    port = free_port()
    with simulator(tiny_plan) as sim:
        config = write_config(tmp_path, sim.url, tiny_plan, port=port)
        with daemon(config, port, tmp_path / "daemon.log", FABRIC_UFM_PASSWORD="",
                    CREDENTIALS_DIRECTORY=str(credentials)) as d:
            d.wait_for("ready (UFM took the password)", lambda: d.get("/readyz").status_code == 200)
            assert d.signal(signal.SIGTERM) == 0
        # the environment's password (daemon_env sets it) and another in the credential: refused before starting
        (credentials / "FABRIC_UFM__PASSWORD").write_text("rotated-password")
        code, stderr = refused(config, CREDENTIALS_DIRECTORY=str(credentials))
    assert code == 2
    assert stderr.strip().splitlines() == [
        f"fabricctl: error: FABRIC_UFM_PASSWORD and the credential {credentials / 'FABRIC_UFM__PASSWORD'} are both "
        "set, to different values: unset or remove one"]
    assert "rotated-password" not in stderr and PASSWORD not in stderr
