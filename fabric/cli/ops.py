"""Operating: ``fabricctl status``, ``resume``, ``decisions``, ``components list|clear``, ``silence``.

They work on the service's database, so they answer even while the daemon is down.
"""

from __future__ import annotations

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
)


def status(store_url: StoreOption = DEFAULT_STORE, fabric: FabricOption = DEFAULT_FABRIC,
           output_format: FormatOption = OutputFormat.TABLE) -> None:
    """The breaker, components by lifecycle and open tickets. Exit 1 when automation is halted."""
    with open_store(store_url, fabric) as store:
        breaker = store.breaker_state()
        counts = {lifecycle.value: count for lifecycle, count in store.lifecycle_counts().items() if count}
        out = [{"component": str(r.id), "lifecycle": r.lifecycle.value, "since": r.since.isoformat(),
                "rule": r.rule, "reason": r.reason} for r in store.components() if r.lifecycle.value != "healthy"]
    payload = {"halted": breaker.halted, "halted_since": breaker.since.isoformat() if breaker.since else None,
               "halt_reason": breaker.reason, "components": counts, "not_healthy": out}
    if output_format is OutputFormat.JSON:
        print_json(payload)
    else:
        state = f"HALTED since {breaker.since}: {breaker.reason}" if breaker.halted else "running"
        typer.echo(f"automation: {state}")
        typer.echo("components: " + (", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none recorded"))
        for entry in out:
            typer.echo(f"  {entry['lifecycle']:<16} {entry['component']}  ({entry['rule']}: {entry['reason']})")
    raise typer.Exit(EXIT_FINDINGS if breaker.halted else EXIT_OK)


def resume(reason: Annotated[str, typer.Option(help="Why it is safe to resume (kept in the audit trail).")],
           store_url: StoreOption = DEFAULT_STORE, fabric: FabricOption = DEFAULT_FABRIC) -> None:
    """Resume automation after the storm breaker halted it. Findings held during the storm are dropped."""
    with open_store(store_url, fabric) as store:
        before = store.breaker_state()
        if not before.halted:
            typer.echo("automation is not halted")
            return
        store.resume(reason)
    typer.echo(f"resumed (halted since {before.since}: {before.reason})")


def decisions(
    component: Annotated[str | None, typer.Option(help="Only this component ('link:a/1|b/2', 'switch:core01-01').")]
    = None,
    limit: Annotated[int, typer.Option(min=1, help="The newest N decisions.")] = 50,
    store_url: StoreOption = DEFAULT_STORE,
    output_format: FormatOption = OutputFormat.TABLE,
) -> None:
    """Why automation did what it did: every decision with its rule, reason and the guard's figures."""
    from fabric.remediation.domain import ComponentId

    try:
        wanted = ComponentId.parse(component) if component else None
    except ValueError as exc:
        fail(str(exc))
    with open_store(store_url) as store:
        found = [record.action for record in store.decisions(component=wanted, limit=limit)]
    rows = [{"at": a.at.isoformat(), "action": a.kind.value, "rule": a.rule, "component": str(a.component or ""),
             "reason": a.reason, "dry_run": a.dry_run, "guard": a.guard} for a in found]
    if output_format is OutputFormat.JSON:
        print_json(rows)
        return
    from rich.console import Console
    from rich.table import Table

    table = Table("at", "action", "rule", "component", "reason")
    for row in rows:
        action = f"{row['action']} (dry run)" if row["dry_run"] else str(row["action"])
        table.add_row(str(row["at"]), action, str(row["rule"]), str(row["component"]), str(row["reason"]))
    Console().print(table)


components_app = typer.Typer(help="Components automation holds: list them, release a quarantined one.",
                              no_args_is_help=True)


