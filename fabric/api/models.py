"""What the HTTP API answers and accepts: pydantic models (they make the OpenAPI document), built from the store's
records by one ``of`` function each, so every endpoint shows a record the same way."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from fabric.api.context import EngineProcess, GuardFigures, LeaderView
from fabric.bounded import Instant
from fabric.controller.telemetry import SampleOutcome
from fabric.durations import parse_duration
from fabric.remediation.domain import ComponentId, ComponentRecord, Finding
from fabric.remediation.golden import History
from fabric.remediation.muting import check_matcher
from fabric.remediation.textlimits import BY_MAX, DURATION_MAX, MATCHER_MAX, REASON_MAX
from fabric.store import BurninWindow, DecisionRecord, IntentRecord, OperatorRequest, Silence, TicketRecord


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def _id(component: ComponentId | None) -> str | None:
    return None if component is None else str(component)


class Problem(_Model):
    """Every error answer: one line saying what is wrong (and, for bad input, naming the field)."""

    detail: str


# --- reads -------------------------------------------------------------------------------------------------


class Guard(_Model):
    worst_leaf: str | None = Field(description="The leaf with the fewest paths to core for its plan.")
    worst_leaf_fraction: float | None = Field(description="Its paths to core over its planned paths (1.0: intact).")
    disabled: int = Field(description="Cables automation holds out of service, counted against the cap.")
    cap: int = Field(description="The blast-radius cap: at most this many held out at once.")
    disables_last_hour: int
    hourly_limit: int

    @classmethod
    def of(cls, figures: GuardFigures) -> Self:
        return cls(worst_leaf=figures.worst_leaf, worst_leaf_fraction=figures.worst_leaf_fraction,
                   disabled=figures.disabled, cap=figures.cap, disables_last_hour=figures.disables_last_hour,
                   hourly_limit=figures.hourly_limit)


class Leader(_Model):
    """Who acts for the fabric: this instance (the leader) or another (this one stands by)."""

    role: str = Field(description="leader (this instance acts) or standby (it serves reads and stores webhook "
                                  "deliveries, and acts once it takes the leadership).")
    instance: str = Field(description="This instance (host:pid).")
    epoch: int | None = Field(description="The leader epoch (fencing token) this instance holds, or the newest a "
                                          "standby saw (null: no instance led the fabric yet).")
    leader: str | None = Field(description="The instance that leads (or took the newest epoch).")
    takeover_blocked: str | None = Field(None, description="Why this standby cannot take over from a leader that "
                                         "holds the lock past its lease (null: nothing keeps it from it).")

    @classmethod
    def of(cls, view: LeaderView) -> Self:
        return cls(role=view.role.value, instance=view.instance, epoch=view.epoch, leader=view.leader,
                   takeover_blocked=view.takeover_blocked)


class EngineOut(_Model):
    """The process that runs the engine's cycles, apart from the one answering this request."""

    state: str = Field(description="starting (not reporting yet), running, restarting (it exited unasked: started "
                                   "again after a back-off), stopping.")
    pid: int | None
    since: datetime = Field(description="When it entered this state.")
    restarts: int = Field(description="How often it was started again after exiting unasked.")
    last_exit: str | None = Field(description="How the last one ended (null: none ended yet).")
    silent_for: float | None = Field(description="Seconds since it last reported (null: it has not yet).")

    @classmethod
    def of(cls, engine: EngineProcess) -> Self:
        return cls(state=engine.state.value, pid=engine.pid, since=engine.since, restarts=engine.restarts,
                   last_exit=engine.last_exit, silent_for=engine.silent_for)


class RequestOut(_Model):
    """An operator's request (resume, clear): the engine carries it out at its next cycle."""

    id: int
    kind: str
    component: str | None
    reason: str
    requested_by: str
    requested_at: datetime
    handled_at: datetime | None = Field(description="When the engine carried it out (null: pending).")
    outcome: str | None

    @classmethod
    def of(cls, request: OperatorRequest) -> Self:
        return cls(id=request.id, kind=request.kind.value, component=_id(request.component), reason=request.reason,
                   requested_by=request.requested_by, requested_at=request.requested_at,
                   handled_at=request.handled_at, outcome=request.outcome)


