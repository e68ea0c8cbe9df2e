"""The real ``fabricctl run`` as a subprocess for the demo: its configuration, its start, its HTTP API, its stop.

It runs live (``dry_run = false``) against the demo's simulated UFM on loopback, on the simulator's clock
(``--clock simulator``), with SQLite and local tickets in the demo's directory, the simulator's UFM Telemetry read
every simulated minute and a cycle every half second of real time; its log (JSON lines) goes to a file. The
webhook secret is made up for the run and handed over in the environment, as an operator's service manager would;
the caller's own ``FABRIC_*`` variables are left out, so the demo needs and takes no configuration.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import httpx
from prometheus_client.parser import text_string_to_metric_families

from fabric import wiring
from fabric.simulator.server import free_port
from topology import strictjson

FABRIC = "demo"
UFM_PASSWORD = "123456"
"""The simulator's default admin password (``fabric.simulator.auth``)."""
POLL = 0.1
"""Real seconds between two looks at the daemon while waiting for it."""
BOUND = 60.0
"""Real seconds any one wait (start-up, a cycle, the shutdown) may take before the demo gives up."""


class DaemonFailed(RuntimeError):
    """The daemon exited, or did not do what was waited for in time; the message ends with its log's tail."""


JIRA_PROJECT = "OPS"
JIRA_TOKEN = "demo-personal-access-token"
"""What the demo's fake Jira takes as a Data Center personal access token."""


def _tickets(jira_url: str | None) -> str:
    if jira_url is None:
        return '[tickets]\nbackend = "local"\n'
    return (f'[tickets]\nbackend = "jira"\n\n[tickets.jira]\nurl = {json.dumps(jira_url)}\n'
            f'project = "{JIRA_PROJECT}"\ncomponents = ["Fabric"]\npriorities = {{ "9" = "Highest", "6" = "High" }}\n')


def _config(workdir: Path, plan: Path, ufm_url: str, database: Path, port: int, jira_url: str | None) -> Path:
    """The daemon's configuration file (strings written as JSON strings, which TOML reads the same)."""
    path = workdir / "daemon.toml"
    path.write_text(f"""# Written by fabricctl demo: the daemon it runs against the simulated UFM.
[fabric]
name = "{FABRIC}"
plan = {json.dumps(str(plan))}

[policy]
dry_run = false

[escalation]
# Flaps and a lasting BER are reset first: one flapping cable's reset cures it, the other flaps on and is taken out;
# the BER UFM Telemetry sees outlasts its reset. The other faults of the story go out at once, to tell the capacity
# guard's and the repair's stories.
rules = ["flap", "ber_high"]

[ufm]
url = {json.dumps(ufm_url)}

[telemetry]
# The simulator serves UFM Telemetry's CSV beside its REST API; read as often as the daemon allows.
enabled = true
url = {json.dumps(ufm_url)}
interval = "60s"

[store]
url = {json.dumps(f"sqlite:///{database}")}

{_tickets(jira_url)}
[daemon]
interval = "500ms"
ticket_send_interval = "500ms"
shutdown_wait = "20s"

[api]
host = "127.0.0.1"
port = {port}
""")
    return path


