"""Paints one row of the branch graph: lane lines, fork curves, the entry's mark, its labels and title.

Every row has the same height (the view asks for uniform sizes), so a 100k-row graph costs only the
rows on screen. Marks: user ● filled circle, assistant ○ ring, tool ▪ small square, branch summary ◆
diamond, compaction ▲ triangle, other messages • dot, a fold ⋮. The leaf gets an outer ring; the
active path's lane is drawn thicker and its rows are tinted.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QPointF, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPainterPath, QPen, QPolygonF
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

from piwork.gui.tree.graph_model import GRAPH_ROLE, GraphCell

LANE_WIDTH = 16
MARK_RADIUS = 4.5
TEXT_COLUMN_LANES = 10  # titles line up after this many lanes; rows with more lanes push theirs further
_LANE_COLOURS = [
    QColor(52, 120, 220),
    QColor(214, 110, 30),
    QColor(40, 160, 90),
    QColor(180, 60, 160),
    QColor(200, 60, 60),
    QColor(30, 150, 170),
    QColor(140, 120, 30),
    QColor(100, 90, 200),
]
_KIND_COLOURS = {
    "summary": QColor(40, 140, 120),
    "compaction": QColor(176, 120, 20),
    "tool": QColor(120, 120, 120),
}
_ACTIVE_TINT = QColor(80, 140, 230, 34)
_LINKED_TINT = QColor(40, 160, 120, 50)
_TAG_FILL = QColor(250, 216, 120)
_TAG_TEXT = QColor(60, 45, 0)


def lane_colour(lane: int) -> QColor:
    return _LANE_COLOURS[lane % len(_LANE_COLOURS)]


def lane_x(lane: int) -> float:
    return LANE_WIDTH * lane + LANE_WIDTH / 2 + 2


class GraphDelegate(QStyledItemDelegate):
    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        return QSize(200, QFontMetrics(option.font).height() + 8)

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        cell = index.data(GRAPH_ROLE)
        if not isinstance(cell, GraphCell):
            super().paint(painter, option, index)
            return
        rect = option.rect
        state = option.state
        palette = option.palette
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        selected = bool(state & QStyle.StateFlag.State_Selected)
        if selected:
            painter.fillRect(rect, palette.highlight())
        elif cell.linked:
            painter.fillRect(rect, _LINKED_TINT)
        elif cell.active:
            painter.fillRect(rect, _ACTIVE_TINT)
        top, bottom = float(rect.top()), float(rect.bottom() + 1)
        middle = (top + bottom) / 2
        left = float(rect.left())
        for lane in cell.through:
            self._line(painter, lane, False, left + lane_x(lane), top, bottom)
        x = left + lane_x(cell.lane)
        if cell.up:
            self._line(painter, cell.lane, cell.active, x, top, middle)
        if cell.down:
            self._line(painter, cell.lane, cell.active and not cell.leaf, x, middle, bottom)
        for lane in cell.forks:
            path = QPainterPath(QPointF(x, middle))
            end = QPointF(left + lane_x(lane), bottom)
            path.cubicTo(QPointF(x, bottom), QPointF(end.x(), middle), end)
            painter.setPen(QPen(lane_colour(lane), 1.6))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawPath(path)
        self._mark(painter, cell, QPointF(x, middle))
        widest = max((min(cell.width, TEXT_COLUMN_LANES) - 1, cell.lane, *cell.through, *cell.forks))
        text_left = int(left + lane_x(widest) + LANE_WIDTH)
        text_rect = rect.adjusted(text_left - rect.left(), 0, -4, 0)
        text_colour = palette.highlightedText().color() if selected else palette.text().color()
        if cell.label:
            text_rect = self._tag(painter, option.font, cell.label, text_rect)
        font = QFont(option.font)
        if cell.leaf:
            font.setBold(True)
        if cell.kind == "fold":
            font.setItalic(True)
        painter.setFont(font)
        colour = _KIND_COLOURS.get(cell.kind)
        painter.setPen(colour if colour is not None and not selected else text_colour)
        metrics = QFontMetrics(font)
        text = metrics.elidedText(
            cell.text.replace("\n", " "), Qt.TextElideMode.ElideRight, text_rect.width()
        )
        painter.drawText(text_rect, int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft), text)
        painter.restore()

    @staticmethod
    def _line(painter: QPainter, lane: int, bold: bool, x: float, y1: float, y2: float) -> None:
        painter.setPen(QPen(lane_colour(lane), 3.0 if bold else 1.6))
        painter.drawLine(QPointF(x, y1), QPointF(x, y2))

    @staticmethod
    def _mark(painter: QPainter, cell: GraphCell, centre: QPointF) -> None:
        colour = _KIND_COLOURS.get(cell.kind, lane_colour(cell.lane))
        r = MARK_RADIUS
        painter.setPen(QPen(colour, 1.8))
        painter.setBrush(colour)
        kind = cell.kind
        if kind == "user":
            painter.drawEllipse(centre, r, r)
        elif kind == "assistant":
            painter.setBrush(QColor(255, 255, 255))
            painter.drawEllipse(centre, r, r)
        elif kind == "tool":
            painter.drawRect(QRectF(centre.x() - 3, centre.y() - 3, 6, 6))
        elif kind == "summary":
            painter.drawPolygon(
                QPolygonF([centre + QPointF(0, -r - 1), centre + QPointF(r + 1, 0),
                           centre + QPointF(0, r + 1), centre + QPointF(-r - 1, 0)])
            )  # fmt: skip
        elif kind == "compaction":
            painter.drawPolygon(
                QPolygonF([centre + QPointF(0, -r - 1), centre + QPointF(r + 1, r),
                           centre + QPointF(-r - 1, r)])
            )  # fmt: skip
        elif kind == "fold":
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(lane_colour(cell.lane))
            for dy in (-4.0, 0.0, 4.0):
                painter.drawEllipse(centre + QPointF(0, dy), 1.4, 1.4)
        else:
            painter.drawEllipse(centre, 2.5, 2.5)
        if cell.leaf:
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.setPen(QPen(colour, 1.4))
            painter.drawEllipse(centre, r + 3.5, r + 3.5)

    @staticmethod
    def _tag(painter: QPainter, font: QFont, label: str, rect: QRect) -> QRect:
        tag_font = QFont(font)
        tag_font.setPointSizeF(max(6.0, font.pointSizeF() - 1))
        tag_font.setBold(True)
        metrics = QFontMetrics(tag_font)
        width = metrics.horizontalAdvance(label) + 10
        height = metrics.height() + 2
        box = QRectF(rect.left(), rect.center().y() - height / 2 + 1, width, height)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(_TAG_FILL)
        painter.drawRoundedRect(box, 4, 4)
        painter.setFont(tag_font)
        painter.setPen(_TAG_TEXT)
        painter.drawText(box, int(Qt.AlignmentFlag.AlignCenter), label)
        return rect.adjusted(int(width) + 6, 0, 0, 0)
