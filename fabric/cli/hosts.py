"""``fabricctl hosts golden`` and ``hosts history HOST``: the golden set, the hosts a scheduler fills first, and a
host's reliability history per component.

Over ``--api`` the running daemon answers (``GET /api/v1/hosts?golden=true``, with its ``[golden] clean_for``);
without it the command folds the store's history itself against ``--plan``, as the daemon does
(``fabric.api.golden``), so it answers with the daemon down.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

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

    from fabric.api.golden import GoldenIndex
    from fabric.api.plan_index import PlanIndex
    from fabric.cli.api_client import ApiClient
    from fabric.store import Store

hosts_app = command_group("Hosts: the golden set a scheduler fills first.")
DEFAULT_CLEAN_FOR = "14d"


PlanOption = Annotated[Path | None, typer.Option(
    "--plan", "-p", help="The wiring plan (NDT CSV): which components are whose host (without --api).")]
CleanForOption = Annotated[str | None, typer.Option(
    help=f"How long a golden host has gone without a finding (without --api; default {DEFAULT_CLEAN_FOR}, as "
         "[golden] clean_for; over --api the daemon's setting decides).")]
T = TypeVar("T")
Local = Callable[["GoldenIndex", "PlanIndex", "Store", datetime, "timedelta"], T]


def _asked(api: str | None, plan: Path | None, clean_for: str | None, store_url: str, fabric: str,
           remote: Callable[[ApiClient], T], local: Local[T]) -> T:
    """The running daemon's answer over ``api``; else the store's history folded here against ``plan``, as the
    daemon folds it."""
    if api is not None:
        if plan is not None or clean_for is not None:
            fail("--plan and --clean-for are the daemon's over --api (its plan, its [golden] clean_for)")
        from fabric.cli.api_client import ApiClient

        with ApiClient(api) as client:
            return remote(client)
    if plan is None:
        fail("--plan: give the wiring plan (or --api URL to ask the running daemon)")
    length = positive_duration(clean_for or DEFAULT_CLEAN_FOR, "--clean-for", "must be longer than zero")
    from fabric.api.golden import GoldenIndex
    from fabric.api.plan_index import plan_index
    from topology.plancache import default_directory, read_plan

    index = plan_index(read_plan(plan, directory=default_directory()))
    with open_store(store_url, fabric) as store:
        return local(GoldenIndex(index), index, store, datetime.now(UTC), length)


@hosts_app.command("golden")
def golden(plan: PlanOption = None, clean_for: CleanForOption = None, store_url: StoreOption = DEFAULT_STORE,
           fabric: FabricOption = DEFAULT_FABRIC, output_format: FormatOption = OutputFormat.TABLE,
           api: ApiOption = None) -> None:
    """The golden hosts: healthy, never quarantined, and clean (no finding on their adapters' cables and ports, the
    host, or a leaf they hang from) for --clean-for; by name, with their history."""
    from fabric.api.models import HostReliability

    found = _asked(api, plan, clean_for, store_url, fabric,
                   lambda client: client.get_list_of(HostReliability, "/hosts", {"golden": "true"}),
                   lambda golden, _, store, now, length: golden.golden(store, now, length))
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


@hosts_app.command("history")
def history(host: Annotated[str, typer.Argument(help="The host, as planned (any case).")],
            plan: PlanOption = None, clean_for: CleanForOption = None, store_url: StoreOption = DEFAULT_STORE,
            fabric: FabricOption = DEFAULT_FABRIC, output_format: FormatOption = OutputFormat.TABLE,
            api: ApiOption = None) -> None:
    """A host's reliability history, per component (its adapters' cables and ports, the host, its leaves), and
    whether it is golden."""
    from urllib.parse import quote

    from fabric.api.models import HostReliability

    def local(golden: GoldenIndex, index: PlanIndex, store: Store, now: datetime,
              length: timedelta) -> HostReliability:
        if host.casefold() not in index.hosts:
            fail(f"host: no host {host!r} in the fabric plan")
        return golden.history(store, host.casefold(), now, length)

    found = _asked(api, plan, clean_for, store_url, fabric,
                   lambda client: client.get_as(HostReliability, f"/hosts/{quote(host, safe='')}/history"), local)
    if output_format is OutputFormat.JSON:
        print_json(found.model_dump(mode="json"))
        return
    verdict = "golden" if found.golden else "not golden" + (", quarantined once" if found.quarantined else "")
    typer.echo(one_line(f"{found.host}: {verdict}; {found.days_clean} days clean"))
    typer.echo(f"  {found.findings} findings, {found.tickets} tickets, {found.repairs} repairs, "
               f"{found.strikes} strikes")
    if not found.components:
        return
    out = console()
    table = LineTable(out, "Its components", "component", "findings", "last", "tickets", "repairs", "strikes")
    for part in found.components:
        last = part.last_finding.date().isoformat() if part.last_finding else "-"
        table.add(part.component + (" (quarantined)" if part.quarantined else ""), part.findings, last,
                  part.tickets, part.repairs, part.strikes)
    out.print(table)


def register(app: typer.Typer) -> None:
    app.add_typer(hosts_app, name="hosts")
