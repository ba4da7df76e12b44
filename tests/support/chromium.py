"""Headless Chromium for tests of exported pages: the DOM after the page's scripts ran.

Tests that need it skip with a visible reason when no Chromium is installed (CI installs Debian's).
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

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


def click_and_download(page: Path, element_id: str, folder: Path, timeout: float = 60.0) -> Path:
    """Open ``page``, click the element ``element_id`` as a user would, and return the file the page
    saved into ``folder``. Drives the browser over its DevTools pipe (file descriptors 3 and 4)."""
    browser = require_chromium()
    to_browser_read, to_browser = os.pipe()
    from_browser, from_browser_write = os.pipe()

    def wire() -> None:  # in the child: the browser reads commands on 3 and answers on 4
        os.dup2(to_browser_read, 3)
        os.dup2(from_browser_write, 4)

    with tempfile.TemporaryDirectory(prefix="piwork-chromium-") as profile:
        process = subprocess.Popen(
            [browser, *FLAGS, f"--user-data-dir={profile}", "--remote-debugging-pipe", "about:blank"],
            pass_fds=(3, 4),
            preexec_fn=wire,  # only dup2 runs in the child
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser_read)
        os.close(from_browser_write)
        pipe = _DevToolsPipe(to_browser, from_browser, time.monotonic() + timeout)
        try:
            pipe.call("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(folder)})
            target = pipe.call("Target.createTarget", {"url": page.resolve().as_uri()})["targetId"]
            session = pipe.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            click = (
                f"(location.protocol === 'file:' && document.body && document.body.getAttribute('data-ready'))"
                f" ? (document.getElementById({json.dumps(element_id)}).click(), 'clicked') : 'not yet'"
            )
            while True:  # until the page has loaded and run its script (its first context may be replaced)
                answer = pipe.call(
                    "Runtime.evaluate", {"expression": click, "userGesture": True}, session, retry=True
                )
                if answer.get("result", {}).get("value") == "clicked":
                    break
                if time.monotonic() > pipe.deadline:
                    raise AssertionError(f"the page did not load: {answer}")
                time.sleep(0.05)
            while time.monotonic() < pipe.deadline:
                saved = [f for f in folder.iterdir() if not f.name.endswith(".crdownload")]
                if saved:
                    return saved[0]
                time.sleep(0.1)
            raise AssertionError(f"the page saved nothing into {folder}")
        finally:
            process.kill()
            process.wait()
            os.close(to_browser)
            os.close(from_browser)


class _DevToolsPipe:
    """Commands to the browser as NUL-terminated JSON, and their answers."""

    def __init__(self, out: int, into: int, deadline: float) -> None:
        self.out, self.into, self.deadline = out, into, deadline
        self.buffer = b""
        self.sent = 0

    def call(
        self, method: str, params: dict[str, Any], session: str | None = None, *, retry: bool = False
    ) -> dict[str, Any]:
        """The command's result; with ``retry``, an error answer is returned as ``{}`` instead of failing."""
        self.sent += 1
        message: dict[str, Any] = {"id": self.sent, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        os.write(self.out, json.dumps(message).encode("utf-8") + b"\0")
        while True:
            while b"\0" in self.buffer:
                raw, self.buffer = self.buffer.split(b"\0", 1)
                answer = json.loads(raw)
                if answer.get("id") == self.sent:
                    if retry and "error" in answer:
                        return {}
                    assert "error" not in answer, answer
                    result: dict[str, Any] = answer.get("result", {})
                    return result
            ready, _w, _x = select.select([self.into], [], [], max(0.0, self.deadline - time.monotonic()))
            if not ready:
                raise AssertionError(f"the browser did not answer {method}")
            chunk = os.read(self.into, 65536)
            if not chunk:
                raise AssertionError(f"the browser closed its pipe during {method}")
            self.buffer += chunk
