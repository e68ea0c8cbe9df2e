"""``fabricctl``: the command line. Commands import their machinery lazily so that one-shot tools start fast.

One module per command group beside this one; this module only assembles them, and is the one place where
errors become exit codes: a ``FabricError`` (``fabric.errors``: bad input, configuration, UFM, tickets, the
store) is one line on stderr and exit 2; anything else is a bug and keeps its traceback.
Exit codes everywhere: 0 ok, 1 findings (the fabric does not match, something needs attention), 2 unusable
input or a usage error.
"""

from __future__ import annotations

import signal
from typing import Any

import typer
from typer.core import TyperGroup

from fabric.cli import (
    config_cmd,
    demo,
    ops,
    plan,
    replay,
    run,
    simulate,
    simulate_jira,
    tickets,
    ufm,
    verify,
    webhook,
)
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


app = typer.Typer(
    name="fabricctl",
    cls=_Commands,
    help="Safe, explainable remediation of InfiniBand fat-tree fabrics under NVIDIA UFM.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode=None,  # see fabric.cli.common.command_group
)
app.add_typer(plan.plan_app, name="plan")
app.command()(verify.verify)
app.command()(replay.replay)
app.command()(demo.demo)
app.command()(simulate.simulate)
app.command(name="simulate-jira")(simulate_jira.simulate_jira)
app.command()(run.run)
app.command(hidden=True)(run.engine)
app.add_typer(tickets.tickets_app, name="tickets")
app.add_typer(ufm.ufm_app, name="ufm")
app.add_typer(config_cmd.config_app, name="config")
app.command()(webhook.webhook)
ops.register(app)


def main() -> None:  # pragma: no cover - console-script shim
    # `fabricctl verify | head`: a reader that stops early ends us quietly, as it does any Unix tool (exit 141),
    # instead of a BrokenPipeError traceback and an exit code that reads "the fabric does not match".
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    app()
