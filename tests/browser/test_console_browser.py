"""The console in a real browser against the real daemon on the simulator.

One daemon for the module (a start and two faults cost seconds): the tiny plan with one leaf renamed
``<img src=x onerror=alert(1)>``, a spine-core cable flapped until the daemon disables it, a second one flapped
after it, which the capacity guard defers (the tiny fabric's blast-radius cap is one cable). The tests only read,
but the silence's, which touches nothing the others look at.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from daemon_support import Daemon, daemon, migrate, simulator, write_config
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement

from fabric.simulator.server import free_port
from topology.formats.ndt import write_ndt
from topology.generate import PRESETS, fat_tree
from topology.picture.marks import STYLES, CableState

TOKEN = "the-console-admin-token"
HOSTILE = "<img src=x onerror=alert(1)>"
RENAMED = "pod02-leaf02"
"""The leaf the plan names ``HOSTILE`` instead."""
DISABLED = ("core01-01/1", "link:core01-01/1|pod01-spine01/5")
"""The spine-core cable flapped first (one end, as the simulator names it; its component): disabled."""
DEFERRED = ("core02-01/1", "link:core02-01/1|pod01-spine02/5")
"""The one flapped next: deferred, the cap reached."""
POD01, HOSTILE_POD = 2, 1
"""The picture numbers pods in the order of their first switch's name: ``<img...`` sorts before ``pod01-...``."""


@dataclass(frozen=True)
class Console:
    daemon: Daemon
    url: str
    log: Path


def _hostile_plan(path: Path) -> Path:
    with path.open("w", newline="") as handle:
        write_ndt(fat_tree(PRESETS["tiny"]), handle)
    path.write_text(path.read_text().replace(RENAMED, HOSTILE))
    return path


def _state(running: Daemon, component: str) -> str | None:
    state = running.get(f"/components/{quote(component, safe='')}").json()["state"]
    return None if state is None else str(state["lifecycle"])


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    tmp = tmp_path_factory.mktemp("console")
    plan = _hostile_plan(tmp / "plan.csv")
    migrate(tmp / "fabric.db")
    port = free_port()
    with simulator(plan) as sim:
        config = write_config(tmp, sim.url, plan, port=port)
        with daemon(config, port, tmp / "daemon.log", FABRIC_API__ADMIN_TOKEN=TOKEN) as running:
            running.wait_for("ready", lambda: running.get("/readyz").status_code == 200)
            for (end, component), state in ((DISABLED, "disabled"), (DEFERRED, "deferred")):
                sim.inject(fault="flap", link=end, cycles=5, period="20s")
                sim.advance(300)
                running.wait_for(f"{component} {state}", lambda c=component, s=state: _state(running, c) == s)
            yield Console(running, running.api, tmp / "daemon.log")


def _no_alert(page: WebDriver) -> None:
    try:
        alert = page.switch_to.alert
    except NoAlertPresentException:
        return
    raise AssertionError(f"a script ran: an alert said {alert.text!r}")


def _box(page: WebDriver, device: str) -> WebElement:
    (found,) = [rect for rect in page.find_elements(By.CSS_SELECTOR, "#picture rect[data-device]")
                if rect.get_attribute("data-device") == device]
    return found


def _centre(element: WebElement) -> tuple[float, float, float]:
    """An SVG element's centre x, top and bottom, in the SVG's own units."""
    x, y = float(element.get_attribute("x") or 0), float(element.get_attribute("y") or 0)
    width, height = float(element.get_attribute("width") or 0), float(element.get_attribute("height") or 0)
    return x + width / 2, y, y + height


def _line(page: WebDriver, component: str) -> WebElement:
    cable = component.removeprefix("link:")
    (found,) = [line for line in page.find_elements(By.CSS_SELECTOR, "#picture line[data-cable]")
                if line.get_attribute("data-cable") == cable]
    return found


def test_the_console_loads_and_says_what_the_daemon_is(console: Console, page: WebDriver) -> None:
    page.get(console.url + "/")
    assert page.find_element(By.TAG_NAME, "h1").text == "Fabric test"
    assert "dry run" in page.find_element(By.ID, "mode").text
    assert "leader" in page.find_element(By.ID, "leadership").text
    counts = page.find_element(By.ID, "counts").text
    assert "disabled" in counts and "deferred" in counts


