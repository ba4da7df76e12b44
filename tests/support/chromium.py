"""Headless Chromium for tests of exported pages: the DOM after the page's scripts ran.

Tests that need it skip with a visible reason when no Chromium is installed (CI installs Debian's).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-dev-shm-usage",  # containers often have a small /dev/shm
)


def chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def require_chromium() -> str:
    found = chromium_path()
    if found is None:
        pytest.skip("Chromium is not installed (apt-get install chromium): the exported page is not rendered")
    return found


def dump_dom(page: Path, fragment: str = "", timeout: float = 60.0) -> str:
    """The page's DOM after load, opened from disk with ``#fragment``."""
    browser = require_chromium()
    url = page.resolve().as_uri() + (f"#{fragment}" if fragment else "")
    with tempfile.TemporaryDirectory(prefix="piwork-chromium-") as profile:
        done = subprocess.run(
            [browser, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", url],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout
