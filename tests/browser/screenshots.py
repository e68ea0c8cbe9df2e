"""The screenshots in docs/images, made again: ``python tests/browser/screenshots.py`` (``make screenshots``).

Each is of a page as an operator sees it, in the headless Chromium the browser tests use (``browser_support.py``):
``verify-report.png``, the fat tree of ``fabricctl verify --html`` on the demo's planted faults, and
``verify-report-32k.png``, the same faults planted in h100-32k, drawn one block per pod; ``console-*.png``,
the console of the real daemon on the h100-4k simulator with two spine-core cables disabled and a leaf-spine cable
deferred (``console_support.py``), logged in as an admin. A minute or two.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for daemon_support, as pytest puts it

import daemon_support
from browser_support import after_submit, missing, screenshot, start
from console_support import TOKEN, Fault, console
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from fabric.demo.story import planted_snapshot
from fabric.remediation.signals import end_name, link_id
from topology.faults import PlantedFaults
from topology.formats.ndt import write_ndt
from topology.generate import PRESETS, fat_tree
from topology.model import Cable, Fabric, Tier

IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"
DEMO_SEED = 7
"""``fabricctl demo``'s default seed: the faults its part 2 plants."""
PATIENCE = 180.0
"""Real seconds a wait of the daemon may take here: h100-4k's cycles take many seconds on a busy host, and a picture
is worth the wait where a test's bound (``daemon_support.BOUND``) is not."""
CONSOLE_GUARD = "\n[guard]\ncap_fraction = 0.0\ncap_floor = 2\n"
"""A blast-radius cap of two cables, so that the third flapped is deferred and the picture shows both states."""
SHOTS = (("h100-4k", "verify-report.png"), ("h100-32k", "verify-report-32k.png"))
"""The report on the demo's fabric, every switch drawn, and on h100-32k, one block per pod."""


def write_demo_report(workdir: Path, preset: str = "h100-4k") -> tuple[Fabric, PlantedFaults, Path]:
    """The demo's plan (h100-4k) and faulty as-built snapshot in ``workdir``, and the report ``fabricctl verify
    --html`` (the real command, a process of its own) writes of them; ``preset``: the demo's faults on another
    fabric."""
    plan = fat_tree(PRESETS[preset])
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


def verify_report(driver: WebDriver, workdir: Path, preset: str, image: str) -> Path:
    """The report's picture (scrolled to it) of the demo's faults on ``preset``."""
    _, _, report = write_demo_report(workdir, preset)
    driver.set_window_size(1400, 900)
    driver.get(report.as_uri())
    heading = driver.find_element(By.XPATH, "//h2[text()='The fabric']")
    driver.execute_script("arguments[0].scrollIntoView()", heading)
    screenshot(driver, IMAGES / image)
    return IMAGES / image


def _console_faults(plan: Fabric) -> list[Fault]:
    """Two spine-core cables of different pods disabled, then a leaf-spine cable deferred (the cap reached)."""
    def tiers(cable: Cable) -> set[Tier]:
        return {plan.devices[cable.a.device].tier, plan.devices[cable.b.device].tier}

    core = [c for c in plan.cables if tiers(c) == {Tier.SPINE, Tier.CORE}]
    leaf = [c for c in plan.cables if tiers(c) == {Tier.LEAF, Tier.SPINE}]
    chosen = [(core[0], "disabled"), (core[len(core) // 3], "disabled"), (leaf[len(leaf) // 3], "deferred")]
    return [Fault(end_name(cable.a), str(link_id(cable.key)), state) for cable, state in chosen]


def console_pages(driver: WebDriver, workdir: Path) -> None:
    plan = fat_tree(PRESETS["h100-4k"])
    with (workdir / "plan.csv").open("w", newline="") as handle:
        write_ndt(plan, handle)
    faults = _console_faults(plan)
    daemon_support.BOUND = PATIENCE
    with console(workdir, workdir / "plan.csv", faults, extra=CONSOLE_GUARD) as running:
        driver.set_window_size(1400, 1000)
        driver.get(running.url + "/ui/login")
        driver.find_element(By.NAME, "by").send_keys("alice")
        driver.find_element(By.NAME, "token").send_keys(TOKEN)
        driver.find_element(By.CSS_SELECTOR, "#login button").click()
        after_submit(driver, By.ID, "logged-in")  # the session's cookie set before the pages are asked for
        shots = {"console-status.png": "/", "console-fabric.png": "/ui/fabric",
                 "console-decisions.png": "/ui/decisions",
                 "console-component.png": "/ui/components/" + quote(faults[0].component, safe="")}
        for name, path in shots.items():
            driver.get(running.url + path)
            screenshot(driver, IMAGES / name)


def main() -> int:
    absent = missing()
    if absent:
        print(f"screenshots: {', '.join(absent)} not installed (Debian: chromium, chromium-driver)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="fabric-screenshots-") as tmp:
        driver = start(Path(tmp) / "profile")
        try:
            for preset, image in SHOTS:
                workdir = Path(tmp) / preset
                workdir.mkdir()
                print(f"wrote {verify_report(driver, workdir, preset, image)}")
            (Path(tmp) / "console").mkdir()
            console_pages(driver, Path(tmp) / "console")
        finally:
            driver.quit()
    print(f"wrote the screenshots in {IMAGES}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
