"""Headless Chromium for the browser tests (``pytest.mark.browser``; fixtures in conftest).

Selenium drives Debian's ``chromium`` through its ``chromium-driver``, which
bin/test installs; the pages come from pytest-django's ``live_server``, a
thread of the test process, so they run on the suite's settings and the run's
DynamoDB server. Nothing is downloaded at run time: Selenium is given the
driver's path, so its Selenium Manager never runs. Without the packages the
tests fail, naming them: a browser leg that skipped itself would prove nothing.

``BROWSER_SCREENSHOTS=docs`` makes ``Browser.screenshot()`` write PNGs there
(the docs' pictures); without it nothing is written.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.test.testcases import _MediaFilesHandler
from pytest_django.live_server_helper import LiveServer
from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.select import Select
from selenium.webdriver.support.wait import WebDriverWait

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
INSTALL = "apt-get install -y --no-install-recommends chromium chromium-driver"
SCREENSHOTS_ENV = "BROWSER_SCREENSHOTS"

# Headless, as root, and quiet on a closed network: without the last five,
# Chromium's background services reach for Google's hosts at every start.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--window-size=1280,860",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WAIT = 10  # seconds for a page to load: these are local pages, so only a hang takes this long


def serve_current_settings(live_server: LiveServer) -> None:
    """Give the live server a new handler, built under the settings in force now. It loads
    the middleware once, as it starts: a test's MIDDLEWARE override would not reach it."""
    thread = live_server.thread
    thread.httpd.set_app(thread.static_handler(_MediaFilesHandler(WSGIHandler())))


def start_chromium(profile: Path) -> WebDriver:
    """Chromium with a fresh profile in ``profile``, or the test fails saying what to install."""
    missing = [path for path in (CHROMIUM, CHROMEDRIVER) if not os.access(path, os.X_OK)]
    if missing:
        pytest.fail(
            f"The browser tests need Debian's Chromium and ChromeDriver ({' and '.join(missing)} "
            f"missing). Install them as root: {INSTALL} (bin/test does it).",
            pytrace=False,
        )
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in [*FLAGS, f"--user-data-dir={profile}"]:
        options.add_argument(flag)
    return webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))


class Browser:
    """One Chromium on one site, with the few verbs the tests need; ``driver``
    is Selenium's WebDriver for anything else."""

    def __init__(self, driver: WebDriver, base_url: str) -> None:
        self.driver = driver
        self.base_url = base_url

    def reset(self) -> Browser:
        """One tab, no cookies: a new visitor."""
        first, *others = self.driver.window_handles
        for handle in others:
            self.driver.switch_to.window(handle)
            self.driver.close()
        self.driver.switch_to.window(first)
        self.driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
        return self

    def get(self, path: str) -> None:
        self.driver.get(self.base_url + path)

    @property
    def path(self) -> str:
        """The current URL without the site's address."""
        return self.driver.current_url.removeprefix(self.base_url)

    def text(self) -> str:
        """What the page shows, as Chromium lays it out (hidden elements left out);
        read again if the document is replaced while it is read (a redirect landing)."""
        return WebDriverWait(self.driver, WAIT, ignored_exceptions=(WebDriverException,)).until(
            lambda driver: driver.find_element(By.TAG_NAME, "body").text
        )

    def texts(self, selector: str) -> list[str]:
        """The text of every element the CSS ``selector`` finds, in page order."""
        return [e.text for e in self.driver.find_elements(By.CSS_SELECTOR, selector)]

    def follow(self, link_text: str) -> None:
        """Click the link that reads ``link_text`` and wait for the page it opens."""
        self._through(self.driver.find_element(By.LINK_TEXT, link_text))

    def fill(self, **values: object) -> None:
        """Type ``values`` into the form fields of those names, replacing what they held
        (in a drop-down, choose the option of that label)."""
        for name, value in values.items():
            field = self.driver.find_element(By.NAME, name)
            if field.tag_name == "select":
                Select(field).select_by_visible_text(str(value))
                continue
            field.clear()
            field.send_keys(str(value))

    def submit(self, label: str) -> None:
        """Press the button (or submit input) labelled ``label`` and wait for the answer."""
        button = self.driver.find_element(
            By.XPATH,
            f"//button[normalize-space()={_quoted(label)}]"
            f" | //input[@type='submit' and @value={_quoted(label)}]",
        )
        self._through(button)

    def new_tab(self, path: str) -> str:
        """Open ``path`` in a new tab, which becomes the current one; returns its handle."""
        self.driver.switch_to.new_window("tab")
        self.get(path)
        return self.driver.current_window_handle

    def switch_to(self, tab: str) -> None:
        self.driver.switch_to.window(tab)

    def screenshot(self, name: str) -> Path | None:
        """Save the page as ``name`` in $BROWSER_SCREENSHOTS, when that is set."""
        folder = os.environ.get(SCREENSHOTS_ENV)
        if not folder:
            return None
        path = Path(folder) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        self.driver.save_screenshot(str(path))
        return path

    def _through(self, element: WebElement) -> None:
        """Click ``element`` and wait until the page it leads to has replaced this one."""
        page = self.driver.find_element(By.TAG_NAME, "html")
        element.click()
        wait = WebDriverWait(self.driver, WAIT)
        wait.until(expected_conditions.staleness_of(page))
        wait.until(lambda driver: driver.execute_script("return document.readyState") == "complete")


def _quoted(text: str) -> str:
    """``text`` as an XPath string literal."""
    return f'"{text}"' if '"' not in text else f"'{text}'"
