"""One changed file's hunks as list rows (made in a worker: ``colouring.diff_rows``): a header row per hunk,
then its lines, painted by a delegate (line numbers then and now, the sign, the line's syntax colours over a
green or red tint)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import (
    QAbstractListModel,
    QModelIndex,
    QPersistentModelIndex,
    QRect,
    QSize,
    Qt,
)
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

from piwork.core.checkpoints import FileChange
from piwork.gui.changes.colouring import DiffRow, DiffRows, Span

ROW_ROLE = Qt.ItemDataRole.UserRole + 1
REVIEWED_ROLE = Qt.ItemDataRole.UserRole + 2  # (header rows) the hunk is marked reviewed
_PAD = 6
_ADDED = QColor(46, 160, 67, 48)
_REMOVED = QColor(218, 54, 51, 48)
_SIGN = {"+": QColor(46, 160, 67), "-": QColor(218, 54, 51)}


class DiffModel(QAbstractListModel):
    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: tuple[DiffRow, ...] = ()
        self._headers: tuple[int, ...] = ()
        self._reviewed: set[int] = set()  # the hunks marked reviewed
        self.change: FileChange | None = None  # the file shown
        self.widest = 0  # characters of the longest row (for the horizontal scroll range)

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row = self._rows[index.row()]
        if role == ROW_ROLE:
            return row
        if role == REVIEWED_ROLE:
            return row.line is None and row.hunk in self._reviewed
        if role == Qt.ItemDataRole.DisplayRole:
            return row.text if row.line is None else f"{row.line.kind}{row.line.text}"
        if role == Qt.ItemDataRole.AccessibleTextRole and row.line is not None:
            words = {"+": "added", "-": "removed", " ": "unchanged", "\\": ""}[row.line.kind]
            return f"{words} {row.line.text}".strip()
        return None

    def row_at(self, number: int) -> DiffRow | None:
        return self._rows[number] if 0 <= number < len(self._rows) else None

    def show(self, rows: DiffRows | None, marks: frozenset[str]) -> None:
        """Show a file's rows (made in a worker), or nothing."""
        self.beginResetModel()
        self.change = rows.change if rows is not None else None
        self._rows = rows.rows if rows is not None else ()
        self._headers = rows.headers if rows is not None else ()
        self.widest = rows.widest if rows is not None else 0
        self._reviewed = self._reviewed_hunks(marks)
        self.endResetModel()

    def _reviewed_hunks(self, marks: frozenset[str]) -> set[int]:
        change = self.change
        if change is None:
            return set()
        whole = change.key in marks
        return {h for h, hunk in enumerate(change.hunks) if whole or hunk.key in marks}

    def set_marks(self, marks: frozenset[str]) -> None:
        """Repaint the hunks' reviewed ticks (only their header rows change)."""
        reviewed = self._reviewed_hunks(marks)
        changed = reviewed ^ self._reviewed
        self._reviewed = reviewed
        for hunk in changed:
            index = self.index(self._headers[hunk], 0)
            self.dataChanged.emit(index, index)

    def header_row(self, hunk: int) -> int:
        return self._headers[hunk] if 0 <= hunk < len(self._headers) else -1

    def hunk_reviewed(self, hunk: int) -> bool:
        return hunk in self._reviewed


class DiffDelegate(QStyledItemDelegate):
    def __init__(self, font: QFont, parent: Any = None) -> None:
        super().__init__(parent)
        self._font = font
        self._bold = QFont(font)
        self._bold.setBold(True)
        self._italic = QFont(font)
        self._italic.setItalic(True)
        self._metrics = QFontMetrics(font)
        self._widths = {id(f): QFontMetrics(f) for f in (self._font, self._bold, self._italic)}
        self.digits = 3

    def gutter_width(self) -> int:
        return 2 * self._metrics.horizontalAdvance("9" * self.digits) + 3 * _PAD

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        model = index.model()
        widest = model.widest if isinstance(model, DiffModel) else 80
        width = self.gutter_width() + self._metrics.horizontalAdvance("M") * widest
        return QSize(width, self._metrics.height() + 4)

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        row = index.data(ROW_ROLE)
        if not isinstance(row, DiffRow):
            return
        painter.save()
        rect: QRect = option.rect
        palette = option.palette
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        baseline = rect.top() + 2 + self._metrics.ascent()
        if row.line is None:
            self._paint_header(
                painter, row, bool(index.data(REVIEWED_ROLE)), rect, baseline, palette, selected
            )
            painter.restore()
            return
        kind = row.line.kind
        if selected:
            painter.fillRect(rect, palette.highlight())
        elif kind in ("+", "-"):
            painter.fillRect(rect, _ADDED if kind == "+" else _REMOVED)
        painter.setFont(self._font)
        dim = palette.placeholderText().color()
        painter.setPen(dim)
        number_width = self._metrics.horizontalAdvance("9" * self.digits)
        for column, number in enumerate((row.line.old_no, row.line.new_no)):
            if number is not None:
                box = QRect(
                    rect.left() + _PAD + column * (number_width + _PAD),
                    rect.top(),
                    number_width,
                    rect.height(),
                )
                painter.drawText(
                    box, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, str(number)
                )
        x = rect.left() + self.gutter_width()
        text_colour = palette.highlightedText().color() if selected else palette.text().color()
        if kind == "\\":
            painter.setPen(dim)
            self._italic_text(painter, x, baseline, "\\ " + row.line.text)
            painter.restore()
            return
        painter.setPen(text_colour if selected else _SIGN.get(kind, dim))
        painter.drawText(x, baseline, kind if kind != " " else "")
        x += self._metrics.horizontalAdvance("+ ")
        spans = row.spans if row.spans is not None else (Span(row.line.text, None),)
        for span in spans:
            if x > rect.right():
                break
            x = self._paint_span(painter, span, x, baseline, text_colour, selected)
        painter.restore()

    def _italic_text(self, painter: QPainter, x: int, baseline: int, text: str) -> None:
        painter.setFont(self._italic)
        painter.drawText(x, baseline, text)

    def _paint_span(
        self, painter: QPainter, span: Span, x: int, baseline: int, default: QColor, selected: bool
    ) -> int:
        font = self._bold if span.bold else self._italic if span.italic else self._font
        painter.setFont(font)
        text = span.text.expandtabs(4)
        painter.setPen(default if selected or span.rgb is None else QColor(*span.rgb))
        painter.drawText(x, baseline, text)
        return x + self._widths[id(font)].horizontalAdvance(text)

    def _paint_header(
        self,
        painter: QPainter,
        row: DiffRow,
        reviewed: bool,
        rect: QRect,
        baseline: int,
        palette: Any,
        selected: bool,
    ) -> None:
        painter.fillRect(rect, palette.highlight() if selected else palette.alternateBase())
        painter.setFont(self._bold if row.hunk >= 0 else self._italic)
        colour = palette.highlightedText().color() if selected else palette.text().color()
        painter.setPen(colour)
        x = rect.left() + _PAD
        painter.drawText(x, baseline, row.text)
        if reviewed:
            x += self._widths[id(self._bold)].horizontalAdvance(row.text + "   ")
            painter.setPen(colour if selected else palette.link().color())  # the theme's, as it is now
            painter.setFont(self._font)
            painter.drawText(x, baseline, "✓ reviewed")
