"""``fabricctl``: the command line. Commands import their machinery lazily so that one-shot tools start fast.

One module per command group beside this one; this module only assembles them.
Exit codes everywhere: 0 ok, 1 findings (the fabric does not match, something needs attention), 2 unusable
input or a usage error.
"""

from __future__ import annotations

import typer

from fabric.cli import demo, ops, plan, replay, simulate, tickets, ufm, verify

app = typer.Typer(
    name="fabricctl",
    help="Safe, explainable remediation of InfiniBand fat-tree fabrics under NVIDIA UFM.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(plan.plan_app, name="plan")
app.command()(verify.verify)
app.command()(replay.replay)
app.command()(demo.demo)
app.command()(simulate.simulate)
app.add_typer(tickets.tickets_app, name="tickets")
app.add_typer(ufm.ufm_app, name="ufm")
ops.register(app)


def main() -> None:  # pragma: no cover - console-script shim
    app()
