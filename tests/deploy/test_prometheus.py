"""examples/prometheus: the rules and the scrape configuration pass ``promtool check``, every alert fires on the
series it is for and not on a standby's (``promtool test rules`` over alerts_test.yaml), and every alert has its
entry in the operator's runbook."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

PROMETHEUS = Path(__file__).resolve().parents[2] / "examples" / "prometheus"
RULES = PROMETHEUS / "alerts.yaml"
CASES = Path(__file__).with_name("alerts_test.yaml")
RUNBOOK = Path(__file__).resolve().parents[2] / "docs" / "operations.md"


def alerts() -> list[dict[str, Any]]:
    return [rule for group in yaml.safe_load(RULES.read_text())["groups"] for rule in group["rules"]]


def promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        pytest.skip("promtool is not installed (Debian: apt-get install prometheus)")
    return found


def run(*args: str, cwd: Path) -> None:
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_promtool_checks_the_rules_and_the_scrape_configuration() -> None:
    tool = promtool()
    run(tool, "check", "rules", RULES.name, cwd=PROMETHEUS)
    run(tool, "check", "config", "prometheus.yml", cwd=PROMETHEUS)


def test_every_alert_fires_on_what_it_is_for_and_only_there(tmp_path: Path) -> None:
    tool = promtool()
    bare = {"groups": [{**group, "rules": [{key: value for key, value in rule.items() if key != "annotations"}
                                           for rule in group["rules"]]}
                       for group in yaml.safe_load(RULES.read_text())["groups"]]}
    (tmp_path / "alerts.yaml").write_text(yaml.safe_dump(bare))
    shutil.copy(CASES, tmp_path / CASES.name)
    run(tool, "test", "rules", CASES.name, cwd=tmp_path)
    tested = {check["alertname"] for case in yaml.safe_load(CASES.read_text())["tests"]
              for check in case["alert_rule_test"]}
    assert tested == {rule["alert"] for rule in alerts()}  # a new alert gets its case


def test_every_alert_says_what_it_means_and_has_a_runbook_entry() -> None:
    headings = set(re.findall(r"^#+ `?(\w+)`?", RUNBOOK.read_text(), flags=re.MULTILINE))
    for rule in alerts():
        assert rule["labels"]["severity"] in ("critical", "warning"), rule["alert"]
        assert {"summary", "description"} <= set(rule["annotations"]), rule["alert"]
        assert rule["alert"] in headings, f"{rule['alert']}: no heading in {RUNBOOK.name}"


def test_the_scrape_configuration_reads_the_daemons_metrics_route_and_keeps_prometheus_labels() -> None:
    (job,) = yaml.safe_load((PROMETHEUS / "prometheus.yml").read_text())["scrape_configs"]
    assert job.get("metrics_path", "/metrics") == "/metrics"  # the root path, as the daemon serves it
    assert not job.get("honor_labels")  # the daemon's series carry no job label: the scrape job names them
    assert all("fabric" in targets["labels"] for targets in job["static_configs"])
