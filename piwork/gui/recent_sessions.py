"""The empty chat of a new session lists the project's recent sessions: one click (or Enter) continues one.

This is what Session → Start Fresh shows at start instead of reopening the latest session, and what a new
session shows too. The sessions are listed in a worker (``SessionListing``); the list lies over the empty
conversation and goes as soon as the conversation has a row.
"""

from __future__ import annotations

import math
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QEvent, QModelIndex, QObject, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from piwork.core.paths import agent_dir
from piwork.gui.inert_text import plain_label, plain_tip
from piwork.gui.recent_projects import age_text
from piwork.gui.sessions.listing_worker import SessionListing
from piwork.gui.sessions.titles import first_message_title

if TYPE_CHECKING:
    from piwork.core.session import SessionInfo
    from piwork.core.workflows import AgentRuntime
    from piwork.gui.chat.chat_panel import ChatPanel

MAX_LISTED = 6
PATH_ROLE = Qt.ItemDataRole.UserRole


def session_line(info: SessionInfo, now: float) -> tuple[str, str]:
    """A session as a title (its name, else its first message) and what is known of it (messages,
    when it last changed)."""
    title = info.name or " ".join(first_message_title(info.first_message).split())[:80] or info.path.name
    count = f"{info.message_count} message{'s' if info.message_count != 1 else ''}"
    when = age_text(now - info.modified_ms / 1000) if math.isfinite(info.modified_ms) else ""
    return title, f"{count} · {when}" if when else count


class _MutedDetail(QStyledItemDelegate):
    """The second column in the palette's muted text colour (it follows a palette change)."""

    def initStyleOption(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        super().initStyleOption(option, index)
        if index.column() == 1:
            muted = option.palette.color(QPalette.ColorRole.PlaceholderText)
            option.palette.setColor(QPalette.ColorRole.Text, muted)


class RecentSessionsCard(QFrame):
    """Over the empty conversation: the title, up to ``MAX_LISTED`` sessions, and where the rest are."""

    sessionChosen = Signal(str)  # a session file's path

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("recentSessions")
        self.setAutoFillBackground(True)  # drawn over the (empty) conversation
        self.setBackgroundRole(QPalette.ColorRole.Base)
        self.title = plain_label(parent=self)
        self.title.setObjectName("recentSessionsTitle")
        font = self.title.font()
        font.setBold(True)
        self.title.setFont(font)
        self.list = QTreeWidget(self)
        self.list.setObjectName("recentSessionsList")
        self.list.setAccessibleName("Recent sessions")
        self.list.setColumnCount(2)
        self.list.setHeaderHidden(True)
        self.list.setRootIsDecorated(False)
        self.list.setUniformRowHeights(True)
        self.list.setItemDelegate(_MutedDetail(self.list))
        header = self.list.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.list.setFrameShape(QFrame.Shape.NoFrame)
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.itemClicked.connect(self._choose)
        self.list.itemActivated.connect(self._choose)
        self.hint = QLabel(
            "Or type below to start a new session. Every session: File → Sessions… (Ctrl+Shift+O)."
        )
        self.hint.setObjectName("recentSessionsHint")
        self.hint.setWordWrap(True)
        self.hint.setEnabled(False)  # drawn in the muted text colour
        card = QWidget(self)
        card.setMaximumWidth(620)
        inner = QVBoxLayout(card)
        inner.setSpacing(8)
        inner.addWidget(self.title)
        inner.addWidget(self.list)
        inner.addWidget(self.hint)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(card, 6)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(24, 20, 24, 20)
        layout.addStretch(1)
        layout.addLayout(row)
        layout.addStretch(2)
        self._items: list[QTreeWidgetItem] = []
        self.hide()

    def clear(self) -> None:
        self.list.clear()
        self._items = []

    def set_sessions(self, project: str, infos: list[SessionInfo]) -> None:
        self.list.clear()
        self._items = []
        now = time.time()
        for info in infos[:MAX_LISTED]:
            item = QTreeWidgetItem(list(session_line(info, now)))
            item.setData(0, PATH_ROLE, str(info.path))
            item.setToolTip(0, plain_tip(str(info.path)))
            item.setSizeHint(0, item.sizeHint(0).expandedTo(self.list.fontMetrics().size(0, "Xg") * 1.6))
            self.list.addTopLevelItem(item)
            self._items.append(item)
        self.title.setText(f"Recent sessions in {project}")
        rows = self.list.topLevelItemCount()
        row_height = self.list.sizeHintForRow(0) if rows else 0
        self.list.setFixedHeight(max(rows * row_height + 2 * self.list.frameWidth(), 1))

    def has_sessions(self) -> bool:
        return self.list.topLevelItemCount() > 0

    def lines(self) -> list[tuple[str, str]]:
        return [(item.text(0), item.text(1)) for item in self._items]

    def _choose(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        path = item.data(0, PATH_ROLE)
        if isinstance(path, str):
            self.sessionChosen.emit(path)


class RecentSessionsFeed(QObject):
    """A session panel (see ``piwork.gui.panels``): lists the project's other sessions when the open one
    is empty, and shows the card while the conversation has no row."""

    sessionChosen = Signal(str)

    def __init__(self, chat: ChatPanel) -> None:
        super().__init__(chat)
        self.chat = chat
        self.card = RecentSessionsCard(chat.view)
        self.card.sessionChosen.connect(self.sessionChosen)
        self._listing: SessionListing | None = None
        self._open_path = ""
        self._project = ""
        chat.view.installEventFilter(self)
        for signal in (chat.model.modelReset, chat.model.rowsInserted, chat.model.rowsRemoved):
            signal.connect(self._update)

    def attach(self, runtime: AgentRuntime) -> None:
        self.detach()
        if runtime.session.messages:  # a session with a conversation shows it
            return
        store = runtime.store
        self._open_path = os.path.realpath(store.path) if store.path is not None else ""
        self._project = os.path.basename(os.path.normpath(store.cwd)) or store.cwd
        listing = SessionListing(Path(agent_dir()), store.session_dir, parent=self)
        listing.finished.connect(self._listed)
        listing.start(store.cwd)
        self._listing = listing

    def detach(self) -> None:
        listing, self._listing = self._listing, None
        if listing is not None and shiboken6.isValid(listing):  # gone with its window at the end
            listing.cancel()
            listing.deleteLater()
        if shiboken6.isValid(self.card):  # not when the window is already gone (the end of the process)
            self.card.clear()
            self._update()

    def shutdown(self) -> None:
        self.detach()

    def _listed(self, infos: list[SessionInfo]) -> None:
        others = [
            info
            for info in infos
            if os.path.realpath(info.path) != self._open_path
            and info.message_count > 0
            and not info.unsupported
        ]
        self.card.set_sessions(self._project, others)
        self._update()

    def _update(self, *_args: object) -> None:
        shown = self.card.has_sessions() and self.chat.model.rowCount() == 0
        if shown:
            self.card.setGeometry(self.chat.view.rect())
            self.card.raise_()
        self.card.setVisible(shown)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.chat.view and event.type() == QEvent.Type.Resize and self.card.isVisible():
            self.card.setGeometry(self.chat.view.rect())
        return False
