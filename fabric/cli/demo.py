"""``fabricctl demo``: the product end to end on embedded defaults."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def demo(
    workdir: Annotated[Path, typer.Option(help="Where the demo writes its plan, as-built files, database and the "
                                               "daemon's configuration and log.")] = Path("out/demo"),
    seed: Annotated[int, typer.Option(help="Seed for the planted faults.")] = 7,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Under each line of the timeline: its whole "
                                                                  "reason and the capacity guard's figures.")]
    = False,
    tickets: Annotated[str, typer.Option(help="Where the loop's tickets go: local (the service's database) or jira "
                                              "(a fake Jira on loopback, resolved there, its webhooks signed to "
                                              "the daemon).")] = "local",
) -> None:
    """The product end to end: verify the reference fabric with planted cabling faults, then run the daemon
    (fabricctl run, live) against a simulated UFM with a scenario of faults, repairs through signed ticket
    webhooks and a repaired link failing again, and print what it did as a timeline."""
    from fabric.cli.common import fail
    from fabric.demo.story import run_demo

    if tickets not in ("local", "jira"):
        fail(f"--tickets {tickets!r}: local or jira")
    raise typer.Exit(run_demo(workdir, seed, verbose=verbose, jira=tickets == "jira"))
