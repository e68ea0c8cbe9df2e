"""``fabricctl verify --html`` of the demo's planted faults, opened in headless Chromium with the network off: the page
renders from the file alone, and the cables the picture marks missing and miswired are the planted ones."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_support import screenshot
from screenshots import write_demo_report
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from topology.faults import PlantedFaults
from topology.model import Fabric


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Fabric, PlantedFaults]:
    """The demo's h100-4k plan and faulty as-built snapshot, and the report the real command writes of them (the
    demo's own fabric: a few seconds, most of this test's time, on a smaller one the faults would not be the
    demo's)."""
    workdir = tmp_path_factory.mktemp("verify-html")
    plan, planted, report = write_demo_report(workdir)
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