def test_the_disabled_spine_core_cable_is_drawn_in_its_colour_between_its_spine_and_core(console: Console,
                                                                                        page: WebDriver) -> None:
    page.get(console.url + "/ui/fabric")
    line = _line(page, DISABLED[1])
    assert line.get_attribute("data-state") == CableState.DISABLED.value
    assert line.get_attribute("stroke") == STYLES[CableState.DISABLED].colour
    spine_x, spine_top, _ = _centre(_box(page, "pod01-spine01"))
    core_x, _, core_bottom = _centre(_box(page, "core01-01"))
    ends = {(round(float(line.get_attribute(f"x{n}") or 0)), round(float(line.get_attribute(f"y{n}") or 0)))
            for n in (1, 2)}
    assert ends == {(round(spine_x), round(spine_top)), (round(core_x), round(core_bottom))}


def test_the_deferred_cable_and_its_leaves_guard_bars_show(console: Console, page: WebDriver) -> None:
    page.get(console.url + f"/ui/fabric?pod={POD01}")
    line = _line(page, DEFERRED[1])
    assert line.get_attribute("data-state") == CableState.DEFERRED.value
    assert line.get_attribute("stroke") == STYLES[CableState.DEFERRED].colour
    bars = {bar.get_attribute("data-leaf"): bar for bar in page.find_elements(By.CSS_SELECTOR, "#picture g[data-leaf]")}
    assert set(bars) == {"pod01-leaf01", "pod01-leaf02"}
    for bar in bars.values():  # the disabled cable took 2 of each leaf's 16 paths: above the guard's 12
        assert (bar.get_attribute("data-paths"), bar.get_attribute("data-minimum"),
                bar.get_attribute("data-planned"), bar.get_attribute("data-health")) == ("14", "12", "16", "reduced")
        assert bar.is_displayed()


def test_an_admin_logs_in_adds_a_silence_and_the_api_lists_it(console: Console, page: WebDriver) -> None:
    page.get(console.url + "/ui/login")
    page.find_element(By.NAME, "by").send_keys("alice")
    page.find_element(By.NAME, "token").send_keys(TOKEN)
    page.find_element(By.CSS_SELECTOR, "#login button").click()
    assert page.find_element(By.ID, "logged-in").text == "admin: alice"
    form = page.find_element(By.ID, "add-silence")
    form.find_element(By.NAME, "matcher").send_keys("switch:pod02-leaf01")
    form.find_element(By.NAME, "duration").send_keys("2h")
    form.find_element(By.NAME, "reason").send_keys("swapping its PSU")
    form.find_element(By.CSS_SELECTOR, "button").click()
    assert "switch:pod02-leaf01" in page.find_element(By.ID, "silences").text
    (silence,) = [s for s in console.daemon.get("/silences").json() if s["matcher"] == "switch:pod02-leaf01"]
    assert (silence["created_by"], silence["reason"]) == ("alice", "swapping its PSU")


def test_without_the_token_the_write_is_refused(console: Console, page: WebDriver) -> None:
    page.get(console.url + "/ui/login")
    page.find_element(By.NAME, "by").send_keys("mallory")
    page.find_element(By.NAME, "token").send_keys("not-the-token")
    page.find_element(By.CSS_SELECTOR, "#login button").click()
    assert "wrong admin token" in page.find_element(By.CLASS_NAME, "error").text
    assert page.get_cookie("fabric_console") is None
    page.get(console.url + "/ui/silences")
    assert not page.find_elements(By.ID, "add-silence")
    forged = httpx.post(console.url + "/ui/silences", data={"matcher": "switch:pod01-leaf01", "reason": "x",
                                                           "duration": "1h", "csrf": "guess"}, timeout=10)
    assert forged.status_code == 401
    assert all(s["matcher"] != "switch:pod01-leaf01" for s in console.daemon.get("/silences").json())


def test_a_hostile_switch_name_is_rendered_as_text(console: Console, page: WebDriver) -> None:
    page.get(console.url + "/ui/fabric")
    _no_alert(page)
    assert page.find_elements(By.CSS_SELECTOR, "img") == []
    assert _box(page, HOSTILE).find_element(By.TAG_NAME, "title").get_attribute("textContent") == f"leaf {HOSTILE}"
    page.get(console.url + f"/ui/fabric?pod={HOSTILE_POD}")
    _no_alert(page)
    assert page.find_elements(By.CSS_SELECTOR, "img") == []
    assert HOSTILE[:15] in page.find_element(By.ID, "picture").text  # the name written out, cut to fit its box
    page.get(console.url + "/ui/components?" + str(httpx.QueryParams({"switch": HOSTILE})))
    _no_alert(page)
    assert page.find_elements(By.CSS_SELECTOR, "img") == []
