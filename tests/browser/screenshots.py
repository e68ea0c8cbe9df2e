"""Regenerate the screenshots in docs/images: the console of a daemon on the h100-4k simulator with cables disabled
and deferred, and ``fabricctl verify --html`` of the demo's planted faults.

    PYTHONPATH=. python tests/browser/screenshots.py [--out docs/images]

Needs Debian's ``chromium`` and ``chromium-driver`` (as the browser tests do); takes a minute or so.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: daemon_support, as pytest would put it
sys.path.insert(0, str(Path(__file__).resolve().parent))

import daemon_support
from console_support import TOKEN, Fault, console
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

from fabric.remediation.signals import end_name, link_id
from tests.browser.conftest import missing_browser, screenshot, start_browser
from tests.browser.demo_report import write_demo_report
from topology.formats.ndt import write_ndt
from topology.generate import PRESETS, fat_tree
from topology.model import Cable, Fabric, Tier

PATIENCE = 180.0
"""Real seconds a wait of the daemon may take here: h100-4k's cycles take many seconds on a busy host, and a picture
is worth the wait where a test's bound (``daemon_support.BOUND``) is not."""
GUARD = "\n[guard]\ncap_fraction = 0.0\ncap_floor = 2\n"
"""A blast-radius cap of two cables, so that the third flapped is deferred and the picture shows both states."""


def _faults(plan: Fabric) -> list[Fault]:
    """Two spine-core cables of different pods disabled, then a leaf-spine cable deferred (the cap reached)."""
    def tiers(cable: Cable) -> set[Tier]:
        return {plan.devices[cable.a.device].tier, plan.devices[cable.b.device].tier}

    core = [c for c in plan.cables if tiers(c) == {Tier.SPINE, Tier.CORE}]
    leaf = [c for c in plan.cables if tiers(c) == {Tier.LEAF, Tier.SPINE}]
    chosen = [(core[0], "disabled"), (core[len(core) // 3], "disabled"), (leaf[len(leaf) // 3], "deferred")]
    return [Fault(end_name(cable.a), str(link_id(cable.key)), state) for cable, state in chosen]


def _console_shots(browser: WebDriver, workdir: Path, out: Path) -> None:
    plan = fat_tree(PRESETS["h100-4k"])
    with (workdir / "plan.csv").open("w", newline="") as handle:
        write_ndt(plan, handle)
    faults = _faults(plan)
    with console(workdir, workdir / "plan.csv", faults, extra=GUARD) as running:
        browser.get(running.url + "/ui/login")
        browser.find_element(By.NAME, "by").send_keys("alice")
        browser.find_element(By.NAME, "token").send_keys(TOKEN)
        browser.find_element(By.CSS_SELECTOR, "#login button").click()
        shots = {"console-status.png": "/", "console-fabric.png": "/ui/fabric",
                 "console-decisions.png": "/ui/decisions",
                 "console-component.png": "/ui/components/" + quote(faults[0].component, safe="")}
        for name, path in shots.items():
            browser.get(running.url + path)
            screenshot(browser, out / name)


def _report_shot(browser: WebDriver, workdir: Path, out: Path) -> None:
    report, _, _ = write_demo_report(workdir)
    browser.get(report.as_uri())
    screenshot(browser, out / "verify-report.png")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs/images"), help="where the PNGs go")
    out = parser.parse_args().out
    daemon_support.BOUND = PATIENCE
    if missing := missing_browser():
        print(f"screenshots: {', '.join(missing)} not installed (Debian: chromium, chromium-driver)",
              file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="screenshots-") as scratch:
        root = Path(scratch)
        browser = start_browser(root / "profile")
        try:
            (root / "console").mkdir()
            _console_shots(browser, root / "console", out)
            (root / "report").mkdir()
            _report_shot(browser, root / "report", out)
        finally:
            browser.quit()
    print(f"screenshots written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
