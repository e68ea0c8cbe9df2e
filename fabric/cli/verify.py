"""``fabricctl verify``: the as-built cabling against the plan."""

from __future__ import annotations

import gc
import math
from pathlib import Path
from typing import Annotated

import typer

from fabric.cli.common import (
    EXIT_FINDINGS,
    EXIT_OK,
    FormatOption,
    OutputFormat,
    check_writable,
    fail,
    print_json,
    write_text,
)
from fabric.cli.ufm import (
    UfmAuthOption,
    UfmCa,
    UfmInsecure,
    UfmSecretFile,
    UfmTimeout,
    UfmUrl,
    UfmUser,
    read_as_built,
    ufm_target,
)
from fabric.ufm.address import DEFAULT_TIMEOUT_S
from topology.errors import InputError


def verify(
    plan: Annotated[Path, typer.Option("--plan", "-p", help="The wiring plan (NDT CSV).")],
    as_built: Annotated[Path | None, typer.Option(
        "--as-built", "-a",
        help="UFM snapshot directory (systems.json, links.json, optional ports.json), an ibnetdiscover dump, "
             "or another NDT CSV.")] = None,
    ufm: UfmUrl = None,
    ufm_auth: UfmAuthOption = "basic",
    ufm_user: UfmUser = "admin",
    ufm_secret_file: UfmSecretFile = None,
    ufm_ca_bundle: UfmCa = None,
    ufm_insecure: UfmInsecure = False,
    ufm_timeout: UfmTimeout = DEFAULT_TIMEOUT_S,
    output_format: FormatOption = OutputFormat.TABLE,
    # Checked below, not by a click range: a range lets nan through and answers inf with a usage panel.
    guard: Annotated[float, typer.Option(help="Share of planned paths to core a leaf needs (0 to 1).")] = 0.75,
    worst: Annotated[int, typer.Option(min=1, help="How many worst offenders to list per category.")] = 10,
    lenient_plan: Annotated[bool, typer.Option(
        help="Load a plan that cables a port twice: keep the first cable, report the conflict.")] = False,
    plan_cache: Annotated[bool, typer.Option(
        "--plan-cache/--no-plan-cache", envvar="FABRIC_PLAN_CACHE",
        help="Keep the plan's model in $XDG_CACHE_HOME/fabric-remediation for the next run, which parses the plan "
             "again only if it or this program changed.")] = True,
    bandwidth: Annotated[bool, typer.Option(
        "--bandwidth",
        help="Also compute each leaf's max flow to the core in Gb/s, which sees a cable running below its "
             "width (slower: loads a graph library).")] = False,
    html: Annotated[Path | None, typer.Option(
        "--html", show_default=False,
        help="Also write the report as one self-contained HTML file (the fat tree drawn with the faulty cables "
             "marked, every leaf's paths, every cable that differs): the file to attach to the ticket.")] = None,
) -> None:
    """Check the as-built cabling (files or a live UFM) against the wiring plan.

    Exit 0 when it matches, 1 when not, 2 on bad input.
    """
    from topology.plancache import default_directory, read_plan
    from topology.verify import verify as run_verify

    if not (math.isfinite(guard) and 0.0 <= guard <= 1.0):
        fail(f"--guard must be a share from 0 to 1 of the planned paths to core, not {guard}")
    if html is not None:
        if str(html) == "-":  # the terminal has the tables or the JSON already
            fail("--html needs a file name, not '-'")
        check_writable(html)
    # A one-shot command that builds ~100k objects and frees them at exit: the cyclic collector would only
    # rescan them over and over (a fifth of the run time on the reference fabric).
    gc.disable()
    try:
        planned = read_plan(plan, lenient=lenient_plan, directory=default_directory() if plan_cache else None)
        actual = read_as_built(as_built, ufm, lambda url: ufm_target(
            url, ufm_auth, ufm_user, ufm_secret_file, ufm_ca_bundle, ufm_insecure, ufm_timeout))
    except InputError as exc:
        fail(str(exc))
    report = run_verify(planned, actual, guard, bandwidth=bandwidth)
    if html is not None:
        from fabric.cli.verify_html import render_verify_html

        write_text(html, render_verify_html(report))
    if output_format is OutputFormat.JSON:
        print_json(report.to_dict(worst))
    else:
        from fabric.cli.verify_render import render_verify
        from fabric.terminal import console

        render_verify(report, console(), worst)
    raise typer.Exit(EXIT_OK if report.matches else EXIT_FINDINGS)
