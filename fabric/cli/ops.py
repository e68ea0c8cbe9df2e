"""Operating: ``fabricctl status``, ``resume``, ``decisions``, ``components list|clear``, ``silence``, ``store``.

They work on the service's database, so they answer whether or not the engine is running; each names its fabric
(``--fabric``, as the configuration's ``[fabric] name``) and sees that fabric's rows only. None of them creates a
database: a wrong ``--store`` is an error, not an empty system. What an operator asks the engine to do (release
a quarantine, resume after a storm) is recorded as a request the engine carries out at its next cycle.

With ``--api URL`` (or ``FABRIC_API_URL``) the same commands ask the running daemon over HTTP instead
(``fabric.cli.api_client``); without it they read ``--store`` as always, so they keep working with the daemon
down. Both modes build their rows from the API's models (``fabric.api.models``: from the store's records with
their ``of``, from the API's answers by validation), so the same data prints the same in both. ``tickets`` has
no endpoint and stays on the store.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Annotated

import typer

from fabric.cli.common import (
    DEFAULT_FABRIC,
    DEFAULT_STORE,
    EXIT_FINDINGS,
    EXIT_OK,
    ApiOption,
    ByOption,
    FabricOption,
    FormatOption,
    OutputFormat,
    StoreOption,
    bounded,
    command_group,
    fail,
    open_store,
    positive_duration,
    print_json,
    print_rows,
    reason_text,
)
from fabric.terminal import LineTable, console, one_line
from topology.printable import visible

if TYPE_CHECKING:
    from fabric.api.models import Component, RequestOut
    from fabric.cli.api_client import ApiClient
    from fabric.remediation.domain import ComponentId
    from fabric.store import Store

CONFLICT = 409
"""The API's answer to a resume when automation is not halted."""


def _api(url: str) -> ApiClient:
    from fabric.cli.api_client import ApiClient

    return ApiClient(url)


def _component_path(component: ComponentId) -> str:
    from urllib.parse import quote

    return f"/components/{quote(str(component), safe='')}"


@dataclass(frozen=True)
class _StatusView:
    """What ``status`` shows, from the store or from the API (the rows are the API's models either way)."""

    fabric: str
    dry_run: bool
    """The breaker and the components are a dry run's would-be state."""
    halted: bool
    since: datetime | None
    reason: str
    counts: dict[str, int]
    components: list[Component]
    pending: list[RequestOut]


def _status_from_store(store: Store) -> _StatusView:
    from fabric.api.models import Component, RequestOut

    held = store.state_scope()
    breaker = held.breaker_state()
    return _StatusView(store.fabric, held.would_be, breaker.halted, breaker.since, breaker.reason,
                       {lifecycle.value: count for lifecycle, count in held.lifecycle_counts().items()},
                       [Component.of(c, r, dry_run=held.would_be) for c, r in held.components().items()],
                       [RequestOut.of(request) for request in store.pending_requests()])


def _status_from_api(client: ApiClient) -> _StatusView:
    from fabric.api.models import Status

    live = client.get_as(Status, "/status")
    return _StatusView(live.fabric, live.would_be, live.halted, live.halted_since, live.halt_reason, live.components,
                       _api_components(client), live.pending_requests)


def _api_components(client: ApiClient) -> list[Component]:
    """Every component with a recorded state, page by page (the API's pages hold at most 1000)."""
    from fabric.api.models import ComponentPage

    found: list[Component] = []
    while True:
        page = client.get_as(ComponentPage, "/components", {"limit": 1000, "offset": len(found)})
        found.extend(page.items)
        if not page.items or len(found) >= page.total:
            return found


def status(store_url: StoreOption = DEFAULT_STORE, fabric: FabricOption = DEFAULT_FABRIC,
           output_format: FormatOption = OutputFormat.TABLE, api: ApiOption = None) -> None:
    """The breaker, components by lifecycle, pending operator requests. Exit 1 when automation is halted."""
    if api is None:
        with open_store(store_url, fabric) as store:
            view = _status_from_store(store)
    else:
        with _api(api) as client:
            view = _status_from_api(client)
    counts = {lifecycle: count for lifecycle, count in view.counts.items() if count}
    out = [{"component": c.id, "lifecycle": c.lifecycle, "since": c.since.isoformat(), "rule": c.rule,
            "reason": c.reason} for c in view.components if c.lifecycle != "healthy"]
    pending = [{"id": r.id, "kind": r.kind, "component": r.component or "", "by": r.requested_by,
                "at": r.requested_at.isoformat(), "reason": r.reason} for r in view.pending]
    payload = {"fabric": view.fabric, "dry_run": view.dry_run, "halted": view.halted,
               "halted_since": view.since.isoformat() if view.since else None, "halt_reason": view.reason,
               "components": counts, "not_healthy": out, "pending_requests": pending}
    if output_format is OutputFormat.JSON:
        print_json(payload)
    else:
        state = f"HALTED since {view.since}: {view.reason}" if view.halted else "running"
        mode = " (dry run: the states live mode would reach)" if view.dry_run else ""
        typer.echo(one_line(f"fabric {view.fabric}{mode}, automation: {state}"))
        typer.echo("components: " + (", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none recorded"))
        for entry in out:
            typer.echo(one_line(f"  {entry['lifecycle']:<16} {entry['component']}  {entry['rule']}: "
                                f"{entry['reason']}"))
        for request in pending:
            typer.echo(one_line(f"  requested: {request['kind']} {request['component']} by {request['by']}: "
                                f"{request['reason']}"))
    raise typer.Exit(EXIT_FINDINGS if view.halted else EXIT_OK)


def resume(reason: Annotated[str, typer.Option(help="Why it is safe to resume (kept in the audit trail).")],
           store_url: StoreOption = DEFAULT_STORE, fabric: FabricOption = DEFAULT_FABRIC,
           requested_by: ByOption = "operator", api: ApiOption = None) -> None:
    """Ask the engine to resume automation after the storm breaker halted it (at its next cycle; findings held
    during the storm are dropped)."""
    from fabric.api.models import RequestOut
    from fabric.store.records import RequestKind

    why = reason_text(reason)
    request: RequestOut | None = None
    if api is None:
        with open_store(store_url, fabric, writes=True) as store:
            before = _status_from_store(store)
            if before.halted:
                request = RequestOut.of(store.request(RequestKind.RESUME, reason=why, requested_by=requested_by))
    else:
        from fabric.cli.api_client import ApiError

        with _api(api) as client:
            before = _status_from_api(client)
            try:  # asked whatever the status says: the daemon checks the token first (a wrong one exits 2)
                request = client.post_as(RequestOut, "/resume", {"reason": why, "by": requested_by})
            except ApiError as exc:
                if exc.status != CONFLICT:  # 409: not halted, said as --store says it
                    raise
    if request is None:
        typer.echo(one_line(f"automation of fabric {before.fabric} is not halted"))
        return
    typer.echo(one_line(f"resume requested (request {request.id}); halted since {before.since}: {before.reason}"))
    typer.echo("the engine resumes automation at its next cycle")


def reload(reason: Annotated[str, typer.Option(help="Why (the daemon logs who asked and why).")],
           requested_by: ByOption = "operator", api: ApiOption = None) -> None:
    """Ask the running daemon to re-read its configuration file, as SIGHUP does, and say what it applied.

    Exit 0 when it applied the file (or nothing had changed); 2 when it applied nothing: the file does not load (its
    problems named; the daemon goes on with the configuration it has), the engine is starting or the daemon
    stopping, or this daemon stands by.
    """
    from fabric.api.models import Reloaded

    if api is None:
        fail("reload asks the running daemon: give --api URL (or FABRIC_API_URL), or send the daemon SIGHUP")
    why = reason_text(reason)
    with _api(api) as client:
        done = client.post_as(Reloaded, "/reload", {"reason": why, "by": requested_by})
    typer.echo(visible(done.changed))


