"""What one tab's controller hears from the window-wide parts (menus, the docks' panels, the status bar):
connected only while its tab is in front, so an action or a panel's request reaches the session shown
and never a session in the background. A tab with the window to itself is always in front."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import SignalInstance

Slot = Callable[..., Any]


class FrontLinks:
    def __init__(self, front: bool = True) -> None:
        self._front = front
        self._links: list[tuple[SignalInstance, Slot]] = []

    @property
    def front(self) -> bool:
        return self._front

    def connect(self, signal: SignalInstance, slot: Slot) -> None:
        """``signal`` (of a window-wide part) calls ``slot`` whenever the tab is in front."""
        self._links.append((signal, slot))
        if self._front:
            signal.connect(slot)

    def set_front(self, front: bool) -> None:
        if front == self._front:
            return
        self._front = front
        for signal, slot in self._links:
            if front:
                signal.connect(slot)
            else:
                with contextlib.suppress(RuntimeError, TypeError):  # a part already gone at quit
                    signal.disconnect(slot)

    def clear(self) -> None:
        """Drop every link (the tab closes, or moves to another window's parts)."""
        self.set_front(False)
        self._links.clear()
