"""Selecting the chat's text with the mouse and the keys, and copying it (the view hands its events here).

A press sets the anchor, dragging moves the cursor (the view scrolls while the mouse is past its top or bottom
edge), a double-click selects a word and a third click the paragraph; Shift+click extends. A press and release
without a drag is left to the view, so headers, badges and buttons still act on a click. Ctrl+A selects the
whole conversation, the earlier rows not shown yet included; Shift+arrow keys move the cursor within its
message; Escape clears. Points are hit-tested with the delegate's geometry, the one it paints with.

Copying reads only the two rows at the selection's ends from their documents; the rows between come from the
model (``text_selection``). A selection over many rows is joined, and handed to the clipboard, in a worker
thread: the GUI thread only sets the clipboard's data.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QCoreApplication, QMimeData, QObject, QPoint, QRect, Qt, QThread, QTimer
from PySide6.QtGui import QGuiApplication, QTextCursor, QTextDocument
from PySide6.QtWidgets import QApplication, QListView

from piwork.gui.background import BackgroundTasks
from piwork.gui.chat.rows import ChatRow, RowKind, body_shown
from piwork.gui.chat.text_selection import (
    END,
    TextPoint,
    TextSelection,
    doc_length,
    end_text,
    joined,
    moved,
    offset_at,
    paragraph_span,
    whole,
    whole_rows_text,
    word_span,
)

if TYPE_CHECKING:
    from piwork.gui.chat.chat_model import ChatModel
    from piwork.gui.chat.delegate import ChatDelegate

Unit = Callable[[QTextDocument, int], tuple[int, int]]  # the word or paragraph at an offset
SYNC_ROWS = 300  # a selection with more rows between its ends is joined in a worker thread
AUTOSCROLL_MS = 25
NEIGHBOUR_REACH = 50  # rows without text (closed cards) that Shift+arrow steps over
AUTOSCROLL_MAX_STEP = 60  # px per tick, when the mouse is far past the edge

MOVES = {
    Qt.Key.Key_Left: QTextCursor.MoveOperation.Left,
    Qt.Key.Key_Right: QTextCursor.MoveOperation.Right,
    Qt.Key.Key_Up: QTextCursor.MoveOperation.Up,
    Qt.Key.Key_Down: QTextCursor.MoveOperation.Down,
    Qt.Key.Key_Home: QTextCursor.MoveOperation.StartOfLine,
    Qt.Key.Key_End: QTextCursor.MoveOperation.EndOfLine,
}


class TextSelector(QObject):
    def __init__(self, view: QListView, model: ChatModel, delegate: ChatDelegate) -> None:
        super().__init__(view)
        self._view = view
        self._model = model
        self._delegate = delegate
        self.selection: TextSelection | None = None
        self._anchor: TextPoint | None = None  # set by a left press, until its release
        self._pressed_at: QPoint | None = None
        self._dragging = False
        self._consumed = False  # the press was the selector's (a triple-click, Shift+click): no row click
        self._double_at = -1.0  # when the last double-click selected a word (a third click selects more)
        self._double_pos = QPoint()
        # After a double (triple) click, a drag extends by whole words (paragraphs) from the first one.
        self._unit: Unit | None = None
        self._unit_span = (TextPoint(0, 0), TextPoint(0, 0))
        self._drag_pos = QPoint()
        self._scroller = QTimer(self)
        self._scroller.setInterval(AUTOSCROLL_MS)
        self._scroller.timeout.connect(self._autoscroll)
        self._copies = BackgroundTasks()
        delegate.selected_span = self.span_of
        model.modelReset.connect(self.clear)
        model.rowsPrepended.connect(self._shift)

    # ---- state -------------------------------------------------------------------------------

    def has_text(self) -> bool:
        return self.selection is not None and not self.selection.empty

    def span_of(self, row: ChatRow, length: int) -> tuple[int, int] | None:
        """The selected characters of ``row``'s body (``length`` characters long), for the painter."""
        if self.selection is None:
            return None
        position = self._model.position_of_key(row.key)
        return None if position is None else self.selection.span_in(position, length)

    def select(self, selection: TextSelection | None) -> None:
        if selection != self.selection:
            self.selection = selection
            self._view.viewport().update()

    def _shift(self, count: int) -> None:
        """``count`` rows came before all others: what is selected keeps its rows (positions + count)."""

        def moved(point: TextPoint) -> TextPoint:
            return TextPoint(point.row + count, point.offset)

        if self._anchor is not None:
            self._anchor = moved(self._anchor)
        self._unit_span = (moved(self._unit_span[0]), moved(self._unit_span[1]))
        if self.selection is not None:
            self.selection = TextSelection(moved(self.selection.anchor), moved(self.selection.cursor))

    def clear(self) -> None:
        self._anchor = None
        self._pressed_at = None
        self._dragging = False
        self._scroller.stop()
        self.select(None)

    def select_all(self) -> None:
        """The whole conversation, the rows behind "show earlier" included."""
        total = self._model.total_rows()
        self._view.selectionModel().clearSelection()
        self.select(whole(0, total - 1) if total else None)

    # ---- hit-testing -------------------------------------------------------------------------

    def point_at(self, pos: QPoint) -> TextPoint | None:
        """The text point nearest ``pos`` (viewport coordinates; a point past an edge counts as on it)."""
        area = self._view.viewport().rect()
        pos = QPoint(
            min(max(pos.x(), area.left()), area.right()), min(max(pos.y(), area.top()), area.bottom())
        )
        index = self._view.indexAt(pos)
        count = self._model.rowCount()
        if not index.isValid():
            if not count:
                return None
            return TextPoint(self._model.position_of_visible(count - 1), END)  # below the last row
        row = self._model.row_at(index.row())
        position = self._model.position_of_visible(index.row())
        if row.kind is RowKind.MORE:
            return TextPoint(position, 0)
        rect = self._view.visualRect(index)
        doc = self._delegate.body_document(row)
        if doc is None:
            return TextPoint(position, 0 if pos.y() < rect.center().y() else END)
        return TextPoint(position, offset_at(doc, self._delegate.geometry(row, rect).body, pos))

    def _body_under(self, pos: QPoint) -> tuple[int, QTextDocument, QRect] | None:
        """(position, body document, body rect) of the row whose body text is under ``pos``."""
        index = self._view.indexAt(pos)
        if not index.isValid():
            return None
        row = self._model.row_at(index.row())
        doc = self._delegate.body_document(row) if row.kind is not RowKind.MORE else None
        if doc is None:
            return None
        body = self._delegate.geometry(row, self._view.visualRect(index)).body
        if not body.contains(pos):
            return None
        return self._model.position_of_visible(index.row()), doc, body

    def _body_at(self, pos: QPoint) -> tuple[int, QTextDocument, int] | None:
        """(position, body document, offset) when ``pos`` is on a row's body text."""
        under = self._body_under(pos)
        if under is None:
            return None
        position, doc, body = under
        return position, doc, offset_at(doc, body, pos)

    def hover(self, pos: QPoint) -> None:
        """The pointer moved with no button down: an I-beam over text (a hand over a button stays)."""
        viewport = self._view.viewport()
        shape = viewport.cursor().shape()
        if shape == Qt.CursorShape.PointingHandCursor and viewport.testAttribute(
            Qt.WidgetAttribute.WA_SetCursor
        ):
            return
        over_text = self._body_under(pos) is not None
        if over_text and shape != Qt.CursorShape.IBeamCursor:
            viewport.setCursor(Qt.CursorShape.IBeamCursor)
        elif not over_text and shape == Qt.CursorShape.IBeamCursor:
            viewport.unsetCursor()

    def _document_at(self, position: int) -> QTextDocument | None:
        row = self._model.row_at_position(position)
        return None if row is None else self._delegate.body_document(row)

    # ---- mouse -------------------------------------------------------------------------------

    def press(self, pos: QPoint, shift: bool) -> bool:
        """A left press; True when it was the selector's alone (the view must not select or click rows)."""
        self._scroller.stop()
        self._dragging = False
        self._consumed = False
        self._pressed_at = pos
        self._unit = None
        if self._third_click(pos):
            return True
        point = self.point_at(pos)
        if shift and self.selection is not None and point is not None:
            self._anchor = self.selection.anchor
            self._consumed = True
            self.select(TextSelection(self._anchor, point))
            return True
        self.select(None)
        self._anchor = point
        return False

    def _third_click(self, pos: QPoint) -> bool:
        recent = time.monotonic() - self._double_at < QApplication.doubleClickInterval() / 1000
        near = (pos - self._double_pos).manhattanLength() <= QApplication.startDragDistance()
        hit = self._body_at(pos) if recent and near else None
        self._double_at = -1.0
        if hit is None:
            return False
        position, doc, offset = hit
        self._select_unit(position, doc, offset, paragraph_span)
        return True

    def _select_unit(self, position: int, doc: QTextDocument, offset: int, unit: Unit) -> None:
        first, last = unit(doc, offset)
        self._unit = unit
        self._unit_span = (TextPoint(position, first), TextPoint(position, last))
        self._anchor = self._unit_span[0]
        self._consumed = True
        self.select(TextSelection(*self._unit_span))

    def double_click(self, pos: QPoint) -> bool:
        """Select the word under ``pos``; False when ``pos`` is on no text (the view handles it)."""
        hit = self._body_at(pos)
        if hit is None:
            return False
        position, doc, offset = hit
        self._pressed_at = pos
        self._double_at, self._double_pos = time.monotonic(), pos
        self._view.selectionModel().clearSelection()  # the first click selected its row
        self._select_unit(position, doc, offset, word_span)
        return True

    def move(self, pos: QPoint) -> bool:
        """The mouse moved with the left button down; True while the selector owns the press."""
        if self._pressed_at is None:
            return False
        if not self._dragging:
            if (pos - self._pressed_at).manhattanLength() < QApplication.startDragDistance():
                return True
            self._dragging = True
            self._view.selectionModel().clearSelection()  # the text is selected, not the rows
        self._drag_pos = pos
        self._extend_to(pos)
        outside = pos.y() < 0 or pos.y() >= self._view.viewport().height()
        if outside and not self._scroller.isActive():
            self._scroller.start()
        elif not outside:
            self._scroller.stop()
        return True

    def release(self) -> bool:
        """The left button went up; True when it ended a drag or a selector's click (no row click then)."""
        self._scroller.stop()
        owned = self._dragging or self._consumed
        self._pressed_at = None
        self._dragging = False
        self._consumed = False
        return owned

    def _extend_to(self, pos: QPoint) -> None:
        point = self.point_at(pos)
        if self._anchor is None or point is None:
            return
        if self._unit is None:
            self.select(TextSelection(self._anchor, point))
            return
        first, last = self._unit_span
        doc = self._document_at(point.row)
        start, end = (point.offset, point.offset)
        if doc is not None:
            start, end = self._unit(doc, min(point.offset, doc_length(doc)))
        if point < first:
            self.select(TextSelection(last, TextPoint(point.row, start)))
        else:
            self.select(TextSelection(first, max(last, TextPoint(point.row, end))))

    def _autoscroll(self) -> None:
        height = self._view.viewport().height()
        y = self._drag_pos.y()
        past = -y if y < 0 else y - height + 1
        if past <= 0 or self._pressed_at is None:
            self._scroller.stop()
            return
        step = min(AUTOSCROLL_MAX_STEP, 4 + past // 2)
        bar = self._view.verticalScrollBar()
        bar.setValue(bar.value() + (step if y > 0 else -step))
        self._extend_to(self._drag_pos)

    # ---- keys --------------------------------------------------------------------------------

    def extend(self, key: Qt.Key) -> bool:
        """Shift+arrow (Home, End): move the cursor a character or a line, on into the next or the previous
        message at its ends; False when there is no text selection or no such key."""
        operation = MOVES.get(key)
        if operation is None or self.selection is None:
            return False
        cursor = self.selection.cursor
        doc = self._document_at(cursor.row)
        if doc is None:
            return False
        offset = min(cursor.offset, doc_length(doc))
        point = TextPoint(cursor.row, moved(doc, offset, operation))
        if point.offset == offset and key not in (Qt.Key.Key_Home, Qt.Key.Key_End):
            forward = key in (Qt.Key.Key_Right, Qt.Key.Key_Down)
            neighbour = self._neighbour(cursor.row, forward)
            if neighbour is not None:
                point = TextPoint(neighbour, 0 if forward else END)
        self.select(TextSelection(self.selection.anchor, point))
        visible = self._model.visible_of_position(point.row)
        if visible is not None and point.row != cursor.row:
            self._view.scrollTo(self._model.index(visible))
        return True

    def _neighbour(self, position: int, forward: bool) -> int | None:
        """The nearest row shown after (before) ``position`` that shows text."""
        step = 1 if forward else -1
        for candidate in range(position + step, position + step * NEIGHBOUR_REACH, step):
            if self._model.visible_of_position(candidate) is None:
                return None
            row = self._model.row_at_position(candidate)
            if row is not None and body_shown(row):
                return candidate
        return None

    # ---- copy --------------------------------------------------------------------------------

    def copy(self, markdown: bool = False) -> bool:
        """Put the selected text on the clipboard (as Markdown with ``markdown``); False when no text is
        selected. A selection over many rows reaches the clipboard a moment later, from a worker."""
        if self.selection is None or self.selection.empty:
            return False
        head, between, tail = self._pieces(self.selection, markdown)
        if len(between) <= SYNC_ROWS:
            QGuiApplication.clipboard().setText(joined([head, *whole_rows_text(between, markdown), tail]))
        else:
            self._copies.spawn(self._copy_in_worker(head, between, tail, markdown))
        return True

    def text(self, markdown: bool = False) -> str:
        """The selected text, joined here (a selection over many rows is joined by :meth:`copy` in a worker)."""
        if self.selection is None or self.selection.empty:
            return ""
        head, between, tail = self._pieces(self.selection, markdown)
        return joined([head, *whole_rows_text(between, markdown), tail])

    def _pieces(self, selection: TextSelection, markdown: bool) -> tuple[str, list[ChatRow], str]:
        """The selected text of the first and the last row, and the rows between them (covered whole)."""
        start, end = selection.start, selection.end
        head = end_text(
            selection, start.row, self._model.row_at_position(start.row), self._body_doc, markdown
        )
        if start.row == end.row:
            return head, [], ""
        tail = end_text(selection, end.row, self._model.row_at_position(end.row), self._body_doc, markdown)
        return head, self._model.rows_between(start.row + 1, end.row - 1), tail

    def _body_doc(self, row: ChatRow) -> QTextDocument | None:
        return self._delegate.body_document(row)

    async def _copy_in_worker(self, head: str, rows: list[ChatRow], tail: str, markdown: bool) -> None:
        gui_thread = QCoreApplication.instance().thread()  # type: ignore[union-attr]
        data = await asyncio.to_thread(clipboard_data, head, rows, tail, markdown, gui_thread)
        if shiboken6.isValid(self):
            QGuiApplication.clipboard().setMimeData(data)

    def copying(self) -> bool:
        """Whether a long selection is still being joined for the clipboard."""
        return self._copies.running


def clipboard_data(
    head: str, rows: list[ChatRow], tail: str, markdown: bool, gui_thread: QThread
) -> QMimeData:
    """The clipboard's data for a long selection, made in a worker thread (turning a long text into Qt's
    string costs about as long as joining it) and moved to the GUI thread, which hands it to the clipboard."""
    data = QMimeData()
    data.setText(joined([head, *whole_rows_text(rows, markdown), tail]))
    data.moveToThread(gui_thread)
    return data
