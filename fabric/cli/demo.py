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
    """Generate the reference plan, build an as-built fabric with planted cabling faults, and verify it."""
    from fabric.demo.story import run_demo

    raise typer.Exit(run_demo(workdir, seed))
