"""The console in a real browser against the real daemon on the simulator.

One daemon for the module (a start and two faults cost seconds): the tiny plan with one leaf renamed
``<img src=x onerror=alert(1)>``, a spine-core cable flapped until the daemon disables it, a second one flapped
after it, which the capacity guard defers (the tiny fabric's blast-radius cap is one cable). The tests only read,
but the silence's, which touches nothing the others look at.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from browser_support import after_submit
from console_support import TOKEN, Console, Fault, console
from selenium.common.exceptions import NoAlertPresentException, WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import WebDriverWait

from topology.formats.ndt import write_ndt
from topology.generate import PRESETS, fat_tree
from topology.picture.marks import STYLES, CableState

HOSTILE = "<img src=x onerror=alert(1)>"
RENAMED = "pod02-leaf02"
"""The leaf the plan names ``HOSTILE`` instead."""
DISABLED = Fault("core01-01/1", "link:core01-01/1|pod01-spine01/5", "disabled")
"""The spine-core cable flapped first: disabled."""
DEFERRED = Fault("core02-01/1", "link:core02-01/1|pod01-spine02/5", "deferred")
"""The one flapped next: deferred, the cap reached."""
POD01, HOSTILE_POD = 2, 1
"""The picture numbers pods in the order of their first switch's name: ``<img...`` sorts before ``pod01-...``."""


def _hostile_plan(path: Path) -> Path:
    with path.open("w", newline="") as handle:
        write_ndt(fat_tree(PRESETS["tiny"]), handle)
    path.write_text(path.read_text().replace(RENAMED, HOSTILE))
    return path


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    workdir = tmp_path_factory.mktemp("console")
    with console(workdir, _hostile_plan(workdir / "plan.csv"), (DISABLED, DEFERRED)) as started:
        yield started


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


def test_the_console_loads_and_says_what_the_daemon_is(running: Console, page: WebDriver) -> None:
    page.get(running.url + "/")
    assert page.find_element(By.TAG_NAME, "h1").text == "Fabric test"
    assert "dry run" in page.find_element(By.ID, "mode").text
    assert "leader" in page.find_element(By.ID, "leadership").text
    counts = page.find_element(By.ID, "counts").text
    assert "disabled" in counts and "deferred" in counts


def test_the_disabled_spine_core_cable_is_drawn_in_its_colour_between_its_spine_and_core(running: Console,
                                                                                        page: WebDriver) -> None:
    page.get(running.url + "/ui/fabric")
    line = _line(page, DISABLED.component)
    assert line.get_attribute("data-state") == CableState.DISABLED.value
    assert line.get_attribute("stroke") == STYLES[CableState.DISABLED].colour
    spine_x, spine_top, _ = _centre(_box(page, "pod01-spine01"))
    core_x, _, core_bottom = _centre(_box(page, "core01-01"))
    ends = {(round(float(line.get_attribute(f"x{n}") or 0)), round(float(line.get_attribute(f"y{n}") or 0)))
            for n in (1, 2)}
    assert ends == {(round(spine_x), round(spine_top)), (round(core_x), round(core_bottom))}


def test_the_deferred_cable_and_its_leaves_guard_bars_show(running: Console, page: WebDriver) -> None:
    page.get(running.url + f"/ui/fabric?pod={POD01}")
    line = _line(page, DEFERRED.component)
    assert line.get_attribute("data-state") == CableState.DEFERRED.value
    assert line.get_attribute("stroke") == STYLES[CableState.DEFERRED].colour
    bars = {bar.get_attribute("data-leaf"): bar for bar in page.find_elements(By.CSS_SELECTOR, "#picture g[data-leaf]")}
    assert set(bars) == {"pod01-leaf01", "pod01-leaf02"}
    for bar in bars.values():  # the disabled cable took 2 of each leaf's 16 paths: above the guard's 12
        assert (bar.get_attribute("data-paths"), bar.get_attribute("data-minimum"),
                bar.get_attribute("data-planned"), bar.get_attribute("data-health")) == ("14", "12", "16", "reduced")
        assert bar.is_displayed()


def test_an_admin_logs_in_adds_a_silence_and_the_api_lists_it(running: Console, page: WebDriver) -> None:
    page.get(running.url + "/ui/login")
    page.find_element(By.NAME, "by").send_keys("alice")
    page.find_element(By.NAME, "token").send_keys(TOKEN)
    page.find_element(By.CSS_SELECTOR, "#login button").click()
    assert after_submit(page, By.ID, "logged-in").text == "admin: alice"
    form = page.find_element(By.ID, "add-silence")
    form.find_element(By.NAME, "matcher").send_keys("switch:pod02-leaf01")
    form.find_element(By.NAME, "duration").send_keys("2h")
    form.find_element(By.NAME, "reason").send_keys("swapping its PSU")
    form.find_element(By.CSS_SELECTOR, "button").click()
    # The form posts and the browser follows the redirect: the silence is listed on the page it brings.
    WebDriverWait(page, 30, ignored_exceptions=(WebDriverException,)).until(
        lambda shown: "switch:pod02-leaf01" in shown.find_element(By.ID, "silences").text)
    (silence,) = [s for s in running.daemon.get("/silences").json() if s["matcher"] == "switch:pod02-leaf01"]
    assert (silence["created_by"], silence["reason"]) == ("alice", "swapping its PSU")


def test_without_the_token_the_write_is_refused(running: Console, page: WebDriver) -> None:
    page.get(running.url + "/ui/login")
    page.find_element(By.NAME, "by").send_keys("mallory")
    page.find_element(By.NAME, "token").send_keys("not-the-token")
    page.find_element(By.CSS_SELECTOR, "#login button").click()
    assert "wrong admin token" in after_submit(page, By.CLASS_NAME, "error").text
    assert page.get_cookie("fabric_console") is None
    page.get(running.url + "/ui/silences")
    assert not page.find_elements(By.ID, "add-silence")
    forged = httpx.post(running.url + "/ui/silences", data={"matcher": "switch:pod01-leaf01", "reason": "x",
                                                           "duration": "1h", "csrf": "guess"}, timeout=10)
    assert forged.status_code == 401
    assert all(s["matcher"] != "switch:pod01-leaf01" for s in running.daemon.get("/silences").json())


def test_a_hostile_switch_name_is_rendered_as_text(running: Console, page: WebDriver) -> None:
    page.get(running.url + "/ui/fabric")
    _no_alert(page)
    assert page.find_elements(By.CSS_SELECTOR, "img") == []
    assert _box(page, HOSTILE).find_element(By.TAG_NAME, "title").get_attribute("textContent") == f"leaf {HOSTILE}"
    page.get(running.url + f"/ui/fabric?pod={HOSTILE_POD}")
    _no_alert(page)
    assert page.find_elements(By.CSS_SELECTOR, "img") == []
    assert HOSTILE[:15] in page.find_element(By.ID, "picture").text  # the name written out, cut to fit its box
    page.get(running.url + "/ui/components?" + str(httpx.QueryParams({"switch": HOSTILE})))
    _no_alert(page)
    assert page.find_elements(By.CSS_SELECTOR, "img") == []
