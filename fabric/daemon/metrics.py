"""The engine process's Prometheus metrics, in a registry of its own (nothing global); its status record carries
them to the API process, whose ``/api/v1/metrics`` serves them after its own (``api_metrics``).

The scheduler's job is the label ``job_name``: ``job`` is Prometheus's own (the scrape job it adds to every
series), and a series that carried one would have it renamed ``exported_job``.

Counters add what each cycle's (and each reconcile's) ``CycleReport`` counted, and each scheduler job's runs by
outcome; gauges hold what the last cycle left (components by state, the breaker, the guard's figures, writes
waiting for UFM). Label values come from closed sets (jobs, rules, action kinds, lifecycles, error kinds), never
from component names, so the series stay few.
"""

from __future__ import annotations

from collections import Counter as Tally
from collections.abc import Callable
from datetime import datetime

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

from fabric.api.context import GuardFigures, LeaderView, Role
from fabric.controller.engine import CycleReport
from fabric.controller.telemetry import TELEMETRY_OUTCOMES, SampleOutcome
from fabric.remediation.domain import Lifecycle
from fabric.store import OutboxFigures
from fabric.ufm.cursor import EventRead

CYCLE_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)


class DaemonMetrics:
    def __init__(self) -> None:
        self.registry = registry = CollectorRegistry(auto_describe=True)
        self.job_seconds = Histogram("fabric_job_duration_seconds", "How long one run of a scheduler job took, by "
                                     "job (cycle: the event poll included).", ["job_name"], buckets=CYCLE_BUCKETS,
                                     registry=registry)
        self.job_runs = Counter("fabric_job_runs", "Scheduler job runs, by job and outcome (ok, failed).",
                                ["job_name", "outcome"], registry=registry)
        self.job_errors = Counter("fabric_job_errors", "Scheduler job runs that failed, by job and error kind (ufm, "
                                  "store, ticket, bug...).", ["job_name", "kind"], registry=registry)
        self.poll_seconds = Histogram("fabric_poll_duration_seconds", "How long UFM took to answer a cycle's event "
                                      "poll.", buckets=CYCLE_BUCKETS, registry=registry)
        self.events = Counter("fabric_events", "UFM events handed to the pipeline, by UFM event type (its id).",
                              ["type"], registry=registry)
        self.event_reads = Counter("fabric_event_reads", "UFM event lists a cycle read, by how they were taken "
                                   "(ok; not believed, nothing handed over: empty, short, stale).", ["outcome"],
                                   registry=registry)
        for outcome in EventRead:  # every outcome's series from the start: a rate over a missing one is no rate
            self.event_reads.labels(outcome.value)
        self.event_age = Gauge("fabric_event_newest_age_seconds", "How old the newest event UFM listed was at the last "
                               "cycle, on the service's clock (UFM's own may differ).", registry=registry)
        self.findings = Counter("fabric_findings", "Findings, by rule.", ["rule"], registry=registry)
        self.explained = Counter("fabric_explained_link_downs", "Link-downs explained (a reboot, automation's own "
                                 "port action, a silence) and not counted as faults.", registry=registry)
        self.decisions = Counter("fabric_decisions", "Decisions, by kind.", ["kind"], registry=registry)
        self.failures = Counter("fabric_action_failures", "Side effects that did not happen, by error kind.",
                                ["kind"], registry=registry)
        self.report_counts = {
            name: Counter(f"fabric_{name}", help_text, registry=registry) for name, help_text in (
                ("repeated_events", "Events handed over again, dropped as counted already."),
                ("views_refused", "Readings of UFM's topology refused as ones that cannot be true."),
                ("switch_faults", "Switch faults found."),
                ("folded", "Cable findings folded into a switch fault."),
                ("settling", "Findings on switch-to-switch cables held back for [rules] immediate_settle."),
                ("repairs_backed_out", "Re-enabled links that did not come up as planned, disabled again."),
                ("deliveries", "Stored ticket webhook deliveries the engine processed."),
            )}
        self.writes = {
            name: Gauge(f"fabric_{name}", help_text, registry=registry) for name, help_text in (
                ("writes_pending", "UFM port writes sent and not settled at the end of the last cycle."),
                ("writes_backing_off", "Components whose last write UFM did not confirm, waiting to retry."),
                ("writes_given_up", "Components whose write UFM never confirmed: nothing more is sent."),
                ("ports_out_unheld", "Planned cables UFM shows out (disabled or isolated) that automation does not "
                                     "hold out (an operator's action): recorded once, left alone."),
            )}
        self.components = Gauge("fabric_components", "Components automation holds, by lifecycle state.",
                                ["state"], registry=registry)
        self.halted = Gauge("fabric_breaker_halted", "1 while the storm breaker halts automation.",
                            registry=registry)
        self.disabled = Gauge("fabric_guard_disabled", "Cables automation holds disabled.", registry=registry)
        self.cap = Gauge("fabric_guard_cap", "The blast-radius cap on cables disabled.", registry=registry)
        self.disables_hour = Gauge("fabric_guard_disables_last_hour", "Disables in the last hour.",
                                   registry=registry)
        self.hourly_limit = Gauge("fabric_guard_hourly_limit", "The hourly limit on disables.", registry=registry)
        self.worst_leaf = Gauge("fabric_guard_worst_leaf_fraction",
                                "The worst leaf's paths to core over its planned paths (1: intact).", registry=registry)
        self.min_leaf = Gauge("fabric_guard_min_leaf_fraction", "The fraction of its planned paths to core no disable "
                              "takes a leaf below (the guard's c).", registry=registry)
        self.outbox_pending = Gauge("fabric_ticket_outbox_pending", "Ticket writes (open, comment, reopen) waiting in "
                                    "the outbox for the ticket system to take them.", registry=registry)
        self.outbox_oldest = Gauge("fabric_ticket_outbox_oldest_seconds", "How long the oldest ticket write in the "
                                   "outbox has waited (0 when none waits).", registry=registry)
        self.misfires = Counter("fabric_scheduler_misfires", "Job runs the scheduler skipped, by job and why "
                                "(missed: too late; busy: the previous run still running).", ["job_name", "why"],
                                registry=registry)

        self.telemetry_samples = Counter(
            "fabric_telemetry_samples", "UFM Telemetry samples read, by outcome (accepted; acting on nothing: stale, "
            "partial, implausible, refused, unreachable).", ["outcome"], registry=registry)
        for read in TELEMETRY_OUTCOMES:  # every outcome's series from the start, as the event reads'
            self.telemetry_samples.labels(read)
        self.telemetry_conditions = Counter("fabric_telemetry_conditions", "Conditions found in accepted UFM "
                                            "Telemetry samples.", registry=registry)
        self.telemetry_time = Gauge("fabric_telemetry_sample_timestamp_seconds", "The time of the newest UFM "
                                    "Telemetry sample read (its own timestamp), as seconds since the epoch.",
                                    registry=registry)

        self.leader = Gauge("fabric_leader", "1 while this instance leads the fabric (acts), 0 while it stands by.",
                            registry=registry)
        self.leader_epoch = Gauge("fabric_leader_epoch", "The leader epoch (fencing token) this instance holds, or "
                                  "the newest it saw standing by (0: nobody led yet).", registry=registry)

    def watch_leadership(self, view: Callable[[], LeaderView]) -> None:
        """The leadership gauges read from ``view`` at every scrape."""
        self.leader.set_function(lambda: float(view().role is Role.LEADER))
        self.leader_epoch.set_function(lambda: float(view().epoch or 0))

    def job_done(self, job: str, seconds: float) -> None:
        self.job_seconds.labels(job).observe(seconds)
        self.job_runs.labels(job, "ok").inc()

    def job_failed(self, job: str, kind: str, seconds: float) -> None:
        self.job_seconds.labels(job).observe(seconds)
        self.job_runs.labels(job, "failed").inc()
        self.job_errors.labels(job, kind).inc()

    def report_done(self, report: CycleReport) -> None:
        """What a cycle or a reconcile counted."""
        for event_type, count in sorted(report.events_by_type.items()):
            self.events.labels(event_type).inc(count)
        self.explained.inc(len(report.explained))
        for rule, count in sorted(Tally(f.rule for f in report.findings).items()):
            self.findings.labels(rule).inc(count)
        for kind, count in sorted(Tally(a.kind.value for a in report.actions).items()):
            self.decisions.labels(kind).inc(count)
        for kind, count in sorted(Tally(f.kind.value for f in report.failed).items()):
            self.failures.labels(kind).inc(count)
        for name, counter in self.report_counts.items():
            counter.inc(getattr(report, name))
        if report.event_read is not None:
            self.event_reads.labels(report.event_read.value).inc()
        for name, gauge in self.writes.items():
            gauge.set(getattr(report, name))

    def newest_event(self, now: datetime, newest: datetime | None) -> None:
        """The age of the newest event UFM listed (none yet: no sample)."""
        if newest is not None:
            self.event_age.set((now - newest).total_seconds())

    def telemetry_sample(self, outcome: SampleOutcome) -> None:
        self.telemetry_samples.labels(outcome.outcome).inc()
        self.telemetry_conditions.inc(outcome.conditions)
        if outcome.sample_time is not None:
            self.telemetry_time.set(outcome.sample_time.timestamp())

    def state(self, lifecycles: Tally[Lifecycle], halted: bool, guard: GuardFigures) -> None:
        for lifecycle in Lifecycle:
            self.components.labels(lifecycle.value).set(lifecycles.get(lifecycle, 0))
        self.halted.set(int(halted))
        self.disabled.set(guard.disabled)
        self.cap.set(guard.cap)
        self.disables_hour.set(guard.disables_last_hour)
        self.hourly_limit.set(guard.hourly_limit)
        self.min_leaf.set(guard.min_leaf_fraction)
        if guard.worst_leaf_fraction is not None:
            self.worst_leaf.set(guard.worst_leaf_fraction)

    def outbox(self, figures: OutboxFigures) -> None:
        self.outbox_pending.set(figures.pending)
        self.outbox_oldest.set(figures.oldest_seconds)

    def render(self) -> bytes:
        return generate_latest(self.registry)
