"""Every count a cycle reports reaches Prometheus (a count added to ``CycleReport`` must not be left out)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

from fabric.controller.effects import CycleReport
from fabric.daemon.metrics import DaemonMetrics
from fabric.daemon.runtime import REPORT_COUNTS


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
