"""What commands print from data others wrote: one row a line, nothing hidden, as wide as where it goes."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from fabric.cli.app import app
from fabric.remediation.domain import Action, ActionKind, ComponentId, ComponentKind
from fabric.store import Store

LINK = ComponentId(ComponentKind.LINK, "pod01-leaf01/33|pod01-spine01/1")
HOSTILE = "CHG-42\n2026-01-01 00:00:00 forged row\x00\x1b[2J\u202eevil\u2066 [red]markup[/]"
SHOWN = "CHG-42\\n2026-01-01 00:00:00 forged row\\x00\\x1b[2J\\u202eevil\\u2066 [red]markup[/]"
to_a_file = CliRunner(env={"COLUMNS": None})
"""Output into a file or a pipe, no width asked for (CliRunner's output is not a terminal)."""


def _store(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'fabric.db'}"
    Store.open(url).close()
    return url


def _lines_shown(output: str) -> list[str]:
    lines = output.splitlines()
    assert all(line.isprintable() for line in lines), [line for line in lines if not line.isprintable()]
    return lines


def test_a_silence_with_hidden_characters_lists_as_one_visible_row(tmp_path: Path) -> None:
    url = _store(tmp_path)
    added = to_a_file.invoke(app, ["silence", "add", "switch:core\u202e01", "--duration", "2h", "--reason", HOSTILE,
                                   "--store", url])
    assert added.exit_code == 0, added.output
    assert "switch:core\\u202e01" in _lines_shown(added.output)[0]
    [row] = _lines_shown(to_a_file.invoke(app, ["silence", "list", "--store", url]).output)
    assert row.endswith(f"operator: {SHOWN}")


def test_a_decision_table_escapes_every_cell_and_obeys_no_markup(tmp_path: Path) -> None:
    url = _store(tmp_path)
    with Store.open(url) as store:
        store.record_decisions([Action(ActionKind.DISABLE, store.now(), "flap", HOSTILE, LINK, dry_run=False)])
    *_, row = _lines_shown(to_a_file.invoke(app, ["decisions", "--store", url]).output)
    assert row.endswith(SHOWN) and "flap" in row and str(LINK) in row
    block = to_a_file.invoke(app, ["decisions", "--store", url, "--component", str(LINK)]).output
    assert SHOWN in _lines_shown(block)[1]


def test_tables_written_to_a_file_are_whole_and_cut_only_at_a_width_asked_for(tmp_path: Path) -> None:
    url = _store(tmp_path)
    reason = "a reason longer than any terminal " + "x" * 300 + " END"
    with Store.open(url) as store:
        store.record_decisions([Action(ActionKind.DISABLE, store.now(), "flap", reason, LINK, dry_run=False)])
    whole = to_a_file.invoke(app, ["decisions", "--store", url]).output
    assert whole.splitlines()[2].endswith(" END")
    cut = CliRunner(env={"COLUMNS": "80"}).invoke(app, ["decisions", "--store", url]).output
    assert all(len(line) <= 80 for line in cut.splitlines()) and cut.splitlines()[2].endswith("…")


def test_an_error_message_shows_what_was_typed_visibly() -> None:
    result = to_a_file.invoke(app, ["decisions", "--component", "nonsense\x1b[2Ja\nb"])
    assert result.exit_code == 2
    [line] = _lines_shown(result.output)
    assert "\\x1b[2Ja\\nb" in line


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(reason=st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=80)
       .filter(lambda text: text.strip()))
def test_any_reason_is_one_printable_row(tmp_path_factory: pytest.TempPathFactory, reason: str) -> None:
    """SQLite keeps a NUL (the reason above has one), the text argument of a process cannot: that is all."""
    url = _store(tmp_path_factory.mktemp("store"))
    assert to_a_file.invoke(app, ["silence", "add", "switch:*", "--duration", "1h", "--reason", reason,
                                  "--store", url]).exit_code == 0
    rows = _lines_shown(to_a_file.invoke(app, ["silence", "list", "--store", url]).output)
    assert len(rows) == 1