def decisions(
    component: Annotated[str | None, typer.Option(help="Only this component ('link:a/1|b/2', 'switch:core01-01').")]
    = None,
    limit: Annotated[int, typer.Option(min=1, max=100_000, help="The newest N decisions (over --api at most "
                                                                 "10000).")] = 50,
    store_url: StoreOption = DEFAULT_STORE,
    fabric: FabricOption = DEFAULT_FABRIC,
    output_format: FormatOption = OutputFormat.TABLE,
    api: ApiOption = None,
) -> None:
    """Why automation did what it did: every decision with its rule, reason and the guard's figures.

    The table gives each reason on one line; --format json (or --component, one decision a block) gives it whole.
    """
    from fabric.api.models import Decision
    from fabric.remediation.domain import ComponentId

    try:
        wanted = ComponentId.parse(component) if component else None
    except ValueError as exc:
        fail(f"--component: {exc}")
    if api is None:
        with open_store(store_url, fabric) as store:
            found = [Decision.of(record) for record in store.decisions(component=wanted, limit=limit)]
    else:
        params: dict[str, object] = {"limit": limit} | ({} if wanted is None else {"component": str(wanted)})
        with _api(api) as client:
            found = client.get_list_of(Decision, "/decisions", params)
    rows = [{"at": d.at.isoformat(), "action": d.kind, "rule": d.rule, "component": d.component or "",
             "reason": d.reason, "dry_run": d.dry_run, "guard": d.guard} for d in found]
    if output_format is OutputFormat.JSON:
        print_json(rows)
        return
    if wanted is not None:
        for row in rows:
            dry = " (dry run)" if row["dry_run"] else ""
            typer.echo(f"{row['at']}  {row['action']}{dry}  {visible(str(row['rule']))}\n"
                       f"  {visible(str(row['reason']))}\n  guard: {visible(str(row['guard'] or '-'))}")
        return
    out = console()
    table = LineTable(out, "Decisions, oldest first (UTC)", "at", "action", "rule", "component", "why")
    for row in rows:
        action = f"{row['action']} (dry)" if row["dry_run"] else str(row["action"])
        table.add(str(row["at"])[5:19].replace("T", " "), action, row["rule"], row["component"], row["reason"])
    out.print(table)


components_app = command_group("Components automation holds: list them, release a quarantined one.")


@components_app.command("list")
def components_list(store_url: StoreOption = DEFAULT_STORE, fabric: FabricOption = DEFAULT_FABRIC,
                    output_format: FormatOption = OutputFormat.TABLE, api: ApiOption = None) -> None:
    """Every component with a recorded state (the desired state the engine converges UFM to)."""
    from fabric.api.models import Component

    if api is None:
        with open_store(store_url, fabric) as store:
            held = store.state_scope()
            found = [Component.of(c, r, dry_run=held.would_be) for c, r in held.components().items()]
    else:
        with _api(api) as client:
            found = _api_components(client)
    rows = [{"component": c.id, "lifecycle": c.lifecycle, "since": c.since.isoformat(), "strikes": c.strikes,
             "rule": c.rule, "reason": c.reason, "dry_run": c.dry_run} for c in found]
    print_rows(rows, output_format, lambda row: f"{row['lifecycle']:<16} {row['component']}  strikes "
                                                f"{row['strikes']}  {row['rule']}: {row['reason']}"
                                                f"{'  (dry run)' if row['dry_run'] else ''}",
               "no component has a recorded state: all are healthy as far as automation knows")


@components_app.command("clear")
def components_clear(component: str, reason: Annotated[str, typer.Option(help="Why it may come back.")],
                     store_url: StoreOption = DEFAULT_STORE, fabric: FabricOption = DEFAULT_FABRIC,
                     requested_by: ByOption = "operator", api: ApiOption = None) -> None:
    """Ask the engine to release a quarantined component: at its next cycle it comes back (within the guard) on
    probation."""
    from fabric.api.models import RequestOut
    from fabric.remediation.domain import ComponentId, Lifecycle
    from fabric.store.records import RequestKind

    try:
        wanted = ComponentId.parse(component)
    except ValueError as exc:
        fail(str(exc))
    why = reason_text(reason)
    if api is None:
        with open_store(store_url, fabric, writes=True) as store:
            record = store.state_scope().get_component(wanted)
            if record is None or record.lifecycle is not Lifecycle.QUARANTINED:
                fail(f"{wanted} is not quarantined in fabric {fabric}")
            request = RequestOut.of(store.request(RequestKind.CLEAR, component=wanted, reason=why,
                                                  requested_by=requested_by))
    else:  # the API answers 409 with the same line when it is not quarantined
        with _api(api) as client:
            request = client.post_as(RequestOut, f"{_component_path(wanted)}/clear",
                                     {"reason": why, "by": requested_by})
    typer.echo(one_line(f"{component}: clear requested (request {request.id}); the engine releases it at its next "
                        "cycle"))


silence_app = command_group("Silences: findings on matching components are recorded, not acted on.")


