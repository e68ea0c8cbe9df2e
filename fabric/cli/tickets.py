"""``fabricctl tickets``: the local backend's tickets (list, show, resolve)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from fabric.cli.common import DEFAULT_STORE, FormatOption, OutputFormat, StoreOption, fail, open_store, print_json

if TYPE_CHECKING:
    from tickets.base import Ticket

tickets_app = typer.Typer(help="Tickets in the service's own database (the local backend).", no_args_is_help=True)


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
