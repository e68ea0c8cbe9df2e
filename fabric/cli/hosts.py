"""``fabricctl hosts golden``: the golden set, the hosts a scheduler fills first, with each host's history.

Over ``--api`` the running daemon answers (``GET /api/v1/hosts?golden=true``, with its ``[golden] clean_for``);
without it the command folds the store's history itself against ``--plan``, as the daemon does
(``fabric.api.golden``), so it answers with the daemon down.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from fabric.cli.common import (
    DEFAULT_FABRIC,
    DEFAULT_STORE,
    ApiOption,
    FabricOption,
    FormatOption,
    OutputFormat,
    StoreOption,
    command_group,
    fail,
    open_store,
    positive_duration,
    print_json,
)
from fabric.terminal import LineTable, console, one_line

if TYPE_CHECKING:
    from datetime import timedelta

    from fabric.api.models import HostReliability

hosts_app = command_group("Hosts: the golden set a scheduler fills first.")
DEFAULT_CLEAN_FOR = "14d"


@hosts_app.command("golden")
def golden(
    plan: Annotated[Path | None, typer.Option("--plan", "-p", help="The wiring plan (NDT CSV): which components "
                                                                   "are whose host (without --api).")] = None,
    clean_for: Annotated[str | None, typer.Option(
        help="How long a golden host has gone without a finding (without --api; default "
             f"{DEFAULT_CLEAN_FOR}, as [golden] clean_for; over --api the daemon's setting decides).")] = None,
    store_url: StoreOption = DEFAULT_STORE,
    fabric: FabricOption = DEFAULT_FABRIC,
    output_format: FormatOption = OutputFormat.TABLE,
    api: ApiOption = None,
) -> None:
    """The golden hosts: healthy, never quarantined, and clean (no finding on their adapters' cables and ports, the
    host, or a leaf they hang from) for --clean-for; by name, with their history."""
    if api is not None:
        if plan is not None or clean_for is not None:
            fail("--plan and --clean-for are the daemon's over --api (its plan, its [golden] clean_for)")
        from fabric.api.models import HostReliability
        from fabric.cli.api_client import ApiClient

        with ApiClient(api) as client:
            found = client.get_list_of(HostReliability, "/hosts", {"golden": "true"})
    else:
        if plan is None:
            fail("--plan: give the wiring plan (or --api URL to ask the running daemon)")
        length = positive_duration(clean_for or DEFAULT_CLEAN_FOR, "--clean-for", "must be longer than zero")
        found = _from_store(plan, length, store_url, fabric)
    if output_format is OutputFormat.JSON:
        print_json([host.model_dump(mode="json", exclude={"components"}) for host in found])
        return
    if not found:
        typer.echo(one_line("no golden host yet: none has been clean, and watched, that long"))
        return
    out = console()
    table = LineTable(out, f"Golden hosts ({len(found)}), by name", "host", "days clean", "findings", "tickets",
                      "repairs", "strikes")
    for host in found:
        table.add(host.host, host.days_clean, host.findings, host.tickets, host.repairs, host.strikes)
    out.print(table)


def _from_store(plan: Path, clean_for: timedelta, store_url: str, fabric: str) -> list[HostReliability]:
    from fabric.api.golden import GoldenIndex
    from fabric.api.plan_index import plan_index
    from topology.plancache import default_directory, read_plan

    index = plan_index(read_plan(plan, directory=default_directory()))
    with open_store(store_url, fabric) as store:
        return GoldenIndex(index).golden(store, datetime.now(UTC), clean_for)


def register(app: typer.Typer) -> None:
    app.add_typer(hosts_app, name="hosts")
