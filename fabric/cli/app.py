"""``fabricctl``: the command line. Commands import their machinery lazily so that one-shot tools start fast.

One module per command group beside this one; this module only assembles them, and is the one place where
errors become exit codes: a ``FabricError`` (``fabric.errors``: bad input, configuration, UFM, tickets, the
store) is one line on stderr and exit 2; anything else is a bug and keeps its traceback.
Exit codes everywhere: 0 ok, 1 findings (the fabric does not match, something needs attention), 2 unusable
input or a usage error.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable
from importlib import import_module
from typing import Any

import typer
from typer.core import TyperGroup

from fabric.cli.common import fail


class _Commands(TyperGroup):
    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except typer.Exit:  # a command's exit code (verify's 1 for findings), no error: fabric.errors stays unloaded
            raise
        except Exception as exc:
            from fabric.errors import as_fabric_error

            error = as_fabric_error(exc)  # None for exits, usage errors and bugs: they go on as they are
            if error is None:
                raise
            fail(str(error))


def _module(name: str) -> Any:
    return import_module(f"fabric.cli.{name}")


_PARTS: tuple[tuple[tuple[str, ...], Callable[[typer.Typer], object]], ...] = (
    (("plan",), lambda app: app.add_typer(_module("plan").plan_app, name="plan")),
    (("verify",), lambda app: app.command()(_module("verify").verify)),
    (("identify",), lambda app: app.command()(_module("identify").identify)),
    (("burnin",), lambda app: app.add_typer(_module("burnin").burnin_app, name="burnin")),
    (("replay",), lambda app: app.command()(_module("replay").replay)),
    (("demo",), lambda app: app.command()(_module("demo").demo)),
    (("simulate",), lambda app: app.command()(_module("simulate").simulate)),
    (("simulate-jira",), lambda app: app.command(name="simulate-jira")(_module("simulate_jira").simulate_jira)),
    (("run",), lambda app: app.command()(_module("run").run)),
    (("engine",), lambda app: app.command(hidden=True)(_module("run").engine)),
    (("tickets",), lambda app: app.add_typer(_module("tickets").tickets_app, name="tickets")),
    (("ufm",), lambda app: app.add_typer(_module("ufm").ufm_app, name="ufm")),
    (("config",), lambda app: app.add_typer(_module("config_cmd").config_app, name="config")),
    (("webhook",), lambda app: app.command()(_module("webhook").webhook)),
    (("silence", "components", "store"), lambda app: _module("ops").register(app)),
    (("hosts",), lambda app: _module("hosts").register(app)),
    (("bisect",), lambda app: app.command()(_module("bisect").bisect)),
)
"""Each module's commands and groups, by the names they add, in the order ``fabricctl --help`` lists them; a module
is imported only when its part is added (each takes 3-9 ms to import: their options and annotations)."""


def assembled(command: str | None = None) -> typer.Typer:
    """fabricctl: every command, or only the part that adds ``command`` (a top-level command or group name) when
    one does. Click builds the options of every command it is handed before it runs one (30-40 ms for all of
    fabricctl's, some 5 % of ``verify`` on h100-4k), so ``main`` hands it the one a run names; the command's help,
    usage errors and exit codes are the same either way."""
    app = typer.Typer(
        name="fabricctl",
        cls=_Commands,
        help="Safe, explainable remediation of InfiniBand fat-tree fabrics under NVIDIA UFM.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        add_completion=False,
        rich_markup_mode=None,  # see fabric.cli.common.command_group
    )
    parts = [add for names, add in _PARTS if command in names] or [add for _, add in _PARTS]
    for add in parts:
        add(app)
    if len(parts) == 1:
        app.callback()(_named_command)
    return app


def _named_command() -> None:
    """A callback, so that an app of one command stays a group that the command is named in (typer would make a
    lone command the root, and ``fabricctl verify`` would read ``verify`` as an argument of its own)."""


def __getattr__(name: str) -> typer.Typer:
    """``app``: every command assembled, made when first asked for (by tests and ``python -m``-less callers); the
    console script assembles only the part a run names (``main``)."""
    if name != "app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    whole = globals()["app"] = assembled()
    return whole


def main() -> None:  # pragma: no cover - console-script shim
    # `fabricctl verify | head`: a reader that stops early ends us quietly, as it does any Unix tool (exit 141),
    # instead of a BrokenPipeError traceback and an exit code that reads "the fabric does not match".
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    assembled(sys.argv[1] if len(sys.argv) > 1 else None)()
