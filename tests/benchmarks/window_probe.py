"""Run the real ``piwork`` window in this process and report its start-up, memory and quitting figures.

Used by ``bench_startup.py`` and ``bench_window.py`` as ``python window_probe.py REPORT.json SETTLE_S [piwork
window arguments]`` under a display (Xvfb). It watches the application from outside piwork's code: an event
filter notes the main window's first paint and the first paint of the chat's list with rows in it (a session's
messages shown) while the composer takes input; once the window has settled it notes resident memory (VmRSS and
the anonymous part from /proc/self/smaps_rollup: ``SETTLE_S`` after, and again once the process has gone idle, its
workers too), then closes the window the way a user does and notes when.
Beside each moment it notes the process's CPU time so far (what to trust on a loaded machine). The parent
process measures the rest (spawn to first paint, close to exit) on the same monotonic clock.
"""

from __future__ import annotations

import json
import runpy
import sys
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QAbstractItemView, QApplication, QMainWindow, QPlainTextEdit

from piwork.gui import compat  # as ``piwork.commands.window`` does before it imports the window's modules

REPORT = Path(sys.argv[1])
SETTLE_S = float(sys.argv[2])
WAIT_FOR_ROWS = "--session" in sys.argv[3:]  # settle once the session's messages are shown
# settled: idle (under 5% of a core) for 2 s in a row after SETTLE_S, or SETTLE_MAX_S after the first paint
IDLE_POLL_S, IDLE_CPU_SHARE, IDLE_FOR_S, SETTLE_MAX_S = 0.5, 0.05, 2.0, 180.0
figures: dict[str, Any] = {}


def memory() -> dict[str, float]:
    out: dict[str, float] = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(("VmRSS:", "RssAnon:", "RssFile:", "RssShmem:")):
            name, value = line.split(":", 1)
            out[name] = round(int(value.split()[0]) / 1024, 1)
    for line in Path("/proc/self/smaps_rollup").read_text().splitlines():
        if line.startswith("Anonymous:"):
            out["Anonymous"] = round(int(line.split()[1]) / 1024, 1)
    return out


def write() -> None:
    REPORT.write_text(json.dumps(figures))


def moment(name: str) -> None:
    figures[name] = time.monotonic()
    figures[name + "_cpu"] = time.process_time()
    write()


def composer_ready(window: QMainWindow) -> bool:
    composer = window.findChild(QPlainTextEdit, "composer")
    return composer is not None and composer.isEnabled() and not composer.isReadOnly()


class Watch(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.window: QMainWindow | None = None
        self.interactive = False

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() != QEvent.Type.Paint:
            return False
        if self.window is None and isinstance(watched, QMainWindow):
            self.window = watched
            QTimer.singleShot(0, self.painted)  # after this paint has been flushed to the screen
        elif WAIT_FOR_ROWS and not self.interactive and self.window is not None and self._chat_rows(watched):
            self.interactive = True
            QTimer.singleShot(0, self.rows_painted)
        return False

    def _chat_rows(self, watched: QObject) -> bool:
        view = watched.parent()
        if not isinstance(view, QAbstractItemView) or view.objectName() != "chatView":
            return False
        model = view.model()
        return (
            model is not None
            and model.rowCount() > 0
            and self.window is not None
            and composer_ready(self.window)
        )

    def painted(self) -> None:
        moment("first_paint")
        if not WAIT_FOR_ROWS:
            QTimer.singleShot(int(SETTLE_S * 1000), self.settled)

    def rows_painted(self) -> None:
        moment("interactive")
        QTimer.singleShot(int(SETTLE_S * 1000), self.settled)

    def settled(self) -> None:
        """Once the window has had ``SETTLE_S``, wait until it is idle: a long session's chat rows, outline and
        X-ray are built in workers for a while after its messages show, and memory is only settled after them."""
        figures["early_memory_mb"] = memory()
        self._idle_since = time.monotonic()
        self._cpu_mark = time.process_time()
        self._idle_timer = QTimer()
        self._idle_timer.timeout.connect(self._poll_idle)
        self._idle_timer.start(int(IDLE_POLL_S * 1000))

    def _poll_idle(self) -> None:
        now, cpu = time.monotonic(), time.process_time()
        if cpu - self._cpu_mark > IDLE_CPU_SHARE * IDLE_POLL_S:
            self._idle_since = now
        self._cpu_mark = cpu
        idle = now - self._idle_since >= IDLE_FOR_S
        if not idle and now - figures["first_paint"] < SETTLE_MAX_S:
            return
        self._idle_timer.stop()
        figures["settle_idle"] = idle
        figures["settled_at"] = now
        figures["settled_memory_mb"] = memory()
        moment("close")
        assert self.window is not None
        self.window.close()


watch = Watch()
run_until_quit = compat.run_until_quit


def run_watched(app: QApplication, main: Any) -> int:
    """The window's application, watched before its window is shown. (The window's modules are left for
    piwork to import, as it does for a user: importing them here would import them without what
    ``piwork.commands.window`` wraps them in.)"""
    app.installEventFilter(watch)
    return run_until_quit(app, main)


compat.run_until_quit = run_watched
sys.argv = ["piwork", *sys.argv[3:]]
try:
    runpy.run_module("piwork", run_name="__main__", alter_sys=True)
finally:
    figures["main_returned"] = time.monotonic()
    write()
