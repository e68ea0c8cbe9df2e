"""`fabricctl tickets`, `status` and `resume` on a real SQLite database."""

from __future__ import annotations

import json
import os
import sqlite3
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from fabric.cli.app import app
from fabric.remediation.domain import ComponentId, ComponentKind, ComponentRecord, Lifecycle
from fabric.store import Store
from tickets.base import dedup_key
from tickets.local import LocalTicketBackend

runner = CliRunner(env={"COLUMNS": "200"})
LINK = ComponentId(ComponentKind.LINK, "pod01-leaf01/33|pod01-spine01/1")


def seeded(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'fabric.db'}"
    with Store.open(url, fabric="lab") as store:
        key = dedup_key("lab", str(LINK))
        row, _ = store.claim_ticket(key, backend="local", summary="flap on a cable", component=LINK)
        ticket = LocalTicketBackend(store.engine).open(key, "flap on a cable", "5 cycles in 10 min")
        store.ticket_opened(row.id, ticket.key)
        store.put_component(LINK, ComponentRecord(Lifecycle.AWAITING_REPAIR, store.now(), "flap", "5 cycles"))
        store.halt("30 distinct components within 15 min")
    return url


def test_tickets_list_show_resolve(tmp_path: Path) -> None:
    url = seeded(tmp_path)
    lab = ["--store", url, "--fabric", "lab"]
    listed = runner.invoke(app, ["tickets", "list", *lab, "--format", "json"])
    assert listed.exit_code == 0, listed.output
    [ticket] = json.loads(listed.output)
    assert (ticket["key"], ticket["status"]) == ("LOCAL-1", "open")
    shown = runner.invoke(app, ["tickets", "show", "LOCAL-1", *lab])
    assert "5 cycles in 10 min" in shown.output
    # Another fabric of the same database neither sees nor resolves lab's ticket.
    with Store.open(url, fabric="other") as store:
        store.add_silence("switch:*", reason="its daemon ran", created_by="test", duration=timedelta(hours=1))
    other = ["--store", url, "--fabric", "other"]
    assert json.loads(runner.invoke(app, ["tickets", "list", *other, "--format", "json"]).output) == []
    foreign = runner.invoke(app, ["tickets", "resolve", "LOCAL-1", "--comment", "x", *other])
    assert foreign.exit_code == 2 and "not one of fabric other's" in foreign.output
    resolved = runner.invoke(app, ["tickets", "resolve", "LOCAL-1", "--comment", "new cable", *lab])
    assert resolved.exit_code == 0 and "resolved" in resolved.output
    again = runner.invoke(app, ["tickets", "list", *lab, "--status", "open", "--format", "json"])
    assert json.loads(again.output) == []
    missing = runner.invoke(app, ["tickets", "show", "LOCAL-99", *lab])
    assert missing.exit_code == 2


def test_status_and_resume(tmp_path: Path) -> None:
    url = seeded(tmp_path)
    halted = runner.invoke(app, ["status", "--store", url, "--fabric", "lab", "--format", "json"])
    assert halted.exit_code == 1
    payload = json.loads(halted.output)
    assert payload["halted"] and payload["components"] == {"awaiting_repair": 1}
    assert payload["not_healthy"][0]["component"] == str(LINK)
    with Store.open(url, fabric="other") as store:
        store.add_silence("switch:*", reason="its daemon ran", created_by="test", duration=timedelta(hours=1))
    other = runner.invoke(app, ["status", "--store", url, "--fabric", "other"])
    assert other.exit_code == 0 and "running" in other.output  # breakers are per fabric
    resumed = runner.invoke(app, ["resume", "--reason", "firmware rollout finished", "--store", url, "--fabric", "lab"])
    assert resumed.exit_code == 0 and "30 distinct components" in resumed.output
    # A request the daemon carries out at its next cycle (tests/engine: test_operator_requests_*): until then
    # the breaker stays halted and the status shows who asked.
    pending = runner.invoke(app, ["status", "--store", url, "--fabric", "lab", "--format", "json"])
    assert pending.exit_code == 1
    [request] = json.loads(pending.output)["pending_requests"]
    assert (request["kind"], request["reason"]) == ("resume", "firmware rollout finished")


@pytest.mark.parametrize("command", [
    ["status"], ["decisions"], ["components", "list"], ["silence", "list"], ["tickets", "list"],
    ["resume", "--reason", "r"], ["silence", "add", "switch:*", "--duration", "1h", "--reason", "r"],
])
def test_a_fabric_the_database_does_not_hold_is_named_not_shown_as_a_healthy_one(tmp_path: Path,
                                                                                 command: list[str]) -> None:
    """``status --fabric <typo>`` said "automation: running" (exit 0); a silence for a typo silenced nothing."""
    url = seeded(tmp_path)
    line = _one_error_line(runner.invoke(app, [*command, "--store", url, "--fabric", "lba"]))
    assert f"{url}: no fabric 'lba' there (it holds 'lab')" in line


