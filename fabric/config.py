"""The service configuration: one TOML file plus ``FABRIC_*`` environment variables.

Sections (every key is documented, with its default, in ``examples/config.toml``)::

    [fabric]   name, plan                             which fabric this daemon manages, its wiring plan
    [policy]   dry_run, host_links_ticket_only, ...   -> fabric.remediation.policy.PolicyConfig
    [rules]    flap_cycles, flap_window, ...          -> fabric.remediation.detectors.RuleSettings
    [escalation] max_resets, reset_window, ...        -> fabric.remediation.escalation.ResetLadder
    [guard]    c, cap_fraction, cap_floor, ...        -> topology.guard.GuardSettings
    [ufm]      url, auth, user, secret_file, ...      how to reach UFM (secrets never in the file)
    [plausibility] max_drop, min_planned              -> fabric.ufm.plausibility.PlausibilitySettings
    [telemetry] enabled, url, instance, interval, ...  UFM Telemetry's samples (``fabric.ufm.telemetry``)
    [store]    url                                    the service's database
    [tickets]  backend, [tickets.jira] ...            where tickets go
    [daemon]   interval, shutdown_wait, ...           seconds between cycles, the bounded wait at shutdown
    [leader]   lease, heartbeat                       active/standby on PostgreSQL (``fabric.daemon.leader``)
    [api]      host, port, admin_token_file           where ``fabricctl run`` serves HTTP (writes need the admin token)

The environment overrides the file, key by key: ``FABRIC_<SECTION>__<KEY>`` (``FABRIC_POLICY__DRY_RUN=false``,
``FABRIC_TICKETS__JIRA__PROJECT=NET``). Durations are written ``"12h"``, ``"10m"``, ``"7s"``, ``"500ms"``,
``"1h30m"``, ``"2d"`` or as a number of seconds.

Secrets are read only from the environment (``FABRIC_UFM__PASSWORD``, ``FABRIC_UFM__TOKEN``,
``FABRIC_TICKETS__JIRA__TOKEN``, ``FABRIC_API__ADMIN_TOKEN``, ``FABRIC_TICKETS__WEBHOOK_SECRET``,
``FABRIC_TICKETS__WEBHOOK_TOKEN``; the older ``FABRIC_UFM_PASSWORD``, ``FABRIC_UFM_TOKEN`` and ``FABRIC_JIRA_TOKEN``
are aliases, refused when set to another value than the new name: ``fabric.envsecrets``) or from a file named in
the configuration (``ufm.secret_file``, ``tickets.jira.token_file``, ``api.admin_token_file``,
``tickets.webhook_secret_file``, ``tickets.webhook_token_file``), and only when asked for (:meth:`UfmSection.secret`,
:meth:`ApiSection.admin_token`, :meth:`TicketsSection.webhook_secret`...): they are never fields of the
configuration, so they cannot appear in its ``repr``, its dump or a log line.

Loading is all or nothing: :func:`load_config` returns a complete, frozen configuration or raises
:class:`ConfigError` listing every problem, each naming where it is (the file or the environment variable) and
the key's path, e.g. ``config.toml: policy.storm_window: not a duration: '10 minutes'``. Unknown keys are
errors, so a typo never silently leaves a default in place.
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_origin

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    SecretStr,
    ValidationError,
    create_model,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, EnvSettingsSource, PydanticBaseSettingsSource, SettingsConfigDict

from fabric.durations import CYCLE, format_duration, parse_duration
from fabric.envsecrets import (
    ADMIN_TOKEN,
    JIRA_TOKEN,
    UFM_PASSWORD,
    UFM_TOKEN,
    WEBHOOK_SECRET,
    WEBHOOK_TOKEN,
    EnvSecret,
    EnvSecretError,
    read_secret_file,
)
from fabric.errors import ErrorKind, FabricError
from fabric.remediation.burnin import UTILISATION_EVENTS, BurninSettings
from fabric.remediation.escalation import ResetLadder
from fabric.remediation.policy import PolicyConfig
from fabric.remediation.rules import COUNTED_RULES, RESETTABLE, RuleSettings, Threshold
from fabric.serverlimits import MAX_CONNECTIONS, READ_TIMEOUT, ServerLimits
from fabric.telemetry.settings import TelemetrySettings
from fabric.ufm.address import (
    DEFAULT_TIMEOUT_S,
    MAX_TELEMETRY_BYTES,
    TELEMETRY_INSTANCE,
    TELEMETRY_MAX_BYTES,
    TELEMETRY_URL,
    check_base_url,
    check_instance,
    check_timeout,
)
from fabric.ufm.plausibility import PlausibilitySettings
from tickets.jira_settings import DEFAULT_CLOSED_RESOLUTIONS
from topology import strictjson
from topology.errors import InputError
from topology.guard import HARD_CEILING, GuardSettings
from topology.inputs import CONFIGURATION, read_input
from topology.numerals import whole_number
from topology.redact import redacted_url
from topology.strictjson import JsonError

if TYPE_CHECKING:
    from fabric.ufm.connect import UfmTarget
    from fabric.ufm.telemetry import TelemetryClient

__all__ = [
    "ADMIN_TOKEN_ENV",
    "ENV_PREFIX",
    "ApiSection",
    "ConfigError",
    "DaemonSection",
    "EscalationSection",
    "FabricSection",
    "GuardSection",
    "JiraSection",
    "LeaderSection",
    "PlausibilitySection",
    "PolicySection",
    "RulesSection",
    "ServiceConfig",
    "StoreSection",
    "TelemetrySection",
    "TicketsSection",
    "UfmSection",
    "format_duration",
    "load_config",
    "parse_duration",
]

ENV_PREFIX = "FABRIC_"
ENV_DELIMITER = "__"
SECRET_KEYS = frozenset({"password", "token", "secret", "api_token", "admin_token", "webhook_secret",
                         "webhook_token"})
ADMIN_TOKEN_ENV = ADMIN_TOKEN.name
ENV_SECRETS: dict[tuple[str, ...], tuple[EnvSecret, str]] = {
    ("ufm", "password"): (UFM_PASSWORD, "ufm.secret_file"),
    ("ufm", "token"): (UFM_TOKEN, "ufm.secret_file"),
    ("tickets", "jira", "token"): (JIRA_TOKEN, "tickets.jira.token_file"),
    ("api", "admin_token"): (ADMIN_TOKEN, "api.admin_token_file"),
    ("tickets", "webhook_secret"): (WEBHOOK_SECRET, "tickets.webhook_secret_file"),
    ("tickets", "webhook_token"): (WEBHOOK_TOKEN, "tickets.webhook_token_file"),
}
"""Secrets read from ``FABRIC_<SECTION>__<KEY>`` (or an alias) when asked for, never fields of the configuration,
each with the key of the file it may come from instead."""

def _positive(value: timedelta) -> timedelta:
    if value <= timedelta():
        raise ValueError(f"must be longer than zero, got {format_duration(value)}")
    return value


def _quiet_period(value: object) -> timedelta | None:
    if value is None or (isinstance(value, str) and value.strip().lower() in ("never", "none", "off", "")):
        return None
    return _positive(parse_duration(value))


def _quiet_text(value: timedelta | None) -> str:
    return "never" if value is None else format_duration(value)


_AS_TEXT = PlainSerializer(format_duration, return_type=str)
Duration = Annotated[timedelta, BeforeValidator(parse_duration), _AS_TEXT]
"""A duration of zero or more."""
PositiveDuration = Annotated[timedelta, BeforeValidator(_positive), BeforeValidator(parse_duration), _AS_TEXT]
_LONGEST_SETTLE = timedelta(minutes=5)


def _settle(value: timedelta) -> timedelta:
    """A faulty cable waits this long to be taken out: longer than a switch-fault window would only delay it."""
    if value > _LONGEST_SETTLE:
        raise ValueError(f"at most {format_duration(_LONGEST_SETTLE)} (a faulty cable waits this long to be taken "
                         f"out), got {format_duration(value)}")
    return value


SettleDuration = Annotated[timedelta, BeforeValidator(_settle), BeforeValidator(parse_duration), _AS_TEXT]
QuietPeriod = Annotated[timedelta | None, BeforeValidator(_quiet_period),
                        PlainSerializer(_quiet_text, return_type=str)]
"""``"never"`` (wait for ``fabricctl resume``) or a duration longer than zero."""

# --- sections ----------------------------------------------------------------------------------------------


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FabricSection(_Section):
    name: str = Field("default", min_length=1, description="Which fabric this daemon manages.")
    plan: Path | None = None
    """The wiring plan (NDT CSV) ``fabricctl run`` loads; commands that take ``--plan`` ignore it."""

    @field_validator("name")
    @classmethod
    def _printable(cls, value: str) -> str:
        # The store keys a dry run's rows by the fabric's name and a control character.
        if not value.isprintable():
            raise ValueError(f"must be printable (no control characters): {value!r}")
        return value


class PolicySection(_Section):
    dry_run: bool = True
    host_links_ticket_only: bool = True
    max_strikes: int = Field(3, ge=1)
    probation: PositiveDuration = timedelta(hours=2)
    storm_components: int = Field(25, ge=1)
    storm_window: PositiveDuration = timedelta(minutes=15)
    storm_quiet_period: QuietPeriod = None

    def build(self, resets: ResetLadder) -> PolicyConfig:
        return PolicyConfig(dry_run=self.dry_run, host_links_ticket_only=self.host_links_ticket_only,
                            max_strikes=self.max_strikes, probation=self.probation,
                            storm_components=self.storm_components, storm_window=self.storm_window,
                            storm_quiet_period=self.storm_quiet_period, resets=resets)


class EscalationSection(_Section):
    """The reset ladder (``fabric.remediation.escalation``): a faulty link's port reset before it is taken out."""

    max_resets: int = Field(2, ge=0)
    """Resets of one link within ``reset_window``; 0: never reset, take faulty links out at once."""
    reset_window: PositiveDuration = timedelta(days=7)
    reset_settle: PositiveDuration = timedelta(minutes=10)
    """How long a link is watched after its reset: a fault found meanwhile takes it out."""
    rules: tuple[str, ...] = tuple(sorted(RESETTABLE))
    """The rules whose findings reset first: any of the resettable ones."""

    @field_validator("rules")
    @classmethod
    def _resettable(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [rule for rule in value if rule not in RESETTABLE]
        if unknown:
            raise ValueError(f"a reset cannot answer {', '.join(map(repr, unknown))}: the rules a reset may answer "
                             f"are {', '.join(sorted(RESETTABLE))}")
        return value

    def build(self) -> ResetLadder:
        return ResetLadder(max_resets=self.max_resets, window=self.reset_window, settle=self.reset_settle,
                           rules=frozenset(self.rules))


class _FixedRules(_Section):
    """The rules with shapes of their own; each counted rule adds two keys (``_counted_rule_fields``)."""

    flap_cycles: int = Field(3, ge=1)
    flap_window: PositiveDuration = timedelta(hours=12)
    burst_cycles: int = Field(5, ge=1)
    burst_window: PositiveDuration = timedelta(minutes=10)
    downtime: PositiveDuration = timedelta(seconds=7)
    both_ends_window: Duration = timedelta(seconds=60)
    attribution_window: Duration = timedelta(minutes=10)
    boot_time: Duration = timedelta(minutes=10)
    settle: Duration = timedelta(seconds=60)
    down_ticket_after: PositiveDuration = timedelta(minutes=10)
    own_action_window: Duration = timedelta(minutes=2)
    switch_fault_cables: int = Field(4, ge=2, description="One cable is the cable's fault, not the switch's.")
    switch_fault_window: PositiveDuration = timedelta(minutes=5)
    immediate_settle: SettleDuration = timedelta(seconds=60)

    def build(self) -> RuleSettings:
        fixed = {name: getattr(self, name) for name in _FixedRules.model_fields}
        counted = {rule.rule: Threshold(getattr(self, f"{rule.key}_count"), getattr(self, f"{rule.key}_window"))
                   for rule in COUNTED_RULES}
        return RuleSettings(**fixed, counted=counted)


def _counted_rule_fields() -> dict[str, Any]:
    """``<key>_count`` and ``<key>_window`` for every entry of the rule table, with its defaults."""
    fields: dict[str, Any] = {}
    for rule in COUNTED_RULES:
        fields[f"{rule.key}_count"] = (int, Field(rule.count, ge=1, description=f"{rule.describes}: how many"))
        fields[f"{rule.key}_window"] = (PositiveDuration, Field(rule.window, description=f"{rule.describes}: within"))
    return fields


RulesSection: type[_FixedRules] = create_model(  # the counted rules' keys come from the rule table
    "RulesSection", __base__=_FixedRules, **_counted_rule_fields())


class GuardSection(_Section):
    c: float = Field(0.75, gt=0.0, le=1.0)
    cap_fraction: float = Field(0.005, ge=0.0, le=HARD_CEILING)
    cap_floor: int = Field(10, ge=0)
    hourly_limit: int = Field(20, ge=0)

    def build(self) -> GuardSettings:
        return GuardSettings(c=self.c, cap_fraction=self.cap_fraction, cap_floor=self.cap_floor,
                             hourly_limit=self.hourly_limit)


class BurninSection(_Section):
    """A burn-in window's thresholds (``fabric.remediation.burnin``): where stricter than ``[rules]``, they apply
    during the window; never looser."""

    duration: PositiveDuration = timedelta(hours=1)
    counted_count: int = Field(1, ge=1, description="events of a counted rule (errors, high BER) that make a fault")
    flap_cycles: int = Field(1, ge=1)
    down_ticket_after: PositiveDuration = timedelta(minutes=1)
    min_packets: int = Field(1, ge=0, description="received packets a port must carry over the window (0: not "
                                                  "checked)")
    utilisation_events: tuple[int, ...] = UTILISATION_EVENTS

    @field_validator("utilisation_events")
    @classmethod
    def _event_ids(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        if any(event < 1 for event in value):
            raise ValueError("UFM event ids are positive numbers")
        return value

    def build(self) -> BurninSettings:
        return BurninSettings(self.duration, self.counted_count, self.flap_cycles, self.down_ticket_after,
                              self.min_packets, self.utilisation_events)


def _url(value: str | None) -> str | None:
    if value is not None and not re.match(r"^https?://[^\s/]+", value):
        raise ValueError(f"not an http(s) URL: {redacted_url(value)!r}")
    return value.rstrip("/") if value else value


def _read_secret(path: tuple[str, ...], file: Path | None, what: str) -> SecretStr:
    """The secret at ``path`` of ``ENV_SECRETS``: from ``file`` (its file key's value) if set, else the environment."""
    env, file_key = ENV_SECRETS[path]
    if file is not None:
        try:
            text = read_secret_file(file)
        except InputError as exc:
            raise ConfigError([f"{file_key}: cannot read the {what} file {file}: {exc.message}"]) from None
        if not text:
            raise ConfigError([f"{file_key}: the {what} file {file} is empty"])
        return SecretStr(text)
    try:
        value = env.read()
    except EnvSecretError as exc:
        raise ConfigError([str(exc)]) from None
    if not value:
        raise ConfigError([f"no {what}: set {env.name} or {file_key}"])
    return SecretStr(value)


def _optional_secret(path: tuple[str, ...], file: Path | None, what: str) -> SecretStr | None:
    """``_read_secret``, or ``None`` when neither the file nor the variable is set (the feature is off)."""
    if file is None and not ENV_SECRETS[path][0].is_set():
        return None
    return _read_secret(path, file, what)


class UfmSection(_Section):
    url: str | None = None
    auth: Literal["basic", "token", "session"] = "basic"
    user: str = "admin"
    secret_file: Path | None = None
    ca_bundle: Path | None = None
    insecure: bool = False
    method: Literal["disable", "isolate"] = "disable"
    """How a port is taken out: ``disable`` (UFM's port action, a job; survives a switch reboot) or ``isolate``
    (marked unhealthy with action isolate, ``PUT /app/unhealthy_ports``; the link stays up and OpenSM routes no
    data over it from its next sweep). A port out by the other method (the method changed between runs) is still
    known as out, and put back the way it was taken out."""
    write_attempts: int = Field(3, ge=1)
    """Port writes of one component UFM may leave unconfirmed before automation stops sending them."""
    write_backoff: PositiveDuration = timedelta(minutes=1)
    """The wait before a second attempt; doubled before each further one."""
    job_wait: Duration = timedelta(seconds=10)
    """How long a cycle waits for the jobs it posted; the rest are read again in later cycles."""
    job_deadline: PositiveDuration = timedelta(minutes=5)
    """A job unfinished (or a POST unanswered) this long after it was sent is an attempt UFM did not confirm."""
    link_up_wait: PositiveDuration = timedelta(minutes=2)
    """How long a re-enabled link is given to come up at its planned width and speed before it is backed out."""

    @field_validator("url")
    @classmethod
    def _check_url(cls, value: str | None) -> str | None:
        return _url(value)

    def secret(self) -> SecretStr:
        """The access token (``auth = "token"``) or password: ``secret_file`` if set, else
        ``FABRIC_UFM__TOKEN`` / ``FABRIC_UFM__PASSWORD``. Read when called, never stored."""
        if self.auth == "token":
            return _read_secret(("ufm", "token"), self.secret_file, "UFM access token")
        return _read_secret(("ufm", "password"), self.secret_file, "UFM password")

    def target(self) -> UfmTarget:
        """How ``fabric.ufm.connect`` reaches this UFM (it reads the secret itself, when it connects)."""
        from fabric.ufm.connect import AuthMode, UfmTarget

        if self.url is None:
            raise ConfigError(["ufm.url: not set (set it in the file or FABRIC_UFM__URL)"])
        return UfmTarget(self.url, AuthMode(self.auth), self.user, self.secret_file, self.ca_bundle, self.insecure)


MIN_TELEMETRY_INTERVAL = timedelta(seconds=60)
"""UFM Telemetry is never read faster: NVIDIA's PDR plugin reads it every 300 s, and a sample of a large fabric is
tens of megabytes."""


_JUDGED = TelemetrySettings()
"""The thresholds samples are judged by when the configuration names none (NVIDIA's PDR plugin's)."""


class TelemetrySection(_Section):
    """UFM Telemetry's samples: where they are read and how often (``fabric.ufm.telemetry.TelemetryClient``)."""

    enabled: bool = False
    url: str = TELEMETRY_URL
    instance: str = TELEMETRY_INSTANCE
    interval: PositiveDuration = timedelta(seconds=300)
    timeout: PositiveDuration = timedelta(seconds=DEFAULT_TIMEOUT_S)
    """Seconds each of connecting, sending and reading one request may take (reads are retried after one)."""
    ca_bundle: Path | None = None
    insecure: bool = False
    max_bytes: int = Field(TELEMETRY_MAX_BYTES, ge=1, le=MAX_TELEMETRY_BYTES)
    """The longest sample taken: a longer one is refused as soon as it is announced or read past."""
    max_pdr: float = Field(_JUDGED.max_pdr, gt=0.0, lt=1.0)
    """A packet drop rate above this is a fault (``packet_drops``)."""
    tmax: float = Field(_JUDGED.tmax, gt=0.0, le=150.0)
    """A module hotter than this (°C) is a fault (``temperature``)."""
    d_tmax: float = Field(_JUDGED.d_tmax, gt=0.0, le=150.0)
    """A module whose temperature rose by more than this (°C) since its last sample is a fault."""
    partial_fraction: float = Field(_JUDGED.partial_fraction, ge=0.0, le=1.0)
    """A sample missing more than this fraction of the fabric's ports acts on nothing."""
    implausible_fraction: float = Field(_JUDGED.implausible_fraction, gt=0.0, le=1.0)
    """A sample in which more than this fraction of the ports read cross a threshold acts on nothing."""

    @field_validator("url")
    @classmethod
    def _check_url(cls, value: str) -> str:
        return check_base_url(value)

    @field_validator("instance")
    @classmethod
    def _check_instance(cls, value: str) -> str:
        return check_instance(value)

    @field_validator("interval")
    @classmethod
    def _not_too_often(cls, value: timedelta) -> timedelta:
        if value < MIN_TELEMETRY_INTERVAL:
            raise ValueError(f"must be at least {format_duration(MIN_TELEMETRY_INTERVAL)} (UFM Telemetry is not read "
                             f"faster), got {format_duration(value)}")
        return value

    @field_validator("timeout")
    @classmethod
    def _check_timeout(cls, value: timedelta) -> timedelta:
        check_timeout(value.total_seconds())
        return value

    def settings(self) -> TelemetrySettings:
        """The thresholds samples are judged by (the BER windows are the link-validation procedure's)."""
        return TelemetrySettings(max_pdr=self.max_pdr, tmax=self.tmax, d_tmax=self.d_tmax,
                                 partial_fraction=self.partial_fraction,
                                 implausible_fraction=self.implausible_fraction)

    def client(self) -> TelemetryClient:
        """A reader of the samples (the CA bundle is read here: an unusable one is a ``ConfigError``)."""
        from fabric.ufm.telemetry import TelemetryClient

        try:
            return TelemetryClient(self.url, self.instance, verify=not self.insecure, ca_bundle=self.ca_bundle,
                                   timeout=self.timeout.total_seconds(), max_bytes=self.max_bytes)
        except InputError as exc:
            raise ConfigError([f"telemetry.ca_bundle: cannot use {self.ca_bundle}: {exc.message}"]) from None
        except OSError as exc:  # ssl.SSLError: what it holds is no certificate
            raise ConfigError([f"telemetry.ca_bundle: cannot use {self.ca_bundle}: {exc.strerror or exc}"]) from None


class PlausibilitySection(_Section):
    """When a reading of UFM's topology cannot be true (``fabric.ufm.plausibility``)."""

    max_drop: float = Field(0.4, gt=0.0, le=1.0)
    min_planned: float = Field(0.5, ge=0.0, le=1.0)

    def build(self) -> PlausibilitySettings:
        return PlausibilitySettings(max_drop=self.max_drop, min_planned=self.min_planned)


class StoreSection(_Section):
    url: str = Field("sqlite:///fabric-remediation.db", min_length=1)


class JiraSection(_Section):
    url: str | None = None
    project: str | None = None
    issue_type: str = Field("Task", min_length=1)
    auth: Literal["cloud", "datacenter"] = "datacenter"
    """``cloud``: basic auth, ``user`` (the account's e-mail) and an API token; ``datacenter``: the token is a
    personal access token, or a password when ``user`` is set."""
    user: str | None = None
    token_file: Path | None = None
    labels: tuple[str, ...] = ("fabric-remediation",)
    """Labels on every ticket, beside the fabric's own (``ibfabric-<name>``) and the component's dedup key."""
    reopen_transition: str = Field("Reopen", min_length=1)
    resolve_transition: str = Field("Done", min_length=1)
    """The transition the backend's ``resolve`` takes (tests, a demo on the fake Jira); people resolve tickets in
    Jira itself."""
    closed_resolutions: tuple[str, ...] = DEFAULT_CLOSED_RESOLUTIONS
    """Resolutions that mean done without a repair: the component stays out of service, with a new ticket."""
    components: tuple[str, ...] = ()
    """Jira components every new ticket names (they must exist in the project)."""
    priorities: dict[str, str] = {}
    """A fault's severity (its rule's in ``fabric.remediation.rules.RULES``: 2 to 10, higher is worse) -> the Jira
    priority of its ticket: the highest threshold the severity reaches, e.g. ``{ "9" = "Highest", "6" = "High" }``."""
    fields: dict[str, str] = {}
    """Custom fields every new ticket sets, by the name Jira shows, e.g. ``{ "Data Centre" = "DC-1" }``."""
    timeout: PositiveDuration = timedelta(seconds=10)
    ca_bundle: Path | None = None
    """The CA certificates (PEM) Jira's certificate is checked against; ``None``: the system's."""

    @field_validator("url")
    @classmethod
    def _check_url(cls, value: str | None) -> str | None:
        return _url(value)

    @field_validator("priorities")
    @classmethod
    def _check_priorities(cls, value: dict[str, str]) -> dict[str, str]:
        problems = [f"{threshold!r} is not a whole number (a severity)" for threshold in value
                    if whole_number(threshold.strip().removeprefix("-")) is None]
        problems += [f"{threshold!r}: the priority name is empty" for threshold, name in value.items()
                     if not name.strip()]
        if problems:
            raise ValueError("; ".join(problems))
        return value

    @field_validator("fields")
    @classmethod
    def _check_fields(cls, value: dict[str, str]) -> dict[str, str]:
        if any(not name.strip() for name in value):
            raise ValueError("a field name is empty")
        return value

    def priority_thresholds(self) -> tuple[tuple[int, str], ...]:
        return tuple(sorted((int(threshold), name) for threshold, name in self.priorities.items()))

    @field_validator("labels")
    @classmethod
    def _check_labels(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for label in value:
            if not label or any(ch.isspace() for ch in label):
                raise ValueError(f"a Jira label is not empty and has no whitespace, got {label!r}")
        return value

    @model_validator(mode="after")
    def _cloud_user(self) -> JiraSection:
        if self.auth == "cloud" and not self.user:
            raise ValueError("auth is cloud but tickets.jira.user (the account's e-mail) is not set")
        return self

    def token(self) -> SecretStr:
        """The Jira API token: ``token_file`` if set, else ``FABRIC_TICKETS__JIRA__TOKEN``. Read when called, never
        stored."""
        return _read_secret(("tickets", "jira", "token"), self.token_file, "Jira API token")


class TicketsSection(_Section):
    backend: Literal["local", "jira"] = "local"
    jira: JiraSection = JiraSection()
    webhook_secret_file: Path | None = None
    webhook_token_file: Path | None = None
    retry_base: PositiveDuration = timedelta(seconds=10)
    """The outbox's backoff after a ticket write first failed; it doubles with each failure after."""
    retry_cap: PositiveDuration = timedelta(minutes=10)
    """The longest backoff: a ticket system back up is used within this."""
    search_settle: Duration = timedelta(minutes=2)
    """After a create that got no answer, how long the ticket system's search may take to show what it made (Jira
    Cloud's lags): the create is not tried again, blindly, before."""
    recurrence_comments: PositiveDuration = timedelta(hours=1)
    """A fault found again on a component whose ticket is open is commented on the ticket at most once in this
    long (counted from the component's last ticket write)."""

    def webhook_secret(self) -> SecretStr | None:
        """The key Jira signs its webhooks with (``X-Hub-Signature``): ``webhook_secret_file`` if set, else
        ``FABRIC_TICKETS__WEBHOOK_SECRET``; ``None``: Jira's deliveries are taken unsigned. Read when called."""
        return _optional_secret(("tickets", "webhook_secret"), self.webhook_secret_file, "webhook secret")

    def webhook_token(self) -> SecretStr | None:
        """The bearer token of ``/webhooks/generic``: ``webhook_token_file`` if set, else
        ``FABRIC_TICKETS__WEBHOOK_TOKEN``; ``None``: the generic endpoint refuses every delivery. Read when called."""
        return _optional_secret(("tickets", "webhook_token"), self.webhook_token_file, "webhook token")

    @model_validator(mode="after")
    def _jira_complete(self) -> TicketsSection:
        if self.backend == "jira":
            missing = [key for key in ("url", "project") if getattr(self.jira, key) is None]
            if missing:
                raise ValueError(f"backend is jira but tickets.jira.{' and tickets.jira.'.join(missing)} "
                                 f"{'is' if len(missing) == 1 else 'are'} not set")
        return self


class DaemonSection(_Section):
    interval: PositiveDuration = CYCLE
    """The cycle: the event poll, decisions, actions (also run at once on a webhook delivery or a request)."""
    reconcile_interval: PositiveDuration = timedelta(minutes=5)
    """The full state reconcile: UFM read again whatever its change counters say, then converged."""
    ticket_poll_interval: PositiveDuration = timedelta(minutes=10)
    """The ticket fallback poll: every open ticket asked of the backend, which heals a lost webhook delivery."""
    ticket_send_interval: PositiveDuration = timedelta(seconds=5)
    """How often the ticket writes due in the outbox are sent (beside the cycle, which never waits for them)."""
    shutdown_wait: PositiveDuration = timedelta(seconds=60)
    """On SIGTERM/SIGINT, how long the running cycle may take to finish before the process exits anyway."""
    events_untrusted_for: Duration = timedelta(minutes=5)
    """How long every event list UFM answers may be one not believed (empty, short, stale: nothing is taken from
    it) before ``/readyz`` says the daemon is not ready."""
    engine_niceness: int = Field(5, ge=0, le=19)
    """How much nicer (``nice``) the engine's process runs than the API's: on a host whose cores are all busy (a
    storm's cycle, UFM itself) the API's requests get a core first. The shipped systemd unit runs the daemon at
    ``Nice=-5``: the API ahead of the host's other work, the engine level with it."""


LEASE_HEARTBEATS = 3
"""A lease holds at least this many heartbeats: the leader stops acting one heartbeat before its lease runs out, and
a heartbeat that fails once must not depose it before the next one could succeed."""


class LeaderSection(_Section):
    """Active/standby leadership on PostgreSQL (``fabric.daemon.leader``); SQLite runs a single instance."""

    lease: PositiveDuration = timedelta(seconds=15)
    """How long after its last successful heartbeat a leader may still act: it stops at ``lease - heartbeat``, and
    a standby that takes the lock acts only once ``lease`` has passed since that heartbeat."""
    heartbeat: PositiveDuration = timedelta(seconds=3)
    """How often the leader proves it still holds the lock, and a standby tries to take it."""

    @model_validator(mode="after")
    def _heartbeats_fit(self) -> LeaderSection:
        if self.lease < self.heartbeat * LEASE_HEARTBEATS:
            raise ValueError(f"leader.lease ({format_duration(self.lease)}) must be at least {LEASE_HEARTBEATS} times "
                             f"leader.heartbeat ({format_duration(self.heartbeat)})")
        return self


class ApiSection(_Section):
    """Where ``fabricctl run`` serves its HTTP API (health, metrics, status, the operator's writes)."""

    host: str = Field("127.0.0.1", min_length=1, description="The address the HTTP API listens on.")
    port: int = Field(8080, ge=0, le=65535)
    """0: any free port (tests), written to the log when bound."""
    admin_token_file: Path | None = None
    read_timeout: PositiveDuration = timedelta(seconds=READ_TIMEOUT)
    """A request's headers must arrive within it, then its body: else 408 and the connection closed."""
    max_connections: int = Field(MAX_CONNECTIONS, ge=1, le=65535)
    """Connections served at once; a request past them is answered 503."""

    def server_limits(self) -> ServerLimits:
        """The limits the HTTP servers read their clients within (``fabric.serving`` applies them)."""
        return ServerLimits(self.read_timeout.total_seconds(), self.max_connections)

    def admin_token(self) -> SecretStr | None:
        """The bearer token the API's writes need: ``admin_token_file`` if set, else ``FABRIC_API__ADMIN_TOKEN``;
        ``None`` when neither is set (the API then refuses every write). Read when called, never stored."""
        return _optional_secret(("api", "admin_token"), self.admin_token_file, "API admin token")


class GoldenSection(_Section):
    """The golden set: the hosts a scheduler fills first (``GET /api/v1/hosts?golden=true``, ``fabricctl hosts
    golden``)."""

    clean_for: PositiveDuration = timedelta(days=14)
    """How long every component of a host (its adapters' cables and ports, the host, the leaves it hangs from)
    must have gone without a finding, and the service must have watched it, before the host is golden."""


# --- the whole configuration -------------------------------------------------------------------------------


class ServiceConfig(BaseSettings):
    """The validated, frozen service configuration. Build it with :func:`load_config`.

    Keyword arguments given to the constructor play the part of the file: the environment overrides them.
    """

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, env_nested_delimiter=ENV_DELIMITER, extra="forbid",
                                      frozen=True, case_sensitive=False)

    fabric: FabricSection = FabricSection()
    policy: PolicySection = PolicySection()
    rules: RulesSection = RulesSection()
    escalation: EscalationSection = EscalationSection()
    guard: GuardSection = GuardSection()
    burnin: BurninSection = BurninSection()
    ufm: UfmSection = UfmSection()
    plausibility: PlausibilitySection = PlausibilitySection()
    telemetry: TelemetrySection = TelemetrySection()
    store: StoreSection = StoreSection()
    tickets: TicketsSection = TicketsSection()
    daemon: DaemonSection = DaemonSection()
    leader: LeaderSection = LeaderSection()
    api: ApiSection = ApiSection()
    golden: GoldenSection = GoldenSection()

    @classmethod
    def settings_customise_sources(cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
                                   env_settings: PydanticBaseSettingsSource,
                                   dotenv_settings: PydanticBaseSettingsSource,
                                   file_secret_settings: PydanticBaseSettingsSource,
                                   ) -> tuple[PydanticBaseSettingsSource, ...]:
        # First wins: the environment over the file's values (passed as keyword arguments); no .env files.
        return _EnvWithoutSecrets(settings_cls), init_settings

    # --- the settings the service's parts take ---

    def policy_config(self) -> PolicyConfig:
        """The policy's settings; with UFM Telemetry read, a cable's probation also waits for a clean BER window."""
        built = self.policy.build(self.escalation.build())
        if not self.telemetry.enabled:
            return built
        return replace(built, clean_window=self.telemetry.settings().clean_after)

    def rule_settings(self) -> RuleSettings:
        return self.rules.build()

    def guard_settings(self) -> GuardSettings:
        return self.guard.build()


class _EnvWithoutSecrets(EnvSettingsSource):
    """The ``FABRIC_*`` variables but the ``ENV_SECRETS``, which are read when asked for, never kept as fields."""

    def __call__(self) -> dict[str, Any]:
        data = super().__call__()
        for *sections, key in ENV_SECRETS:
            values: Any = data
            for section in sections:
                values = values.get(section) if isinstance(values, dict) else None
            if isinstance(values, dict):
                values.pop(key, None)
        return data


# --- loading -----------------------------------------------------------------------------------------------


class ConfigError(FabricError, ValueError):
    """A configuration that cannot be used; ``problems`` holds one line per problem, each saying where."""

    kind = ErrorKind.CONFIG

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


def load_config(path: Path | str | None = None) -> ServiceConfig:
    """The configuration from the TOML file at ``path`` (none: defaults) overridden by ``FABRIC_*`` variables."""
    source = str(path) if path is not None else "<defaults>"
    data = _read_toml(Path(path)) if path is not None else {}
    problems = [f"{source}: {where}: {message}" for where, message in _secrets_in(data)]
    problems += _env_problems()
    problems += _env_json_problems()
    if problems:
        raise ConfigError(problems)
    try:
        return ServiceConfig(**data)
    except ValidationError as exc:
        raise ConfigError([_describe(error, source) for error in exc.errors()]) from None


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        text = read_input(path, CONFIGURATION).decode("utf-8")
    except InputError as exc:
        raise ConfigError([str(exc)]) from None
    except UnicodeDecodeError as exc:
        raise ConfigError([f"{path}: not UTF-8 text: {exc.reason} at byte {exc.start}"]) from None
    try:
        return strictjson.bounded(lambda: tomllib.loads(text))
    except JsonError as exc:  # an array or inline table nested deeper than any configuration
        if exc.path is None and (found := _deep_key(text)) is not None:
            line, key = found
            raise ConfigError([f"{path}:{line}: {key}: {exc}"]) from None
        raise ConfigError([f"{path}: {exc}"]) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([f"{path}: not valid TOML: {exc}"]) from None


_TOML_KEY = r"""(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*"""
_KEY_LINE = re.compile(rf"^\s*({_TOML_KEY})\s*=")
_TABLE_LINE = re.compile(rf"^\s*\[\[?\s*({_TOML_KEY})\s*\]\]?\s*(?:#.*)?$")
_TOML_STRING = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'[^']*'")
_BRACKETS = re.compile(r"[][{}]")


def _deep_key(text: str) -> tuple[int, str] | None:
    """The line where a value too deep for ``tomllib`` passes ``MAX_DEPTH``, and its key (``table.key``): brackets
    counted outside strings and comments. Only to name the place of a nesting ``tomllib`` cannot read."""
    table, key, depth = "", "", 0
    for number, line in enumerate(text.splitlines(), start=1):
        value = line
        if depth == 0:
            if header := _TABLE_LINE.match(line):
                table = header[1]
                continue
            if assignment := _KEY_LINE.match(line):
                key, value = assignment[1], line[assignment.end():]
        for bracket in _BRACKETS.findall(_TOML_STRING.sub("", value).partition("#")[0]):
            depth += 1 if bracket in "[{" else -1
            if depth > strictjson.MAX_DEPTH:
                return number, f"{table}.{key}" if table else key
    return None


def _secrets_in(data: Mapping[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    """Secret-looking keys in the file: refused, with where to put the secret instead."""
    found: list[tuple[str, str]] = []
    for key, value in data.items():
        where = f"{prefix}{key}"
        if isinstance(value, Mapping):
            found += _secrets_in(value, f"{where}.")
        elif key in SECRET_KEYS:
            found.append((where, f"secrets are never read from the file: {_secret_advice(where)}"))
    return found


def _secret_advice(where: str) -> str:
    if where.startswith("ufm."):  # a password or a token, whatever the key says
        return (f"set {UFM_PASSWORD.name} (or {UFM_TOKEN.name}) in the environment, or name a file in "
                "ufm.secret_file")
    path = tuple(where.split("."))
    if path in ENV_SECRETS:
        env, file_key = ENV_SECRETS[path]
    elif where.startswith("tickets."):
        env, file_key = ENV_SECRETS[("tickets", "jira", "token")]
    elif where.startswith("api."):
        env, file_key = ENV_SECRETS[("api", "admin_token")]
    else:
        return "keep it in the environment or in a file only the service can read"
    return f"set {env.name} in the environment, or name a file in {file_key}"


def _env_problems() -> list[str]:
    """Nested ``FABRIC_<SECTION>__...`` variables naming no section, or carrying a secret not read from there, and
    secrets set under both their names to different values (all refused)."""
    sections = set(ServiceConfig.model_fields)
    problems = [problem for env, _ in ENV_SECRETS.values() if (problem := env.conflict()) is not None]
    for name in sorted(os.environ):
        upper = name.upper()
        if not upper.startswith(ENV_PREFIX) or ENV_DELIMITER not in upper:
            continue
        path = upper.removeprefix(ENV_PREFIX).lower().split(ENV_DELIMITER)
        if path[0] not in sections:
            problems.append(f"{name}: unknown section {path[0]!r}{_suggest(path[0], sections)}")
        elif path[-1] in SECRET_KEYS and tuple(path) not in ENV_SECRETS:
            problems.append(f"{name}: {_secret_advice('.'.join(path))}")
    return problems


def _env_json_problems() -> list[str]:
    """``FABRIC_*`` variables that pydantic-settings decodes as JSON (a section, a list, a table), decoded here first
    by the project's decoder: text that is not JSON, a key given twice, NaN or nesting 20,000 deep is one line naming
    the variable, where pydantic-settings would raise a ``SettingsError`` naming only the section, take the last of
    two keys, or recurse until Python stops it."""
    problems = []
    for name in sorted(os.environ):
        upper = name.upper()
        if not upper.startswith(ENV_PREFIX):
            continue
        shape = _json_shape(upper.removeprefix(ENV_PREFIX).lower().split(ENV_DELIMITER))
        if shape is None:
            continue
        try:
            strictjson.loads(os.environ[name])
        except JsonError as exc:
            problems.append(f"{name}: {exc}" if exc.lineno is None else
                            f"{name}: not JSON ({shape} is written in JSON here, e.g. {_JSON_EXAMPLES[shape]}): {exc}")
    return problems


_JSON_EXAMPLES = {"a list": '["a", "b"]', "a table": '{"key": "value"}', "a section": '{"key": "value"}'}


def _json_shape(path: list[str]) -> str | None:
    """What the key at ``path`` holds when pydantic-settings reads its variable as JSON (``a section``, ``a list``,
    ``a table``); ``None`` for a key it reads as text, or no key."""
    model: Any = ServiceConfig
    for depth, part in enumerate(path):
        field = model.model_fields.get(part) if isinstance(model, type) and issubclass(model, BaseModel) else None
        if field is None:
            return None
        annotation = field.annotation
        if depth < len(path) - 1:
            model = annotation
            continue
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            return "a section"
        origin = get_origin(annotation)
        if origin in (list, tuple, set, frozenset):
            return "a list"
        if origin is dict:
            return "a table"
    return None


def _suggest(word: str, choices: object) -> str:
    names = [str(c) for c in choices] if isinstance(choices, set | list | tuple | frozenset) else []
    close = difflib.get_close_matches(word, names, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else f" (known: {', '.join(sorted(names))})"


def _describe(error: Mapping[str, Any], source: str) -> str:
    loc = [str(part) for part in error.get("loc", ())]
    dotted = ".".join(loc) or "(top level)"
    where = _env_source(loc) or source
    kind = error.get("type", "")
    if kind == "extra_forbidden":
        known = _known_keys(loc[:-1])
        what = "unknown section" if len(loc) == 1 else "unknown key"
        return f"{where}: {dotted}: {what}{_suggest(loc[-1], known)}"
    message = str(error.get("msg", "invalid"))
    if kind == "value_error":
        message = message.removeprefix("Value error, ")
    elif "input" in error and kind not in ("missing",):
        message = f"{message} (got {error['input']!r})"
    return f"{where}: {dotted}: {message}"


def _env_has(name: str) -> bool:
    return any(key.upper() == name for key in os.environ)


def _env_source(loc: list[str]) -> str | None:
    """The variable that set the key at ``loc``, or a section or table around it (its value is JSON): the longest
    one set; else, for a section's check of its keys together, the variables that set keys in it."""
    above = (ENV_PREFIX + ENV_DELIMITER.join(loc[:end]).upper() for end in range(len(loc), 0, -1))
    if (name := next((name for name in above if _env_has(name)), None)) is not None:
        return name
    inside = ENV_PREFIX + ENV_DELIMITER.join(loc).upper() + ENV_DELIMITER
    below = sorted(key for key in os.environ if loc and key.upper().startswith(inside))
    return " and ".join(below) or None


def _known_keys(loc: list[str]) -> set[str]:
    model: Any = ServiceConfig
    for part in loc:
        field = model.model_fields.get(part) if hasattr(model, "model_fields") else None
        if field is None or not (isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel)):
            return set()
        model = field.annotation
    return set(model.model_fields)
