"""``fabricctl bisect RUNS``: the hosts to blame for failing runs, and the next split that finds them fastest."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from fabric.cli.common import EXIT_FINDINGS, FormatOption, OutputFormat, fail, print_json
from fabric.terminal import LineTable, console, one_line
from topology.printable import visible

if TYPE_CHECKING:
    from collections.abc import Mapping

    from fabric.remediation.bisect import Run


def bisect(
    runs: Annotated[Path, typer.Argument(help="The runs: text, one a line ('fail h1 h2 ...', 'pass h3 h4 ...'), or "
                                              "JSON ([{\"hosts\": [...], \"failed\": true}, ...]).")],
    culprits: Annotated[int, typer.Option(min=1, max=8, help="At most this many bad hosts.")] = 1,
    noise: Annotated[int, typer.Option(min=0, max=64, help="At most this many runs' outcomes may be wrong (a "
                                                            "flaky job, a failure of something else).")] = 0,
    groups: Annotated[int, typer.Option(min=1, max=4096, help="Groups in the proposed split.")] = 8,
    size: Annotated[int | None, typer.Option(min=1, max=100_000, help="Hosts a group needs: each is topped "
                                                                       "up with cleared hosts.")] = None,
    plan: Annotated[Path | None, typer.Option("--plan", "-p", help="The wiring plan (NDT CSV): groups take "
                                                                   "hosts that share no leaf where they can.")] = None,
    output_format: FormatOption = OutputFormat.TABLE,
) -> None:
    """Name the hosts consistent with the failures and propose the next split. Exit 0 with suspects named; 1 when
    no set of up to --culprits hosts explains the runs with at most --noise outcomes wrong."""
    from fabric.remediation.bisect import TooManyExplanations, expected_suspects, explain, propose

    read = _runs(runs)
    try:
        verdict = explain(read, culprits, noise)
    except TooManyExplanations as exc:
        fail(f"{runs}: {exc}")
    split = propose(verdict, groups, size, None if plan is None else _leaves(plan)) if verdict.explanations else []
    expected = expected_suspects(verdict.explanations, split)
    if output_format is OutputFormat.JSON:
        print_json({"explanations": len(verdict.explanations), "settled": verdict.settled,
                    "suspects": [{"host": host, "share": round(verdict.share[host], 4)} for host in verdict.suspects],
                    "cleared": list(verdict.cleared), "next_split": split, "expected_suspects_after": expected})
    else:
        _print(verdict.suspects, verdict.share, len(verdict.explanations), verdict.settled, split, expected)
    if not verdict.explanations:
        raise typer.Exit(EXIT_FINDINGS)


def _runs(path: Path) -> list[Run]:
    from fabric.remediation.runs import parse_runs
    from topology.inputs import DOCUMENT, read_input

    data = read_input(path, DOCUMENT)  # a refusal (no such file, a directory) is the app's one line
    try:
        return parse_runs(data.decode("utf-8-sig"), str(path))  # a BOM, as some editors write, is no word
    except UnicodeDecodeError as exc:
        fail(f"{path}: not UTF-8 text (byte {exc.start})")
    except ValueError as exc:
        fail(str(exc))


def _leaves(plan: Path) -> Mapping[str, frozenset[str]]:
    """Each host's leaves, by its name as planned and case-folded."""
    from fabric.remediation.correlate import hosts_behind
    from topology.plancache import default_directory, read_plan

    found: dict[str, set[str]] = {}
    for leaf, hosts in hosts_behind(read_plan(plan, directory=default_directory())).items():
        for host in hosts:
            found.setdefault(host, set()).add(leaf)
            found.setdefault(host.casefold(), set()).add(leaf)
    return {host: frozenset(leaves) for host, leaves in found.items()}


def _print(suspects: tuple[str, ...], share: Mapping[str, float], explanations: int, settled: bool,
           split: list[list[str]], expected: float) -> None:
    if not explanations:
        typer.echo(one_line("no set of up to --culprits hosts explains these runs with at most --noise outcomes "
                            "wrong: allow more culprits or more noise"))
        return
    if settled:
        typer.echo(one_line(f"culprit{'s' if len(suspects) > 1 else ''}: {' '.join(suspects)}"))
        return
    out = console()
    table = LineTable(out, f"{len(suspects)} suspects, {explanations} explanations", "host", "blamed by")
    for host in suspects:
        table.add(host, f"{share[host]:.0%} of the explanations")
    out.print(table)
    typer.echo(f"next split ({len(split)} groups; {expected:.2f} suspects expected after):")
    for number, group in enumerate(split, 1):
        typer.echo(textwrap.fill(" ".join(visible(host) for host in group), width=79, initial_indent=f"  {number:>3}: ",
                                 subsequent_indent=" " * 7, break_on_hyphens=False))
