"""The Inbox dock: what waits for the user across sessions, newest first, each as two lines (its kind,
the session, how long it has waited; then what: the command, the file, the question, the failure).

Enter (or a double click) acts on the selected item (see ``Inbox.act``); Approve and Deny… answer an
approval without leaving the session shown; Dismiss puts a failed or finished run away.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPersistentModelIndex, QRect, QSize, Qt, QTimer
from PySide6.QtGui import QFont, QFontMetrics, QKeyEvent, QPainter, QPalette
from PySide6.QtWidgets import (
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from piwork.gui.flow_layout import FlowLayout
from piwork.gui.inbox.inbox import Inbox, Waiting
from piwork.gui.inbox.items import KIND_TEXT, InboxKind, age_text
from piwork.gui.theme import Theme, load_theme

WaitingRole = Qt.ItemDataRole.UserRole + 1
AGE_REFRESH_MS = 30_000
EMPTY_TEXT = (
    "Nothing waits for you.\n\nCalls to approve, trust questions, failed replies and runs that finish "
    "while you look elsewhere show here."
)
PAD = 6

KIND_ACCENT = {
    InboxKind.APPROVAL: "badge",
    InboxKind.TRUST: "badge",
    InboxKind.FAILED: "fail",
    InboxKind.FINISHED: "ok",
}


class WaitingDelegate(QStyledItemDelegate):
    """Two lines per item, painted from the item's data (no documents, no layout: cheap to paint)."""

    def __init__(self, theme: Theme, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.theme = theme

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        line = QFontMetrics(option.font).height()
        return QSize(120, 2 * line + 3 * PAD)

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        waiting = index.data(WaitingRole)
        if not isinstance(waiting, Waiting):
            return
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""
        style = opt.widget.style() if opt.widget is not None else None
        if style is not None:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, opt.widget)
        selected = bool(opt.state & QStyle.StateFlag.State_Selected)
        palette: QPalette = opt.palette
        text_colour = palette.color(
            QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        )
        rect: QRect = opt.rect.adjusted(PAD, PAD, -PAD, -PAD)
        font = QFont(opt.font)
        metrics = QFontMetrics(font)
        line = metrics.height()
        item = waiting.item
        glyph, label = KIND_TEXT[item.kind]
        painter.save()
        bold = QFont(font)
        bold.setBold(True)
        bold_metrics = QFontMetrics(bold)
        glyph_width = bold_metrics.horizontalAdvance("✕ ")
        painter.setFont(bold)
        painter.setPen(text_colour if selected else self.theme.accent(KIND_ACCENT[item.kind]))
        top = QRect(rect.left(), rect.top(), rect.width(), line)
        painter.drawText(top, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, glyph)
        age = age_text(time.time() - item.since)
        age_width = metrics.horizontalAdvance(age) + PAD
        painter.setPen(text_colour)
        head = top.adjusted(glyph_width, 0, -age_width, 0)
        label_width = bold_metrics.horizontalAdvance(label + "  ")
        painter.drawText(head, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, label)
        painter.setFont(font)
        session = metrics.elidedText(
            waiting.feed.label(), Qt.TextElideMode.ElideRight, head.width() - label_width
        )
        painter.drawText(
            head.adjusted(label_width, 0, 0, 0),
            Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
            session,
        )
        faint = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.PlaceholderText
        painter.setPen(palette.color(faint))
        painter.drawText(top, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, age)
        painter.setPen(text_colour)
        what_rect = QRect(
            rect.left() + glyph_width, rect.top() + line + PAD, rect.width() - glyph_width, line
        )
        what = metrics.elidedText(item.what, Qt.TextElideMode.ElideMiddle, what_rect.width())
        painter.drawText(what_rect, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, what)
        painter.restore()


