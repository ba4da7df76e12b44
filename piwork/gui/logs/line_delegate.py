"""Paints one log line: a line-number gutter, then the text with its ANSI colours and weights."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

from piwork.gui.logs.lines_model import CLIPPED_ROLE, MATCH_ROLE, SPANS_ROLE
from piwork.gui.logs.sgr import SgrStyle, Span, colour_rgb

_MATCH_BACKGROUND = QColor(255, 214, 0, 70)
_GUTTER_PAD = 8


def _qcolour(rgb: tuple[int, int, int] | None, fallback: QColor) -> QColor:
    return QColor(*rgb) if rgb is not None else fallback


class LogLineDelegate(QStyledItemDelegate):
    def __init__(self, font: QFont, parent: Any = None) -> None:
        super().__init__(parent)
        self._font = font
        self._bold = QFont(font)
        self._bold.setBold(True)
        self._metrics = QFontMetrics(font)
        self.gutter_digits = 1

    def gutter_width(self) -> int:
        return self._metrics.horizontalAdvance("9" * max(3, self.gutter_digits)) + 2 * _GUTTER_PAD

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        return QSize(200, self._metrics.height() + 2)

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        painter.save()
        rect: QRect = option.rect
        palette = option.palette
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        if selected:
            painter.fillRect(rect, palette.highlight())
        elif index.data(MATCH_ROLE):
            painter.fillRect(rect, _MATCH_BACKGROUND)
        gutter = self.gutter_width()
        painter.setFont(self._font)
        painter.setPen(palette.placeholderText().color())
        number_rect = QRect(rect.left(), rect.top(), gutter - _GUTTER_PAD, rect.height())
        painter.drawText(
            number_rect, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, str(index.row() + 1)
        )
        default_fg = palette.highlightedText().color() if selected else palette.text().color()
        x = rect.left() + gutter
        baseline = rect.top() + 1 + self._metrics.ascent()
        spans: list[Span] = index.data(SPANS_ROLE) or []
        for span in spans:
            if x > rect.right():
                break
            x = self._paint_span(painter, span, x, baseline, rect, default_fg, selected)
        if index.data(CLIPPED_ROLE) and x <= rect.right():
            painter.setPen(palette.placeholderText().color())
            painter.drawText(x, baseline, " … (line continues)")
        painter.restore()

    def _paint_span(
        self,
        painter: QPainter,
        span: Span,
        x: int,
        baseline: int,
        rect: QRect,
        default_fg: QColor,
        selected: bool,
    ) -> int:
        style: SgrStyle = span.style
        text = span.text.expandtabs(4)
        font = self._bold if style.bold else self._font
        painter.setFont(font)
        width = QFontMetrics(font).horizontalAdvance(text)
        fg = default_fg if selected else _qcolour(colour_rgb(style.fg), default_fg)
        bg = None if selected else (QColor(*rgb) if (rgb := colour_rgb(style.bg)) is not None else None)
        if style.inverse and not selected:
            fg, bg = (bg or option_background(painter)), fg
        if bg is not None:
            painter.fillRect(QRect(x, rect.top(), width, rect.height()), bg)
        if style.dim:
            fg = QColor(fg)
            fg.setAlpha(150)
        painter.setPen(fg)
        painter.drawText(x, baseline, text)
        if style.underline:
            painter.drawLine(x, baseline + 2, x + width, baseline + 2)
        if style.strike:
            middle = baseline - self._metrics.ascent() // 3
            painter.drawLine(x, middle, x + width, middle)
        return x + width


def option_background(painter: QPainter) -> QColor:
    return painter.background().color()
