"""Every session tab of the process, in every window: what the inbox (and anything else that follows all
sessions) listens to.

API:

- ``SessionTabs.tabAdded(controller)``: a tab opened (its ``SessionController``; ``controller.runtime`` may
  still be None while its session opens; ``controller.sessionOpened`` says when it is there).
- ``SessionTabs.tabRemoved(controller)``: a tab closed (its session is let go right after).
- ``SessionTabs.frontChanged(controller)``: ``controller``'s tab came to the front of its window.
- ``SessionTabs.controllers()``: the open tabs' controllers, in the order they opened.
- ``SessionTabs.front(window)``: the controller in front of ``window`` (None for a window without tabs).
- ``SessionTabs.bring_to_front(controller)``: show its tab, raise and activate its window.

A controller's own parts: ``controller.tab.approvals`` (the calls waiting for approval in its chat),
``controller.trust.prompter`` (its trust questions), ``controller.tab.status`` (a ``TabStatus``: running,
waiting, failed, done; ``changed`` signal) and ``controller.window`` (the window it is in, which changes
when the tab moves to another window).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

if TYPE_CHECKING:
    from piwork.gui.main_window import MainWindow
    from piwork.gui.session_controller import SessionController


class SessionTabs(QObject):
    tabAdded = Signal(object)  # SessionController
    tabRemoved = Signal(object)  # SessionController
    frontChanged = Signal(object)  # SessionController

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._controllers: list[SessionController] = []

    def controllers(self) -> list[SessionController]:
        return list(self._controllers)

    def in_window(self, window: MainWindow) -> list[SessionController]:
        """The tabs of ``window``, as its tab bar orders them."""
        order = {id(tab): index for index, tab in enumerate(window.strip.tabs)}
        mine = [c for c in self._controllers if c.window is window and id(c.tab) in order]
        return sorted(mine, key=lambda c: order[id(c.tab)])

    def front(self, window: MainWindow) -> SessionController | None:
        tab = window.strip.front
        return next((c for c in self._controllers if c.tab is tab), None)

    def add(self, controller: SessionController) -> None:
        self._controllers.append(controller)
        self.tabAdded.emit(controller)

    def remove(self, controller: SessionController) -> None:
        if controller in self._controllers:
            self._controllers.remove(controller)
            self.tabRemoved.emit(controller)

    def bring_to_front(self, controller: SessionController) -> None:
        window = controller.window
        window.strip.show_tab(controller.tab)
        if window.isMinimized():
            window.showNormal()
        window.raise_()
        window.activateWindow()

    def with_file(self, session_file: str) -> SessionController | None:
        """The tab whose session is ``session_file`` (a file is open in one tab of the process at most)."""
        wanted = os.path.realpath(session_file)
        for controller in self._controllers:
            runtime = controller.runtime
            path = runtime.store.path if runtime is not None else None
            if path is not None and os.path.realpath(path) == wanted:
                return controller
        return None
