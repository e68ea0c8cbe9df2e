"""Debian's headless Chromium driven through its ChromeDriver by Selenium: started the one way for the browser tests
(``conftest.py``) and for the script that makes the screenshots of docs/images again (``screenshots.py``)."""

from __future__ import annotations

import shutil
from pathlib import Path

from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import WebDriverWait

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WINDOW = (1400, 1000)


def missing() -> list[str]:
    """What is not installed of the two (Debian: chromium, chromium-driver)."""
    return [path for path in (CHROMIUM, CHROMEDRIVER) if shutil.which(path) is None]


def start(profile: Path) -> WebDriver:
    """A headless Chromium with its profile in ``profile``."""
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     f"--window-size={WINDOW[0]},{WINDOW[1]}", "--no-first-run", "--disable-extensions",
                     f"--user-data-dir={profile}"):
        options.add_argument(argument)
    # The driver's path given outright: Selenium's own driver manager would otherwise try the network.
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    return driver


def screenshot(driver: WebDriver, path: Path) -> None:
    """A PNG of what the browser shows, for docs/images and for a failing test's evidence."""
    path.parent.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(path))


def after_submit(page: WebDriver, by: str, value: str) -> WebElement:
    """The element of the page a form's post (and the redirect the browser follows) brings: asked at once, the old
    page, or none while the new one loads, answers."""
    found: WebElement = WebDriverWait(page, 30, ignored_exceptions=(WebDriverException,)).until(
        lambda shown: shown.find_element(by, value))
    return found
