"""What ``examples/`` expects of a running daemon, checked on the real one: the Grafana dashboard and the Prometheus
rules use only metrics it exposes (every ``fabric_*`` name in their PromQL is in ``/api/v1/metrics``, and every
label a selector names is one that metric's series carry: a renamed metric breaks this test, not an operator's
dashboard), and the container image's healthcheck passes on it and fails without it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from daemon_support import daemon, migrate, simulator, write_config
from prometheus_client.parser import text_string_to_metric_families

from fabric.simulator.server import free_port

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DASHBOARD = EXAMPLES / "grafana" / "fabric-remediation.json"
RULES = EXAMPLES / "prometheus" / "alerts.yaml"
CONTAINERFILE = EXAMPLES / "container" / "Containerfile"

TARGET_LABELS = frozenset({"fabric", "instance"})
"""Labels the scrape configuration gives every series (examples/prometheus/prometheus.yml), not the daemon."""
SUFFIXES = {"counter": ("_total", "_created"), "histogram": ("_bucket", "_sum", "_count", "_created"),
            "gauge": ("",), "summary": ("", "_sum", "_count", "_created"), "untyped": ("",)}
STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
METRIC = re.compile(r"\bfabric_[A-Za-z0-9_]+")
SELECTOR = re.compile(r"\b(fabric_[A-Za-z0-9_]+)\s*\{([^}]*)\}")
MATCHER = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)")


def expressions() -> list[str]:
    def walk(node: Any) -> Iterator[str]:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("expr", "query", "definition") and isinstance(value, str):
                    yield value
                else:
                    yield from walk(value)
        elif isinstance(node, list):
            for item in node:
                yield from walk(item)

    rules = yaml.safe_load(RULES.read_text())
    return [*walk(json.loads(DASHBOARD.read_text())),
            *(rule["expr"] for group in rules["groups"] for rule in group["rules"])]


def names_used(exprs: list[str]) -> set[str]:
    return {name for expr in exprs for name in METRIC.findall(STRING.sub('""', expr))}


def test_every_metric_and_label_the_dashboard_and_the_rules_use_is_exposed(tiny_plan: Path, tmp_path: Path) -> None:
    migrate(tmp_path / "fabric.db")
    port = free_port()
    with simulator(tiny_plan) as sim, daemon(write_config(tmp_path, sim.url, tiny_plan, port=port), port,
                                             tmp_path / "daemon.log") as d:
        d.wait_for("two cycles", lambda: d.cycles() >= 2)
        families = list(text_string_to_metric_families(d.get("/metrics").text))
    exposed = {family.name + suffix for family in families for suffix in SUFFIXES[family.type]}
    labels: dict[str, set[str]] = {}
    for family in families:
        for sample in family.samples:
            labels.setdefault(sample.name, set()).update(sample.labels)
    exprs = expressions()
    used = names_used(exprs)
    assert {"fabric_guard_worst_leaf_fraction", "fabric_job_runs_total", "fabric_job_duration_seconds_bucket"} <= used
    assert used - exposed == set()
    for expr in exprs:
        for name, matchers in SELECTOR.findall(STRING.sub('""', expr)):
            named = set(MATCHER.findall(matchers)) - TARGET_LABELS
            if name in labels:  # a labelled metric with no series yet shows no labels
                assert named <= labels[name], (name, named - labels[name], expr)


def healthcheck(port: int) -> int:
    """The exit code of the image's HEALTHCHECK program, pointed at ``port`` instead of the image's 8080."""
    check = CONTAINERFILE.read_text().replace("\\\n", " ")
    found = re.search(r'HEALTHCHECK .*CMD \["python", "-c", "(.+)"\]', check)
    assert found is not None
    program = found.group(1).replace("127.0.0.1:8080", f"127.0.0.1:{port}")
    return subprocess.run([sys.executable, "-c", program], capture_output=True, timeout=30, check=False).returncode


def test_the_images_healthcheck_passes_on_a_running_daemon_and_fails_without_one(tiny_plan: Path,
                                                                                 tmp_path: Path) -> None:
    migrate(tmp_path / "fabric.db")
    port = free_port()
    with simulator(tiny_plan) as sim, daemon(write_config(tmp_path, sim.url, tiny_plan, port=port), port,
                                             tmp_path / "daemon.log"):
        assert healthcheck(port) == 0
    assert healthcheck(port) != 0
