"""A store that cannot be written (a read-only file, or a directory SQLite cannot write its journal in): ``run``
and every command that writes refuse it at start, one line naming the database and why, exit 2; the commands that
only read still read it.

Root writes whatever the permissions say, so as root the file or directory is made immutable (``chattr +i``)
instead; where neither makes it read-only, the test is skipped."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from daemon_support import migrate, refused, simulator, write_config
from typer.testing import CliRunner

from fabric.cli.app import app
from fabric.remediation.domain import ComponentId, ComponentKind, ComponentRecord, Lifecycle
from fabric.simulator.server import free_port
from fabric.store import Store

CANNOT = "the database cannot be written ("


@contextmanager
def read_only(path: Path) -> Iterator[None]:
    """``path`` (a file or a directory) read-only for the block: by its mode, or as root immutable."""
    mode = path.stat().st_mode
    path.chmod(mode & ~0o222)
    immutable = False
    try:
        if os.access(path, os.W_OK):  # root
            immutable = subprocess.run(["chattr", "+i", str(path)], capture_output=True, check=False).returncode == 0
            if not immutable:
                pytest.skip("running as root where chattr +i does not work: nothing here is read-only")
        yield
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(path)], check=True)
        path.chmod(mode)


def _store(tmp_path: Path) -> Path:
    """A migrated store of fabric ``test`` with a quarantined switch, in a directory of its own."""
    db = tmp_path / "store" / "fabric.db"
    db.parent.mkdir()
    migrate(db)
    with Store.open(f"sqlite:///{db}", fabric="test") as store:
        store.put_component(ComponentId(ComponentKind.SWITCH, "core01-01"),
                            ComponentRecord(Lifecycle.QUARANTINED, store.now(), "flap", "three strikes"))
    return db


def _one_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("fabricctl: error: "), output
    return lines[0]


@pytest.mark.parametrize("what", ["file", "directory"])
def test_run_refuses_a_store_it_cannot_write(tiny_plan: Path, tmp_path: Path, what: str) -> None:
    db = _store(tmp_path)
    with simulator(tiny_plan) as sim:
        config = write_config(tmp_path, sim.url, tiny_plan, port=free_port(), db=db)
        with read_only(db if what == "file" else db.parent):
            code, stderr = refused(config)
    assert code == 2, stderr
    line = _one_line(stderr)
    assert line.startswith(f"fabricctl: error: sqlite:///{db}: {CANNOT}"), line


@pytest.mark.parametrize("what", ["file", "directory"])
def test_every_command_that_writes_refuses_it_and_those_that_read_still_read(tmp_path: Path, what: str) -> None:
    db = _store(tmp_path)
    store = ["--store", f"sqlite:///{db}", "--fabric", "test"]
    config = tmp_path / "webhook.toml"
    config.write_text(f'[fabric]\nname = "test"\n[store]\nurl = "sqlite:///{db}"\n')
    writes = [
        ["store", "migrate", "--store", f"sqlite:///{db}"],
        ["silence", "add", "switch:core01-*", "--duration", "1h", "--reason", "CHG-1", *store],
        ["components", "clear", "switch:core01-01", "--reason", "new optics", *store],
        ["resume", "--reason", "done", *store],
        ["webhook", "--config", str(config), "--port", "0"],
    ]
    runner = CliRunner()
    with read_only(db if what == "file" else db.parent):
        for argv in writes:
            result = runner.invoke(app, argv)
            assert result.exit_code == 2, (argv, result.output)
            assert CANNOT in _one_line(result.output), argv
        if what == "file":  # in a read-only directory SQLite cannot open a WAL database even to read it
            assert runner.invoke(app, ["components", "list", *store]).exit_code == 0
    with Store.open(f"sqlite:///{db}", fabric="test") as written:
        assert written.silences() == [] and written.pending_requests() == []


def test_migrate_refuses_a_new_database_in_a_directory_it_cannot_write(tmp_path: Path) -> None:
    directory = tmp_path / "store"
    directory.mkdir()
    with read_only(directory):
        result = CliRunner().invoke(app, ["store", "migrate", "--store", f"sqlite:///{directory / 'new.db'}"])
    assert result.exit_code == 2
    assert CANNOT in _one_line(result.output)
