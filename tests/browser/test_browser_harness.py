"""The harness itself: the browser renders a page the test serves and runs its script, so a console test that
fails is about the console, not about the browser."""

from __future__ import annotations

from pathlib import Path

from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver


def test_the_browser_renders_a_local_file_and_runs_its_script(page: WebDriver, tmp_path: Path) -> None:
    html = tmp_path / "page.html"
    html.write_text(
        "<!doctype html><title>t</title><p id=a>&lt;b&gt;</p>"
        "<script>document.getElementById('a').dataset.seen = 'yes'</script>"
    )
    page.get(html.as_uri())
    shown = page.find_element(By.ID, "a")
    assert shown.text == "<b>"
    assert shown.get_attribute("data-seen") == "yes"
