"""``fabricctl config check`` and ``config show``: the file validated, the effective configuration printed."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fabric import wiring
from fabric.cli.app import app
from fabric.config import load_config

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "config.toml"


def _runnable(tmp_path: Path, plan: Path) -> dict[str, str]:
    """What the example leaves to the site, from the environment: the plan, UFM, its secret, a migrated database,
    the webhook's secret."""
    db = tmp_path / "fabric.db"
    wiring.open_store(f"sqlite:///{db}", fabric="default").close()
    return {"FABRIC_FABRIC__PLAN": str(plan), "FABRIC_UFM__URL": "https://ufm.example", "FABRIC_UFM__PASSWORD": "pw",
            "FABRIC_STORE__URL": f"sqlite:///{db}", "FABRIC_TICKETS__WEBHOOK_SECRET": "key"}


def test_check_accepts_the_example_and_names_every_problem_of_a_bad_file(tmp_path: Path, tiny_plan: Path) -> None:
    ok = CliRunner(env=_runnable(tmp_path, tiny_plan)).invoke(app, ["config", "check", str(EXAMPLE)])
    assert ok.exit_code == 0 and ok.output.strip() == f"{EXAMPLE}: ok", ok.output
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


def test_check_says_what_run_would_refuse(tmp_path: Path) -> None:
    """It said "ok" to a file without [fabric] plan, which run then refused."""
    refused = CliRunner(env={"FABRIC_STORE__URL": f"sqlite:///{tmp_path / 'none.db'}"}).invoke(
        app, ["config", "check", str(EXAMPLE)])
    assert refused.exit_code == 2
    assert refused.output.splitlines() == [
        f"fabricctl: error: {EXAMPLE}: fabric.plan: not set: fabricctl run needs the wiring plan (an NDT CSV) in the "
        "file or FABRIC_FABRIC__PLAN",
        f"{EXAMPLE}: ufm.url: not set (set it in the file or FABRIC_UFM__URL)",
        f"{EXAMPLE}: sqlite:///{tmp_path / 'none.db'}: no database at {tmp_path / 'none.db'} (check the path, or "
        "create it with `fabricctl store migrate`)",
    ]


def test_check_warns_of_values_that_are_valid_but_surely_wrong(tmp_path: Path, tiny_plan: Path) -> None:
    env = _runnable(tmp_path, tiny_plan) | {"FABRIC_GUARD__HOURLY_LIMIT": str(10**29),
                                            "FABRIC_TICKETS__WEBHOOK_SECRET": None}
    config = tmp_path / "config.toml"
    config.write_text(f'[fabric]\nname = "{"x" * 100_000}"\n')
    checked = CliRunner(env=env).invoke(app, ["config", "check", str(config)])
    assert checked.exit_code == 0, checked.output
    lines = checked.output.splitlines()
    assert lines[-1] == f"{config}: ok (3 warnings)"
    assert any(f"fabric.name: '{'x' * 64}'… (100000 characters)" in line for line in lines)
    assert any(f"guard.hourly_limit: {10**29} disables an hour, more than the plan's 48 cables" in line
               for line in lines)
    assert any("tickets.webhook_secret: not set: POST /webhooks/jira accepts unsigned deliveries" in line
               for line in lines)
    assert max(len(line) for line in lines) < 1000
