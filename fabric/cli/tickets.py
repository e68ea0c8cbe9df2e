"""``fabricctl tickets``: the local backend's tickets of one fabric (list, show, resolve).

``list --api URL`` asks the running daemon instead: the tickets as its engine knows them (the store's rows, for any
backend), so a ticket resolved in the backend shows open there until the engine has seen it resolved.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
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
    limited,
    open_store,
    print_json,
)
from fabric.remediation.textlimits import COMMENT_MAX
from fabric.terminal import LineTable, console
from topology.printable import visible, visible_lines

if TYPE_CHECKING:
    from tickets.base import Ticket, TicketStatus
    from tickets.local import LocalTicketBackend

tickets_app = command_group("Tickets in the service's own database (the local backend).")


def _ticket_dict(ticket: Ticket) -> dict[str, object]:
    return {"key": ticket.key, "status": ticket.status.value, "summary": ticket.summary,
            "dedup_key": ticket.dedup_key, "created_at": ticket.created_at.isoformat(),
            "resolved_at": ticket.resolved_at.isoformat() if ticket.resolved_at else None}


@contextmanager
def _fabric_tickets(store_url: str, fabric: str, *, writes: bool = False,
                    ) -> Iterator[tuple[LocalTicketBackend, frozenset[str]]]:
    """The local backend, and the dedup keys of the tickets ``fabric``'s engine opened (the backend keeps the
    tickets of every fabric of the database; the store knows which are whose)."""
    from fabric import wiring

    with open_store(store_url, fabric, writes=writes) as store:  # its schema holds the local tickets' tables
        yield wiring.local_tickets(store), frozenset(row.dedup_key for row in store.tickets())


def _mine(ticket: Ticket, keys: frozenset[str], fabric: str) -> Ticket:
    if ticket.dedup_key not in keys:
        fail(f"ticket {ticket.key} is not one of fabric {fabric}'s")
    return ticket


@tickets_app.command("list")
def tickets_list(
    store_url: StoreOption = DEFAULT_STORE,
    fabric: FabricOption = DEFAULT_FABRIC,
    status: Annotated[str | None, typer.Option(help="open, resolved or closed.")] = None,
    output_format: FormatOption = OutputFormat.TABLE,
    api: ApiOption = None,
) -> None:
    """List the fabric's tickets, oldest first."""
    from tickets.base import TicketStatus

    try:
        wanted = TicketStatus(status) if status else None
    except ValueError:
        fail(f"--status must be one of {', '.join(s.value for s in TicketStatus)}")
    if api is None:
        with _fabric_tickets(store_url, fabric) as (backend, keys):
            rows = [_ticket_dict(t) for t in backend.list(wanted) if t.dedup_key in keys]
    else:
        rows = _tickets_from_api(api, wanted)
    if output_format is OutputFormat.JSON:
        print_json(rows)
        return
    out = console()
    table = LineTable(out, "Tickets, oldest first (UTC)", "key", "status", "created", "why")
    for row in rows:
        table.add(row["key"], row["status"], str(row["created_at"])[5:19].replace("T", " "), row["summary"])
    out.print(table)


def _tickets_from_api(api: str, wanted: TicketStatus | None) -> list[dict[str, object]]:
    from fabric.api.models import Ticket as TicketOut
    from fabric.cli.api_client import ApiClient

    with ApiClient(api) as client:
        found = client.get_list_of(TicketOut, "/tickets", None if wanted is None else {"state": wanted.value})
    return [{"key": t.external_key or "(creating)", "status": t.state, "summary": t.summary,
             "dedup_key": t.dedup_key, "created_at": t.created_at.isoformat(),
             "resolved_at": t.resolved_at.isoformat() if t.resolved_at else None} for t in found]


@tickets_app.command("show")
def tickets_show(key: str, store_url: StoreOption = DEFAULT_STORE, fabric: FabricOption = DEFAULT_FABRIC,
                 output_format: FormatOption = OutputFormat.TABLE) -> None:
    """One ticket with its description and comments."""
    from tickets.base import TicketNotFoundError

    with _fabric_tickets(store_url, fabric) as (backend, keys):
        try:
            ticket = _mine(backend.status(key), keys, fabric)
            comments = backend.comments(key)
        except (TicketNotFoundError, ValueError) as exc:
            fail(str(exc))
    payload = _ticket_dict(ticket) | {"description": ticket.description,
                                      "comments": [{"at": at.isoformat(), "text": text} for at, text in comments]}
    if output_format is OutputFormat.JSON:
        print_json(payload)
        return
    typer.echo(f"{visible(ticket.key)} [{ticket.status.value}] {visible(ticket.summary)}\n\n"
               f"{visible_lines(ticket.description)}")
    for at, text in comments:
        typer.echo(f"\n-- {at.isoformat(timespec='seconds')}\n{visible_lines(text)}")


@tickets_app.command("resolve")
def tickets_resolve(key: str, comment: Annotated[str, typer.Option(help="What was repaired.")],
                    store_url: StoreOption = DEFAULT_STORE, fabric: FabricOption = DEFAULT_FABRIC) -> None:
    """Mark a ticket repaired: the engine re-enables the component at its next cycle and starts its probation."""
    from tickets.base import TicketError

    if not comment.strip():
        fail("--comment: say what was repaired")
    limited(comment, COMMENT_MAX, "--comment")
    with _fabric_tickets(store_url, fabric, writes=True) as (backend, keys):
        try:
            _mine(backend.status(key), keys, fabric)
            ticket = backend.resolve(key, comment)
        except (TicketError, ValueError) as exc:
            fail(str(exc))
    typer.echo(f"{visible(ticket.key)} is {ticket.status.value}")
