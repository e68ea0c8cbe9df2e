"""``fabricctl config check|show``: validate a configuration file, print the effective configuration.

Secrets are never fields of the configuration (``fabric.config``): neither command can print one. ``show`` prints
where each secret is read from (a file key), never its value.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer

from fabric.cli.common import FormatOption, OutputFormat, command_group, print_json
from topology.printable import visible
from topology.redact import redacted_url

config_app = command_group("The service's configuration: check a file, show what the service would run with.")

ConfigArgument = Annotated[Path, typer.Argument(help="The TOML configuration file.", show_default=False)]


@config_app.command()
def check(path: ConfigArgument) -> None:
    """Validate FILE with the environment's FABRIC_* overrides as fabricctl run would: every problem, each naming
    where it is (exit 2), then values that are valid but surely not meant (warnings, exit 0).

    Beyond the keys, what run checks before it starts: the wiring plan reads, UFM's URL and secret and Jira's token
    are there, the database exists at this version's schema. Only starting can tell whether UFM accepts the
    credentials and the API's port is free.
    """
    from fabric.config import ConfigError, load_config
    from fabric.daemon.preflight import preflight

    checked = preflight(load_config(path))
    if checked.problems:
        raise ConfigError([f"{path}: {problem}" for problem in checked.problems])
    for warning in checked.warnings:
        typer.echo(f"{path}: warning: {visible(warning)}", err=True)
    typer.echo(f"{path}: ok" + (f" ({len(checked.warnings)} warnings)" if checked.warnings else ""))


@config_app.command()
def show(path: Annotated[Path | None, typer.Argument(help="The TOML configuration file (none: the defaults).",
                                                    show_default=False)] = None,
         output_format: FormatOption = OutputFormat.TABLE) -> None:
    """The effective configuration: FILE, overridden by FABRIC_* variables, every default filled in (TOML, or
    JSON with --format json)."""
    from fabric.config import load_config

    # A URL's password (a store URL from FABRIC_STORE__URL) is no more shown than the secrets are.
    effective = _redacted(load_config(path).model_dump(mode="json"))
    if output_format is OutputFormat.JSON:
        print_json(effective)
        return
    typer.echo("\n".join(toml_lines(effective)))


def _redacted(value: Any) -> Any:
    """``value`` with every string in it shown as ``redacted_url`` shows it."""
    if isinstance(value, str):
        return redacted_url(value)
    if isinstance(value, Mapping):
        return {key: _redacted(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_redacted(item) for item in value]
    return value


def toml_lines(sections: Mapping[str, Any], prefix: str = "") -> list[str]:
    """A configuration's sections as TOML: a table per section, a key unset (``None``) as a comment."""
    lines: list[str] = []
    for name, section in sections.items():
        table = f"{prefix}{name}"
        lines.append(f"[{table}]")
        nested: dict[str, Any] = {}
        for key, value in section.items():
            if isinstance(value, Mapping):
                nested[key] = value
            elif value is None:
                lines.append(f"# {key}: not set")
            else:
                lines.append(f"{key} = {_toml_value(value)}")
        lines.append("")
        if nested:
            lines += toml_lines(nested, f"{table}.")
    return lines


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return json.dumps(str(value))  # a TOML basic string: JSON's escapes are TOML's
