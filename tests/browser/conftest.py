"""A real browser for the tests of the console and of ``verify --html``: Debian's headless Chromium driven through
its ChromeDriver by Selenium. ``.ci/run`` installs both packages when they are missing; where they cannot be found
the tests skip with the reason."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.remote.webdriver import WebDriver

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


def missing_browser() -> list[str]:
    """What of Chromium and its driver is not installed (nothing: the browser can start)."""
    return [path for path in (CHROMIUM, CHROMEDRIVER) if shutil.which(path) is None]


def start_browser(profile: Path) -> WebDriver:
    """Headless Chromium (its profile in ``profile``), 1400x1000, driven through Debian's ChromeDriver."""
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1400,1000", "--no-first-run", "--disable-extensions",
                     f"--user-data-dir={profile}"):
        options.add_argument(argument)
    # The driver's path given outright: Selenium's own driver manager would otherwise try the network.
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    return driver


@pytest.fixture(scope="session")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebDriver]:
    """One headless Chromium for the whole session (it takes a second or two to start). Each test opens its own
    pages; cookies are cleared between tests by ``page``."""
    missing = missing_browser()
    if missing:
        pytest.skip(f"no browser to test with: {', '.join(missing)} not installed (Debian: chromium, chromium-driver)")
    driver = start_browser(tmp_path_factory.mktemp("chromium-profile"))
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def page(browser: WebDriver) -> Iterator[WebDriver]:
    """The session's browser with no cookies left from an earlier test."""
    browser.delete_all_cookies()
    yield browser
    browser.delete_all_cookies()


def screenshot(driver: WebDriver, path: Path) -> None:
    """A PNG of what the browser shows, for docs/images and for a failing test's evidence."""
    path.parent.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(path))
