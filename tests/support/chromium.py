"""Headless Chromium for tests of exported pages: the DOM after the page's scripts ran.

Tests that need it skip with a visible reason when no Chromium is installed (CI installs Debian's).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
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
    with tempfile.TemporaryDirectory(prefix="piwork-chromium-", ignore_cleanup_errors=True) as profile:
        done = subprocess.run(
            [browser, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", url],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@contextmanager
def opened_page(
    page: Path, fragment: str = "", downloads: Path | None = None, timeout: float = 60.0
) -> Iterator[Tab]:
    """``page`` open in a headless Chromium driven over its DevTools pipe (file descriptors 3 and 4),
    once its script has run (``body[data-ready]``); files it saves go to ``downloads``."""
    browser = require_chromium()
    to_browser_read, to_browser = os.pipe()
    from_browser, from_browser_write = os.pipe()

    def wire() -> None:  # in the child: the browser reads commands on 3 and answers on 4, in its own group
        os.setsid()
        os.dup2(to_browser_read, 3)
        os.dup2(from_browser_write, 4)

    # a helper process that outlives the wait may still write into the profile: never fail on cleanup
    with tempfile.TemporaryDirectory(prefix="piwork-chromium-", ignore_cleanup_errors=True) as profile:
        process = subprocess.Popen(
            [
                browser,
                *FLAGS,
                f"--user-data-dir={profile}",
                "--window-size=1400,900",
                "--remote-debugging-pipe",
                "about:blank",
            ],
            pass_fds=(3, 4),
            preexec_fn=wire,  # only dup2 runs in the child
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser_read)
        os.close(from_browser_write)
        pipe = _DevToolsPipe(to_browser, from_browser, time.monotonic() + timeout)
        try:
            if downloads is not None:
                pipe.call(
                    "Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)}
                )
            url = page.resolve().as_uri() + (f"#{fragment}" if fragment else "")
            target = pipe.call("Target.createTarget", {"url": url})["targetId"]
            session = pipe.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            tab = Tab(pipe, session)
            ready = "location.protocol === 'file:' && !!document.body && !!document.body.getAttribute('data-ready')"
            while tab.evaluate(ready, retry=True) is not True:  # the first context may be replaced
                if time.monotonic() > pipe.deadline:
                    raise AssertionError("the page did not load")
                time.sleep(0.05)
            yield tab
        finally:
            _close_browser(pipe, process)
            os.close(to_browser)
            os.close(from_browser)


def _close_browser(pipe: _DevToolsPipe, process: subprocess.Popen[bytes]) -> None:
    """Ask the browser to close, then end whatever of its process group is left, so that no helper
    process still writes into the profile folder when it is removed."""
    try:
        pipe.deadline = time.monotonic() + 10
        pipe.call("Browser.close", {}, retry=True)
        process.wait(timeout=10)
    except (AssertionError, OSError, subprocess.TimeoutExpired):
        pass
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    # the group's helper processes (zygote, crashpad) exit a little after the browser itself
    gone_by = time.monotonic() + 5
    while time.monotonic() < gone_by:
        try:
            os.killpg(process.pid, 0)
        except (ProcessLookupError, PermissionError):
            break
        time.sleep(0.05)
    for _ in range(100):  # the group's last helpers end a moment after the browser
        try:
            os.killpg(process.pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)


class Tab:
    """One page open in the browser."""

    def __init__(self, pipe: _DevToolsPipe, session: str) -> None:
        self.pipe, self.session = pipe, session

    def evaluate(self, expression: str, *, retry: bool = False) -> Any:
        """The value of a JavaScript expression in the page, run as from a user's gesture."""
        answer = self.pipe.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "userGesture": True},
            self.session,
            retry=retry,
        )
        if "exceptionDetails" in answer and not retry:
            raise AssertionError(answer["exceptionDetails"])
        return answer.get("result", {}).get("value")

    def drag(self, start: tuple[float, float], end: tuple[float, float]) -> None:
        """Press the left mouse button at ``start``, move to ``end`` in a few steps, release there."""
        x0, y0 = start
        x1, y1 = end
        mouse = "Input.dispatchMouseEvent"
        self.pipe.call(
            mouse, {"type": "mousePressed", "x": x0, "y": y0, "button": "left", "clickCount": 1}, self.session
        )
        for step in range(1, 6):
            x, y = x0 + (x1 - x0) * step / 5, y0 + (y1 - y0) * step / 5
            self.pipe.call(
                mouse, {"type": "mouseMoved", "x": x, "y": y, "button": "left", "buttons": 1}, self.session
            )
        self.pipe.call(
            mouse,
            {"type": "mouseReleased", "x": x1, "y": y1, "button": "left", "clickCount": 1},
            self.session,
        )

    def key(self, key: str) -> None:
        """Press and release ``key`` (a DOM key name such as ``Escape``) on the focused element."""
        codes = {"Escape": 27, "ArrowLeft": 37, "ArrowRight": 39}
        for kind in ("keyDown", "keyUp"):
            event = {"type": kind, "key": key, "code": key, "windowsVirtualKeyCode": codes.get(key, 0)}
            self.pipe.call("Input.dispatchKeyEvent", event, self.session)


def click_and_download(page: Path, element_id: str, folder: Path, timeout: float = 60.0) -> Path:
    """Open ``page``, click the element ``element_id`` as a user would, and return the file the page
    saved into ``folder``."""
    with opened_page(page, downloads=folder, timeout=timeout) as tab:
        tab.evaluate(f"document.getElementById({json.dumps(element_id)}).click()")
        while time.monotonic() < tab.pipe.deadline:
            saved = [f for f in folder.iterdir() if not f.name.endswith(".crdownload")]
            if saved:
                return saved[0]
            time.sleep(0.1)
    raise AssertionError(f"the page saved nothing into {folder}")


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
