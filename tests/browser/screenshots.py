"""The screenshots in docs/images, made again: ``python tests/browser/screenshots.py`` (``make screenshots``).

Each is of a page as an operator sees it, in the headless Chromium the browser tests use (``browser_support.py``):
``verify-report.png``, the fat tree of ``fabricctl verify --html`` on the demo's planted faults.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from browser_support import missing, screenshot, start
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from fabric.demo.story import planted_snapshot
from topology.faults import PlantedFaults
from topology.formats.ndt import write_ndt
from topology.generate import PRESETS, fat_tree
from topology.model import Fabric

IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"
DEMO_SEED = 7
"""``fabricctl demo``'s default seed: the faults its part 2 plants."""


def write_demo_report(workdir: Path) -> tuple[Fabric, PlantedFaults, Path]:
    """The demo's h100-4k plan and faulty as-built snapshot in ``workdir``, and the report ``fabricctl verify
    --html`` (the real command, a process of its own) writes of them."""
    plan = fat_tree(PRESETS["h100-4k"])
    plan_path = workdir / "plan.csv"
    with plan_path.open("w", newline="") as handle:
        write_ndt(plan, handle)
    planted, snapshot = planted_snapshot(plan, workdir, DEMO_SEED)
    report = workdir / "report.html"
    done = subprocess.run([sys.executable, "-m", "fabric.cli", "verify", "-p", str(plan_path), "-a", str(snapshot),
                           "--no-plan-cache", "--html", str(report)],
                          check=False, capture_output=True, text=True, timeout=300)
    if done.returncode != 1:  # 1: the fabric does not match its plan, as planted
        raise RuntimeError(f"fabricctl verify --html exited {done.returncode}: {done.stderr[-500:]}")
    return plan, planted, report


def verify_report(driver: WebDriver, workdir: Path) -> None:
    _, _, report = write_demo_report(workdir)
    driver.set_window_size(1400, 900)
    driver.get(report.as_uri())
    heading = driver.find_element(By.XPATH, "//h2[text()='The fabric']")
    driver.execute_script("arguments[0].scrollIntoView()", heading)
    screenshot(driver, IMAGES / "verify-report.png")


def main() -> int:
    absent = missing()
    if absent:
        print(f"screenshots: {', '.join(absent)} not installed (Debian: chromium, chromium-driver)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="fabric-screenshots-") as tmp:
        driver = start(Path(tmp) / "profile")
        try:
            verify_report(driver, Path(tmp))
        finally:
            driver.quit()
    print(f"wrote {IMAGES / 'verify-report.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
