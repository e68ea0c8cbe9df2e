"""``fabricctl demo``: the product end to end on embedded defaults."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def demo(
    workdir: Annotated[Path, typer.Option(help="Where the demo writes its plan and as-built files.")] = Path(
        "out/demo"),
    seed: Annotated[int, typer.Option(help="Seed for the planted faults.")] = 7,
) -> None:
    """The product end to end: verify the reference fabric with planted cabling faults, then run the remediation
    loop against a simulated UFM (disable within the capacity guard, defer, ticket, repair)."""
    from fabric.demo.story import run_demo

    raise typer.Exit(run_demo(workdir, seed))