class TelemetryRead(_Model):
    """The last attempt to read a UFM Telemetry sample."""

    read_at: datetime
    outcome: str = Field(description="accepted; or why it acted on nothing: stale (its time did not move), partial "
                                     "(ports missing), implausible (too many ports crossed a threshold at once), "
                                     "refused (not UFM Telemetry's CSV), unreachable (no sample read).")
    reason: str
    sample_time: datetime | None = Field(description="The sample's own time (null: none was read).")
    conditions: int = Field(description="Conditions found in it (an accepted sample's only).")

    @classmethod
    def of(cls, outcome: SampleOutcome) -> Self:
        return cls(read_at=outcome.read_at, outcome=outcome.outcome, reason=outcome.reason,
                   sample_time=outcome.sample_time, conditions=outcome.conditions)


class Status(_Model):
    fabric: str
    dry_run: bool
    would_be: bool = Field(False, description="halted and components are a dry run's would-be state (kept across "
                                              "its restarts), not live mode's.")
    halted: bool = Field(description="The storm breaker has halted automation (no UFM writes).")
    halt_reason: str
    halted_since: datetime | None = Field(description="When the breaker last changed (tripped or resumed).")
    started_at: datetime
    starting: bool = Field(description="The engine is starting: settling what the last run left pending, "
                                       "rebuilding its state; no cycle has run yet.")
    interval_seconds: float
    last_poll_at: datetime | None
    last_cycle_at: datetime | None
    last_cycle_error: str | None = Field(description="Why the last cycle failed (null: it completed).")
    ufm_reachable: bool
    view_refused_since: datetime | None = Field(description="Since when UFM's topology readings are refused.")
    guard: Guard
    components: dict[str, int] = Field(description="Components recorded in each lifecycle state (zeros included).")
    pending_requests: list[RequestOut]
    counters: dict[str, int] = Field(description="The last cycle's counts (events, writes pending...).")
    leadership: Leader | None = Field(None, description="Who acts for the fabric (null: outside the daemon, or "
                                                        "until the daemon's engine process first reports).")
    telemetry: TelemetryRead | None = Field(None, description="The last UFM Telemetry sample read (null: telemetry "
                                                              "is not read, or no sample was yet).")
    engine: EngineOut | None = Field(None, description="The engine's process (null: outside the daemon).")


class Component(_Model):
    """A component's recorded state: the desired state the engine converges UFM to."""

    id: str = Field(description="kind:name, e.g. 'link:leaf01/1|spine01/1' or 'switch:core01'.")
    kind: str
    lifecycle: str
    since: datetime
    rule: str
    reason: str
    strikes: int
    never_auto_restore: bool
    probation_until: datetime | None
    dry_run: bool = Field(False, description="A dry run's would-be state: what live mode would hold, not what UFM "
                                             "was made to show.")

    @classmethod
    def of(cls, component: ComponentId, record: ComponentRecord, *, dry_run: bool = False) -> Self:
        return cls(id=str(component), kind=component.kind.value, lifecycle=record.lifecycle.value,
                   since=record.since, rule=record.rule, reason=record.reason, strikes=record.strikes,
                   never_auto_restore=record.never_auto_restore, probation_until=record.probation_until,
                   dry_run=dry_run)


class ComponentPage(_Model):
    total: int = Field(description="How many components match the filters (all pages).")
    limit: int
    offset: int
    items: list[Component]


class FindingOut(_Model):
    component: str
    rule: str
    at: datetime
    reason: str
    evidence: list[int] = Field(description="UFM event ids.")
    ticket_only: bool
    never_auto_restore: bool
    no_reset: bool = Field(description="Taken out without the reset ladder's reset first (a burn-in window's).")

    @classmethod
    def of(cls, finding: Finding) -> Self:
        return cls(component=str(finding.component), rule=finding.rule, at=finding.at, reason=finding.reason,
                   evidence=list(finding.evidence), ticket_only=finding.ticket_only,
                   never_auto_restore=finding.never_auto_restore, no_reset=finding.no_reset)


class Decision(_Model):
    id: int
    at: datetime
    kind: str
    component: str | None
    rule: str
    reason: str
    guard: dict[str, Any] = Field(description="The capacity guard's figures when it was decided.")
    dry_run: bool
    epoch: int | None = Field(None, description="The leader epoch that decided it (null: before leadership).")

    @classmethod
    def of(cls, record: DecisionRecord) -> Self:
        action = record.action
        return cls(id=record.id, at=action.at, kind=action.kind.value, component=_id(action.component),
                   rule=action.rule, reason=action.reason, guard=dict(action.guard), dry_run=action.dry_run,
                   epoch=record.epoch)


class Intent(_Model):
    """A side effect (UFM write, ticket write), logged before it was attempted."""

    id: int
    kind: str
    component: str | None
    state: str
    payload: dict[str, Any]
    created_at: datetime
    finished_at: datetime | None
    outcome: str | None

    @classmethod
    def of(cls, intent: IntentRecord) -> Self:
        return cls(id=intent.id, kind=intent.kind.value, component=_id(intent.component), state=intent.state.value,
                   payload=dict(intent.payload), created_at=intent.created_at, finished_at=intent.finished_at,
                   outcome=intent.outcome)