def test_verify_says_a_name_only_looks_like_the_planned_one(tmp_path: Path) -> None:
    header = "StartDevice,StartPort,EndDevice,EndPort\n"
    (tmp_path / "plan.csv").write_text(header + "pod01-leaf01,1,pod01-spine01,1\n")
    (tmp_path / "built.csv").write_text(header + "pod01-le\N{CYRILLIC SMALL LETTER A}f01,1,pod01-spine01,1\n"
                                                 "pod01-leaf02\x1b[2J,1,pod01-spine01,2\n")
    argv = ["verify", "--plan", str(tmp_path / "plan.csv"), "--as-built", str(tmp_path / "built.csv")]
    result = to_a_file.invoke(app, argv)
    assert result.exit_code == 1
    lines = _lines_shown(result.output)
    [fake] = [line for line in lines if "U+0430 CYRILLIC SMALL LETTER A at 9" in line]
    assert "pod01-leaf01 (another device)" in fake
    assert any("pod01-leaf02\\x1b[2J" in line and "hidden characters: \\x1b at 13" in line for line in lines)


@pytest.mark.parametrize("argv", [
    ["verify", "--plan", "PLAN", "--ufm", "http://admin:s3cret@127.0.0.1:1/"],
    ["verify", "--plan", "PLAN", "--ufm", "http://admin:s3cret@127.0.0.1:99999/"],
    ["verify", "--plan", "PLAN", "--ufm", "ftp://admin:s3cret@127.0.0.1/"],
    ["ufm", "snapshot", "--output", "OUT", "--ufm", "http://admin:s3cret@[::1/"],
    ["status", "--api", "http://admin:s3cret@127.0.0.1:1"],
    ["status", "--store", "postgresql+psycopg://fabric:s3cret@127.0.0.1:1/fabric"],
])
def test_a_password_in_a_url_never_reaches_an_error_message(tmp_path: Path, tiny_plan: Path, argv: list[str]) -> None:
    argv = [str(tiny_plan) if arg == "PLAN" else str(tmp_path / "out") if arg == "OUT" else arg for arg in argv]
    result = CliRunner(env={"FABRIC_UFM__PASSWORD": "x"}).invoke(app, argv)
    assert result.exit_code == 2
    assert "s3cret" not in result.output and ":***@" in result.output, result.output


def test_config_show_hides_a_password_in_the_store_url() -> None:
    env = {"FABRIC_STORE__URL": "postgresql+psycopg://fabric:s3cret@db.example/fabric"}
    for argv in (["config", "show"], ["config", "show", "--format", "json"]):
        result = CliRunner(env=env).invoke(app, argv)
        assert result.exit_code == 0 and "fabric:***@db.example" in result.output and "s3cret" not in result.output


def test_a_nul_in_an_ibnetdiscover_node_description_is_shown_and_flagged(tmp_path: Path) -> None:
    """It split the line and printed raw control characters in verify's tables."""
    described = "host1\x00\u202e mlx5_0"
    dump = tmp_path / "ibnetdiscover.txt"
    dump.write_text("\n".join([
        "vendid=0x2c9", "sysimgguid=0xa1", "switchguid=0xa1(a1)",
        'Switch\t41 "S-00000000000000a1"\t\t# "MF0;leaf-1:MQM8700/U1" enhanced port 0 lid 3 lmc 0',
        f'[1]\t"H-00000000000000b1"[1](b1) \t\t# "{described}" lid 4 4xHDR', "", "caguid=0xb1",
        f'Ca\t1 "H-00000000000000b1"\t\t# "{described}"',
        '[1](b1) \t"S-00000000000000a1"[1]\t\t# lid 4 lmc 0 "MF0;leaf-1:MQM8700/U1" lid 3 4xHDR', ""]))
    (tmp_path / "plan.csv").write_text("StartDevice,StartPort,EndDevice,EndPort\nleaf-1,1,host1 mlx5_0,1\n")
    result = to_a_file.invoke(app, ["verify", "--plan", str(tmp_path / "plan.csv"), "--as-built", str(dump)])
    assert result.exit_code == 1
    lines = _lines_shown(result.output)
    [flagged] = [line for line in lines if "hidden characters: \\x00 at 6, \\u202e at 7" in line]
    assert "host1\\x00\\u202e mlx5_0" in flagged and "host1 mlx5_0 (another device)" in flagged
