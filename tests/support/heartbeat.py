"""A GUI-thread heartbeat for the benchmarks: a short QTimer whose late ticks show how long the thread was busy.

The timer ticks every ``interval_ms`` while the GUI thread gets back to its event loop; a gap between two
ticks longer than the interval is time the thread spent on something else (wall clock, so a busy machine
shows too: the tests' stall guard in ``gui_stalls.py`` measures CPU time instead).
"""

from __future__ import annotations

from PySide6.QtCore import QElapsedTimer, QTimer


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