class Ticket(_Model):
    id: int
    dedup_key: str
    backend: str
    external_key: str | None = Field(description="The backend's key (LOCAL-1, NET-123); null while creating.")
    component: str | None = Field(description="What it is about (null: the storm ticket).")
    state: str
    summary: str
    created_at: datetime
    updated_at: datetime
    resolved_at: datetime | None

    @classmethod
    def of(cls, ticket: TicketRecord) -> Self:
        return cls(id=ticket.id, dedup_key=ticket.dedup_key, backend=ticket.backend, external_key=ticket.external_key,
                   component=None if ticket.component is None else str(ticket.component), state=ticket.state.value,
                   summary=ticket.summary, created_at=ticket.created_at, updated_at=ticket.updated_at,
                   resolved_at=ticket.resolved_at)


class ComponentDetail(_Model):
    id: str
    state: Component | None = Field(description="Its recorded state (null: none recorded, healthy as far as "
                                                "automation knows).")
    findings: list[FindingOut] = Field(description="The newest findings, oldest first.")
    decisions: list[Decision] = Field(description="The newest decisions, oldest first.")
    intents: list[Intent] = Field(description="The newest side effects, newest first.")
    tickets: list[Ticket]


class HostHealth(_Model):
    """The yes/no a training scheduler consumes. Reflects what automation has recorded (findings, lifecycle
    states, switch faults); a link UFM shows down counts once a finding about it is recorded."""

    host: str
    healthy: bool
    reasons: list[str] = Field(description="Why it is not healthy, one line each (empty when healthy).")
    since: datetime | None = Field(description="Since when it has been unhealthy (the oldest reason).")


class Reliability(_Model):
    """A component's or a host's reliability history, from the store (a host: its components' summed)."""

    findings: int = Field(description="Findings recorded.")
    last_finding: datetime | None = Field(description="The newest finding's time (none recorded: null).")
    tickets: int = Field(description="Tickets opened.")
    repairs: int = Field(description="Tickets the ticket system resolved or closed.")
    strikes: int = Field(description="Strikes: how often it broke again after a repair.")
    quarantined: bool = Field(description="Quarantined at some time (broke too often).")


def reliability(history: History) -> dict[str, Any]:
    """``Reliability``'s fields from a ledger's ``History`` (for the models that extend it)."""
    return {"findings": history.findings, "last_finding": history.last_finding, "tickets": history.tickets,
            "repairs": history.repairs, "strikes": history.strikes, "quarantined": history.quarantined}


class ComponentReliability(Reliability):
    component: str


class HostReliability(Reliability):
    """A host of the golden set (``GET /hosts?golden=true``), or any host's history (``/hosts/{host}/history``)."""

    host: str
    golden: bool = Field(description="Healthy, never quarantined, clean for [golden] clean_for and watched as long.")
    clean_since: datetime = Field(description="Its last finding, or when the service began watching if later.")
    days_clean: int = Field(description="Whole days since clean_since.")
    components: list[ComponentReliability] = Field(
        default_factory=list, description="Its components with a history (its adapters' cables and ports, the "
                                          "host, the leaves it hangs from); in the golden list, left empty.")


# --- writes ------------------------------------------------------------------------------------------------


class Audit(_Model):
    """Who asks and why: kept with the request, the silence or the log line of a write."""

    reason: str = Field(min_length=1, max_length=REASON_MAX,
                        description="Why (a change or ticket number...): kept in the audit trail.")
    by: str = Field(min_length=1, max_length=BY_MAX, description="Who asks.")

    @field_validator("reason", "by")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank (it is kept in the audit trail)")
        return value.strip()


