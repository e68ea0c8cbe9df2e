"""The fake Jira over loopback and the real ``jira`` library against it, for the Jira backend's tests."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager

from fabric.simulator.jira import JiraAuth, JiraState, RunningJira, WebhookTarget, serve_jira
from tickets.jira import JiraAuthKind, JiraSettings, JiraTicketBackend

USER, TOKEN, PAT = "bot@example.net", "cloud-api-token-1", "dc-personal-access-token-1"
SCOPE = "ibfabric-h100-4k"


class SettableTime:
    """The fake Jira's clock (seconds): search lag is tested by moving it, not by waiting."""

    def __init__(self, start: float = 1_764_590_400.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


@contextmanager
def fake_jira(*, cloud: bool = False, page_size: int = 50, search_lag: float = 0.0,
              clock: SettableTime | None = None, webhook: WebhookTarget | None = None) -> Iterator[RunningJira]:
    state = JiraState(cloud=cloud, page_size=page_size, search_lag=search_lag, clock=clock)
    with serve_jira(state, auth=JiraAuth(users={USER: TOKEN}, tokens={PAT: "bot"}), webhook=webhook) as running:
        yield running


def backend_for(jira: RunningJira, *, timeout: float = 5.0, **overrides: object) -> JiraTicketBackend:
    """The backend as the service builds it: Cloud's basic auth on a Cloud fake, a PAT on Data Center's."""
    cloud = jira.state.cloud
    settings = JiraSettings(url=jira.url, project="OPS", scope_label=SCOPE,
                            auth=JiraAuthKind.CLOUD if cloud else JiraAuthKind.DATACENTER,
                            user=USER if cloud else None, timeout=timeout)
    return JiraTicketBackend(dataclasses.replace(settings, **overrides), TOKEN if cloud else PAT)


def requests_to(jira: RunningJira, method: str, path_part: str) -> int:
    """How many ``method`` requests the fake served whose path contains ``path_part``."""
    return sum(1 for m, p in jira.state.requests if m == method and path_part in p)
