"""What every ``fabricctl`` command shares: exit codes, output formats, errors."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from fabric.cli.text import one_line
from fabric.remediation.textlimits import within

if TYPE_CHECKING:
    from fabric.store import Store

EXIT_OK, EXIT_FINDINGS, EXIT_BAD_INPUT = 0, 1, 2


class OutputFormat(StrEnum):
    TABLE = "table"
    JSON = "json"


FormatOption = Annotated[OutputFormat, typer.Option("--format", "-f", help="Report format.")]
StoreOption = Annotated[str, typer.Option(
    "--store", envvar="FABRIC_STORE__URL", help="The service's database (SQLAlchemy URL).")]
DEFAULT_STORE = "sqlite:///fabric-remediation.db"
FabricOption = Annotated[str, typer.Option(
    "--fabric", envvar="FABRIC_FABRIC__NAME",
    help="Which fabric (several can share one database; each sees only its own).")]
DEFAULT_FABRIC = "default"
API_URL_ENV = "FABRIC_API_URL"
ApiOption = Annotated[str | None, typer.Option(
    "--api", envvar=API_URL_ENV, show_default=False,
    help="The running daemon's URL (http://host:8080): ask it over HTTP instead of reading --store (the fabric "
         "is then the daemon's; writes need FABRIC_API__ADMIN_TOKEN).")]


def fail(message: str) -> NoReturn:
    typer.echo(f"fabricctl: error: {message}", err=True)
    raise typer.Exit(EXIT_BAD_INPUT)


def bounded(text: str, limit: int, option: str) -> str:
    """``text``, or one line naming ``option`` and exit 2 when it is longer than ``limit`` characters (what the
    store keeps of an operator's words is bounded: ``fabric.remediation.textlimits``)."""
    try:
        return within(text, limit, option)
    except ValueError as exc:
        fail(str(exc))


def print_rows(rows: list[dict[str, Any]], output_format: OutputFormat, line: Callable[[dict[str, Any]], str]) -> None:
    """``rows`` as a JSON list, or one line each (cut to the terminal's width; the JSON has them whole)."""
    if output_format is OutputFormat.JSON:
        print_json(rows)
        return
    for row in rows:
        typer.echo(one_line(line(row)))


def print_json(payload: Any) -> None:
    sys.stdout.write(json.dumps(payload, indent=2, default=str))
    sys.stdout.write("\n")


@contextmanager
def open_store(url: str, fabric: str, *, writes: bool = False) -> Iterator[Store]:
    """The store of a fabric that already runs: never created by a command (a typo must not look like an empty,
    healthy system). Errors (no such file, not a database, refused by PostgreSQL) reach ``app``'s one handler."""
    from fabric import wiring
    from fabric.store import database_errors

    with database_errors(url):
        store = wiring.open_existing_store(url, fabric=fabric, read_only=not writes)
        try:
            yield store
        finally:
            store.close()
