"""examples/container: the image runs as a non-root user and checks ``/healthz``; compose.yaml is a coherent
active/standby pair (two daemons on one fabric and one PostgreSQL, started after the database is migrated) whose
secrets are all files. Read as text and YAML: no container runtime is needed."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from fabric.config import ENV_SECRETS, load_config

CONTAINER = Path(__file__).resolve().parents[2] / "examples" / "container"
SECRET_VARIABLES = {name for env, _ in ENV_SECRETS.values() for name in env.names()} | {"PGPASSWORD",
                                                                                         "POSTGRES_PASSWORD"}
DB_PASSWORD = "PGPASSWORD"
"""The secret the entrypoint hands to libpq."""


def compose() -> dict[str, Any]:
    loaded = yaml.safe_load((CONTAINER / "compose.yaml").read_text())  # merge keys (<<: *daemon) resolved
    assert isinstance(loaded, dict)
    return loaded


def daemons(services: dict[str, Any]) -> dict[str, Any]:
    return {name: service for name, service in services.items() if service.get("command", [""])[0] == "run"}


def instructions(name: str) -> list[str]:
    """The Containerfile's instructions of one kind, continuation lines joined."""
    text = (CONTAINER / "Containerfile").read_text().replace("\\\n", " ")
    return [line.split(None, 1)[1] for line in text.splitlines() if line.startswith(f"{name} ")]


def test_the_image_runs_as_a_user_other_than_root_and_checks_healthz() -> None:
    (user,) = instructions("USER")
    assert user.split(":")[0] not in ("0", "root")
    (check,) = instructions("HEALTHCHECK")  # tests/daemon/test_examples_on_a_daemon.py runs it on a daemon
    port = int(instructions("EXPOSE")[0])
    assert f"http://127.0.0.1:{port}/healthz'" in check  # the root path, where Kubernetes looks too
    assert "CREDENTIALS_DIRECTORY=/run/secrets" in instructions("ENV")[0]


def test_the_entrypoint_is_an_executable_shell_script() -> None:
    entrypoint = CONTAINER / "entrypoint.sh"
    assert os.access(entrypoint, os.X_OK)
    subprocess.run(["sh", "-n", str(entrypoint)], check=True, timeout=10)
    assert f"COPY examples/container/{entrypoint.name} /usr/local/bin/fabric-entrypoint" in \
        [f"COPY {line}" for line in instructions("COPY")]
    assert instructions("ENTRYPOINT") == ['["fabric-entrypoint"]']


def test_the_entrypoint_hands_the_database_password_to_libpq_and_runs_fabricctl(tmp_path: Path) -> None:
    fake = tmp_path / "bin" / "fabricctl"  # says what it was given
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\necho "${PGPASSWORD:-<unset>}|$*"\n')
    fake.chmod(0o755)
    credentials = tmp_path / "secrets"
    credentials.mkdir()

    def entrypoint(**env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["sh", str(CONTAINER / "entrypoint.sh"), "run", "--config", "/etc/x.toml"],
                              env={"PATH": f"{fake.parent}:/usr/bin:/bin", "CREDENTIALS_DIRECTORY": str(credentials),
                                   **env}, capture_output=True, text=True, timeout=10, check=False)

    assert entrypoint().stdout == "<unset>|run --config /etc/x.toml\n"
    credential = credentials / DB_PASSWORD
    credential.write_text("pg-s3cret\n")
    assert entrypoint().stdout == "pg-s3cret|run --config /etc/x.toml\n"
    assert entrypoint(PGPASSWORD="pg-s3cret").stdout == "pg-s3cret|run --config /etc/x.toml\n"
    conflict = entrypoint(PGPASSWORD="stale")
    assert (conflict.returncode, conflict.stdout) == (2, "")
    assert conflict.stderr == (f"fabric-entrypoint: error: PGPASSWORD and the credential {credential} are both set, "
                               "to different values: unset or remove one\n")
    credential.write_text("")
    empty = entrypoint()
    assert (empty.returncode, empty.stderr) == (2, f"fabric-entrypoint: error: PGPASSWORD: the credential "
                                                   f"{credential} is empty\n")


def test_two_daemons_share_one_fabric_one_database_and_one_configuration() -> None:
    services = compose()["services"]
    pair = daemons(services)
    assert len(pair) == 2
    first, second = pair.values()
    shared = ("image", "environment", "volumes", "secrets", "command", "depends_on")
    assert {key: first[key] for key in shared} == {key: second[key] for key in shared}
    published = [port for service in pair.values() for port in service["ports"]]
    assert len(set(published)) == 2 and all(port.startswith("127.0.0.1:") for port in published)
    store = urlsplit(first["environment"]["FABRIC_STORE__URL"])
    postgres = services["postgres"]
    assert postgres["image"].startswith("postgres:")
    assert (store.scheme, store.hostname, store.password) == ("postgresql+psycopg", "postgres", None)
    assert (store.username, store.path.lstrip("/")) == (postgres["environment"]["POSTGRES_USER"],
                                                         postgres["environment"]["POSTGRES_DB"])
    migrate = services["migrate"]
    assert migrate["command"][:2] == ["store", "migrate"]
    assert migrate["environment"]["FABRIC_STORE__URL"] == first["environment"]["FABRIC_STORE__URL"]
    assert first["depends_on"] == {"migrate": {"condition": "service_completed_successfully"}}
    assert migrate["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    assert "pg_isready" in postgres["healthcheck"]["test"]


def test_the_daemons_configuration_loads_and_matches_what_compose_mounts_and_publishes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    services = compose()["services"]
    daemon = next(iter(daemons(services).values()))
    for name in [name for name in os.environ if name.startswith("FABRIC_")]:
        monkeypatch.delenv(name)
    for name, value in daemon["environment"].items():
        monkeypatch.setenv(name, value)
    config = load_config(CONTAINER / "config.toml")
    mounts = dict(volume.split(":")[1::-1] for volume in daemon["volumes"])  # container path -> host path
    assert mounts[daemon["command"][2]] == "./config.toml"
    assert str(config.fabric.plan) in mounts
    assert services["migrate"]["environment"]["FABRIC_FABRIC__NAME"] == config.fabric.name
    assert config.api.host == "0.0.0.0"
    assert {port.rsplit(":", 1)[1] for port in daemon["ports"]} == {str(config.api.port)}
    assert config.store.url.startswith("postgresql")


def test_no_secret_is_written_in_compose_yaml_every_one_is_a_file() -> None:
    document = compose()
    services = document["services"]
    for name, service in services.items():
        assert not SECRET_VARIABLES & set(service.get("environment", {})), name
    declared = document["secrets"]
    assert all(set(secret) == {"file"} for secret in declared.values())
    for name, service in daemons(services).items():
        assert set(service["secrets"]) <= {env.name for env, _ in ENV_SECRETS.values()} | {DB_PASSWORD}, name
        assert DB_PASSWORD in service["secrets"]
    postgres = services["postgres"]
    assert postgres["environment"]["POSTGRES_PASSWORD_FILE"] == f"/run/secrets/{DB_PASSWORD}"
    assert {secret for service in services.values() for secret in service.get("secrets", [])} == set(declared)
