"""What every ``fabricctl`` command shares: exit codes, output formats, errors."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from fabric.remediation.textlimits import BY_MAX, REASON_MAX, within
from fabric.terminal import one_line
from topology.printable import visible_lines
from topology.redact import redacted_url

if TYPE_CHECKING:
    from datetime import timedelta

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


def command_group(help_text: str) -> typer.Typer:
    """A group of commands (``fabricctl silence ...``). Help is click's plain text, as for the root: rich's tables
    squeeze the option column at 80 columns until names are cut ("--ufm-secret-f…"), where click's puts a long name
    on a line of its own and wraps its help below it."""
    return typer.Typer(help=help_text, no_args_is_help=True, rich_markup_mode=None)


def fail(message: str) -> NoReturn:
    """``message`` on stderr, exit 2. Its values are made visible; its own lines (a configuration's problems, one
    a line) stay lines."""
    typer.echo(f"fabricctl: error: {visible_lines(message)}", err=True)
    raise typer.Exit(EXIT_BAD_INPUT)


def check_writable(output: Path) -> None:
    """One line naming ``output``, exit 2, when it surely cannot be written as a file: checked before the work whose
    result it is to hold, so that a typo costs no wait."""
    if output.is_dir():
        fail(f"cannot write {output}: it is a directory (give a file name)")
    if output.parent.exists() and not output.parent.is_dir():
        fail(f"cannot write {output}: {output.parent} is not a directory")


@contextmanager
def replacing(output: Path) -> Iterator[Path]:
    """A path to write to that becomes ``output`` only once everything was written: a failed write leaves no
    half file where a good one may have been. Any failure to write is one line naming ``output``, exit 2."""
    check_writable(output)
    partial = output.with_name(f".{output.name}.partial")
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        yield partial
        partial.replace(output)
    except OSError as exc:
        fail(f"cannot write {output}: {exc.strerror or exc}")
    finally:
        with suppress(OSError):
            partial.unlink(missing_ok=True)


def write_text(output: Path, text: str) -> None:
    """``text`` written to ``output`` whole or not at all (``replacing``)."""
    with replacing(output) as partial:
        partial.write_text(text, encoding="utf-8")


def bounded(type_name: str, option: str) -> Callable[[str], Any]:
    """A typer ``parser`` for ``option``: its text read as the type ``type_name`` of ``fabric.bounded`` (the one the
    HTTP API validates the same value with); out of bounds, one line naming the option and exit 2. Imported when
    the option is given, so that pydantic stays out of every other command's start-up."""
    def parse(text: str) -> Any:
        from pydantic import TypeAdapter, ValidationError

        from fabric import bounded as types

        try:
            return TypeAdapter(getattr(types, type_name)).validate_python(text)
        except ValidationError as exc:
            fail(f"{option}: {str(exc.errors()[0]['msg']).removeprefix('Value error, ')}")

    parse.__name__ = type_name  # what --help shows as the value's type
    return parse


def limited(text: str, limit: int, option: str) -> str:
    """``text``, or one line naming ``option`` and exit 2 when it is longer than ``limit`` characters (what the
    store keeps of an operator's words is bounded: ``fabric.remediation.textlimits``)."""
    try:
        return within(text, limit, option)
    except ValueError as exc:
        fail(str(exc))


ByOption = Annotated[str, typer.Option("--by", envvar="USER", help="Who asks (kept in the audit trail).",
                                       callback=lambda by: limited(by, BY_MAX, "--by"))]


def reason_text(text: str) -> str:
    """An operator's ``--reason``, stripped: one line and exit 2 when it is empty or longer than the store keeps."""
    if not text.strip():
        fail("--reason: give a reason (it is kept in the audit trail)")
    return limited(text.strip(), REASON_MAX, "--reason")


def positive_duration(text: str, option: str, zero: str) -> timedelta:
    """``text`` read as a duration (``90m``, ``2d``): one line naming ``option`` and exit 2 when it is not one, or
    ``option: zero`` when it is not longer than zero."""
    from fabric.durations import parse_duration

    try:
        length = parse_duration(text)
    except ValueError as exc:
        fail(f"{option}: {exc}")
    if length.total_seconds() <= 0:
        fail(f"{option}: {zero}")
    return length


def print_rows(rows: list[dict[str, Any]], output_format: OutputFormat, line: Callable[[dict[str, Any]], str],
               nothing: str) -> None:
    """``rows`` as a JSON list, or one line each (cut to the terminal's width; the JSON has them whole), or
    ``nothing`` when there are none: a command that prints nothing leaves its reader guessing whether it worked."""
    if output_format is OutputFormat.JSON:
        print_json(rows)
        return
    if not rows:
        typer.echo(one_line(nothing))
    for row in rows:
        typer.echo(one_line(line(row)))


def print_json(payload: Any) -> None:
    sys.stdout.write(json.dumps(payload, indent=2, default=str))
    sys.stdout.write("\n")


@contextmanager
def open_store(url: str, fabric: str, *, writes: bool = False) -> Iterator[Store]:
    """The store of a fabric that already runs: never created by a command, and refused when it holds no row of
    ``fabric`` (a typo in a path or a fabric's name must not look like an empty, healthy system: "automation:
    running" for a fabric that does not exist). Errors (no such file, not a database, refused by PostgreSQL, no
    such fabric) reach ``app``'s one handler."""
    from fabric import wiring
    from fabric.store import database_errors

    with database_errors(url):
        store = wiring.open_existing_store(url, fabric=fabric, read_only=not writes)
        try:
            _check_fabric(store, url, writes=writes)
            yield store
        finally:
            store.close()


def _check_fabric(store: Store, url: str, *, writes: bool) -> None:
    """A ``StoreError`` when the database holds no row of the store's fabric; but a database that holds no fabric
    yet takes writes (a fabric's first silence may come before its daemon's first start), where one that holds
    other fabrics does not (a typo in ``--fabric`` would silence nothing)."""
    from fabric.store import StoreError

    if store.holds_fabric():
        return
    known = store.fabrics()
    if writes and not known:
        return
    held = (f"it holds {', '.join(repr(name) for name in known)}" if known else
            "it holds no fabric yet: a fabric's rows are written when its daemon first starts")
    raise StoreError(f"{redacted_url(url)}: no fabric {store.fabric!r} there ({held}); check --fabric or "
                     "FABRIC_FABRIC__NAME")
