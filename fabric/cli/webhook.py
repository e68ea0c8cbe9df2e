"""``fabricctl webhook --config FILE --port N``: the ticket webhook receiver alone, with the daemon's configuration.

For a receiver on another host or port than the daemon's API (a DMZ, a port the ticket system may reach): it
stores deliveries in the service's database, and the running daemon processes them at its next cycle. The database
must exist already (the daemon creates and migrates it); nothing else of the service runs here.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from fabric.cli.common import open_store

ConfigOption = Annotated[Path, typer.Option("--config", "-c", help="The service configuration (TOML).")]
PortOption = Annotated[int, typer.Option("--port", "-p", help="The port to listen on (0: any free one).")]
HostOption = Annotated[str, typer.Option("--host", help="The address to listen on.")]


def webhook(config: ConfigOption, port: PortOption = 8081, host: HostOption = "127.0.0.1") -> None:
    """Serve only POST /webhooks/jira and /webhooks/generic; the running daemon processes what they store."""
    import uvicorn

    from fabric.api.context import ApiContext, Reload, RuntimeStatus
    from fabric.api.plan_index import plan_index
    from fabric.api.webhooks import webhook_router
    from fabric.config import load_config
    from fabric.jsonbody import strict_app  # FastAPI: 0.18 s to import, which no other command may pay for
    from fabric.serving import bind_listener, uvicorn_config
    from topology.model import Fabric

    settings = load_config(config)
    started = datetime.now(UTC)

    class NoEngine:
        """No engine runs in this process (the daemon's does): the webhook router asks nothing of it."""

        def status(self) -> RuntimeStatus:
            return RuntimeStatus(started_at=started, dry_run=settings.policy.dry_run,
                                 interval_seconds=settings.daemon.interval.total_seconds())

        async def reload(self, by: str, reason: str) -> Reload:
            return Reload("the webhook receiver alone has nothing to reload")

        def wake(self) -> None:
            """The daemon's engine finds the deliveries stored here at its next cycle."""

    try:
        listener = bind_listener(host, port)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--host/--port") from None
    with listener, open_store(settings.store.url, settings.fabric.name, writes=True) as store:
        app = strict_app(title="fabric-remediation webhooks")
        app.include_router(webhook_router())
        no_plan = plan_index(Fabric("the webhook receiver alone: no plan"))
        app.state.context = ApiContext(settings, no_plan, store, NoEngine(), lambda: datetime.now(UTC))
        shown = f"[{host}]" if ":" in host else host
        # Both secrets read once now, so that an unreadable file is one line at start, not a 503 later.
        signed = "signed" if settings.tickets.webhook_secret() is not None else "UNSIGNED: no webhook secret"
        generic = "bearer token" if settings.tickets.webhook_token() is not None else "refused: no webhook token"
        typer.echo(f"webhook receiver on http://{shown}:{listener.getsockname()[1]} for fabric "
                   f"{settings.fabric.name}: POST /webhooks/jira ({signed}), /webhooks/generic ({generic})", err=True)
        uvicorn.Server(uvicorn_config(app, host, port, limits=settings.api.server_limits())).run(sockets=[listener])
