"""A headless Chromium driven by Selenium, and a local server for a built site: what the browser tests
(tests/test_browser.py), the readability measurement (tools/readability.py) and the PDF's printing
(tools/pdf.py) open pages with.

Needs Debian's ``chromium`` and ``chromium-driver`` (``apt-get install -y chromium chromium-driver``) and
selenium (in requirements.txt). Chromium runs with a fresh profile and without its own background
connections (the machines have no internet).
"""

from __future__ import annotations

import functools
import http.server
import shutil
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

WINDOW = (1280, 900)  # a desktop's window, in CSS px
PHONE_MAX_WIDTH = 640  # narrower than this, the window is emulated as a phone
CHROMIUM = ("/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome")
DRIVER = ("/usr/bin/chromedriver", "chromedriver")
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
)
PAGE_TIMEOUT_S = 120


def find_executable(candidates) -> str | None:
    for c in candidates:
        path = shutil.which(c) or (c if Path(c).is_file() else None)
        if path:
            return path
    return None


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextmanager
def serve(html: Path) -> Iterator[str]:
    """Serve the folder ``html`` on localhost; yields its base URL."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=str(html)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def chromium(width: int = WINDOW[0], height: int = WINDOW[1]) -> Iterator[object]:
    """One headless Chromium (Selenium), with a fresh profile, at ``width`` x ``height`` CSS px."""
    browser, driver_path = find_executable(CHROMIUM), find_executable(DRIVER)
    if browser is None or driver_path is None:
        raise RuntimeError("no headless browser: apt-get install -y chromium chromium-driver")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="chromium-profile-")
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in (*CHROMIUM_FLAGS, f"--window-size={width},{height}", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=driver_path))
    try:
        driver.set_page_load_timeout(PAGE_TIMEOUT_S)
        driver.set_script_timeout(PAGE_TIMEOUT_S)
        # --window-size sets the outer window; make the page's own viewport the width we measure at.
        # Below a desktop's width a headless window cannot shrink enough (it has a minimum width):
        # emulate the phone itself (its viewport, and the page's <meta name="viewport">).
        if width < PHONE_MAX_WIDTH:
            metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": True}
            driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
        inner = driver.execute_script("return window.innerWidth")
        if inner != width and width >= PHONE_MAX_WIDTH:
            driver.set_window_size(2 * width - inner, height)
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
