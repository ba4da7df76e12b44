"""The conversation view: a QListView over ``ChatModel`` painted by ``ChatDelegate``.

It follows the bottom while new content arrives (unless the person scrolled up, when a "Jump to latest"
button appears), re-lays out only when a row's height changed, and offers copy from a context menu and Ctrl+C.
Its text is selected with the mouse and the keys as in a text view (``TextSelector``); without a text
selection, copy takes the selected rows whole.

Rows off screen are first laid out with estimated heights (see ``ChatDelegate``), so opening a long
conversation does not hold the GUI thread for the text layout of every row; the rows about to be on screen
are measured exactly before each layout pass, and the rest on later event-loop turns, keeping what is on
screen in place.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QModelIndex, QPersistentModelIndex, QPoint, Qt, QTimer, Signal
from PySide6.QtGui import (
    QAction,
    QContextMenuEvent,
    QFontDatabase,
    QFontMetrics,
    QGuiApplication,
    QKeyEvent,
    QKeySequence,
    QMouseEvent,
    QPalette,
    QResizeEvent,
)
from PySide6.QtWidgets import QAbstractItemView, QListView, QMenu, QStyleOptionViewItem, QToolButton, QWidget

from piwork.gui.chat.chat_model import ChatModel, RowRole
from piwork.gui.chat.code_copy import copy_text
from piwork.gui.chat.delegate import ChatDelegate, forget_row_caches
from piwork.gui.chat.rows import FAILED_TITLE, STOPPED_TITLE, ChatRow, RowKind
from piwork.gui.chat.text_selection import row_copy_markdown
from piwork.gui.chat.text_selector import TextSelector
from piwork.gui.chat.tool_views import view_for
from piwork.gui.context_edit_dialog import CONTEXT_EDITS

if TYPE_CHECKING:
    from piwork.gui.theme import Theme

WHEEL_LINE_MIN = 24  # px per scrolled line at small fonts
_ENSURE_VISIBLE = QAbstractItemView.ScrollHint.EnsureVisible


# Rows that show (part of) a message or a tool result: the model's view of them can be edited.
_EDITABLE_KINDS = (RowKind.USER, RowKind.TEXT, RowKind.TOOL, RowKind.THINKING, RowKind.SKILL)
AGAIN_TITLES = (FAILED_TITLE, STOPPED_TITLE)  # rows whose menu offers Retry and Edit and Resend


class ChatView(QListView):
    openLogRequested = Signal(str)
    approvalAnswered = Signal(object, str)  # a waiting tool card, the CardAction chosen on it
    contextEditRequested = Signal(str, int)  # "leave-out" | "replace" | "restore", row key
    replyAgainRequested = Signal(str, int)  # "retry" | "edit", the key of a failed or stopped reply's row

    def __init__(self, model: ChatModel, theme: Theme | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("chatView")
        self.setAccessibleName("Conversation")
        self.setAccessibleDescription(
            "Messages, replies, tool calls and notices. Drag to select text; Ctrl+A selects the whole "
            "conversation; Ctrl+C copies the selection (the selected rows when no text is selected), "
            "Ctrl+Shift+C copies it as Markdown. A row's context menu (the Menu key) copies its code blocks "
            "or its tool call's command."
        )
        self.setModel(model)
        self._chat_model = model
        self.chat_delegate = ChatDelegate(self, theme)
        self.setItemDelegate(self.chat_delegate)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self._set_wheel_step()
        self._style_scroll_bar()
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setResizeMode(QListView.ResizeMode.Adjust)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setUniformItemSizes(False)
        self.setWordWrap(True)
        self.setMouseTracking(False)
        self.setSpacing(0)
        self._follow_bottom = True
        self._relayout = QTimer(self)
        self._relayout.setSingleShot(True)
        self._relayout.setInterval(0)
        self._relayout.timeout.connect(self._do_relayout)
        self.verticalScrollBar().valueChanged.connect(self._on_scrolled)
        self.verticalScrollBar().rangeChanged.connect(self._on_range_changed)
        model.rowChangedInPlace.connect(self._on_row_changed)
        model.rowsInserted.connect(self._on_rows_inserted)
        model.modelReset.connect(self._on_reset)
        model.rowsPrepended.connect(lambda count: self.chat_delegate.rows_prepended(count))
        self.chat_delegate.toggleRequested.connect(self.toggle_row)
        self.chat_delegate.showEarlierRequested.connect(self._show_earlier)
        self.chat_delegate.openLogRequested.connect(self.openLogRequested)
        self.chat_delegate.approvalAnswered.connect(self.approvalAnswered)
        self.chat_delegate.rowRendered.connect(self._on_row_rendered)
        self.chat_delegate.heightsSettled.connect(self._on_heights_settled)
        copy = QAction("Copy", self)
        copy.setShortcut(QKeySequence.StandardKey.Copy)  # shown in the menu; the key is handled below
        copy.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        copy.triggered.connect(self.copy_selection)
        self._copy_action = copy
        copy_markdown = QAction("Copy as Markdown", self)
        copy_markdown.setShortcut(QKeySequence("Ctrl+Shift+C"))  # shown in the menu; handled below
        copy_markdown.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        copy_markdown.triggered.connect(self.copy_markdown)
        self._copy_markdown_action = copy_markdown
        self.text_selector = TextSelector(self, model, self.chat_delegate)
        # Child of the view, not of its viewport: viewport children move when the content scrolls.
        self.jump_button = QToolButton(self)
        self.jump_button.setObjectName("jumpToLatest")
        self.jump_button.setText("Jump to latest ↓")
        self.jump_button.setToolTip("Scroll to the newest message and follow new output again")
        self.jump_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.jump_button.setAutoRaise(False)
        self.jump_button.clicked.connect(self.scroll_to_latest)
        self.jump_button.hide()

    # ---- follow the bottom -------------------------------------------------------------------

    def _on_scrolled(self, value: int) -> None:
        self._follow_bottom = value >= self.verticalScrollBar().maximum() - 4
        self._update_jump_button()

    def _on_range_changed(self, _minimum: int, maximum: int) -> None:
        if self._follow_bottom:
            self.verticalScrollBar().setValue(maximum)
        self._update_jump_button()

    def scroll_to_latest(self) -> None:
        """Show the newest row and follow new output again (sending a message does this too)."""
        self._follow_bottom = True
        self.scrollToBottom()
        self._schedule_follow()  # rows about to arrive (the message just sent) are followed as well
        self._update_jump_button()

    def _update_jump_button(self) -> None:
        bar = self.verticalScrollBar()
        show = not self._follow_bottom and bar.maximum() > 0
        if show:
            self._place_jump_button()
            self.jump_button.raise_()
        self.jump_button.setVisible(show)

    def _place_jump_button(self) -> None:
        hint = self.jump_button.sizeHint()
        area = self.viewport().geometry()
        self.jump_button.setGeometry(
            area.right() - hint.width() - 16, area.bottom() - hint.height() - 12, hint.width(), hint.height()
        )

    def _schedule_follow(self) -> None:
        if self._follow_bottom:
            QTimer.singleShot(0, self, self._follow_now)

    def _follow_now(self) -> None:
        if self._follow_bottom:  # not if a jump to a row came in between
            self.scrollToBottom()

    def _on_reset(self) -> None:
        self.chat_delegate.forget_estimates()
        self._follow_bottom = True
        self._measure_bottom()
        self._schedule_follow()

    def _on_rows_inserted(self) -> None:
        self._measure_bottom()
        self._schedule_follow()

    def is_following(self) -> bool:
        return self._follow_bottom

    # ---- in-place changes --------------------------------------------------------------------

    def _on_row_changed(self, visible_row: int) -> None:
        index = self._chat_model.index(visible_row)
        row = self._chat_model.row_at(visible_row)
        # The height the view laid the row out with; asking the view (visualRect) would force a full
        # re-layout of every row right now, once per changed row.
        old = self.chat_delegate.laid_out_height(row)
        new = self.chat_delegate.exact_height(row)
        if old != new:
            self._relayout.start()  # coalesce: many rows may change in one flush
        elif not self._relayout.isActive():
            self.viewport().update(self.visualRect(index))

    def _on_row_rendered(self, key: int) -> None:
        visible = self._chat_model.visible_index_of_key(key)
        if visible is not None:
            self._on_row_changed(visible)

    def _item_option(self) -> QStyleOptionViewItem:
        option = QStyleOptionViewItem()
        self.initViewItemOption(option)
        return option

    def _measure_bottom(self) -> None:
        """Before a layout pass while following the bottom: size the newest rows, the ones it shows."""
        if self._follow_bottom:
            self._measure_rows(reversed(range(self._chat_model.rowCount())))

    def _measure_rows(self, rows: Iterable[int]) -> None:
        """Lay out exactly the rows, in the order given, that fill the viewport from one end."""
        room = self.viewport().height()
        for visible in rows:
            if room <= 0:
                break
            room -= self.chat_delegate.exact_height(self._chat_model.row_at(visible))

    def _on_heights_settled(self) -> None:
        """Rows laid out with estimated heights were measured: lay out again, the rows on screen kept where
        they are (the bottom when following it)."""
        if self._follow_bottom:
            self._relayout.start()
            return
        anchor = self.indexAt(QPoint(1, 1))
        before = self.visualRect(anchor).top() if anchor.isValid() else 0
        self.doItemsLayout()
        if anchor.isValid():
            bar = self.verticalScrollBar()
            bar.setValue(bar.value() + self.visualRect(anchor).top() - before)

    def _do_relayout(self) -> None:
        self._measure_bottom()
        self.doItemsLayout()  # one synchronous pass per flush (a delayed one would come on top of it)
        if self._follow_bottom:
            self.scrollToBottom()

    def toggle_row(self, row: ChatRow) -> None:
        """Open or close ``row``; when it is on screen its top stays where it is (a card opened near the
        bottom does not scroll to the end of its output, even while the chat follows the bottom)."""
        visible = self._chat_model.visible_index_of(row)
        rect = self.visualRect(self._chat_model.index(visible)) if visible is not None else None
        on_screen = rect is not None and rect.intersects(self.viewport().rect())
        row.collapsed = not row.collapsed
        row.touch()
        forget_row_caches(self.chat_delegate, row)
        if not on_screen or rect is None or visible is None:
            self._chat_model.notify_changed(row)
            return
        self._follow_bottom = False  # the person is reading this row, not the newest one
        self._chat_model.notify_changed(row)
        self._relayout.stop()  # laid out now, with the row and those below it on screen sized exactly
        self._measure_rows(range(visible, self._chat_model.rowCount()))
        self.doItemsLayout()
        bar = self.verticalScrollBar()
        bar.setValue(bar.value() + self.visualRect(self._chat_model.index(visible)).top() - rect.top())
        self._update_jump_button()

    def scrollTo(
        self, index: QModelIndex | QPersistentModelIndex, hint: QAbstractItemView.ScrollHint = _ENSURE_VISIBLE
    ) -> None:
        # A row taller than the viewport that is partly on screen is already visible: Qt would align its
        # top with the viewport's (a click on an opened card scrolled the card after the click).
        if hint is _ENSURE_VISIBLE and index.isValid():
            rect = self.visualRect(index)
            area = self.viewport().rect()
            if rect.height() >= area.height() and rect.intersects(area):
                return
        super().scrollTo(index, hint)

    def reveal_row_key(self, key: int, expand: bool = False) -> bool:
        """Scroll to the row with ``key`` (showing earlier rows if it is hidden), select it and, with
        ``expand``, open it. False when no such row is in the chat."""
        model = self._chat_model
        following, self._follow_bottom = self._follow_bottom, False  # rows revealed must not follow
        while model.visible_index_of_key(key) is None and model.hidden_count:
            model.show_earlier()
        visible = model.visible_index_of_key(key)
        if visible is None:
            self._follow_bottom = following
            return False
        index = model.index(visible)
        row = index.data(RowRole)
        if expand and isinstance(row, ChatRow) and row.collapsed and row.kind is not RowKind.USER:
            self.toggle_row(row)
        # The row and those below it on screen are sized exactly; the rows above it may keep estimates a
        # while (they are measured later, the row staying where it is shown).
        self._measure_rows(range(visible, model.rowCount()))
        self.doItemsLayout()
        self.setCurrentIndex(index)
        self.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtTop)
        return True

    def _show_earlier(self) -> None:
        self._follow_bottom = False
        self._chat_model.show_earlier()
        self._measure_rows(range(self._chat_model.rowCount()))  # the rows about to be on screen
        self.scrollToTop()

    def resizeEvent(self, event: QResizeEvent) -> None:
        self._measure_bottom()  # at the new width (the viewport's, a scroll bar appearing included)
        super().resizeEvent(event)
        self._place_jump_button()
        if self._follow_bottom:
            QTimer.singleShot(0, self, self.scrollToBottom)

    def _set_wheel_step(self) -> None:
        """A wheel click (the system's lines per click, 3 by default, times this step) moves that many
        lines of the tallest text the chat shows (prose or code), and never less than 24 px a line."""
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        line = max(QFontMetrics(self.font()).lineSpacing(), QFontMetrics(mono).lineSpacing())
        self.verticalScrollBar().setSingleStep(max(WHEEL_LINE_MIN, line))

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._set_wheel_step()

    def set_theme(self, theme: Theme) -> None:
        self.chat_delegate.set_theme(theme)
        self._style_scroll_bar()
        self.scheduleDelayedItemsLayout()

    def _style_scroll_bar(self) -> None:
        """A grey handle on the conversation's own background. Fusion paints the handle lighter than its
        groove, which on the white chat reads the other way round: the grey groove looked like the thumb,
        at the top when the view was at the bottom, and a handle filling the groove looked like no bar."""
        palette = self.chat_delegate.theme.palette
        track = palette.color(QPalette.ColorRole.Base).name()
        handle = palette.color(QPalette.ColorRole.PlaceholderText).name()
        hover = palette.color(QPalette.ColorRole.Text).name()
        self.verticalScrollBar().setStyleSheet(
            f"QScrollBar:vertical {{ background: {track}; width: 12px; margin: 0; border: none; }}"
            f"QScrollBar::handle:vertical {{ background: {handle}; min-height: 32px; border-radius: 4px;"
            " margin: 2px; }"
            f"QScrollBar::handle:vertical:hover, QScrollBar::handle:vertical:pressed {{ background: {hover}; }}"
            "QScrollBar::add-line:vertical, QScrollBar::sub-line:vertical"
            " { height: 0; border: none; background: none; }"
            "QScrollBar::add-page:vertical, QScrollBar::sub-page:vertical { background: none; }"
        )

    # ---- copy --------------------------------------------------------------------------------

    def selected_text(self, markdown: bool = False) -> str:
        """The selected rows whole (their Markdown source with ``markdown``)."""
        rows = sorted(self.selectionModel().selectedIndexes(), key=QModelIndex.row)
        parts = []
        for index in rows:
            row = index.data(RowRole)
            if isinstance(row, ChatRow) and row.kind is not RowKind.MORE:
                parts.append(row_copy_markdown(row) if markdown else row.plain_text())
        return "\n\n".join(parts)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        selector = self.text_selector
        if event.matches(QKeySequence.StandardKey.Copy):
            self.copy_selection()  # every selected row, not only the current one as QListView would
            return
        ctrl_shift = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
        if event.key() == Qt.Key.Key_C and event.modifiers() == ctrl_shift:
            self.copy_markdown()
            return
        if event.matches(QKeySequence.StandardKey.SelectAll):
            selector.select_all()
            return
        if event.key() == Qt.Key.Key_Escape and selector.has_text():
            selector.clear()
            return
        shift = event.modifiers() == Qt.KeyboardModifier.ShiftModifier
        if shift and selector.extend(Qt.Key(event.key())):
            return
        super().keyPressEvent(event)

    def copy_selection(self) -> None:
        """Copy the selected text; without one, the selected rows whole."""
        if self.text_selector.copy():
            return
        text = self.selected_text()
        if text:
            QGuiApplication.clipboard().setText(text)

    def copy_markdown(self) -> None:
        """Copy the selection as Markdown: each row covered whole as its source, a part as Qt writes it."""
        if self.text_selector.copy(markdown=True):
            return
        text = self.selected_text(markdown=True)
        if text:
            QGuiApplication.clipboard().setText(text)

    # ---- mouse: text selection ---------------------------------------------------------------

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            shift = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
            if self.text_selector.press(event.position().toPoint(), shift):
                self.setFocus(Qt.FocusReason.MouseFocusReason)
                return
        super().mousePressEvent(event)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        held = bool(event.buttons() & Qt.MouseButton.LeftButton)
        if held and self.text_selector.move(event.position().toPoint()):
            return  # not QListView's row drag-selection
        super().mouseMoveEvent(event)
        if event.buttons() == Qt.MouseButton.NoButton:
            self.text_selector.hover(event.position().toPoint())

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton and self.text_selector.release():
            self.setState(QAbstractItemView.State.NoState)  # the press's state, as the release would
            return  # a drag or a word's double-click: no click on what is under the mouse
        super().mouseReleaseEvent(event)

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton and self.text_selector.double_click(
            event.position().toPoint()
        ):
            return
        super().mouseDoubleClickEvent(event)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        index = self.indexAt(event.pos())
        if index.isValid() and not self.selectionModel().isSelected(index):
            self.selectionModel().select(index, self.selectionModel().SelectionFlag.ClearAndSelect)
        menu = QMenu(self)
        menu.addAction(self._copy_action)
        menu.addAction(self._copy_markdown_action)
        row = index.data(RowRole) if index.isValid() else None
        if isinstance(row, ChatRow):
            pointer = event.pos() if event.reason() is QContextMenuEvent.Reason.Mouse else None
            buttons = self.chat_delegate.copy_buttons
            for label, text in buttons.menu_entries(row, self.visualRect(index), pointer):
                menu.addAction(label, functools.partial(copy_text, text))
        if isinstance(row, ChatRow) and row.kind in (
            RowKind.THINKING,
            RowKind.TOOL,
            RowKind.NOTICE,
            RowKind.SKILL,
        ):
            menu.addAction("Collapse" if not row.collapsed else "Expand", lambda: self.toggle_row(row))
        if isinstance(row, ChatRow) and row.tool is not None:
            card = row.tool
            for label, card_action in view_for(card.name).actions(card):
                menu.addAction(label, functools.partial(self.chat_delegate.act, card_action, card))
        if isinstance(row, ChatRow) and (row.title in AGAIN_TITLES or row.mark is not None):  # ended early
            menu.addSeparator()
            menu.addAction("Retry", lambda: self.replyAgainRequested.emit("retry", row.key))
            menu.addAction("Edit and Resend", lambda: self.replyAgainRequested.emit("edit", row.key))
        if isinstance(row, ChatRow) and row.kind in _EDITABLE_KINDS and not row.streaming:
            menu.addSeparator()
            for text, action in CONTEXT_EDITS:
                menu.addAction(text, self._context_edit(action, row.key))
        menu.exec(event.globalPos())

    def _context_edit(self, action: str, key: int) -> Callable[[], None]:
        return lambda: self.contextEditRequested.emit(action, key)

    def click_row(self, visible_row: int, pos_in_row: QPoint) -> bool:
        """Click inside a row at a position relative to its top-left (keyboard/test helper)."""
        index = self._chat_model.index(visible_row)
        rect = self.visualRect(index)
        row = index.data(RowRole)
        if not isinstance(row, ChatRow):
            return False
        return self.chat_delegate.click(row, rect, rect.topLeft() + pos_in_row)
