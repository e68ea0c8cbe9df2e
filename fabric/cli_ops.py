"""Operating the daemon: ``fabricctl tickets list|show|resolve``, ``fabricctl status``, ``fabricctl resume``.

They work on the service's database, so they answer even while the daemon is down.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated

import typer

from fabric.cli_common import (
    DEFAULT_FABRIC,
    DEFAULT_STORE,
    EXIT_FINDINGS,
    EXIT_OK,
    FabricOption,
    FormatOption,
    OutputFormat,
    StoreOption,
    fail,
    print_json,
)

if TYPE_CHECKING:
    from fabric.store import Store
    from tickets.base import Ticket

tickets_app = typer.Typer(help="Tickets in the service's own database (the local backend).", no_args_is_help=True)


@contextmanager
def open_store(url: str, fabric: str = DEFAULT_FABRIC) -> Iterator[Store]:
    from fabric.store import Store
    from fabric.store.records import StoreError

    try:
        store = Store.open(url, fabric=fabric)
    except (StoreError, ValueError) as exc:
        fail(f"{url}: {exc}")
    try:
        yield store
    finally:
        store.close()


def _ticket_dict(ticket: Ticket) -> dict[str, object]:
    return {"key": ticket.key, "status": ticket.status.value, "summary": ticket.summary,
            "dedup_key": ticket.dedup_key, "created_at": ticket.created_at.isoformat(),
            "resolved_at": ticket.resolved_at.isoformat() if ticket.resolved_at else None}


@tickets_app.command("list")
def tickets_list(
    store_url: StoreOption = DEFAULT_STORE,
    status: Annotated[str | None, typer.Option(help="open, resolved or closed.")] = None,
    output_format: FormatOption = OutputFormat.TABLE,
) -> None:
    """List tickets, oldest first."""
    from tickets.base import TicketStatus
    from tickets.local import LocalTicketBackend

    try:
        wanted = TicketStatus(status) if status else None
    except ValueError:
        fail(f"--status must be one of {', '.join(s.value for s in TicketStatus)}")
    with open_store(store_url) as store:
        found = LocalTicketBackend(store.engine).list(wanted)
    if output_format is OutputFormat.JSON:
        print_json([_ticket_dict(t) for t in found])
        return
    from rich.console import Console
    from rich.table import Table

    table = Table("key", "status", "summary", "created")
    for ticket in found:
        table.add_row(ticket.key, ticket.status.value, ticket.summary, ticket.created_at.isoformat(timespec="seconds"))
    Console().print(table)


@tickets_app.command("show")
def tickets_show(key: str, store_url: StoreOption = DEFAULT_STORE,
                 output_format: FormatOption = OutputFormat.TABLE) -> None:
    """One ticket with its description and comments."""
    from tickets.base import TicketNotFoundError
    from tickets.local import LocalTicketBackend

    with open_store(store_url) as store:
        backend = LocalTicketBackend(store.engine)
        try:
            ticket = backend.status(key)
            comments = backend.comments(key)
        except (TicketNotFoundError, ValueError) as exc:
            fail(str(exc))
    payload = _ticket_dict(ticket) | {"description": ticket.description,
                                      "comments": [{"at": at.isoformat(), "text": text} for at, text in comments]}
    if output_format is OutputFormat.JSON:
        print_json(payload)
        return
    typer.echo(f"{ticket.key} [{ticket.status.value}] {ticket.summary}\n\n{ticket.description}")
    for at, text in comments:
        typer.echo(f"\n-- {at.isoformat(timespec='seconds')}\n{text}")


@tickets_app.command("resolve")
def tickets_resolve(key: str, comment: Annotated[str, typer.Option(help="What was repaired.")],
                    store_url: StoreOption = DEFAULT_STORE) -> None:
    """Mark a ticket repaired: the daemon re-enables the component and starts its probation."""
    from tickets.base import TicketError
    from tickets.local import LocalTicketBackend

    with open_store(store_url) as store:
        try:
            ticket = LocalTicketBackend(store.engine).resolve(key, comment)
        except (TicketError, ValueError) as exc:
            fail(str(exc))
    typer.echo(f"{ticket.key} is {ticket.status.value}")


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
    from fabric.domain import ComponentId

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
    from fabric.domain import ComponentId, Lifecycle
    from fabric.engine import CLEAR_REQUESTED

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
    app.add_typer(tickets_app, name="tickets")
    app.add_typer(silence_app, name="silence")
    app.add_typer(components_app, name="components")
    app.command()(status)
    app.command()(resume)
    app.command()(decisions)
