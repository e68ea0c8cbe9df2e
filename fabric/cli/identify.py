"""``fabricctl identify``: name every switch of a fresh fabric after the plan, from the hosts it serves."""

from __future__ import annotations

import csv
import gc
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from fabric.cli.common import EXIT_FINDINGS, EXIT_OK, check_writable, fail, print_json, write_text
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

if TYPE_CHECKING:
    from topology.identify import Identification
    from topology.verify import VerifyReport


class IdentifyFormat(StrEnum):
    TABLE = "table"
    JSON = "json"
    CSV = "csv"


_CSV_COLUMNS = ("guid", "name", "planned", "confidence", "why")
_WORST = 10


def identify(
    plan: Annotated[Path, typer.Option("--plan", "-p", help="The wiring plan (NDT CSV).")],
    as_built: Annotated[Path | None, typer.Option(
        "--as-built", "-a",
        help="UFM snapshot directory (systems.json, links.json, optional ports.json) or an ibnetdiscover dump, its "
             "switches under factory names or GUIDs, its host adapters under their hosts' names.")] = None,
    ufm: UfmUrl = None,
    ufm_auth: UfmAuthOption = "basic",
    ufm_user: UfmUser = "admin",
    ufm_secret_file: UfmSecretFile = None,
    ufm_ca_bundle: UfmCa = None,
    ufm_insecure: UfmInsecure = False,
    ufm_timeout: UfmTimeout = DEFAULT_TIMEOUT_S,
    output_format: Annotated[IdentifyFormat, typer.Option("--format", "-f", help="Report format.")] =
        IdentifyFormat.TABLE,
    node_name_map: Annotated[Path | None, typer.Option(
        "--node-name-map", help="Write the names found as a node-name-map file (ibnetdiscover, ibdiagnet, "
                                "OpenSM).")] = None,
    rename_plan: Annotated[Path | None, typer.Option(
        "--rename-plan", help="Write the renames to make in UFM as a CSV (guid, current_name, new_name).")] = None,
) -> None:
    """Name each switch after the plan from the hosts it serves, then check the cabling through those names.

    Exit 0 when every switch is named for sure and the cabling matches, 1 when not, 2 on bad input.
    """
    from topology.identify import identify as run_identify
    from topology.plancache import default_directory, read_plan
    from topology.relabel import relabelled
    from topology.verify import verify

    for output in (node_name_map, rename_plan):
        if output is not None:
            check_writable(output)  # before the work, so that a typo costs no wait
    gc.disable()  # a one-shot command over ~100k objects: as verify does
    try:
        planned = read_plan(plan, directory=default_directory())
        actual = read_as_built(as_built, ufm, lambda url: ufm_target(
            url, ufm_auth, ufm_user, ufm_secret_file, ufm_ca_bundle, ufm_insecure, ufm_timeout))
        found = run_identify(planned, actual)
        # The cabling through the names found: a switch not named keeps its own name, so its cables show as
        # unexpected and its planned ones as missing, which is what is known of them.
        report = verify(planned, relabelled(actual, found.names(), f"{actual.source} (named by identify)"))
        if node_name_map is not None:
            _write_node_name_map(node_name_map, found, planned.source)
        if rename_plan is not None:
            from topology.formats.renameplan import render_rename_plan

            write_text(rename_plan, render_rename_plan(found))
    except InputError as exc:
        fail(str(exc))
    if output_format is IdentifyFormat.JSON:
        print_json({"summary": found.counts(), "switches": [m.to_dict() for m in found.switches],
                    "not_found": found.not_found, "verify": report.to_dict(_WORST)})
    elif output_format is IdentifyFormat.CSV:
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(_CSV_COLUMNS)
        writer.writerows((m.guid or "", m.name, m.planned or "", m.confidence.value, m.why) for m in found.switches)
    else:
        _render(found, report)
    every = all(m.planned is not None for m in found.switches) and not found.not_found
    raise typer.Exit(EXIT_OK if every and report.matches else EXIT_FINDINGS)


def _write_node_name_map(path: Path, found: Identification, plan_source: str) -> None:
    from topology.formats.nodenamemap import render_node_name_map

    named = sorted((m.guid, m.planned) for m in found.switches if m.planned is not None and m.guid is not None)
    header = (f"switch names inferred by fabricctl identify from {plan_source}", "unique matches only")
    write_text(path, render_node_name_map(named, header))


def _render(found: Identification, report: VerifyReport) -> None:
    from fabric.cli.verify_render import render_verify
    from fabric.terminal import LineTable, console

    out = console()
    counts = found.counts()
    title = (f"Switches named from their hosts: {counts['unique']} unique, {counts['ambiguous']} ambiguous, "
             f"{counts['unmatched']} unmatched of {len(found.switches)}")
    table = LineTable(out, title, "guid", "as-built name", "planned", "confidence")
    order = {"unmatched": 0, "ambiguous": 1, "unique": 2}
    ranked = sorted(found.switches, key=lambda m: (order[m.confidence.value], m.planned or m.name))
    for match in ranked:
        table.add(match.guid or "", match.name, match.planned or "-", match.confidence.value)
    out.print(table)
    unsure = [m for m in ranked if m.planned is None]
    if unsure:  # the evidence gets a table of its own: beside four columns it would be cut to nothing at 80
        why = LineTable(out, "Why not named, and what would tell", "guid", "why")
        for match in unsure:
            why.add(match.guid or match.name, match.why)
        out.print(why)
    if found.not_found:
        out.print(f"Planned switches not found ({len(found.not_found)}): " + ", ".join(found.not_found[:_WORST])
                  + (" …" if len(found.not_found) > _WORST else ""), markup=False, highlight=False)
    if found.strangers:
        out.print(f"Host adapters not in the plan, not used as anchors: {len(found.strangers)}", highlight=False)
    render_verify(report, out, _WORST)
