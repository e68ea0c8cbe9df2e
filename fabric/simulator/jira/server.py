"""Running the fake Jira: in a background thread on loopback (tests), or in the foreground (``fabricctl
simulate-jira``)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

from fabric.simulator.jira.app import JiraAuth, create_jira_app, send_webhooks
from fabric.simulator.jira.state import JiraState
from fabric.simulator.jira.webhooks import WebhookSender, WebhookTarget
from fabric.simulator.server import base_url, serve_in_thread

__all__ = ["RunningJira", "serve_jira"]


@dataclass(frozen=True, slots=True)
class RunningJira:
    url: str
    """Base URL, e.g. ``http://127.0.0.1:41234`` (what ``[tickets.jira] url`` names)."""
    state: JiraState
    auth: JiraAuth
    webhooks: WebhookSender | None = None
    """What sends its webhooks, when it was given a target."""


@contextlib.contextmanager
def serve_jira(state: JiraState | None = None, *, auth: JiraAuth | None = None, host: str = "127.0.0.1",
               port: int = 0, webhook: WebhookTarget | None = None) -> Iterator[RunningJira]:
    """Serve a fake Jira over HTTP for the duration of the block; ``webhook``: where it sends its webhooks."""
    served = state or JiraState()
    credentials = auth or JiraAuth()
    with serve_in_thread(create_jira_app(served, credentials), host, port, name="the fake Jira") as bound:
        url = base_url(host, bound)
        sender = send_webhooks(served, url, webhook) if webhook is not None else None
        yield RunningJira(url, served, credentials, sender)
