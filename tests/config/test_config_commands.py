"""``fabricctl config check`` and ``config show``: the file validated, the effective configuration printed."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabric.cli.app import app
from fabric.config import load_config

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "config.toml"


def test_check_accepts_the_example_and_names_every_problem_of_a_bad_file(tmp_path: Path) -> None:
    ok = CliRunner().invoke(app, ["config", "check", str(EXAMPLE)])
    assert ok.exit_code == 0 and ok.output.strip() == f"{EXAMPLE}: ok"
    bad = tmp_path / "bad.toml"
    bad.write_text('[policy]\ndry_runn = true\n[rules]\nsettle = "soon"\n')
    refused = CliRunner().invoke(app, ["config", "check", str(bad)])
    assert refused.exit_code == 2 and "Traceback" not in refused.output
    assert f"{bad}: policy.dry_runn: unknown key (did you mean 'dry_run'?)" in refused.output
    assert f"{bad}: rules.settle: not a duration: 'soon'" in refused.output


def test_show_prints_the_effective_configuration_as_toml_that_reads_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABRIC_POLICY__DRY_RUN", "false")
    monkeypatch.setenv("FABRIC_UFM_PASSWORD", "s3cret-never-shown")
    shown = CliRunner().invoke(app, ["config", "show", str(EXAMPLE)])
    assert shown.exit_code == 0, shown.output
    assert "s3cret-never-shown" not in shown.output
    effective = load_config(EXAMPLE).model_dump(mode="json")
    assert effective["policy"]["dry_run"] is False  # the environment wins over the file
    read_back = tomllib.loads(shown.output)

    def without_unset(section: dict[str, object]) -> dict[str, object]:
        return {k: without_unset(v) if isinstance(v, dict) else v for k, v in section.items() if v is not None}

    assert read_back == without_unset(effective)
    as_json = CliRunner().invoke(app, ["config", "show", str(EXAMPLE), "--format", "json"])
    assert json.loads(as_json.output) == effective and "s3cret-never-shown" not in as_json.output
