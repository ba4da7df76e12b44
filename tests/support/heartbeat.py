"""A GUI-thread heartbeat for the benchmarks: a short QTimer whose late ticks show how long the thread was busy.

The timer ticks every ``interval_ms`` while the GUI thread gets back to its event loop; a gap between two
ticks longer than the interval is time the thread spent on something else (wall clock, so a busy machine
shows too: the tests' stall guard in ``gui_stalls.py`` measures CPU time instead).
"""

from __future__ import annotations

import gc
import threading
import time
from typing import Any

from PySide6.QtCore import QElapsedTimer, QTimer
from pytestqt.qt_compat import qt_api


def keeps_running(qtbot: Any, ticks: int = 10) -> None:
    """A 5 ms timer ticks ``ticks`` times: the GUI thread keeps getting back to its event loop (a test's
    proof that work it started waits elsewhere, not on the GUI thread)."""
    count = [0]
    timer = QTimer()
    timer.setInterval(5)
    timer.timeout.connect(lambda: count.__setitem__(0, count[0] + 1))
    timer.start()
    try:
        qtbot.waitUntil(lambda: count[0] >= ticks, timeout=3_000)
    finally:
        timer.stop()


class Heartbeat:
    def __init__(self, interval_ms: int = 5) -> None:
        self.interval_ms = interval_ms
        self.gaps: list[int] = []  # ms between consecutive ticks
        self._clock = QElapsedTimer()
        self._clock.start()
        self._last = 0
        self._timer = QTimer()
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._beat)

    def _beat(self) -> None:
        now = self._clock.elapsed()
        self.gaps.append(now - self._last)
        self._last = now

    def start(self) -> None:
        self._last = self._clock.elapsed()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    @property
    def worst_stall_ms(self) -> int:
        """The longest gap beyond the interval: the worst time the GUI thread was busy."""
        return max(self.gaps) - self.interval_ms if self.gaps else 0

    @property
    def p99_stall_ms(self) -> int:
        ordered = sorted(self.gaps)
        return ordered[int(len(ordered) * 0.99)] - self.interval_ms if ordered else 0


class CpuHeartbeat:
    """The GUI thread's CPU time between consecutive ticks of a short QTimer: what one event-loop pass (the
    posted events it delivers, the timers it fires, the paints and layouts they cause) cost, measured as
    a whole. Unlike the stall guard's per-event pieces, events sent synchronously inside another (a child
    added to an object, a paint inside an update) do not split it; and CPU time, not the wall clock, so a
    busy machine does not blame the code. Time in the garbage collector is left out, and so is the test's
    own code between two ``qtbot`` waits (each wait starts a new pass)."""

    def __init__(self, interval_ms: int = 1) -> None:
        self.worst_ms = 0.0
        self._last: float | None = None
        self._gc = 0.0
        self._gc_started: float | None = None
        self._timer = QTimer()
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._beat)

    def _beat(self) -> None:
        now = time.thread_time() - self._gc
        if self._last is not None:
            self.worst_ms = max(self.worst_ms, (now - self._last) * 1000)
        self._last = now

    def _on_gc(self, phase: str, _info: dict[str, Any]) -> None:
        if threading.get_ident() != self._thread:
            return
        if phase == "start":
            self._gc_started = time.thread_time()
        elif self._gc_started is not None:
            self._gc += time.thread_time() - self._gc_started
            self._gc_started = None

    def start(self) -> None:
        self._thread = threading.get_ident()
        gc.callbacks.append(self._on_gc)
        self._last = None
        self._real_exec = qt_api.exec

        def exec_from_here(obj: Any, *args: Any, **kwargs: Any) -> Any:
            # a qtbot wait starts a pass: the test's own code before it is not one
            self._last = time.thread_time() - self._gc
            return self._real_exec(obj, *args, **kwargs)

        qt_api.exec = exec_from_here
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()
        qt_api.exec = self._real_exec
        gc.callbacks.remove(self._on_gc)
