"""``fabricctl simulate-jira``: a Jira-compatible fake to point ``[tickets.jira] url`` at."""

from __future__ import annotations

from typing import Annotated

import typer

from fabric.cli.common import fail


def simulate_jira(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port to listen on.")] = 8090,
    project: Annotated[list[str] | None, typer.Option(
        "--project", help="Project key the fake has (repeatable).")] = None,
    user: Annotated[str, typer.Option(help="User (or e-mail) for basic auth.")] = "fabric-bot",
    token: Annotated[str, typer.Option(
        help="The user's API token for basic auth, also accepted as a bearer personal access token.")] = "api-token",
    cloud: Annotated[bool, typer.Option(
        "--cloud/--datacenter", help="Answer as Jira Cloud (search only at /search/jql) or Data Center.")] = False,
    search_lag: Annotated[float, typer.Option(
        min=0.0, help="Seconds a new issue stays missing from search, as on Cloud.")] = 0.0,
    webhook_url: Annotated[str | None, typer.Option(
        help="Send jira:issue_updated webhooks here after every transition (the service's "
             "http://HOST:PORT/webhooks/jira).")] = None,
    webhook_secret: Annotated[str | None, typer.Option(
        envvar="FAKE_JIRA_WEBHOOK_SECRET", help="Sign them with this secret (X-Hub-Signature), as a Jira admin "
        "webhook with a secret does.")] = None,
) -> None:
    """Serve a fake Jira (REST API v2/v3: issues, search, transitions, comments) with injectable faults at
    /_admin/faults (tests, demos)."""
    import uvicorn

    from fabric.serving import bind_listener, uvicorn_config
    from fabric.simulator.jira import JiraAuth, JiraState, WebhookTarget, create_jira_app, send_webhooks
    from fabric.simulator.server import base_url

    keys = [key.strip().upper() for key in project or ["OPS"]]
    bad = [key for key in keys if not key.isalnum() or not key[:1].isalpha()]
    if bad:
        fail(f"--project {bad[0]!r}: a project key is letters and digits, starting with a letter")
    if webhook_url is not None and not webhook_url.startswith(("http://", "https://")):
        fail(f"--webhook-url {webhook_url!r}: not an http(s) URL")
    try:
        listener = bind_listener(host, port)
    except ValueError as exc:
        fail(str(exc))
    state = JiraState(projects={key: key for key in keys}, cloud=cloud, search_lag=search_lag)
    app = create_jira_app(state, JiraAuth(users={user: token}, tokens={token: user}))
    url = base_url(host, listener.getsockname()[1])
    if webhook_url is not None:
        send_webhooks(state, url, WebhookTarget(webhook_url, webhook_secret))
        typer.echo(f"  webhooks: {webhook_url}, {'signed' if webhook_secret else 'unsigned'}", err=True)
    typer.echo(f"fake Jira ({'Cloud' if cloud else 'Data Center'}) on {url}, projects {', '.join(keys)}", err=True)
    typer.echo(f"  auth: basic {user} / {'*' * len(token)}, or the same token as a bearer PAT", err=True)
    typer.echo(f"  faults: POST {url}/_admin/faults {{\"status\": 503, \"count\": 3}}", err=True)
    with listener:
        uvicorn.Server(uvicorn_config(app, host, port)).run(sockets=[listener])
