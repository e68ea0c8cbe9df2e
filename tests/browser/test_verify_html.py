"""``fabricctl verify --html`` of the demo's planted faults, opened in headless Chromium with the network off: the page
renders from the file alone, and the cables the picture marks missing and miswired are the planted ones."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from fabric.demo.story import DEMO_FAULTS
from tests.browser.conftest import screenshot
from topology.faults import PlantedFaults, plant
from topology.formats.ndt import write_ndt
from topology.formats.ufm_render import write_ufm_snapshot
from topology.generate import PRESETS, fat_tree
from topology.model import Fabric

DEMO_SEED = 7
"""``fabricctl demo``'s default seed: the faults its part 2 plants."""


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Fabric, PlantedFaults]:
    """The demo's h100-4k plan and faulty as-built snapshot, and the report the real command writes of them."""
    workdir = tmp_path_factory.mktemp("verify-html")
    plan = fat_tree(PRESETS["h100-4k"])
    with (workdir / "plan.csv").open("w", newline="") as handle:
        write_ndt(plan, handle)
    planted = plant(plan, DEMO_FAULTS, DEMO_SEED)
    write_ufm_snapshot(planted.fabric, workdir / "as-built")
    report = workdir / "report.html"
    done = subprocess.run([sys.executable, "-m", "fabric.cli", "verify", "-p", str(workdir / "plan.csv"),
                           "-a", str(workdir / "as-built"), "--no-plan-cache", "--html", str(report)],
                          check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr  # 1: the fabric does not match its plan
    return report, plan, planted


@pytest.fixture
def offline(page: WebDriver) -> Iterator[WebDriver]:
    """The browser with its network cut (DevTools' network emulation): a page that needs anything from a network
    shows it missing."""
    page.execute_cdp_cmd("Network.enable", {})
    page.execute_cdp_cmd("Network.emulateNetworkConditions", {
        "offline": True, "latency": 0, "downloadThroughput": 0, "uploadThroughput": 0})
    yield page
    page.execute_cdp_cmd("Network.emulateNetworkConditions", {
        "offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})


def _marked(page: WebDriver, state: str) -> set[str]:
    lines = page.find_elements(By.CSS_SELECTOR, f".picture svg line[data-state='{state}']")
    return {line.get_attribute("data-cable") or "" for line in lines}


def test_the_report_opens_offline_and_marks_the_planted_missing_and_miswired_cables(
        offline: WebDriver, demo_report: tuple[Path, Fabric, PlantedFaults], tmp_path: Path) -> None:
    report, plan, planted = demo_report
    offline.get(report.as_uri())
    try:
        assert offline.find_element(By.ID, "verdict").text == "DOES NOT MATCH the plan"
        picture = offline.find_element(By.CSS_SELECTOR, ".picture svg")
        assert picture.is_displayed() and picture.size["width"] > 500
        # nothing was fetched: every resource the page used is inline
        assert offline.execute_script("return performance.getEntriesByType('resource').length") == 0
        whole = offline.find_elements(By.CSS_SELECTOR, "div.picture")[0]  # the whole fabric, before the pods' detail
        in_whole = {line.get_attribute("data-cable") for line in
                    whole.find_elements(By.CSS_SELECTOR, "line[data-state='missing'], line[data-state='miswired']")}
        missing = {plan.describe_cable(cable) for cable in planted.missing}
        miswired = {plan.describe_cable(cable) for pair in planted.swapped for cable in pair} | {
            plan.describe_cable(cable) for cable in planted.wrong_device}
        assert _marked(offline, "missing") == missing
        assert _marked(offline, "miswired") == miswired
        assert in_whole == missing | miswired
        for line in whole.find_elements(By.CSS_SELECTOR, "line[data-state='missing']"):
            assert line.get_attribute("stroke") == "#d62728" and line.is_displayed()
        rows = offline.find_elements(By.CSS_SELECTOR, "#cables tr[data-state='missing']")
        assert {row.get_attribute("data-cable") for row in rows} == missing
    except AssertionError:
        screenshot(offline, tmp_path / "verify-report.png")
        raise