class DemoDaemon:
    """``fabricctl run`` started on a fresh database; ``stop`` sends SIGTERM and answers its exit code."""

    def __init__(self, workdir: Path, plan: Path, ufm_url: str, jira_url: str | None = None) -> None:
        """``jira_url``: tickets in the (fake) Jira there, else in the local backend."""
        self.database = workdir / "fabric-remediation.db"
        for stale in workdir.glob("fabric-remediation.db*"):
            stale.unlink()
        wiring.open_store(self.store_url, fabric=FABRIC).close()  # what `fabricctl store migrate` does
        port = free_port()
        self.api = f"http://127.0.0.1:{port}"
        self.log = workdir / "daemon.log"
        self.webhook_secret = secrets.token_hex(16)
        config = _config(workdir, plan, ufm_url, self.database, port, jira_url)
        env = {k: v for k, v in os.environ.items() if not k.startswith("FABRIC_")}
        env.update(FABRIC_UFM_PASSWORD=UFM_PASSWORD, FABRIC_TICKETS__WEBHOOK_SECRET=self.webhook_secret,
                   FABRIC_TICKETS__JIRA__TOKEN=JIRA_TOKEN)
        with self.log.open("wb") as sink:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "fabric.cli", "run", "--config", str(config), "--clock", "simulator",
                 "--log-format", "json"], stdout=subprocess.DEVNULL, stderr=sink, env=env)
        self._http = httpx.Client(base_url=self.api, timeout=BOUND)

    @property
    def store_url(self) -> str:
        return f"sqlite:///{self.database}"

    def __enter__(self) -> Self:
        return self

    def started(self) -> None:
        """Wait for it to answer ``/healthz`` (it starts while the demo's first part runs)."""
        self.wait_for("it to answer /healthz", lambda: self._http.get("/api/v1/healthz").status_code == 200)

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self._http.close()
        if self.process.poll() is None:  # the demo failed before stopping it
            self.process.kill()
            self.process.wait(BOUND)

    def get(self, path: str, **params: Any) -> Any:
        response = self._http.get(f"/api/v1{path}", params=params)
        response.raise_for_status()
        return strictjson.loads(response.content)

    def metric(self, name: str) -> float:
        """A sample of ``/api/v1/metrics`` without labels (0 when absent)."""
        response = self._http.get("/api/v1/metrics")
        response.raise_for_status()
        return next((sample.value for family in text_string_to_metric_families(response.text)
                     for sample in family.samples if sample.name == name and not sample.labels), 0.0)

    def jira_webhook(self, key: str, delivery: str, at: datetime) -> str:
        """Jira's ``issue_updated`` delivery for ticket ``key`` moved to done, signed with the webhook secret as
        Jira signs it; the daemon's answer (``accepted``...)."""
        body = json.dumps({"timestamp": int(at.timestamp() * 1000), "webhookEvent": "jira:issue_updated",
                           "issue": {"key": key, "fields": {"status": {"name": "Done",
                                                                       "statusCategory": {"key": "done"}},
                                                            "resolution": {"name": "Fixed"}}},
                           "changelog": {"id": delivery, "items": []}}).encode()
        digest = hmac.new(self.webhook_secret.encode(), body, hashlib.sha256).hexdigest()
        response = self._http.post("/webhooks/jira", content=body, headers={
            "X-Hub-Signature": f"sha256={digest}", "X-Atlassian-Webhook-Identifier": delivery,
            "Content-Type": "application/json"})
        response.raise_for_status()
        return str(strictjson.loads(response.content)["outcome"])

    def cycled_since(self, when: datetime) -> None:
        """Wait for a cycle that read the clock at ``when`` or later (so it saw everything up to then)."""
        def done() -> bool:
            last = self.get("/status")["last_cycle_at"]
            return last is not None and datetime.fromisoformat(last) >= when
        self.wait_for(f"a cycle at {when:%H:%M:%S}", done)

    def wait_for(self, what: str, check: Callable[[], bool]) -> None:
        deadline = time.monotonic() + BOUND
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise DaemonFailed(f"the daemon exited ({self.process.returncode}) waiting for {what}: "
                                   f"{self.tail()}")
            try:
                if check():
                    return
            except httpx.HTTPError:
                pass  # not listening yet
            time.sleep(POLL)
        raise DaemonFailed(f"no {what} within {BOUND:.0f}s: {self.tail()}")

    def tail(self) -> str:
        return self.log.read_text()[-2000:]

    def stop(self) -> int:
        """SIGTERM, as a service manager stops it: the exit code (0: stopped cleanly)."""
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(BOUND)
