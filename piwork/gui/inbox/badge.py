"""The status bar's count of what waits in the inbox: hidden while nothing does; a click opens the inbox."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QToolButton, QWidget

from piwork.gui.inbox.inbox import Inbox
from piwork.gui.inbox.items import KIND_TEXT


class InboxBadge(QToolButton):
    def __init__(self, inbox: Inbox, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("inboxBadge")
        self.setAutoRaise(True)
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.setAccessibleName("Inbox")
        self.inbox = inbox
        inbox.changed.connect(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        waiting = self.inbox.waiting()
        count = len(waiting)
        self.setText(f"● {count} waiting")
        kinds: dict[str, int] = {}
        for w in waiting:
            label = KIND_TEXT[w.item.kind][1]
            kinds[label] = kinds.get(label, 0) + 1
        listed = ", ".join(f"{label.lower()}: {n}" for label, n in kinds.items())
        self.setToolTip(f"Waiting for you — {listed}. Click to open the inbox (Alt+5)." if count else "")
        self.setAccessibleDescription(self.toolTip())
        self.setVisible(count > 0)
