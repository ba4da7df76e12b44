"""Paints one row of the branch graph: lane lines, fork curves, the entry's mark, its labels and title.

Every row has the same height (the view asks for uniform sizes), so a 100k-row graph costs only the
rows on screen. Marks: user ● filled circle, assistant ○ ring, tool ▪ small square, branch summary ◆
diamond, compaction ▲ triangle, other messages • dot, a fold ⋮. The leaf gets an outer ring; the
active path's lane is drawn thicker and its rows are tinted. A dashed connector in the summary colour
runs from the tip of each summarised branch, right of the lanes, to the arrowhead at its summary.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, QPointF, QRect, QRectF, QSize, Qt
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
_TEXT_FLAGS = int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft | Qt.TextFlag.TextSingleLine)


def lane_colour(lane: int) -> QColor:
    return _LANE_COLOURS[lane % len(_LANE_COLOURS)]


def lane_x(lane: int) -> float:
    return LANE_WIDTH * lane + LANE_WIDTH / 2 + 2


@dataclass
class _Fonts:
    """Fonts and metrics for one view font, made once (a paint must not allocate them per row)."""

    plain: QFont
    bold: QFont
    italic: QFont
    tag: QFont
    metrics: QFontMetrics
    bold_metrics: QFontMetrics
    tag_metrics: QFontMetrics

    @staticmethod
    def of(font: QFont) -> _Fonts:
        font = QFont(font)  # a copy: the option's font dies with the option
        bold, italic, tag = QFont(font), QFont(font), QFont(font)
        bold.setBold(True)
        italic.setItalic(True)
        tag.setPointSizeF(max(6.0, font.pointSizeF() - 1))
        tag.setBold(True)
        return _Fonts(font, bold, italic, tag, QFontMetrics(font), QFontMetrics(bold), QFontMetrics(tag))


class GraphDelegate(QStyledItemDelegate):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._fonts: dict[str, _Fonts] = {}
        self._pens: dict[tuple[int, bool], QPen] = {}
        self._link_pen = QPen(_KIND_COLOURS["summary"], 1.4, Qt.PenStyle.DashLine)

    def _fonts_for(self, font: QFont) -> _Fonts:
        key = font.key()
        found = self._fonts.get(key)
        if found is None:
            found = self._fonts[key] = _Fonts.of(font)
        return found

    def _pen(self, lane: int, bold: bool) -> QPen:
        pen = self._pens.get((lane, bold))
        if pen is None:
            pen = self._pens[(lane, bold)] = QPen(lane_colour(lane), 3.0 if bold else 1.6)
        return pen

    def row_height(self, font: QFont) -> int:
        return self._fonts_for(font).metrics.height() + 8

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        return QSize(200, self.row_height(option.font))

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        cell = index.data(GRAPH_ROLE)
        if not isinstance(cell, GraphCell):
            super().paint(painter, option, index)
            return
        rect = option.rect
        palette = option.palette
        fonts = self._fonts_for(option.font)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
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
            x = left + lane_x(lane)
            painter.setPen(self._pen(lane, lane in cell.through_active))
            painter.drawLine(QPointF(x, top), QPointF(x, bottom))
        x = left + lane_x(cell.lane)
        if cell.up:
            painter.setPen(self._pen(cell.lane, cell.active))
            painter.drawLine(QPointF(x, top), QPointF(x, middle))
        if cell.down:
            painter.setPen(self._pen(cell.lane, cell.down_active))
            painter.drawLine(QPointF(x, middle), QPointF(x, bottom))
        if cell.forks:
            painter.setBrush(Qt.BrushStyle.NoBrush)
            for lane in cell.forks:
                path = QPainterPath(QPointF(x, middle))
                end_x = left + lane_x(lane)
                path.cubicTo(QPointF(x, bottom), QPointF(end_x, middle), QPointF(end_x, bottom))
                painter.setPen(self._pen(lane, lane in cell.active_forks))
                painter.drawPath(path)
        link_lanes = self._links(painter, cell, left, x, top, middle, bottom)
        self._mark(painter, cell, QPointF(x, middle))
        widest = max(
            (min(cell.width, TEXT_COLUMN_LANES) - 1, cell.lane, *cell.through, *cell.forks, *link_lanes)
        )
        text_rect = rect.adjusted(int(lane_x(widest) + LANE_WIDTH), 0, -4, 0)
        if cell.label:
            text_rect = self._tag(painter, fonts, cell.label, text_rect)
        font, metrics = fonts.plain, fonts.metrics
        if cell.leaf:
            font, metrics = fonts.bold, fonts.bold_metrics
        elif cell.kind == "fold":
            font = fonts.italic
        painter.setFont(font)
        colour = _KIND_COLOURS.get(cell.kind)
        if selected:
            painter.setPen(palette.highlightedText().color())
        else:
            painter.setPen(colour if colour is not None else palette.text().color())
        text = metrics.elidedText(cell.text, Qt.TextElideMode.ElideRight, text_rect.width())
        painter.drawText(text_rect, _TEXT_FLAGS, text)
        painter.restore()

    def _links(
        self,
        painter: QPainter,
        cell: GraphCell,
        left: float,
        mark_x: float,
        top: float,
        middle: float,
        bottom: float,
    ) -> tuple[int, ...]:
        """Summary connectors touching the row; returns the lanes (link columns) they take."""
        links = cell.links
        if not links.passing and not links.ends:
            return ()
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.setPen(self._link_pen)
        base = cell.link_base
        for column in links.passing:
            x = left + lane_x(base + column)
            painter.drawLine(QPointF(x, top), QPointF(x, bottom))
        bend = 5.0
        for end in links.ends:
            x = left + lane_x(base + end.column)
            start = mark_x + (MARK_RADIUS + (7 if end.at_summary else 4))
            towards = bottom if end.downward else top
            turn = middle + (bend if end.downward else -bend)
            path = QPainterPath(QPointF(start, middle))
            path.lineTo(QPointF(x - bend, middle))
            path.quadTo(QPointF(x, middle), QPointF(x, turn))
            path.lineTo(QPointF(x, towards))
            painter.drawPath(path)
            if end.at_summary:  # an arrowhead pointing at the summary's mark
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(_KIND_COLOURS["summary"])
                painter.drawPolygon(
                    QPolygonF([QPointF(start - 3, middle), QPointF(start + 3, middle - 3.5),
                               QPointF(start + 3, middle + 3.5)])
                )  # fmt: skip
                painter.setBrush(Qt.BrushStyle.NoBrush)
                painter.setPen(self._link_pen)
        return tuple(base + c for c in (*links.passing, *(e.column for e in links.ends)))

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
    def _tag(painter: QPainter, fonts: _Fonts, label: str, rect: QRect) -> QRect:
        width = fonts.tag_metrics.horizontalAdvance(label) + 10
        height = fonts.tag_metrics.height() + 2
        box = QRectF(rect.left(), rect.center().y() - height / 2 + 1, width, height)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(_TAG_FILL)
        painter.drawRoundedRect(box, 4, 4)
        painter.setFont(fonts.tag)
        painter.setPen(_TAG_TEXT)
        painter.drawText(box, int(Qt.AlignmentFlag.AlignCenter), label)
        return rect.adjusted(width + 6, 0, 0, 0)
