"""Paints a search result row as one line of rich text (branch badge, snippet with the words in bold)."""

from __future__ import annotations

import re

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSize
from PySide6.QtGui import QAbstractTextDocumentLayout, QPainter, QPalette, QTextDocument
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

from piwork.gui.inert_text import InertTextDocument
from piwork.gui.search.results_model import HtmlRole

_COLOUR = re.compile(r' style="color:[^"]*"')


class HitDelegate(QStyledItemDelegate):
    def _document(
        self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex, selected: bool
    ) -> QTextDocument:
        document = InertTextDocument()
        document.setDefaultFont(option.font)
        document.setDocumentMargin(2)
        text = str(index.data(HtmlRole) or "")
        if selected:  # the selection colour decides: branch colours would be unreadable on it
            text = _COLOUR.sub("", text)
        document.setHtml(text)
        return document

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        self.initStyleOption(option, index)
        style = option.widget.style() if option.widget is not None else None
        text_option = QStyleOptionViewItem(option)
        text_option.text = ""
        if style is not None:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, text_option, painter, option.widget)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        document = self._document(option, index, selected)
        context = QAbstractTextDocumentLayout.PaintContext()
        group = QPalette.ColorGroup.Normal
        role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        context.palette.setColor(QPalette.ColorRole.Text, option.palette.color(group, role))
        rect = option.rect
        painter.save()
        painter.translate(rect.left() + 2, rect.top())
        painter.setClipRect(0, 0, rect.width() - 2, rect.height())
        document.documentLayout().draw(painter, context)
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        hint = super().sizeHint(option, index)
        line = option.fontMetrics.height() + 6
        return QSize(hint.width(), max(hint.height(), line))
