"""Headless Chromium for the browser checks: Debian's chromium and
chromium-driver, driven with selenium, with a TMPDIR of its own that is
removed at exit (Chromium leaves directories there).
"""
import atexit
import os
import shutil
import tempfile

from selenium import webdriver
from selenium.webdriver.chrome.service import Service


def start(extra_args=(), capabilities=None):
    """A driver for a new headless Chromium, with `extra_args` on its command
    line and `capabilities` (name: value) asked for."""
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", *extra_args]:
        options.add_argument(arg)
    for name, value in (capabilities or {}).items():
        options.set_capability(name, value)
    scratch = tempfile.mkdtemp(prefix="petstore-chromium-")
    atexit.register(shutil.rmtree, scratch, ignore_errors=True)
    service = Service("/usr/bin/chromedriver", env={**os.environ, "TMPDIR": scratch})
    return webdriver.Chrome(options=options, service=service)
