"""One tab of the window: its chat and the parts that belong to that chat rather than to the window (a
call waiting for approval is a card in this chat, an empty session lists the project's others over this
chat, a reply that ends while the window is in the background is told from this session). They attach to
the tab's own session, in front or not; the docks follow whichever tab is in front (``MainWindow.panels``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, QSettings, Signal
from PySide6.QtWidgets import QMainWindow

from piwork.gui.approval_flow import WindowApprovals
from piwork.gui.chat.chat_panel import ChatPanel
from piwork.gui.desktop_notices import DesktopFacts, ReplyNotifier
from piwork.gui.panels import SessionPanels
from piwork.gui.recent_sessions import RecentSessionsFeed
from piwork.gui.tabs.tab_state import TabStatus

if TYPE_CHECKING:
    from piwork.core.approvals import ApprovalAnswer, ApprovalRequest
    from piwork.gui.theme import Theme


class TabApprovals(WindowApprovals):
    """The tab's approvals, counted for its state while a call waits."""

    def __init__(self, tab: ChatTab) -> None:
        chat = tab.chat
        super().__init__(chat.presenter, chat.footer.approval_mode, chat)
        self._status = tab.status
        self._asking = 0

    async def ask(self, request: ApprovalRequest) -> ApprovalAnswer:
        self._asking += 1
        self._status.set_approvals(self._asking)
        try:
            return await super().ask(request)
        finally:
            self._asking -= 1
            self._status.set_approvals(self._asking)


class ChatTab(QObject):
    sessionChosen = Signal(str)  # a session picked in the empty chat's list of recent ones
    titleChanged = Signal(str)

    def __init__(self, theme: Theme, window: QMainWindow, ui_state: QSettings) -> None:
        super().__init__(window)
        self.title = ""
        self.project = ""  # the session's folder (the tab's tooltip)
        self.chat = ChatPanel(theme, window)
        self.status = TabStatus(self)
        self.reply_notifier = ReplyNotifier(window, ui_state)
        self.recent_sessions = RecentSessionsFeed(self.chat)
        self.recent_sessions.sessionChosen.connect(self.sessionChosen)
        self.approvals = TabApprovals(self)
        self.chat.view.approvalAnswered.connect(self.approvals.on_card_action)
        self.panels = SessionPanels()
        for panel in (self.reply_notifier, self.recent_sessions, self.approvals):
            self.panels.register(panel)

    def set_project(self, folder: str) -> None:
        if folder != self.project:
            self.project = folder
            self.titleChanged.emit(self.title)

    def set_title(self, title: str) -> None:
        if title != self.title:
            self.title = title
            self.titleChanged.emit(title)

    def move_to(self, window: QMainWindow) -> None:
        """The tab moves to another top-level window: its parts follow it there."""
        self.setParent(window)
        self.chat.setParent(window)
        notifier = self.reply_notifier
        notifier.window.removeEventFilter(notifier)
        notifier.setParent(window)
        notifier.window = window
        notifier.facts = DesktopFacts(lambda: window.isActiveWindow() and not window.isMinimized())
        window.installEventFilter(notifier)
