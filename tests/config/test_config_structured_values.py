"""Structured values: ``FABRIC_*`` variables pydantic-settings reads as JSON, and TOML nested deep. Whatever they
hold, ``config check`` (and ``run``, which loads the same way) ends in one line naming the variable or the key,
exit 2: no ``SettingsError``, no ``RecursionError``, no key read last-wins."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabric.cli.app import app
from fabric.config import ConfigError, load_config

DEEP = "[" * 20_000 + "]" * 20_000


def _check(config: Path) -> tuple[int, list[str]]:
    result = CliRunner().invoke(app, ["config", "check", str(config)])
    assert "Traceback" not in result.output, result.output
    return result.exit_code, result.output.splitlines()


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "config.toml"
    path.write_text('[fabric]\nname = "lab"\n')
    return path


@pytest.mark.parametrize(("name", "value", "says"), [
    ("FABRIC_TICKETS__JIRA__PRIORITIES", "High", "not JSON (a table is written in JSON here, e.g. "
                                                 '{"key": "value"}): Expecting value at line 1, column 1'),
    ("FABRIC_TICKETS__JIRA__LABELS", '["a", "b"', "not JSON (a list is written in JSON here, e.g. "
                                                  '["a", "b"]): Expecting \',\' delimiter at line 1, column 10'),
    ("FABRIC_TICKETS__JIRA__LABELS", DEEP, "nested deeper than 100 levels"),
    ("FABRIC_TICKETS__JIRA__FIELDS", '{"Team": "a", "Team": "b"}', "Team: duplicate key 'Team'"),
    ("FABRIC_TICKETS__JIRA__PRIORITIES", '{"9": NaN}', "['9']: NaN is not a number JSON has"),
    ("FABRIC_TICKETS__JIRA", '{"project": "NET", "labels": ["x"], "labels": ["y"]}', "labels: duplicate key"),
    ("FABRIC_TICKETS", "{" + '"jira": {' * 200 + "}" * 201, "jira.jira.jira"),
    ("fabric_policy", "[1,", "not JSON (a section is written in JSON here"),
])
def test_a_json_valued_variable_that_is_refused_is_one_line_naming_it(
        monkeypatch: pytest.MonkeyPatch, config: Path, name: str, value: str, says: str) -> None:
    monkeypatch.setenv(name, value)
    code, lines = _check(config)
    assert code == 2
    assert len(lines) == 1 and lines[0].startswith(f"fabricctl: error: {name}: "), lines
    assert says in lines[0], lines


def test_the_same_values_written_right_are_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABRIC_TICKETS__JIRA__LABELS", '["a", "b"]')
    monkeypatch.setenv("FABRIC_TICKETS__JIRA__PRIORITIES", '{"9": "Highest"}')
    loaded = load_config()
    assert loaded.tickets.jira.labels == ("a", "b")
    assert loaded.tickets.jira.priorities == {"9": "Highest"}


def test_a_key_of_a_table_set_by_a_variable_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABRIC_TICKETS__JIRA__PRIORITIES", '{"9": 5}')
    with pytest.raises(ConfigError) as raised:
        load_config()
    assert raised.value.problems == [
        "FABRIC_TICKETS__JIRA__PRIORITIES: tickets.jira.priorities.9: Input should be a valid string (got 5)"]


@pytest.mark.parametrize(("text", "says"), [
    ('[fabric]\nname = "lab"\n\n[tickets.jira]\nlabels = ' + DEEP[:10_000] + DEEP[-10_000:] + "\n",
     ":5: tickets.jira.labels: nested deeper than 100 levels"),
    ("[fabric]\nname = " + "{ a = " * 3000 + "1" + " }" * 3000 + "\n", ":2: fabric.name: nested deeper"),
    ('[fabric]\nname = "lab"\n[tickets.jira]\nlabels = ' + "[" * 150 + "]" * 150 + "\n",
     ": tickets.jira.labels[0][0]"),
])
def test_a_toml_value_nested_past_the_bound_is_one_line_naming_its_key(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "deep.toml"
    path.write_text(text)
    code, lines = _check(path)
    assert code == 2
    assert len(lines) == 1 and lines[0].startswith(f"fabricctl: error: {path}"), lines
    assert says in lines[0], lines
