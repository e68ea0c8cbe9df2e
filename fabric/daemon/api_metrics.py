"""The API process's own metrics: webhook receipt, the engine's process and the golden set's size. ``/metrics``
serves them followed by the engine process's (``DaemonMetrics``), as its status record last carried them.

Why not prometheus-client's multiprocess mode: it keeps every series in files of a shared directory, cannot serve
the gauges read at scrape time that the engine process has (its leadership), and sums a dead process's counters
into the live one's. Each process keeps a registry of its own here, each series is written by one process only,
and the engine process's reading is at most ``status_record.WRITE_EVERY`` old.

The golden set's size is this process's: it holds the plan's index and the golden set's (``fabric.api.golden``)
that ``GET /hosts?golden=true`` answers from, so the metric and the list agree, and the engine's cycle does no
work for it. Read at each scrape (the rows added since the last one); its growth over time is Prometheus's to keep
(``delta(fabric_golden_hosts[7d])``).
"""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest

from fabric.api.context import EngineProcess, EngineState


class ApiMetrics:
    def __init__(self) -> None:
        self.registry = registry = CollectorRegistry(auto_describe=True)
        self.webhook_deliveries = Counter(
            "fabric_webhook_deliveries", "Ticket webhook deliveries received, by source (jira, generic) and outcome "
            "(accepted, duplicate, ignored; refused: unsigned, bad_signature, too_large, malformed, unavailable).",
            ["source", "outcome"], registry=registry)
        self.engine_up = Gauge("fabric_engine_process_up", "1 while the engine's process runs and reports, 0 while "
                               "it starts, restarts or stops.", registry=registry)
        self.engine_restarts = Gauge("fabric_engine_process_restarts", "How often the engine's process was started "
                                     "again after exiting unasked (a crash, a kill) since the daemon started.",
                                     registry=registry)

    def watch_engine(self, view: Callable[[], EngineProcess]) -> None:
        """The engine process's gauges read from ``view`` at every scrape."""
        self.engine_up.set_function(lambda: float(view().state is EngineState.RUNNING))
        self.engine_restarts.set_function(lambda: float(view().restarts))

    def watch_golden(self, count: Callable[[], int]) -> None:
        """The golden set's size, from ``count`` at every scrape."""
        gauge = Gauge("fabric_golden_hosts", "Hosts in the golden set: healthy, never quarantined, clean for "
                      "[golden] clean_for (the hosts a scheduler fills first).", registry=self.registry)
        gauge.set_function(lambda: float(count()))

    def webhook_delivery(self, source: str, outcome: str) -> None:
        self.webhook_deliveries.labels(source, outcome).inc()

    def render(self) -> bytes:
        return generate_latest(self.registry)
