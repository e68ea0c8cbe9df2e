"""Every count a cycle reports reaches Prometheus (a count added to ``CycleReport`` must not be left out)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

from fabric.controller.effects import CycleReport
from fabric.daemon.metrics import DaemonMetrics
from fabric.daemon.runtime import REPORT_COUNTS
from fabric.remediation.detectors import Explained
from fabric.remediation.domain import ComponentId, ComponentKind
from fabric.ufm.cursor import EventRead


def test_every_count_of_the_cycle_report_is_exported_and_shown_in_status() -> None:
    counts = [f.name for f in dataclasses.fields(CycleReport) if f.type in (int, "int")]
    report = CycleReport(datetime(2026, 5, 1, tzinfo=UTC), **dict.fromkeys(counts, 7))
    metrics = DaemonMetrics()
    metrics.report_done(report)
    text = metrics.render().decode()
    # ``events`` and ``executed`` have metrics of their own (events, and decisions/failures by kind).
    for name in counts:
        if name in ("events", "executed"):
            continue
        assert any(line.startswith(f"fabric_{name}") and line.endswith(" 7.0") for line in text.splitlines()), name
    assert set(counts) == set(REPORT_COUNTS)


def test_events_are_counted_by_ufm_event_type() -> None:
    metrics = DaemonMetrics()
    metrics.report_done(CycleReport(datetime(2026, 5, 1, tzinfo=UTC), events=7, events_by_type={"329": 5, "328": 2}))
    metrics.report_done(CycleReport(datetime(2026, 5, 1, tzinfo=UTC), events=1, events_by_type={"329": 1}))
    lines = metrics.render().decode().splitlines()
    assert 'fabric_events_total{type="329"} 6.0' in lines and 'fabric_events_total{type="328"} 2.0' in lines


def test_explained_link_downs_are_counted() -> None:
    at = datetime(2026, 5, 1, tzinfo=UTC)
    link = ComponentId(ComponentKind.LINK, "pod01-leaf01/33|pod01-spine01/1")
    reboot = Explained(link, at, "switch_rebooted of pod01-spine01", 12)
    metrics = DaemonMetrics()
    metrics.report_done(CycleReport(at, explained=[reboot, dataclasses.replace(reboot, evidence=13)]))
    assert "fabric_explained_link_downs_total 2.0" in metrics.render().decode().splitlines()


def test_no_series_carries_a_label_prometheus_sets_itself() -> None:
    """``job`` and ``instance`` are the scrape's: a series that carried one would have it renamed ``exported_*``
    (or, scraped with ``honor_labels``, would take the scrape job's place)."""
    metrics = DaemonMetrics()
    metrics.job_done("cycle", 0.1)
    metrics.job_failed("reconcile", "ufm", 0.2)
    families = metrics.registry.collect()
    labels = {name for family in families for sample in family.samples for name in sample.labels}
    assert "job_name" in labels
    assert not labels & {"job", "instance"}


def test_event_reads_are_counted_by_outcome_every_outcome_shown_from_the_start() -> None:
    at = datetime(2026, 5, 1, tzinfo=UTC)
    metrics = DaemonMetrics()
    lines = metrics.render().decode().splitlines()
    assert {f'fabric_event_reads_total{{outcome="{outcome.value}"}} 0.0' for outcome in EventRead} <= set(lines)
    for read in (EventRead.OK, EventRead.SHORT, EventRead.SHORT, None):  # None: a reconcile, which reads no events
        metrics.report_done(CycleReport(at, event_read=read))
    metrics.newest_event(at, at - timedelta(minutes=2))
    lines = metrics.render().decode().splitlines()
    assert {'fabric_event_reads_total{outcome="ok"} 1.0', 'fabric_event_reads_total{outcome="short"} 2.0',
            'fabric_event_reads_total{outcome="empty"} 0.0', "fabric_event_newest_age_seconds 120.0"} <= set(lines)
