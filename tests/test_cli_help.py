"""Every ``--help`` screen at 80 columns shows every option and variable name whole, and says what is true."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from fabric.cli.app import app
from fabric.config import DaemonSection
from fabric.durations import format_duration

narrow = CliRunner(env={"COLUMNS": "80"})


def _commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every command and group, the root's path ``()``."""
    yield path, command
    for name, sub in getattr(command, "commands", {}).items():
        yield from _commands(sub, (*path, name))


COMMANDS = list(_commands(typer.main.get_command(app)))


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[" ".join(path) or "fabricctl" for path, _ in COMMANDS])
def test_a_help_screen_at_80_columns_cuts_no_name(path: tuple[str, ...], command: Any) -> None:
    """rich's option tables cut "--ufm-secret-f…" and "FABRIC_UFM__PAS…" to fit 80 columns."""
    result = narrow.invoke(app, [*path, "--help"])
    assert result.exit_code == 0, result.output
    assert "…" not in result.output, result.output
    for param in command.params:
        for name in [*param.opts, *param.secondary_opts, *([param.envvar] if isinstance(param.envvar, str) else [])]:
            if not getattr(param, "hidden", False):
                assert name in result.output, (name, result.output)


def test_replay_help_states_the_default_interval_replay_uses() -> None:
    """It said 60s; the default is the configuration's daemon.interval."""
    shown = narrow.invoke(app, ["replay", "--help"]).output
    assert f"daemon.interval, {format_duration(DaemonSection().interval)} unless" in " ".join(shown.split())


def test_the_simulators_clock_is_offered_where_an_operator_looks() -> None:
    """A daemon against a simulator at --speed 60 needs --clock simulator, which --help did not show."""
    assert "--clock" in narrow.invoke(app, ["run", "--help"]).output
    assert "--clock simulator" in " ".join(narrow.invoke(app, ["simulate", "--help"]).output.split())


README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def test_the_readme_says_what_an_operator_asks_in_the_first_hour() -> None:
    flat = " ".join(README.split())
    assert "fabricctl run --config FILE --clock simulator" in flat  # a daemon against a fast simulator
    assert "`1` the policy would have acted" in flat  # replay's exit 1
    assert "Host health (`/api/v1/hosts`, `/api/v1/hosts/NAME/health`) always answers from the fabric's real" in flat
    assert "with no secret configured, unsigned deliveries are accepted" in flat