def test_a_database_that_holds_no_fabric_yet_says_so_and_takes_a_first_silence(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fabric.db'}"
    Store.open(url).close()
    assert "it holds no fabric yet" in _one_error_line(runner.invoke(app, ["status", "--store", url]))
    added = runner.invoke(app, ["silence", "add", "switch:*", "--duration", "1h", "--reason", "r", "--store", url])
    assert added.exit_code == 0, added.output
    assert runner.invoke(app, ["status", "--store", url]).exit_code == 0


def test_bad_store_url_exits_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["status", "--store", "nosuchdb://x"])
    assert result.exit_code == 2 and "nosuchdb" in result.output


def test_silence_add_list_expire(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fabric.db'}"
    Store.open(url).close()
    added = runner.invoke(app, ["silence", "add", "link:pod01-leaf01/*", "--duration", "2h", "--reason", "CHG-42",
                                "--by", "alice", "--store", url])
    assert added.exit_code == 0, added.output
    listed = json.loads(runner.invoke(app, ["silence", "list", "--store", url, "--format", "json"]).output)
    assert [(s["matcher"], s["by"], s["reason"]) for s in listed] == [("link:pod01-leaf01/*", "alice", "CHG-42")]
    with Store.open(url) as store:
        assert store.is_silenced(LINK, store.now())
    assert runner.invoke(app, ["silence", "expire", str(listed[0]["id"]), "--store", url]).exit_code == 0
    assert json.loads(runner.invoke(app, ["silence", "list", "--store", url, "--format", "json"]).output) == []
    bad = runner.invoke(app, ["silence", "add", "link:x", "--duration", "soon", "--reason", "r", "--store", url])
    assert bad.exit_code == 2 and "not a duration" in bad.output


def test_decisions_explain_what_was_done(tmp_path: Path) -> None:
    from fabric.remediation.domain import Action, ActionKind

    url = f"sqlite:///{tmp_path / 'fabric.db'}"
    with Store.open(url) as store:
        store.record_decisions([
            Action(ActionKind.DISABLE, store.now(), "flap", "5 cycles in 10 min; guard ok", LINK,
                   {"worst_leaf": "pod01-leaf01", "worst_leaf_paths_after": 992}, dry_run=False),
            Action(ActionKind.TICKET, store.now(), "flap", "5 cycles in 10 min", LINK, dry_run=False),
        ])
    result = runner.invoke(app, ["decisions", "--store", url, "--component", str(LINK), "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert [r["action"] for r in rows] == ["disable", "ticket"]
    assert rows[0]["guard"]["worst_leaf_paths_after"] == 992
    table = runner.invoke(app, ["decisions", "--store", url])
    assert "5 cycles in 10 min; guard ok" in table.output
    assert runner.invoke(app, ["decisions", "--store", url, "--component", "nonsense"]).exit_code == 2


def _one_error_line(result: Any) -> str:
    """The command failed as a person can act on: exit 2, one line naming the problem, no traceback."""
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("fabricctl: error: "), result.output
    return str(lines[0])


def test_commands_never_create_a_store(tmp_path: Path) -> None:
    typo = tmp_path / "typo_dir" / "x.db"
    for command in (["status"], ["components", "list"], ["decisions"], ["tickets", "list"], ["silence", "list"],
                    ["silence", "add", "link:*", "--duration", "1h", "--reason", "r"], ["resume", "--reason", "r"]):
        line = _one_error_line(runner.invoke(app, [*command, "--store", f"sqlite:///{typo}"]))
        assert str(typo) in line and "no database" in line
    assert not typo.parent.exists()
    missing = tmp_path / "x.db"
    line = _one_error_line(runner.invoke(app, ["status", "--store", f"sqlite:///{missing}"]))
    assert "create it with `fabricctl store migrate`" in line
    assert not missing.exists()


def test_a_file_that_is_not_a_usable_database_is_one_line(tmp_path: Path) -> None:
    text = tmp_path / "notes.db"
    text.write_text("this is not a database\n")
    assert "is not an SQLite database" in _one_error_line(runner.invoke(app, ["status", "--store", f"sqlite:///{text}"]))
    empty = tmp_path / "empty.db"
    empty.touch()
    assert "it is empty" in _one_error_line(runner.invoke(app, ["status", "--store", f"sqlite:///{empty}"]))
    assert "is a directory" in _one_error_line(runner.invoke(app, ["status", "--store", f"sqlite:///{tmp_path}"]))
    url = seeded(tmp_path)
    good = tmp_path / "fabric.db"
    truncated = tmp_path / "truncated.db"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 3])
    _one_error_line(runner.invoke(app, ["status", "--store", f"sqlite:///{truncated}", "--fabric", "lab"]))
    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE t (x)")
    assert "not a fabric-remediation database" in _one_error_line(
        runner.invoke(app, ["status", "--store", f"sqlite:///{foreign}"]))
    assert url  # the seeded store itself still reads
    assert runner.invoke(app, ["status", "--store", url, "--fabric", "lab"]).exit_code == 1


def test_an_older_schema_asks_for_a_migration(tmp_path: Path) -> None:
    url = seeded(tmp_path)
    with sqlite3.connect(tmp_path / "fabric.db") as conn:
        conn.execute("UPDATE schema_version SET version = version - 1")
    line = _one_error_line(runner.invoke(app, ["status", "--store", url, "--fabric", "lab"]))
    assert "fabricctl store migrate" in line


def test_a_read_only_file_reads_but_refuses_writes(tmp_path: Path) -> None:
    url = seeded(tmp_path)
    path = tmp_path / "fabric.db"
    path.chmod(0o444)
    tmp_path.chmod(0o555)  # nor may SQLite write a journal beside it
    try:
        if os.access(path, os.W_OK):
            pytest.skip("running as root: file permissions do not make a file read-only")
        assert runner.invoke(app, ["status", "--store", url, "--fabric", "lab"]).exit_code == 1  # halted, read fine
        line = _one_error_line(runner.invoke(app, ["silence", "add", "link:*", "--duration", "1h", "--reason", "r",
                                                   "--store", url, "--fabric", "lab"]))
        assert "readonly" in line or "read-only" in line
    finally:
        tmp_path.chmod(0o755)
        path.chmod(0o644)


@pytest.mark.parametrize("url", ["nosuchdb://x", "mysql://u@h/db", "sqlite:///:bad\x00name", "postgresql://u@:99999/db",
                                 "postgresql+psycopg://postgres@127.0.0.1:1/test"])
def test_unusable_urls_are_one_line(url: str) -> None:
    _one_error_line(runner.invoke(app, ["status", "--store", url]))


@pytest.mark.postgres
@pytest.mark.parametrize("change", ["user", "database"])
def test_postgresql_refusing_us_is_one_line(change: str) -> None:
    base = os.environ.get("FABRIC_TEST_POSTGRES_URL")
    if not base:
        pytest.skip("FABRIC_TEST_POSTGRES_URL is not set; set it to a PostgreSQL URL to run the PostgreSQL store tests")
    import sqlalchemy as sa

    parsed = sa.make_url(base)
    wrong = parsed.set(username="no_such_role") if change == "user" else parsed.set(database="no_such_database")
    line = _one_error_line(runner.invoke(app, ["status", "--store", wrong.render_as_string(hide_password=False)]))
    assert ("no_such_role" if change == "user" else "no_such_database") in line


def test_a_maintenance_window_is_a_silence_that_starts_later(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fabric.db'}"
    Store.open(url).close()
    added = runner.invoke(app, ["silence", "add", "switch:core03-*", "--duration", "4h", "--reason", "CHG-7 firmware",
                                "--starts", "2031-01-05T01:00:00+00:00", "--store", url])
    assert added.exit_code == 0, added.output
    with Store.open(url) as store:
        [window] = store.silences()
        assert window.starts_at.isoformat() == "2031-01-05T01:00:00+00:00" and window.ends_at.hour == 5
        assert store.active_silences(store.now()) == []  # not yet
    for bad in ("tomorrow", "2031-01-05T01:00:00"):  # no zone: which one?
        line = _one_error_line(runner.invoke(app, ["silence", "add", "link:*", "--duration", "1h", "--reason", "r",
                                                   "--starts", bad, "--store", url]))
        assert "--starts" in line


@pytest.mark.parametrize(("args", "line"), [
    (["silence", "expire", str(2**64)], "SILENCE_ID: Input should be less than or equal to 9223372036854775807"),
    (["silence", "expire", "0"], "SILENCE_ID: Input should be greater than or equal to 1"),
    (["silence", "add", "link:*", "--duration", "1h", "--reason", "r", "--starts", "9999-12-31T23:30:00-05:00"],
     "--starts: 9999-12-31T23:30:00-05:00 is not between 1970-01-01 and 3000-01-01 (UTC)"),
    (["silence", "add", "link:*", "--duration", "1h", "--reason", "r", "--starts", "0001-01-01T00:00:00+01:00"],
     "--starts: 0001-01-01T00:00:00+01:00 is not between"),
])
def test_numbers_and_times_past_what_the_store_holds_are_exit_2_naming_the_option(tmp_path: Path, args: list[str],
                                                                                   line: str) -> None:
    url = f"sqlite:///{tmp_path / 'fabric.db'}"
    Store.open(url).close()
    assert _one_error_line(runner.invoke(app, [*args, "--store", url])).startswith(f"fabricctl: error: {line}")
    with Store.open(url) as store:
        assert store.silences() == []