@components_app.command("list")
def components_list(store_url: StoreOption = DEFAULT_STORE,
                    output_format: FormatOption = OutputFormat.TABLE) -> None:
    """Every component with a recorded state (the desired state the engine converges UFM to)."""
    with open_store(store_url) as store:
        rows = [{"component": str(r.id), "lifecycle": r.lifecycle.value, "since": r.since.isoformat(),
                 "strikes": r.strikes, "rule": r.rule, "reason": r.reason} for r in store.components()]
    if output_format is OutputFormat.JSON:
        print_json(rows)
        return
    for row in rows:
        typer.echo(f"{row['lifecycle']:<16} {row['component']}  strikes {row['strikes']}  ({row['rule']}: "
                   f"{row['reason']})")


@components_app.command("clear")
def components_clear(component: str, reason: Annotated[str, typer.Option(help="Why it may come back.")],
                     store_url: StoreOption = DEFAULT_STORE) -> None:
    """Release a quarantined component: the daemon re-enables it (within the guard) on probation."""
    from fabric.controller.engine import CLEAR_REQUESTED
    from fabric.remediation.domain import ComponentId, Lifecycle

    try:
        wanted = ComponentId.parse(component)
    except ValueError as exc:
        fail(str(exc))
    with open_store(store_url) as store:
        record = store.get_component(wanted)
        if record is None or record.lifecycle is not Lifecycle.QUARANTINED:
            fail(f"{component} is not quarantined")
        store.put_component(wanted, record.lifecycle, since=record.since, strikes=record.strikes,
                            reason=f"{record.reason}; clear requested: {reason}", evidence=record.evidence,
                            ticket_dedup_key=record.ticket_dedup_key, rule=CLEAR_REQUESTED,
                            never_auto_restore=record.never_auto_restore)
    typer.echo(f"{component}: clear requested; the daemon releases it on its next cycle")


silence_app = typer.Typer(help="Silences: findings on matching components are recorded, not acted on.",
                          no_args_is_help=True)


@silence_app.command("add")
def silence_add(
    matcher: Annotated[str, typer.Argument(help="A component id or a glob: 'link:pod01-leaf01/*', 'switch:core03-*'.")],
    duration: Annotated[str, typer.Option(help="How long: 90m, 2h, 1d.")],
    reason: Annotated[str, typer.Option(help="Why (maintenance ticket, change number...).")],
    created_by: Annotated[str, typer.Option("--by", envvar="USER", help="Who.")] = "operator",
    store_url: StoreOption = DEFAULT_STORE,
) -> None:
    """Silence components for a while (planned maintenance, a known-bad batch of optics)."""
    from fabric.durations import parse_duration

    try:
        length = parse_duration(duration)
    except ValueError as exc:
        fail(f"--duration: {exc}")
    if ":" not in matcher:
        fail(f"not a component matcher: {matcher!r} (e.g. 'link:pod01-leaf01/*')")
    with open_store(store_url) as store:
        silence = store.add_silence(matcher, reason=reason, created_by=created_by,
                                    duration=length)
    typer.echo(f"silence {silence.id}: {silence.matcher} until {silence.ends_at.isoformat(timespec='seconds')}")


@silence_app.command("list")
def silence_list(store_url: StoreOption = DEFAULT_STORE, output_format: FormatOption = OutputFormat.TABLE) -> None:
    """Current and future silences."""
    with open_store(store_url) as store:
        found = store.silences()
    rows = [{"id": s.id, "matcher": s.matcher, "reason": s.reason, "by": s.created_by,
             "starts_at": s.starts_at.isoformat(), "ends_at": s.ends_at.isoformat()} for s in found]
    if output_format is OutputFormat.JSON:
        print_json(rows)
        return
    for row in rows:
        typer.echo(f"{row['id']:>4}  {row['matcher']}  until {row['ends_at']}  ({row['by']}: {row['reason']})")


@silence_app.command("expire")
def silence_expire(silence_id: int, store_url: StoreOption = DEFAULT_STORE) -> None:
    """End a silence now."""
    with open_store(store_url) as store:
        if not store.expire_silence(silence_id):
            fail(f"no active silence {silence_id}")
    typer.echo(f"silence {silence_id} expired")


def register(app: typer.Typer) -> None:
    app.add_typer(silence_app, name="silence")
    app.add_typer(components_app, name="components")
    app.command()(status)
    app.command()(resume)
    app.command()(decisions)
