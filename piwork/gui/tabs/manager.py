"""The window's tabs of sessions, kept: one ``SessionController`` per tab, each with its own chat. It opens
new tabs (File → New Tab, or opening something while the front tab's reply runs), brings a session that
is already open in a tab to the front instead of opening it twice, tells the controllers which tab is in
front (the docks, status bar and title follow it), moves a tab to a window of its own with its reply still
running, and asks before a tab or a window whose reply runs closes.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import Any

import shiboken6
from PySide6.QtCore import QEvent, QObject, QPoint, Qt
from PySide6.QtGui import QCloseEvent, QColor
from PySide6.QtWidgets import QMenu, QMessageBox, QWidget

from piwork.core.llm import CredentialStore
from piwork.core.workflows import AgentRuntime
from piwork.gui.dialogs import ask, ask_text
from piwork.gui.main_window import MainWindow
from piwork.gui.notifications import NotificationCenter
from piwork.gui.session_controller import SessionController
from piwork.gui.tabs.chat_tab import ChatTab
from piwork.gui.tabs.labels import COLOURS, TabLabel, load_label, save_label
from piwork.gui.tabs.registry import SessionTabs


def stop_box(parent: QWidget, title: str, text: str, stop_label: str) -> QMessageBox:
    """ "Stop and Close" (or Quit) or Cancel; Cancel is the default, so a reflexive Enter stops nothing."""
    box = QMessageBox(QMessageBox.Icon.Question, title, text, QMessageBox.StandardButton.NoButton, parent)
    box.setObjectName("stopRunningBox")
    stop = box.addButton(stop_label, QMessageBox.ButtonRole.AcceptRole)
    stop.setObjectName("stopAndClose")
    cancel = box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(cancel)
    box.setEscapeButton(cancel)
    return box


async def ask_to_stop(parent: QWidget, title: str, text: str, stop_label: str) -> bool:
    box = stop_box(parent, title, text, stop_label)
    try:
        await ask(box)
        return box.clickedButton() is box.findChild(QWidget, "stopAndClose")
    finally:
        if shiboken6.isValid(box):
            box.deleteLater()


def running(controller: SessionController) -> bool:
    session = controller.session
    return session is not None and session.is_streaming


class TabManager(QObject):
    def __init__(
        self,
        notifications: NotificationCenter,
        agent_dir: Path,
        *,
        approve: bool | None = None,
        env: Mapping[str, str] | None = None,
        credentials: CredentialStore | None = None,
        make_window: Callable[[], MainWindow] | None = None,
    ) -> None:
        super().__init__()
        self.registry = SessionTabs(self)
        self.notifications = notifications
        self.agent_dir = agent_dir
        self.approve = approve
        self.env = env
        self.credentials = credentials
        self.make_window = make_window  # a second top-level window (Move to New Window)
        self.windows: list[MainWindow] = []
        self._closing: set[int] = set()  # windows whose close was confirmed (or needs no asking)
        self.tasks: set[asyncio.Task[Any]] = set()

    # ---- windows and controllers -------------------------------------------------------------

    def add_window(self, window: MainWindow) -> None:
        self.windows.append(window)
        window.strip.frontChanged.connect(lambda tab, w=window: self._front_changed(w, tab))
        window.strip.closeRequested.connect(lambda tab: self.close_tab(self._controller_of(tab)))
        window.strip.menuRequested.connect(self._tab_menu)
        a = window.action_map
        a["new_tab"].triggered.connect(lambda _c=False, w=window: self._spawn(self.new_tab(w)))
        a["close_tab"].triggered.connect(lambda _c=False, w=window: self._close_front(w))
        a["next_tab"].triggered.connect(lambda _c=False, w=window: self._step(w, 1))
        a["previous_tab"].triggered.connect(lambda _c=False, w=window: self._step(w, -1))
        a["move_tab"].triggered.connect(lambda _c=False, w=window: self._move_front(w))
        a["quit"].triggered.disconnect(window.close)
        a["quit"].triggered.connect(self.quit)  # every window, asking once
        window.installEventFilter(self)

    def adopt(self, controller: SessionController) -> SessionController:
        """Keep ``controller`` (made for a tab of one of the windows) as one of the tabs."""
        controller.tab_host = self
        if controller.window not in self.windows:
            self.add_window(controller.window)
        controller.sessionOpened.connect(lambda runtime, c=controller: self._opened(c, runtime))
        self.registry.add(controller)
        return controller

    def controller(self, window: MainWindow, cwd: str) -> SessionController:
        """The controller of the window's first tab (the window opens with it)."""
        made = SessionController(
            window,
            self.notifications,
            cwd,
            self.agent_dir,
            approve=self.approve,
            env=self.env,
            credentials=self.credentials,
        )
        return self.adopt(made)

    def _controller_of(self, tab: ChatTab) -> SessionController:
        return next(c for c in self.registry.controllers() if c.tab is tab)

    def _front_changed(self, window: MainWindow, tab: ChatTab) -> None:
        controllers = self.registry.in_window(window)
        for controller in controllers:  # the one going behind lets go of the docks first
            if controller.tab is not tab:
                controller.set_front(False)
        for controller in controllers:
            if controller.tab is tab:
                controller.set_front(True)
                self.registry.frontChanged.emit(controller)

    async def new_tab(
        self,
        window: MainWindow,
        session_file: str | None = None,
        cwd: str | None = None,
        *,
        most_recent: bool = False,
    ) -> SessionController:
        """A new tab in front of ``window``, in the project of the tab in front (or ``cwd``)."""
        front = self.registry.front(window)
        folder = cwd or (front.cwd if front is not None else os.getcwd())
        tab = window.new_tab(front=True)
        controller = SessionController(
            window,
            self.notifications,
            folder,
            self.agent_dir,
            approve=self.approve,
            env=self.env,
            credentials=self.credentials,
            tab=tab,
        )
        if front is not None:  # a trust answer "for this session only" holds for the run, in every tab
            controller.trust.share_session_answers(front.trust)
        self.adopt(controller)
        self._front_changed(window, tab)
        await controller.open_session(session_file, most_recent=most_recent)
        return controller

    # ---- TabHost: what a controller asks ------------------------------------------------------

    def tab_with_file(self, session_file: str, besides: SessionController) -> AgentRuntime | None:
        other = self.registry.with_file(session_file)
        if other is None or other is besides:
            return None
        self.registry.bring_to_front(other)
        return other.runtime

    async def open_in_new_tab(
        self, beside: SessionController, session_file: str | None, cwd: str, *, most_recent: bool = False
    ) -> AgentRuntime:
        controller = await self.new_tab(beside.window, session_file, cwd, most_recent=most_recent)
        runtime = controller.runtime
        assert runtime is not None  # open_session returned
        return runtime

    # ---- labels ------------------------------------------------------------------------------

    def _opened(self, controller: SessionController, runtime: AgentRuntime) -> None:
        path = runtime.store.path
        label = load_label(controller.window.ui_state, str(path)) if path is not None else TabLabel()
        controller.window.strip.set_label(
            controller.tab, label.label, QColor(label.colour) if label.colour else None
        )

    def set_label(self, controller: SessionController, label: TabLabel) -> None:
        strip = controller.window.strip
        strip.set_label(controller.tab, label.label, QColor(label.colour) if label.colour else None)
        runtime = controller.runtime
        if runtime is not None and runtime.store.path is not None:
            save_label(controller.window.ui_state, str(runtime.store.path), label)

    def label_of(self, controller: SessionController) -> TabLabel:
        label, colour = controller.window.strip.label_of(controller.tab)
        return TabLabel(label, colour.name() if colour is not None else "")

    def _colour_setter(self, controller: SessionController, colour: str) -> Callable[[], None]:
        """Set the tab's colour, keeping its label as it is when chosen."""
        return lambda: self.set_label(controller, TabLabel(self.label_of(controller).label, colour))

    def _tab_menu(self, tab: ChatTab, where: QPoint) -> None:
        controller = self._controller_of(tab)
        menu = self.tab_menu(controller)
        menu.popup(where)

    def tab_menu(self, controller: SessionController) -> QMenu:
        """The tab's context menu: Label…, Colour ▸, Move to New Window, Move to Window ▸, Close Tab."""
        menu = QMenu(controller.window)
        menu.setObjectName("tabMenu")
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        menu.addAction("&Label…", lambda: self._spawn(self._ask_label(controller)))
        colours = menu.addMenu("&Colour")
        current = self.label_of(controller)
        for name, value in COLOURS:
            action = colours.addAction(name, self._colour_setter(controller, value))
            action.setCheckable(True)
            action.setChecked(current.colour == value)
        colours.addSeparator()
        colours.addAction("None", self._colour_setter(controller, ""))
        menu.addSeparator()
        move = menu.addAction("Move to New &Window", lambda: self.move_to_new_window(controller))
        move.setEnabled(self.make_window is not None and len(self.registry.in_window(controller.window)) > 1)
        into = menu.addMenu("Move to &Window")
        into.setObjectName("moveToWindowMenu")
        for target in self.move_targets(controller):
            count = len(self.registry.in_window(target))
            tabs = "1 tab" if count == 1 else f"{count} tabs"
            into.addAction(f"{target.windowTitle() or 'piwork'} ({tabs})", self._mover(controller, target))
        into.setEnabled(not into.isEmpty())
        menu.addAction("&Close Tab", lambda: self.close_tab(controller))
        return menu

    async def _ask_label(self, controller: SessionController) -> None:
        current = self.label_of(controller)
        text = await ask_text(
            controller.window, "Label Tab", "Label (empty: the session's name):", current.label
        )
        if text is not None and shiboken6.isValid(controller):
            self.set_label(controller, TabLabel(text.strip(), current.colour))

    # ---- closing -----------------------------------------------------------------------------

    def close_tab(self, controller: SessionController) -> asyncio.Task[Any]:
        return self._spawn(self._close_tab(controller))

    async def _close_tab(self, controller: SessionController) -> bool:
        """Close the tab, asking first when its reply runs; the last tab of a window closes the window."""
        window = controller.window
        if running(controller):
            stop = await ask_to_stop(
                window,
                "Close Tab",
                "The agent is still replying in this tab. Stop it and close the tab?",
                "Stop and Close",
            )
            if not stop or controller not in self.registry.controllers():
                return False
        if len(self.registry.in_window(window)) <= 1:
            self._closing.add(id(window))  # asked already
            window.close()
            return True
        self.registry.remove(controller)
        controller.links.clear()
        window.release_tab(controller.tab)
        await controller.shutdown()
        controller.tab.panels.shutdown()
        controller.chat.deleteLater()
        controller.tab.deleteLater()
        controller.deleteLater()
        return True

    def _close_front(self, window: MainWindow) -> None:
        front = self.registry.front(window)
        if front is not None:
            self.close_tab(front)

    def _step(self, window: MainWindow, step: int) -> None:
        tabs = window.strip.tabs
        if len(tabs) > 1:
            index = (window.strip.bar.currentIndex() + step) % len(tabs)
            window.strip.show_tab(tabs[index])

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """A window closing with replies running asks once (Stop and Quit / Cancel)."""
        if event.type() != QEvent.Type.Close or not isinstance(watched, MainWindow):
            return False
        window = watched
        if id(window) in self._closing:
            self._window_closed(window)
            return False
        busy = [c for c in self.registry.in_window(window) if running(c)]
        if not busy:
            self._window_closed(window)
            return False
        assert isinstance(event, QCloseEvent)
        event.ignore()
        self._spawn(self._confirm_close(window, len(busy)))
        return True

    def quit(self) -> asyncio.Task[Any]:
        """File → Quit: every window closes; with replies running in any tab, asked once."""
        return self._spawn(self._quit())

    async def _quit(self) -> None:
        busy = [c for c in self.registry.controllers() if running(c)]
        if busy:
            replies = "A reply is" if len(busy) == 1 else f"{len(busy)} replies are"
            them = "it" if len(busy) == 1 else "them"
            front = next((w for w in self.windows if w.isActiveWindow()), self.windows[0])
            if not await ask_to_stop(
                front, "Quit piwork", f"{replies} still running. Stop {them} and quit?", "Stop and Quit"
            ):
                return
        for window in reversed(self.windows):
            if shiboken6.isValid(window):
                self._closing.add(id(window))
                window.close()

    async def _confirm_close(self, window: MainWindow, busy: int) -> None:
        replies = "A reply is" if busy == 1 else f"{busy} replies are"
        last = len(self.windows) <= 1
        stop = await ask_to_stop(
            window,
            "Quit piwork" if last else "Close Window",
            f"{replies} still running. Stop {'it' if busy == 1 else 'them'} and {'quit' if last else 'close'}?",
            "Stop and Quit" if last else "Stop and Close",
        )
        if stop and shiboken6.isValid(window):
            self._closing.add(id(window))
            window.close()

    def _window_closed(self, window: MainWindow) -> None:
        """A window closes: its tabs' sessions stop and are let go (the first window's at quit, by ``run``)."""
        self._closing.discard(id(window))
        if window in self.windows and window is not self.windows[0]:
            self.windows.remove(window)
            for controller in self.registry.in_window(window):
                self.registry.remove(controller)
                controller.links.clear()
                self._spawn(controller.shutdown())

    async def shutdown(self) -> None:
        """Quitting: every tab's session stops and its file is written out."""
        for controller in self.registry.controllers():
            await controller.shutdown()
        for task in list(self.tasks):
            task.cancel()

    def close_session_files(self) -> None:
        for controller in self.registry.controllers():
            controller.close_session_file()

    # ---- moving ------------------------------------------------------------------------------

    def _move_front(self, window: MainWindow) -> None:
        front = self.registry.front(window)
        if front is not None and len(self.registry.in_window(window)) > 1:
            self.move_to_new_window(front)

    def move_to_new_window(self, controller: SessionController) -> MainWindow | None:
        """The tab goes to a new top-level window, its reply running on."""
        if self.make_window is None:
            return None
        old = controller.window
        if len(self.registry.in_window(old)) <= 1:
            return None
        window = self.make_window()
        self.add_window(window)
        first = window.first_tab
        controller.set_front(False)
        old.release_tab(controller.tab)
        controller.move_to(window)
        window.adopt_tab(controller.tab, front=True)
        window.release_tab(first)  # the new window's own first tab was never used
        first.chat.deleteLater()
        first.deleteLater()
        self._front_changed(window, controller.tab)
        window.show()
        return window

    def move_targets(self, controller: SessionController) -> list[MainWindow]:
        """The windows ``controller``'s tab can move into: every other open one, unless it is the last tab of
        the first window (that window stays while piwork runs)."""
        old = controller.window
        if old is self.windows[0] and len(self.registry.in_window(old)) <= 1:
            return []
        return [w for w in self.windows if w is not old and shiboken6.isValid(w) and w.isVisible()]

    def _mover(self, controller: SessionController, target: MainWindow) -> Callable[[], object]:
        return lambda: self.move_to_window(controller, target)

    def move_to_window(self, controller: SessionController, target: MainWindow) -> bool:
        """The tab joins ``target``'s tabs in front, its reply running on; a window it leaves empty closes."""
        if target not in self.move_targets(controller):
            return False
        old = controller.window
        emptied = len(self.registry.in_window(old)) <= 1
        if emptied:  # gone from sight first: nothing is laid out for a window without tabs
            old.hide()
        controller.set_front(False)
        old.release_tab(controller.tab)
        controller.move_to(target)
        target.adopt_tab(controller.tab, front=True)
        self._front_changed(target, controller.tab)
        if emptied:
            self._closing.add(id(old))  # no tab left to ask about
            old.close()
        target.raise_()
        target.activateWindow()
        return True

    def _spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task: asyncio.Task[Any] = asyncio.ensure_future(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task
