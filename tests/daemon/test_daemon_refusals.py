"""``fabricctl run`` refuses to start, exit 2 with one line naming what to fix, before it serves or writes."""

from __future__ import annotations

import socket
from pathlib import Path

import sqlalchemy as sa
from daemon_support import daemon, migrate, refused, simulator, write_config

from fabric.simulator.server import free_port
from fabric.store.migrations import SCHEMA_VERSION


def _one_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("fabricctl: error: "), stderr
    return lines[0]


def test_an_unknown_config_key_is_named(tiny_plan: Path, tmp_path: Path) -> None:
    migrate(tmp_path / "fabric.db")
    config = write_config(tmp_path, "http://127.0.0.1:9", tiny_plan, port=free_port(),
                          extra='[policy2]\n[rules]\nflap_cycle = 3\n')
    code, stderr = refused(config)
    assert code == 2
    assert f"{config}: rules.flap_cycle: unknown key (did you mean 'flap_cycles'?)" in stderr
    assert "policy2" in stderr and "Traceback" not in stderr


def test_a_missing_database_is_refused_offering_the_migration(tiny_plan: Path, tmp_path: Path) -> None:
    db = tmp_path / "fabric.db"
    with simulator(tiny_plan) as sim:
        code, stderr = refused(write_config(tmp_path, sim.url, tiny_plan, port=free_port(), db=db))
    assert code == 2
    line = _one_line(stderr)
    assert str(db) in line and "fabricctl store migrate" in line
    assert not db.exists() and not db.with_name("fabric.db.lock").exists()


def test_a_database_of_an_older_schema_is_refused_offering_the_migration(tiny_plan: Path, tmp_path: Path) -> None:
    db = tmp_path / "fabric.db"
    migrate(db)
    engine = sa.create_engine(f"sqlite:///{db}")
    with engine.begin() as conn:  # as the previous version left it: its newest migration not applied
        conn.execute(sa.text("UPDATE schema_version SET version = :old WHERE version = :v"),
                     {"old": SCHEMA_VERSION - 1, "v": SCHEMA_VERSION})
    engine.dispose()
    with simulator(tiny_plan) as sim:
        code, stderr = refused(write_config(tmp_path, sim.url, tiny_plan, port=free_port(), db=db))
    assert code == 2
    line = _one_line(stderr)
    assert f"schema version {SCHEMA_VERSION - 1}" in line and f"fabricctl store migrate --store sqlite:///{db}" in line


def test_ufm_refusing_the_credentials_is_refused(tiny_plan: Path, tmp_path: Path) -> None:
    migrate(tmp_path / "fabric.db")
    with simulator(tiny_plan) as sim:
        code, stderr = refused(write_config(tmp_path, sim.url, tiny_plan, port=free_port()),
                               FABRIC_UFM_PASSWORD="wrong")
    assert code == 2
    line = _one_line(stderr)
    assert "refused the credentials of user 'admin' (401)" in line and "wrong" not in line


def test_a_second_daemon_on_the_same_sqlite_database_is_refused(tiny_plan: Path, tmp_path: Path) -> None:
    db = tmp_path / "fabric.db"
    migrate(db)
    first_port, second_port = free_port(), free_port()
    with simulator(tiny_plan) as sim:
        config = write_config(tmp_path, sim.url, tiny_plan, port=first_port)
        with daemon(config, first_port, tmp_path / "first.log") as first:
            code, stderr = refused(write_config(tmp_path, sim.url, tiny_plan, port=second_port))
            assert code == 2
            line = _one_line(stderr)
            assert f"(pid {first.process.pid}) already runs on {db}" in line
            assert first.get("/healthz").status_code == 200  # the first one goes on


def test_no_plan_and_a_port_in_use_are_refused(tiny_plan: Path, tmp_path: Path) -> None:
    migrate(tmp_path / "fabric.db")
    with simulator(tiny_plan) as sim:
        no_plan = write_config(tmp_path, sim.url, tiny_plan, port=free_port())
        no_plan.write_text(no_plan.read_text().replace(f'plan = "{tiny_plan}"\n', ""))
        code, stderr = refused(no_plan)
        assert code == 2 and "fabric.plan: not set" in _one_line(stderr)
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            code, stderr = refused(write_config(tmp_path, sim.url, tiny_plan, port=port))
        assert code == 2 and f"api.host/api.port: cannot listen on 127.0.0.1:{port}" in _one_line(stderr)


def test_an_unknown_log_format_or_clock_is_refused(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from fabric.cli.app import app

    config = tmp_path / "none.toml"
    for option, value in (("--log-format", "xml"), ("--clock", "sundial")):
        result = CliRunner().invoke(app, ["run", "--config", str(config), option, value])
        assert result.exit_code == 2
        assert f"fabricctl: error: {option}: {value!r}: one of" in result.output


def test_a_json_valued_variable_nested_20000_deep_is_refused_naming_it(tiny_plan: Path, tmp_path: Path) -> None:
    """pydantic-settings would decode it with ``json.loads`` and die of a ``RecursionError``."""
    migrate(tmp_path / "fabric.db")
    config = write_config(tmp_path, "http://127.0.0.1:9", tiny_plan, port=free_port())
    code, stderr = refused(config, FABRIC_TICKETS__JIRA__LABELS="[" * 20_000 + "]" * 20_000)
    assert code == 2
    assert _one_line(stderr) == "fabricctl: error: FABRIC_TICKETS__JIRA__LABELS: nested deeper than 100 levels"
