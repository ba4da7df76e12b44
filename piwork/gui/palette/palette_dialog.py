"""The command palette window: a query line over a ranked list; Enter runs the selected entry.

Up/Down move in the list while the cursor stays in the query line; Esc closes. Entries may arrive
after the palette opened (recent sessions are listed off the GUI thread).
"""

from __future__ import annotations

import html
import re

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSize, Qt, Signal
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QFont,
    QFontMetrics,
    QKeyEvent,
    QPainter,
    QPalette,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QDialog,
    QLabel,
    QLineEdit,
    QListView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from piwork.gui.inert_text import InertTextDocument
from piwork.gui.palette.palette_model import (
    DetailRole,
    KindRole,
    MatchRole,
    PaletteItem,
    PaletteModel,
    ShortcutRole,
    highlight_html,
)
from piwork.gui.window_flags import dialog_buttons


class PaletteDelegate(QStyledItemDelegate):
    """Title (matched characters bold) and description on the left, cut with "…" to fit; kind and
    shortcut on the right. The row's tooltip and accessible description carry the whole text."""

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        self.initStyleOption(option, index)
        widget = option.widget
        plain = QStyleOptionViewItem(option)
        plain.text = ""
        if widget is not None:
            widget.style().drawControl(QStyle.ControlElement.CE_ItemViewItem, plain, painter, widget)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        colour = option.palette.color(QPalette.ColorGroup.Normal, role)
        rect = option.rect
        right = _right_text(index)
        right_width = option.fontMetrics.horizontalAdvance(right) + 12
        painter.save()
        painter.setPen(colour)
        painter.drawText(
            rect.adjusted(0, 0, -8, 0), Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, right
        )
        text = self.fitted_html(index, option.font, rect.width() - right_width - 16)
        document = html_document(option.font, re.sub(r' style="color:[^"]*"', "", text) if selected else text)
        context = QAbstractTextDocumentLayout.PaintContext()
        context.palette.setColor(QPalette.ColorRole.Text, colour)
        top = rect.top() + (rect.height() - document.size().height()) / 2
        painter.translate(rect.left() + 8, top)
        painter.setClipRect(0, 0, max(0, rect.width() - right_width - 8), rect.height())
        document.documentLayout().draw(painter, context)
        painter.restore()

    @staticmethod
    def fitted_html(index: QModelIndex | QPersistentModelIndex, font: QFont, width: int) -> str:
        """The row's rich text within ``width`` pixels: the description is cut with "…" first, then
        (when even the title does not fit) the title."""
        title = str(index.data(Qt.ItemDataRole.DisplayRole) or "")
        positions: list[int] = list(index.data(MatchRole) or [])
        detail = str(index.data(DetailRole) or "")
        title_html = highlight_html(title, positions)
        title_width = html_document(font, title_html).idealWidth()
        if title_width > width:
            bold = QFont(font)
            bold.setBold(True)  # measure with the wider face so matched characters still fit
            cut = QFontMetrics(bold).elidedText(title, Qt.TextElideMode.ElideRight, max(0, width))
            kept = len(cut) - 1 if cut != title else len(title)
            return highlight_html(cut[:kept], [p for p in positions if p < kept]) + (
                "…" if cut != title else ""
            )
        if not detail:
            return title_html
        gap = "&nbsp;&nbsp;"
        room = width - title_width - html_document(font, gap).idealWidth()
        shown = QFontMetrics(font).elidedText(detail, Qt.TextElideMode.ElideRight, max(0, int(room)))
        if not shown:
            return title_html
        return f'{title_html}{gap}<span style="color:gray">{html.escape(shown)}</span>'

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        return QSize(400, option.fontMetrics.height() + 10)


def _right_text(index: QModelIndex | QPersistentModelIndex) -> str:
    return f"{index.data(ShortcutRole) or ''}    {index.data(KindRole) or ''}".strip()


def html_document(font: QFont, text: str) -> QTextDocument:
    document = InertTextDocument()
    document.setDefaultFont(font)
    document.setDocumentMargin(0)
    document.setHtml(text)
    return document


class PaletteDialog(QDialog):
    ran = Signal(object)  # the PaletteItem that was run

    def __init__(self, items: list[PaletteItem], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        dialog_buttons(self)
        self.setObjectName("commandPalette")
        self.setWindowTitle("Command Palette")
        self.model = PaletteModel(self)
        self.query = QLineEdit(placeholderText="Type to find an action, /command, skill, session or model")
        self.query.setAccessibleName("Find a command")
        self.query.setObjectName("paletteQuery")
        self.list = QListView()
        self.list.setAccessibleName("Matching commands")
        self.list.setAccessibleDescription("Enter runs the selected command")
        self.list.setObjectName("paletteList")
        self.list.setModel(self.model)
        self.list.setItemDelegate(PaletteDelegate(self.list))
        self.list.setUniformItemSizes(True)
        self.list.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.hint = QLabel("Enter runs · Esc closes")
        self.hint.setObjectName("paletteHint")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 8, 8, 8)
        layout.addWidget(self.query)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.hint)
        self.query.textChanged.connect(self._filter)
        self.list.clicked.connect(lambda index: self.run_row(index.row()))
        self.model.add_items(items)
        self._select(0)
        self.resize(640, 420)

    def add_items(self, items: list[PaletteItem]) -> None:
        current = self.list.currentIndex().row()
        self.model.add_items(items)
        self._select(max(0, current))

    def replace_items(self, kind: str, items: list[PaletteItem]) -> None:
        """Swap the items of ``kind``; the selection stays on the same item when it is still there."""
        chosen = self.current_item
        self.model.replace_items(kind, items)
        keys = [(i.key or i.kind + i.title) for i, _marks in self.model.shown]
        wanted = (chosen.key or chosen.kind + chosen.title) if chosen is not None else None
        self._select(keys.index(wanted) if wanted in keys else 0)

    def _filter(self, text: str) -> None:
        self.model.set_query(text)
        self._select(0)

    def _select(self, row: int) -> None:
        count = self.model.rowCount()
        if count:
            self.list.setCurrentIndex(self.model.index(min(row, count - 1)))

    @property
    def current_item(self) -> PaletteItem | None:
        return self.model.item_at(self.list.currentIndex().row())

    def run_row(self, row: int) -> None:
        item = self.model.item_at(row)
        if item is None:
            return
        self.accept()  # close first: what runs may open a dialog of its own
        if item.run is not None:
            item.run()
        self.ran.emit(item)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = Qt.Key(event.key())
        row = self.list.currentIndex().row()
        steps: dict[Qt.Key, int] = {
            Qt.Key.Key_Down: 1,
            Qt.Key.Key_Up: -1,
            Qt.Key.Key_PageDown: 10,
            Qt.Key.Key_PageUp: -10,
        }
        if key in steps:
            self._select(max(0, row + steps[key]))
            return
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.run_row(row)
            return
        super().keyPressEvent(event)
