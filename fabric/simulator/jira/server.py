"""Running the fake Jira: in a background thread on loopback (tests), or in the foreground (``fabricctl
simulate-jira``)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

from fabric.simulator.jira.app import JiraAuth, create_jira_app
from fabric.simulator.jira.state import JiraState
from fabric.simulator.server import base_url, serve_in_thread

__all__ = ["RunningJira", "serve_jira"]


@dataclass(frozen=True, slots=True)
class RunningJira:
    url: str
    """Base URL, e.g. ``http://127.0.0.1:41234`` (what ``[tickets.jira] url`` names)."""
    state: JiraState
    auth: JiraAuth


@contextlib.contextmanager
def serve_jira(state: JiraState | None = None, *, auth: JiraAuth | None = None, host: str = "127.0.0.1",
               port: int = 0) -> Iterator[RunningJira]:
    """Serve a fake Jira over HTTP for the duration of the block."""
    served = state or JiraState()
    credentials = auth or JiraAuth()
    with serve_in_thread(create_jira_app(served, credentials), host, port, name="the fake Jira") as bound:
        yield RunningJira(base_url(host, bound), served, credentials)
