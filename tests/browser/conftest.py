"""A real browser for the tests of the console and of ``verify --html``: Debian's headless Chromium driven through
its ChromeDriver by Selenium. ``.ci/run`` installs both packages when they are missing; where they cannot be found
the tests skip with the reason."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from browser_support import missing, screenshot, start
from selenium.webdriver.remote.webdriver import WebDriver

__all__ = ["browser", "page", "screenshot"]


@pytest.fixture(scope="session")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebDriver]:
    """One headless Chromium for the whole session (it takes a second or two to start). Each test opens its own
    pages; cookies are cleared between tests by ``page``."""
    absent = missing()
    if absent:
        pytest.skip(f"no browser to test with: {', '.join(absent)} not installed (Debian: chromium, chromium-driver)")
    driver = start(tmp_path_factory.mktemp("chromium-profile"))
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
