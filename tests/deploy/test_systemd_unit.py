"""examples/systemd: the unit is hardened as docs/operations.md says, hands over only secrets the daemon reads, and
passes ``systemd-analyze verify`` where systemd is installed."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from fabric.config import ENV_SECRETS

SYSTEMD = Path(__file__).resolve().parents[2] / "examples" / "systemd"
UNIT = SYSTEMD / "fabric-remediation.service"
SYSUSERS = SYSTEMD / "fabric-remediation.conf"
SECRET_NAMES = {env.name for env, _ in ENV_SECRETS.values()}


def directives(text: str) -> dict[str, dict[str, list[str]]]:
    """Each section's keys, with every value a repeated key got (systemd adds most of them up)."""
    sections: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    section = ""
    for line in map(str.strip, text.splitlines()):
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
        elif line and not line.startswith(("#", ";")):
            key, _, value = line.partition("=")
            sections[section][key.strip()].append(value.strip())
    return sections


def test_the_service_is_hardened_and_restarts_on_failure() -> None:
    service = directives(UNIT.read_text())["Service"]
    expected = {"NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes", "PrivateTmp": "yes",
                "CapabilityBoundingSet": "", "Restart": "on-failure", "StateDirectory": "fabric-remediation",
                "RestrictSUIDSGID": "yes"}
    assert {key: service[key] for key in expected} == {key: [value] for key, value in expected.items()}
    assert service["SystemCallFilter"][0] == "@system-service"
    assert service["ExecReload"] == ["/bin/kill -HUP $MAINPID"]  # the daemon reloads on SIGHUP
    (start,) = service["ExecStart"]
    assert start.split()[1:3] == ["run", "--config"]


def test_it_runs_as_the_user_its_sysusers_file_creates() -> None:
    service = directives(UNIT.read_text())["Service"]
    entries = [line.split() for line in SYSUSERS.read_text().splitlines() if line and not line.startswith("#")]
    assert [(entry[0], entry[1]) for entry in entries] == [("u", service["User"][0])]
    assert service["Group"] == service["User"]


def test_every_credential_it_loads_is_a_secret_the_daemon_reads_by_that_name() -> None:
    text = UNIT.read_text()
    loaded = re.findall(r"^#?LoadCredential=([^:\s]+):(\S+)$", text, flags=re.MULTILINE)
    assert {"FABRIC_UFM__PASSWORD", "FABRIC_TICKETS__JIRA__TOKEN"} <= {name for name, _ in loaded}
    assert {name for name, _ in loaded} <= SECRET_NAMES
    assert "Environment=" not in text  # no secret (nor anything else) through the environment


def test_systemd_analyze_verifies_the_unit(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed")
    # verify checks that ExecStart's program exists: this checkout's fabricctl stands in for /opt's.
    fabricctl = Path(sys.executable).with_name("fabricctl")
    unit = tmp_path / UNIT.name
    unit.write_text(UNIT.read_text().replace("/opt/fabric-remediation/bin/fabricctl", str(fabricctl)))
    done = subprocess.run([analyze, "verify", "--man=no", str(unit)], capture_output=True, text=True, timeout=60,
                          check=False)
    # A directive it does not know or cannot parse is only a warning on stderr: that fails too.
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
