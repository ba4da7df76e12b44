"""Everything qasync-specific lives here, so the rest of the GUI sees plain asyncio.

Quirks handled:
- qasync picks its Qt binding from what is already imported, so PySide6 is imported first (and QT_API set).
- Python 3.11 has no ``asyncio.run(loop_factory=...)``; ``asyncio.Runner(loop_factory=...)`` is the way.
- When the application quits before the main coroutine has seen it, qasync raises
  ``RuntimeError("Event loop stopped before Future completed.")``: that is a normal exit, not a crash.
- Tests drive widgets with pytest-qt's own event loop; :func:`attach_loop` installs a qasync loop that
  runs on whatever Qt event loop is spinning, so asyncio tasks progress inside ``qtbot.waitUntil``.
- qasync's own default executor starts ten QThreads with the loop and, when the loop closes, joins them
  one by one, each taking a noticeable part of a second: quitting took seconds after the window had
  gone. The loops here run worker calls (``asyncio.to_thread``) on a plain thread pool instead, whose
  threads start when work needs them and end at once.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Awaitable, Callable, Mapping

import PySide6  # noqa: F401  (must precede qasync so it binds to PySide6)
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

os.environ.setdefault("QT_API", "pyside6")

import qasync

from piwork.gui.workers import WorkerPool

QEventLoop = qasync.QEventLoop

WORKER_THREADS = 10  # as many worker calls at once as qasync's executor ran
# Platforms that need no display server.
HEADLESS_PLATFORMS = ("offscreen", "minimal", "vnc", "eglfs", "linuxfb")


def display_problem(env: Mapping[str, str], platform: str) -> str | None:
    """Why no window can be shown here, or None when a display (or a headless Qt platform) is available."""
    if not platform.startswith("linux") and not platform.startswith("freebsd"):
        return None  # Windows and macOS always have their native platform
    qpa = env.get("QT_QPA_PLATFORM", "").split(":", 1)[0].strip().lower()
    if qpa in HEADLESS_PLATFORMS:
        return None
    has_x11 = bool(env.get("DISPLAY"))
    has_wayland = bool(env.get("WAYLAND_DISPLAY"))
    if qpa == "xcb" and not has_x11:
        return "QT_QPA_PLATFORM is xcb but DISPLAY is not set"
    if qpa == "wayland" and not has_wayland:
        return "QT_QPA_PLATFORM is wayland but WAYLAND_DISPLAY is not set"
    if not qpa and not has_x11 and not has_wayland:
        return "neither DISPLAY nor WAYLAND_DISPLAY is set"
    return None


def run_until_quit(app: QApplication, main: Callable[[asyncio.Event], Awaitable[int]]) -> int:
    """Run ``main(quit_event)`` on a qasync loop until it returns; ``quit_event`` is set on ``aboutToQuit``."""

    async def wrapper() -> int:
        quit_event = asyncio.Event()
        app.aboutToQuit.connect(quit_event.set)
        return await main(quit_event)

    # Ctrl+C in the terminal: Python only runs signal handlers between bytecodes, which never happens while
    # Qt sleeps in its own loop; a light timer wakes the interpreter so the handler can quit the app.
    previous = signal.signal(signal.SIGINT, lambda *_: app.quit())
    waker = QTimer()
    waker.start(250)
    waker.timeout.connect(lambda: None)

    with asyncio.Runner(loop_factory=lambda: _new_loop(app)) as runner:
        try:
            return runner.run(wrapper())
        except RuntimeError as err:
            if "stopped before Future completed" in str(err):
                return 0
            raise
        finally:
            waker.stop()
            signal.signal(signal.SIGINT, previous)


def attach_loop(app: QApplication) -> asyncio.AbstractEventLoop:
    """Install a qasync loop that runs on the Qt event loop already spinning (tests, embedding)."""
    loop = _new_loop(app, already_running=True)
    asyncio.set_event_loop(loop)
    return loop


def _new_loop(app: QApplication, already_running: bool = False) -> asyncio.AbstractEventLoop:
    loop: asyncio.AbstractEventLoop = qasync.QEventLoop(app, already_running=already_running)
    loop.set_default_executor(WorkerPool(WORKER_THREADS, thread_name_prefix="piwork-worker"))
    return loop


def detach_loop(loop: asyncio.AbstractEventLoop, app: QApplication) -> None:
    """Undo :func:`attach_loop`: cancel what is left (and let it finish), forget the running loop, close it."""
    tasks = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in tasks:
        task.cancel()
    for _ in range(100):
        if all(task.done() for task in tasks):
            break
        app.processEvents()
    # qasync's stop() calls QApplication.exit(), which marks the GUI thread "quit now" for good: every later
    # QEventLoop.exec() would return at once. Mark the loop stopped without it, then close it.
    loop._QEventLoop__is_running = False  # type: ignore[attr-defined]
    asyncio.events._set_running_loop(None)
    loop.close()
    # The loop's timer object still has Qt timers registered for cancelled callbacks. If Python's garbage
    # collector later destroys it on another thread, Qt cannot unregister them and the next tick touches
    # freed memory: kill them here, on the GUI thread.
    timer = getattr(loop, "_timer", None)
    callbacks = getattr(timer, "_SimpleTimer__callbacks", None)
    if timer is not None and isinstance(callbacks, dict):
        for timer_id in list(callbacks):
            timer.killTimer(timer_id)
        callbacks.clear()
    asyncio.set_event_loop(None)