class InboxPanel(QWidget):
    def __init__(self, inbox: Inbox, theme: Theme | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("inboxPanel")
        self.inbox = inbox
        self.list = QListWidget(self)
        self.list.setObjectName("inboxList")
        self.list.setAccessibleName("Waiting for you")
        self.list.setUniformItemSizes(True)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.delegate = WaitingDelegate(theme or load_theme("light"), self.list)
        self.list.setItemDelegate(self.delegate)
        self.empty = QLabel(EMPTY_TEXT, self)
        self.empty.setObjectName("inboxEmpty")
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)
        self.empty.setEnabled(False)
        self.approve_button = QPushButton("&Approve", self)
        self.approve_button.setToolTip("Run the selected call now (its session stays where it is)")
        self.deny_button = QPushButton("&Deny…", self)
        self.deny_button.setToolTip("Refuse the selected call; the model reads your reason")
        self.go_button = QPushButton("&Go to", self)
        self.go_button.setToolTip("Show it in its session (Enter)")
        self.dismiss_button = QPushButton("Dis&miss", self)
        self.dismiss_button.setToolTip("Put this failed or finished run away")
        self.buttons = QWidget(self)  # hidden while nothing waits
        buttons = FlowLayout(self.buttons, spacing=4)  # on two rows in a narrow dock, never cut off
        buttons.setContentsMargins(0, 0, 0, 0)
        for button in (self.approve_button, self.deny_button, self.go_button, self.dismiss_button):
            button.setAutoDefault(False)
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.empty, 1)
        layout.addWidget(self.buttons)
        self.approve_button.clicked.connect(lambda: self._on_selected(self.inbox.approve))
        self.deny_button.clicked.connect(lambda: self._on_selected(self.inbox.deny))
        self.go_button.clicked.connect(lambda: self._on_selected(self.inbox.act))
        self.dismiss_button.clicked.connect(lambda: self._on_selected(self.inbox.dismiss))
        self.list.itemDoubleClicked.connect(lambda _item: self._on_selected(self.inbox.act))
        self.list.currentItemChanged.connect(lambda *_args: self._update_buttons())
        self.list.installEventFilter(self)
        self._ages = QTimer(self)  # "now" → "1 min" → …: a repaint, nothing else
        self._ages.setInterval(AGE_REFRESH_MS)
        self._ages.timeout.connect(self.list.viewport().update)
        inbox.changed.connect(self.refresh)
        self.refresh()

    def set_theme(self, theme: Theme) -> None:
        self.delegate.theme = theme
        self.list.viewport().update()

    def selected(self) -> Waiting | None:
        item = self.list.currentItem()
        waiting = item.data(WaitingRole) if item is not None else None
        return waiting if isinstance(waiting, Waiting) else None

    def refresh(self) -> None:
        """List what waits again, keeping the selected item selected while it waits."""
        current = self.selected()
        keep = (current.feed, current.item.key) if current is not None else None
        self.list.clear()
        chosen = 0
        for row, waiting in enumerate(self.inbox.waiting()):
            item = QListWidgetItem()
            kind = KIND_TEXT[waiting.item.kind][1]
            item.setText(f"{kind}: {waiting.item.what} ({waiting.feed.label()})")  # read aloud, typed to find
            item.setData(WaitingRole, waiting)
            item.setToolTip(f"{waiting.feed.label()}\n{waiting.item.what}")
            self.list.addItem(item)
            if keep == (waiting.feed, waiting.item.key):
                chosen = row
        count = self.list.count()
        if count:
            self.list.setCurrentRow(chosen)
        self.list.setVisible(count > 0)
        self.empty.setVisible(count == 0)
        self.buttons.setVisible(count > 0)
        if count and not self._ages.isActive():
            self._ages.start()
        elif not count:
            self._ages.stop()
        self._update_buttons()

    def _update_buttons(self) -> None:
        waiting = self.selected()
        kind = waiting.item.kind if waiting is not None else None
        self.approve_button.setEnabled(kind is InboxKind.APPROVAL)
        self.deny_button.setEnabled(kind is InboxKind.APPROVAL)
        self.go_button.setEnabled(waiting is not None)
        self.dismiss_button.setEnabled(kind in (InboxKind.FAILED, InboxKind.FINISHED))

    def _on_selected(self, action: Callable[[Waiting], None]) -> None:
        waiting = self.selected()
        if waiting is not None:
            action(waiting)

    def focus_list(self) -> None:
        (self.list if self.list.isVisible() else self.empty).setFocus()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            watched is self.list
            and event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
            and event.modifiers() in (Qt.KeyboardModifier.NoModifier, Qt.KeyboardModifier.KeypadModifier)
        ):
            self._on_selected(self.inbox.act)
            return True
        return False
