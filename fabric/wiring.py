"""The only place that builds the service's parts: the store, the ticket backend, the UFM client, the engine.

Commands, the demo and the daemon ask this module for them, so how a part is made from the
configuration is decided once: which backend ``[tickets] backend`` means, which port action ``[ufm] method``
means, which fabric every table is scoped by.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from fabric.config import ConfigError, ServiceConfig
from fabric.controller.engine import Engine, EngineSettings, UfmApi
from fabric.controller.outbox import OutboxSettings
from fabric.controller.telemetry import TelemetryFeed
from fabric.controller.writes import WriteSettings
from fabric.store import Store
from fabric.ufm.auth import UfmAuth
from fabric.ufm.client import JobPollPolicy, PortActionMethod, RetryPolicy, UfmClient
from fabric.ufm.http import SleepFn
from tickets.base import TicketBackend
from tickets.local import LocalTicketBackend
from topology.inputs import CONFIGURATION, read_input
from topology.model import Fabric
from topology.redact import redacted_url

Clock = Callable[[], datetime]


def engine_settings(config: ServiceConfig, epoch: int = 1) -> EngineSettings:
    """The engine's settings from the service configuration; ``epoch`` is the leader's fencing token."""
    ufm = config.ufm
    writes = WriteSettings(attempts=ufm.write_attempts, backoff=ufm.write_backoff, job_wait=ufm.job_wait,
                           job_deadline=ufm.job_deadline)
    tickets = config.tickets
    outbox = OutboxSettings(base=tickets.retry_base, cap=tickets.retry_cap, search_settle=tickets.search_settle)
    return EngineSettings(fabric=config.fabric.name, policy=config.policy_config(), rules=config.rule_settings(),
                          guard=config.guard_settings(), method=PortActionMethod(ufm.method), writes=writes,
                          epoch=epoch, plausibility=config.plausibility.build(), link_up_wait=ufm.link_up_wait,
                          outbox=outbox, recurrence_comments=tickets.recurrence_comments,
                          burnin=config.burnin.build())


def open_store(url: str, *, fabric: str, clock: Clock | None = None, legacy_fabric: str | None = None) -> Store:
    """The service's database for ``fabric``, created and migrated if needed (what the engine writes to)."""
    return Store.open(url, fabric=fabric, clock=clock, legacy_fabric=legacy_fabric)


def open_existing_store(url: str, *, fabric: str, read_only: bool = True, clock: Clock | None = None,
                        application_name: str = "fabric-remediation") -> Store:
    """The database of a fabric that already runs, for commands that operate on it and for the daemon: nothing is
    created or migrated (``read_only``: the command only reads; ``application_name``: its sessions' name on
    PostgreSQL)."""
    return Store.open_existing(url, fabric=fabric, read_only=read_only, clock=clock,
                               application_name=application_name)


def ticket_backend(store: Store, *, clock: Clock | None = None, config: ServiceConfig | None = None) -> TicketBackend:
    """The ticket system ``[tickets] backend`` names: ``local`` (tickets in the service's database, in tables it
    owns, which the store's schema creates; also when no ``config`` is given) or ``jira`` (``[tickets.jira]``, its
    token read now; nothing is sent to Jira before the first ticket call, so a Jira that is down delays tickets,
    never the start). Nothing is created here: two daemons starting at once would both create the tables."""
    if config is not None and config.tickets.backend == "jira":
        return jira_tickets(config)
    return LocalTicketBackend(store.engine, clock=clock)


def jira_tickets(config: ServiceConfig) -> TicketBackend:
    """The Jira backend of ``[tickets.jira]``, its tickets labelled with the fabric's name."""
    from tickets.jira import JiraTicketBackend
    from tickets.jira_settings import JiraAuthKind, JiraSettings, fabric_label

    jira = config.tickets.jira
    if jira.url is None or jira.project is None:  # the configuration refuses this; here for the type checker
        raise ConfigError(["tickets.jira.url and tickets.jira.project: not set"])
    if jira.ca_bundle is not None:  # the Jira library reads it by path: a device or an endless pipe refused first
        read_input(jira.ca_bundle, CONFIGURATION)
    settings = JiraSettings(
        url=jira.url, project=jira.project, scope_label=fabric_label(config.fabric.name),
        auth=JiraAuthKind(jira.auth), user=jira.user, issue_type=jira.issue_type, labels=jira.labels,
        reopen_transition=jira.reopen_transition, resolve_transition=jira.resolve_transition,
        closed_resolutions=jira.closed_resolutions, components=jira.components,
        priorities=jira.priority_thresholds(), fields=tuple(jira.fields.items()), timeout=jira.timeout.total_seconds(),
        verify=str(jira.ca_bundle) if jira.ca_bundle is not None else True)
    return JiraTicketBackend(settings, jira.token().get_secret_value())


def local_tickets(store: Store) -> LocalTicketBackend:
    """The local backend's tickets in an existing store, for the commands that list and resolve them."""
    return LocalTicketBackend(store.engine)


def ufm_client(url: str, auth: UfmAuth, *, retry: RetryPolicy, job_poll: JobPollPolicy,
               sleep: SleepFn | None = None, verify: bool = True, ca_bundle: Path | None = None) -> UfmClient:
    """A UFM client with explicit read-retry and job-poll policies (the demo's and the tests' run on the
    simulator's clock through ``sleep``); ``verify`` and ``ca_bundle``: ``[ufm] insecure`` and ``ca_bundle``."""
    return UfmClient(url, auth, retry=retry, job_poll=job_poll, sleep=sleep, verify=verify, ca_bundle=ca_bundle)


def build_engine(plan: Fabric, ufm: UfmApi, store: Store, tickets: TicketBackend, settings: EngineSettings,
                 clock: Clock, telemetry: TelemetryFeed | None = None) -> Engine:
    return Engine(plan, ufm, store, tickets, settings, clock, telemetry=telemetry)


def telemetry_feed(config: ServiceConfig) -> TelemetryFeed | None:
    """UFM Telemetry's samples as ``[telemetry]`` says, ``None`` unless it is enabled."""
    section = config.telemetry
    if not section.enabled:
        return None
    client = section.client()
    return TelemetryFeed(client.sample, section.settings(), redacted_url(client.url + client.path),
                         interval=section.interval, close=client.aclose)