class SilenceCreate(Audit):
    matcher: str = Field(max_length=MATCHER_MAX,
                         description="A component id or a glob: 'link:pod01-leaf01/*', 'switch:core03-*'.")
    duration: str | None = Field(None, max_length=DURATION_MAX,
                                 description="How long: '90m', '2h', '1d' (or give ends_at).")
    starts_at: Instant | None = Field(None, description="When it starts (a maintenance window); default now.")
    ends_at: Instant | None = Field(None, description="When it ends: after starts_at (and after now).")

    @field_validator("matcher")
    @classmethod
    def _matcher(cls, value: str) -> str:
        return check_matcher(value)

    @field_validator("duration")
    @classmethod
    def _duration(cls, value: str | None) -> str | None:
        if value is not None and parse_duration(value) <= timedelta():
            raise ValueError("a silence must last longer than zero")
        return value

    @field_validator("ends_at")
    @classmethod
    def _after_start(cls, value: datetime | None, info: ValidationInfo) -> datetime | None:
        starts_at = info.data.get("starts_at")
        if value is not None and starts_at is not None and value <= starts_at:
            raise ValueError(f"a silence must end after it starts ({starts_at.isoformat()})")
        return value

    @model_validator(mode="after")
    def _one_end(self) -> Self:
        if (self.duration is None) == (self.ends_at is None):
            raise ValueError("give either duration or ends_at")
        return self

    def length(self) -> timedelta | None:
        return None if self.duration is None else parse_duration(self.duration)


class SilenceOut(_Model):
    id: int
    matcher: str
    reason: str
    created_by: str
    starts_at: datetime
    ends_at: datetime
    created_at: datetime

    @classmethod
    def of(cls, silence: Silence) -> Self:
        return cls(id=silence.id, matcher=silence.matcher, reason=silence.reason, created_by=silence.created_by,
                   starts_at=silence.starts_at, ends_at=silence.ends_at, created_at=silence.created_at)


class Expired(_Model):
    id: int
    expired: bool


class Reloaded(_Model):
    changed: str = Field(description="What the reload changed, as the runtime reports it.")


# --- burn-in windows (fabric.api.burnin) ---


class BurninStart(Audit):
    duration: str | None = Field(None, max_length=DURATION_MAX,
                                 description="How long the window lasts: '30m', '24h' (default: [burnin] duration).")

    @field_validator("duration")
    @classmethod
    def _duration(cls, value: str | None) -> str | None:
        if value is not None and parse_duration(value) <= timedelta():
            raise ValueError("a burn-in window must last longer than zero")
        return value


class PortTotals(_Model):
    survived: int
    failed: int = Field(description="Ports whose cable the window found faulty.")
    down: int = Field(description="Ports whose cable was not up when the window began.")
    idle: int = Field(description="Ports that carried no traffic (UFM Telemetry; 0 where not told).")


class SwitchTotals(_Model):
    survived: int = Field(description="Switches none of whose ports failed or was down.")
    failed: int


class SwitchSurvival(_Model):
    switch: str
    survived: bool = Field(description="None of its ports failed or was down.")
    utilisation_alerts: int
    ports: PortTotals


class PortOutcome(_Model):
    port: str = Field(description="switch/Port n, as the plan names it.")
    verdict: str = Field(description="failed, down or idle.")
    why: str


class WindowFinding(_Model):
    component: str
    rule: str
    at: datetime
    reason: str


class TelemetryCompared(_Model):
    compared: bool = Field(description="Whether two UFM Telemetry samples of the window told the idle ports.")
    first: datetime | None = Field(None, description="The first sample's time (the window's, or the first after "
                                                      "a restart of the engine during it).")
    last: datetime | None = Field(None, description="The newest sample's time, at or before the close.")
    why: str | None = Field(None, description="Why none were compared (no UFM Telemetry read, too few samples).")


class SurvivorsReport(_Model):
    ports: PortTotals
    telemetry: TelemetryCompared | None = Field(
        None, description="The samples the idle ports were told from (null: a window judged by an earlier version).")
    switches: SwitchTotals
    by_switch: list[SwitchSurvival]
    not_survived: list[PortOutcome]
    utilisation_alerts: list[str] = Field(description="Ports that crossed UFM's utilisation alert (not faults).")
    findings: list[WindowFinding] = Field(description="What the window found, handed to the policy, which decided "
                                                      "on each (GET /api/v1/decisions).")


class BurninWindowOut(_Model):
    id: int = Field(description="The window's id: the operator request's that asked for it.")
    duration_s: float
    started_at: datetime | None = Field(description="When the engine opened it (null: not yet).")
    ends_at: datetime | None
    ended_at: datetime | None = Field(description="When the engine judged it (null: open, or not opened yet).")
    dry_run: bool | None
    report: SurvivorsReport | None = Field(description="The survivors per port and switch, once it ended.")

    @classmethod
    def of(cls, window: BurninWindow) -> Self:
        return cls(id=window.id, duration_s=window.duration.total_seconds(), started_at=window.started_at,
                   ends_at=window.ends_at, ended_at=window.ended_at, dry_run=window.dry_run,
                   report=None if window.report is None else SurvivorsReport.model_validate(window.report))


class BurninAsked(_Model):
    request: RequestOut
    window: BurninWindowOut