@silence_app.command("add")
def silence_add(
    matcher: Annotated[str, typer.Argument(help="A component id or a glob: 'link:pod01-leaf01/*', 'switch:core03-*'.")],
    duration: Annotated[str, typer.Option(help="How long: 90m, 2h, 1d.")],
    reason: Annotated[str, typer.Option(help="Why (maintenance ticket, change number...).")],
    starts: Annotated[datetime | None, typer.Option(
        parser=bounded("Instant", "--starts"), metavar="TIME",
        help="When it starts, with its zone (2026-12-02T01:00:00+00:00): a maintenance window. Default: now.")]
    = None,
    created_by: ByOption = "operator",
    store_url: StoreOption = DEFAULT_STORE,
    fabric: FabricOption = DEFAULT_FABRIC,
    api: ApiOption = None,
) -> None:
    """Silence components for a while, now or in a maintenance window (planned work, a known-bad batch of optics)."""
    from fabric.api.models import SilenceOut
    from fabric.remediation.muting import check_matcher

    length = positive_duration(duration, "--duration", "a silence must last longer than zero")
    try:
        check_matcher(matcher)
    except ValueError as exc:
        fail(str(exc))
    why = reason_text(reason)
    if api is None:
        with open_store(store_url, fabric, writes=True) as store:
            silence = SilenceOut.of(store.add_silence(matcher, reason=why, created_by=created_by, duration=length,
                                                      starts_at=starts))
    else:
        body = {"matcher": matcher, "duration": duration, "reason": why, "by": created_by,
                "starts_at": None if starts is None else starts.isoformat()}
        with _api(api) as client:
            silence = client.post_as(SilenceOut, "/silences", body)
    typer.echo(one_line(f"silence {silence.id}: {silence.matcher} until "
                        f"{silence.ends_at.isoformat(timespec='seconds')}"))


@silence_app.command("list")
def silence_list(store_url: StoreOption = DEFAULT_STORE, fabric: FabricOption = DEFAULT_FABRIC,
                 output_format: FormatOption = OutputFormat.TABLE, api: ApiOption = None) -> None:
    """Current and future silences."""
    from fabric.api.models import SilenceOut

    if api is None:
        with open_store(store_url, fabric) as store:
            found = [SilenceOut.of(silence) for silence in store.silences()]
    else:
        with _api(api) as client:
            found = client.get_list_of(SilenceOut, "/silences")
    rows = [{"id": s.id, "matcher": s.matcher, "reason": s.reason, "by": s.created_by,
             "starts_at": s.starts_at.isoformat(), "ends_at": s.ends_at.isoformat()} for s in found]
    print_rows(rows, output_format, lambda row: f"{row['id']:>4}  {row['matcher']}  until {row['ends_at'][:19]}  "
                                                f"{row['by']}: {row['reason']}",
               "no current or future silence")


@silence_app.command("expire")
def silence_expire(
    silence_id: Annotated[int, typer.Argument(parser=bounded("StoreId", "SILENCE_ID"), metavar="SILENCE_ID")],
    store_url: StoreOption = DEFAULT_STORE,
    fabric: FabricOption = DEFAULT_FABRIC,
    reason: Annotated[str | None, typer.Option(
        help="Why (over --api it is required: the daemon logs who ended a silence and why).")] = None,
    requested_by: ByOption = "operator",
    api: ApiOption = None,
) -> None:
    """End a silence now."""
    if api is None:
        with open_store(store_url, fabric, writes=True) as store:
            if not store.expire_silence(silence_id):
                fail(f"no active silence {silence_id} in fabric {fabric}")
    else:  # the API answers 404 with the same line when there is no such silence
        why = reason_text(reason or "")
        with _api(api) as client:
            client.delete(f"/silences/{silence_id}", {"by": requested_by, "reason": why})
    typer.echo(f"silence {silence_id} expired")


store_app = command_group("The service's database.")


@store_app.command("migrate")
def store_migrate(
    store_url: StoreOption = DEFAULT_STORE,
    fabric: FabricOption = DEFAULT_FABRIC,
    legacy_fabric: Annotated[str | None, typer.Option(
        help="The fabric whose rows a database from before version 4 holds (when its cursor and breaker name "
             "several).")] = None,
) -> None:
    """Create the database or bring it to this version's schema: once, and after each upgrade (never the daemon)."""
    from fabric import wiring

    with wiring.open_store(store_url, fabric=fabric, legacy_fabric=legacy_fabric) as store:
        report = store.schema_report
    assert report is not None
    if report.found is None:
        typer.echo(f"created schema version {report.now}")
    elif report.applied:
        typer.echo(f"migrated from version {report.found} to {report.now}")
    else:
        typer.echo(f"already at schema version {report.now}")


def register(app: typer.Typer) -> None:
    app.add_typer(silence_app, name="silence")
    app.add_typer(components_app, name="components")
    app.add_typer(store_app, name="store")
    app.command()(status)
    app.command()(resume)
    app.command()(reload)
    app.command()(decisions)
