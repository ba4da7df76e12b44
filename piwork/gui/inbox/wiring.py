"""Putting the inbox in a window: its dock (View → Inbox, Alt+5), the status bar's badge, the title's
count, and the sessions it follows: ``follow_controller`` for a window with one session, ``follow_tabs``
for a window of tabs (a feed per tab through the tabs' signals, ``bring_to_front`` to jump to one)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from PySide6.QtCore import Qt, SignalInstance
from PySide6.QtWidgets import QDockWidget

from piwork.gui.inbox.badge import InboxBadge
from piwork.gui.inbox.dock_spec import DOCK_ID, SHORTCUT
from piwork.gui.inbox.inbox import Inbox
from piwork.gui.inbox.panel import InboxPanel
from piwork.gui.main_window import MainWindow
from piwork.gui.session_controller import SessionController


@dataclass(frozen=True)
class WindowInbox:
    inbox: Inbox
    panel: InboxPanel
    dock: QDockWidget
    badge: InboxBadge

    def show(self) -> None:
        """Open the dock and put the keyboard in its list."""
        self.dock.show()
        self.dock.raise_()
        self.panel.focus_list()


def install_inbox(window: MainWindow) -> WindowInbox:
    """The inbox's dock (hidden until asked for), badge and title count in ``window``; before its layout
    is restored, so the dock's place is remembered like the others'."""
    inbox = Inbox(window)
    panel = InboxPanel(inbox, window.theme, window)
    dock = window.docks.get(DOCK_ID)
    if dock is None:
        dock = window.add_dock(DOCK_ID, "Inbox", panel, Qt.DockWidgetArea.RightDockWidgetArea, SHORTCUT)
        dock.hide()
    # else: the dock was made before the window's first frame and ``panel`` is what it is making
    badge = InboxBadge(inbox, window.status)
    window.status.insertPermanentWidget(0, badge)
    installed = WindowInbox(inbox, panel, dock, badge)
    badge.clicked.connect(installed.show)
    inbox.countChanged.connect(window.set_waiting_count)
    return installed


def follow_controller(installed: WindowInbox, controller: SessionController) -> None:
    """A window of one session: its controller's feed, always in front."""
    installed.inbox.attach(controller)
    installed.inbox.set_front(controller)


class TabRegistry(Protocol):
    """What the inbox uses of a window's tabs of sessions."""

    @property
    def tabAdded(self) -> SignalInstance: ...  # (controller)

    @property
    def tabRemoved(self) -> SignalInstance: ...  # (controller)

    @property
    def frontChanged(self) -> SignalInstance: ...  # (controller)

    def controllers(self) -> list[SessionController]: ...  # the open tabs, every window's

    def front(self, window: MainWindow) -> SessionController | None: ...

    def bring_to_front(self, controller: SessionController) -> None: ...


def follow_tabs(
    installed: WindowInbox, tabs: TabRegistry, open_now: list[SessionController] | None = None
) -> None:
    """A window's inbox over every tab of the process: a feed per tab (``open_now``, by default every tab
    the registry has, then each added), the tab in front of each window followed, and a jump from the inbox
    brings the item's tab to front (in whichever window it is)."""
    inbox = installed.inbox
    inbox.bring_to_front = tabs.bring_to_front
    tabs.tabAdded.connect(inbox.attach)
    tabs.tabRemoved.connect(inbox.detach)
    tabs.frontChanged.connect(inbox.set_front)
    controllers = tabs.controllers() if open_now is None else open_now
    for controller in controllers:
        inbox.attach(controller)
    for controller in controllers:
        if tabs.front(controller.window) is controller:
            inbox.set_front(controller)
