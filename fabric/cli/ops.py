"""Operating: ``fabricctl status``, ``resume``, ``decisions``, ``components list|clear``, ``silence``, ``store``.

They work on the service's database, so they answer whether or not the engine is running; each names its fabric
(``--fabric``, as the configuration's ``[fabric] name``) and sees that fabric's rows only. None of them creates a
database: a wrong ``--store`` is an error, not an empty system. What an operator asks the engine to do (release
a quarantine, resume after a storm) is recorded as a request the engine carries out at its next cycle.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import typer

from fabric.cli.common import (
    DEFAULT_FABRIC,
    DEFAULT_STORE,
    EXIT_FINDINGS,
    EXIT_OK,
    FabricOption,
    FormatOption,
    OutputFormat,
    StoreOption,
    fail,
    open_store,
    print_json,
    print_rows,
)
from fabric.cli.text import one_line

ByOption = Annotated[str, typer.Option("--by", envvar="USER", help="Who asks (kept in the audit trail).")]


def status(store_url: StoreOption = DEFAULT_STORE, fabric: FabricOption = DEFAULT_FABRIC,
           output_format: FormatOption = OutputFormat.TABLE) -> None:
    """The breaker, components by lifecycle, pending operator requests. Exit 1 when automation is halted."""
    with open_store(store_url, fabric) as store:
        breaker = store.breaker_state()
        counts = {lifecycle.value: count for lifecycle, count in store.lifecycle_counts().items() if count}
        out = [{"component": str(c), "lifecycle": r.lifecycle.value, "since": r.since.isoformat(), "rule": r.rule,
                "reason": r.reason} for c, r in store.components().items() if r.lifecycle.value != "healthy"]
        pending = [{"id": r.id, "kind": r.kind.value, "component": str(r.component or ""), "by": r.requested_by,
                    "at": r.requested_at.isoformat(), "reason": r.reason} for r in store.pending_requests()]
    payload = {"fabric": fabric, "halted": breaker.halted,
               "halted_since": breaker.since.isoformat() if breaker.since else None, "halt_reason": breaker.reason,
               "components": counts, "not_healthy": out, "pending_requests": pending}
    if output_format is OutputFormat.JSON:
        print_json(payload)
    else:
        state = f"HALTED since {breaker.since}: {breaker.reason}" if breaker.halted else "running"
        typer.echo(one_line(f"fabric {fabric}, automation: {state}"))
        typer.echo("components: " + (", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none recorded"))
        for entry in out:
            typer.echo(one_line(f"  {entry['lifecycle']:<16} {entry['component']}  {entry['rule']}: "
                                f"{entry['reason']}"))
        for request in pending:
            typer.echo(one_line(f"  requested: {request['kind']} {request['component']} by {request['by']}: "
                                f"{request['reason']}"))
    raise typer.Exit(EXIT_FINDINGS if breaker.halted else EXIT_OK)


def resume(reason: Annotated[str, typer.Option(help="Why it is safe to resume (kept in the audit trail).")],
           store_url: StoreOption = DEFAULT_STORE, fabric: FabricOption = DEFAULT_FABRIC,
           requested_by: ByOption = "operator") -> None:
    """Ask the engine to resume automation after the storm breaker halted it (at its next cycle; findings held
    during the storm are dropped)."""
    from fabric.store.records import RequestKind

    with open_store(store_url, fabric, writes=True) as store:
        before = store.breaker_state()
        if not before.halted:
            typer.echo(f"automation of fabric {fabric} is not halted")
            return
        request = store.request(RequestKind.RESUME, reason=_reason(reason), requested_by=requested_by)
    typer.echo(one_line(f"resume requested (request {request.id}); halted since {before.since}: {before.reason}"))
    typer.echo("the engine resumes automation at its next cycle")


def decisions(
    component: Annotated[str | None, typer.Option(help="Only this component ('link:a/1|b/2', 'switch:core01-01').")]
    = None,
    limit: Annotated[int, typer.Option(min=1, max=100_000, help="The newest N decisions.")] = 50,
    store_url: StoreOption = DEFAULT_STORE,
    fabric: FabricOption = DEFAULT_FABRIC,
    output_format: FormatOption = OutputFormat.TABLE,
) -> None:
    """Why automation did what it did: every decision with its rule, reason and the guard's figures.

    The table gives each reason on one line; --format json (or --component, one decision a block) gives it whole.
    """
    from fabric.remediation.domain import ComponentId

    try:
        wanted = ComponentId.parse(component) if component else None
    except ValueError as exc:
        fail(f"--component: {exc}")
    with open_store(store_url, fabric) as store:
        found = [record.action for record in store.decisions(component=wanted, limit=limit)]
    rows = [{"at": a.at.isoformat(), "action": a.kind.value, "rule": a.rule, "component": str(a.component or ""),
             "reason": a.reason, "dry_run": a.dry_run, "guard": a.guard} for a in found]
    if output_format is OutputFormat.JSON:
        print_json(rows)
        return
    if wanted is not None:
        for row in rows:
            typer.echo(f"{row['at']}  {row['action']}{' (dry run)' if row['dry_run'] else ''}  {row['rule']}\n"
                       f"  {row['reason']}\n  guard: {row['guard'] or '-'}")
        return
    from rich.console import Console

    from fabric.replay.render import line_table

    table = line_table("Decisions, oldest first (UTC)", "at", "action", "rule", "component", "why")
    for row in rows:
        action = f"{row['action']} (dry)" if row["dry_run"] else str(row["action"])
        table.add_row(str(row["at"])[5:19].replace("T", " "), action, str(row["rule"]), str(row["component"]),
                      one_line(str(row["reason"]), 10_000))
    Console().print(table)


components_app = typer.Typer(help="Components automation holds: list them, release a quarantined one.",
                              no_args_is_help=True)


@components_app.command("list")
def components_list(store_url: StoreOption = DEFAULT_STORE, fabric: FabricOption = DEFAULT_FABRIC,
                    output_format: FormatOption = OutputFormat.TABLE) -> None:
    """Every component with a recorded state (the desired state the engine converges UFM to)."""
    with open_store(store_url, fabric) as store:
        rows = [{"component": str(c), "lifecycle": r.lifecycle.value, "since": r.since.isoformat(),
                 "strikes": r.strikes, "rule": r.rule, "reason": r.reason} for c, r in store.components().items()]
    print_rows(rows, output_format, lambda row: f"{row['lifecycle']:<16} {row['component']}  strikes "
                                                f"{row['strikes']}  {row['rule']}: {row['reason']}")


@components_app.command("clear")
def components_clear(component: str, reason: Annotated[str, typer.Option(help="Why it may come back.")],
                     store_url: StoreOption = DEFAULT_STORE, fabric: FabricOption = DEFAULT_FABRIC,
                     requested_by: ByOption = "operator") -> None:
    """Ask the engine to release a quarantined component: at its next cycle it comes back (within the guard) on
    probation."""
    from fabric.remediation.domain import ComponentId, Lifecycle
    from fabric.store.records import RequestKind

    try:
        wanted = ComponentId.parse(component)
    except ValueError as exc:
        fail(str(exc))
    with open_store(store_url, fabric, writes=True) as store:
        record = store.get_component(wanted)
        if record is None or record.lifecycle is not Lifecycle.QUARANTINED:
            fail(f"{component} is not quarantined in fabric {fabric}")
        request = store.request(RequestKind.CLEAR, component=wanted, reason=_reason(reason),
                                requested_by=requested_by)
    typer.echo(f"{component}: clear requested (request {request.id}); the engine releases it at its next cycle")


silence_app = typer.Typer(help="Silences: findings on matching components are recorded, not acted on.",
                          no_args_is_help=True)


@silence_app.command("add")
def silence_add(
    matcher: Annotated[str, typer.Argument(help="A component id or a glob: 'link:pod01-leaf01/*', 'switch:core03-*'.")],
    duration: Annotated[str, typer.Option(help="How long: 90m, 2h, 1d.")],
    reason: Annotated[str, typer.Option(help="Why (maintenance ticket, change number...).")],
    starts: Annotated[str | None, typer.Option(
        help="When it starts, with its zone (2026-12-02T01:00:00+00:00): a maintenance window. Default: now.")]
    = None,
    created_by: ByOption = "operator",
    store_url: StoreOption = DEFAULT_STORE,
    fabric: FabricOption = DEFAULT_FABRIC,
) -> None:
    """Silence components for a while, now or in a maintenance window (planned work, a known-bad batch of optics)."""
    from fabric.durations import parse_duration
    from fabric.remediation.muting import check_matcher

    try:
        length = parse_duration(duration)
    except ValueError as exc:
        fail(f"--duration: {exc}")
    if length.total_seconds() <= 0:
        fail("--duration: a silence must last longer than zero")
    try:
        check_matcher(matcher)
    except ValueError as exc:
        fail(str(exc))
    starts_at = _aware_time(starts, "--starts") if starts is not None else None
    with open_store(store_url, fabric, writes=True) as store:
        silence = store.add_silence(matcher, reason=_reason(reason), created_by=created_by, duration=length,
                                    starts_at=starts_at)
    typer.echo(f"silence {silence.id}: {silence.matcher} until {silence.ends_at.isoformat(timespec='seconds')}")


@silence_app.command("list")
def silence_list(store_url: StoreOption = DEFAULT_STORE, fabric: FabricOption = DEFAULT_FABRIC,
                 output_format: FormatOption = OutputFormat.TABLE) -> None:
    """Current and future silences."""
    with open_store(store_url, fabric) as store:
        found = store.silences()
    rows = [{"id": s.id, "matcher": s.matcher, "reason": s.reason, "by": s.created_by,
             "starts_at": s.starts_at.isoformat(), "ends_at": s.ends_at.isoformat()} for s in found]
    print_rows(rows, output_format, lambda row: f"{row['id']:>4}  {row['matcher']}  until {row['ends_at'][:19]}  "
                                                f"{row['by']}: {row['reason']}")


@silence_app.command("expire")
def silence_expire(silence_id: int, store_url: StoreOption = DEFAULT_STORE,
                   fabric: FabricOption = DEFAULT_FABRIC) -> None:
    """End a silence now."""
    with open_store(store_url, fabric, writes=True) as store:
        if not store.expire_silence(silence_id):
            fail(f"no active silence {silence_id} in fabric {fabric}")
    typer.echo(f"silence {silence_id} expired")


store_app = typer.Typer(help="The service's database.", no_args_is_help=True)


@store_app.command("migrate")
def store_migrate(
    store_url: StoreOption = DEFAULT_STORE,
    fabric: FabricOption = DEFAULT_FABRIC,
    legacy_fabric: Annotated[str | None, typer.Option(
        help="The fabric whose rows a database from before version 4 holds (when its cursor and breaker name "
             "several).")] = None,
) -> None:
    """Create the database or bring it to this version's schema (the engine does the same when it starts)."""
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


def _aware_time(text: str, option: str) -> datetime:
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        fail(f"{option}: not a time: {text!r} (write e.g. 2026-12-02T01:00:00+00:00)")
    if when.tzinfo is None:
        fail(f"{option}: {text!r} has no time zone (add +00:00 for UTC): which one was meant?")
    return when


def _reason(text: str) -> str:
    if not text.strip():
        fail("--reason: give a reason (it is kept in the audit trail)")
    return text.strip()


def register(app: typer.Typer) -> None:
    app.add_typer(silence_app, name="silence")
    app.add_typer(components_app, name="components")
    app.add_typer(store_app, name="store")
    app.command()(status)
    app.command()(resume)
    app.command()(decisions)
