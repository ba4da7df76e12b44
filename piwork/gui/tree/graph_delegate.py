"""Paints one row of the branch graph: lane lines, fork curves, the entry's mark, its labels and title.

Every row has the same height (the view asks for uniform sizes), so a 100k-row graph costs only the
rows on screen, and a row only the lanes within its width (`last_lane`). Marks: user ● filled circle,
assistant ○ ring, tool ▪ small square, branch summary ◆ diamond, compaction ▲ triangle, other messages
• dot, a fold ⋮. The leaf gets an outer ring; the active path's lane is drawn thicker and its rows are
tinted. A dashed connector in the summary colour runs from the tip of each summarised branch, right of
the lanes, to the arrowhead at its summary; each overlapping connector has a column of its own,
narrower than a lane. When the columns would take more than a share of the view's width, the last
column drawn is a thicker *bundle* holding the rest, with a badge counting the connectors it holds
where one of them joins or leaves it. A graph with more lanes than a share of the view's width draws
them closer together (`fit`), so titles keep room in a narrow dock.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, QPointF, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPainterPath, QPen, QPolygonF
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

if TYPE_CHECKING:
    from piwork.gui.tree.graph_model import GraphCell

LANE_WIDTH = 16
MIN_LANE_WIDTH = 10
LANE_SHARE = 0.4  # lanes narrow down to fit this share of the view's width (not below MIN_LANE_WIDTH)
LINK_PITCH = 8  # width of a summary connector's column
LINK_SHARE = 0.3  # at most this share of what the lanes leave goes to connector columns
MIN_LINK_COLUMNS = 3
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


def lane_x(lane: int, pitch: float = LANE_WIDTH) -> float:
    return pitch * lane + pitch / 2 + 2


def last_lane(width: float, pitch: float = LANE_WIDTH) -> int:
    """The last lane whose line can show in a row `width` pixels wide; a row draws the lines passing it
    (sorted by lane) only up to there. A session with thousands of side branches has thousands of lines
    passing each row, nearly all right of the view: drawing them all made each repaint of the graph
    most of a second of the GUI thread, and what it was to do next (show the selected entry's text)
    waited for it."""
    return int((width - pitch / 2) // pitch)  # its line at most 2 px right of the row's edge


def link_x(base: int, column: int, pitch: float = LANE_WIDTH) -> float:
    """The x of connector column `column` right of `base` lanes `pitch` pixels apart."""
    return pitch * base + 6 + LINK_PITCH * column + LINK_PITCH / 2


@dataclass(frozen=True)
class Fit:
    """How a graph of `lanes` lanes is drawn in a view of a given width."""

    lane_width: float
    link_columns: int  # at most this many connector columns (the last one bundles the rest)


def fit(view_width: int, lanes: int) -> Fit:
    room = view_width * LANE_SHARE
    pitch = float(LANE_WIDTH) if lanes * LANE_WIDTH <= room else max(MIN_LANE_WIDTH, room / max(lanes, 1))
    free = view_width - pitch * min(lanes, TEXT_COLUMN_LANES)
    return Fit(pitch, max(MIN_LINK_COLUMNS, int(free * LINK_SHARE) // LINK_PITCH))


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
        self.lane_width = float(LANE_WIDTH)  # set by the view (see `fit`)
        self._link_pen = QPen(_KIND_COLOURS["summary"], 1.4, Qt.PenStyle.DashLine)
        self._bundle_pen = QPen(_KIND_COLOURS["summary"], 3.0, Qt.PenStyle.DashLine)

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
        from piwork.gui.tree.graph_model import GRAPH_ROLE, GraphCell  # loaded with the first tree shown

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
        pitch = self.lane_width
        for lane in cell.through[: bisect_right(cell.through, last_lane(rect.width(), pitch))]:
            x = left + lane_x(lane, pitch)
            painter.setPen(self._pen(lane, lane in cell.through_active))
            painter.drawLine(QPointF(x, top), QPointF(x, bottom))
        x = left + lane_x(cell.lane, pitch)
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
                end_x = left + lane_x(lane, pitch)
                path.cubicTo(QPointF(x, bottom), QPointF(end_x, middle), QPointF(end_x, bottom))
                painter.setPen(self._pen(lane, lane in cell.active_forks))
                painter.drawPath(path)
        links_right = self._links(painter, fonts, cell, left, x, top, middle, bottom)
        self._mark(painter, cell, QPointF(x, middle))
        text_rect = rect.adjusted(int(max(self._graph_right(cell), links_right) + 8), 0, -4, 0)
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

    def _graph_right(self, cell: GraphCell) -> float:
        """Where the graph ends on a row: after the lanes (titles line up after `TEXT_COLUMN_LANES` of
        them) and the connector columns, further where this row's own lines reach."""
        lanes = min(cell.width, TEXT_COLUMN_LANES)
        widest = max((lanes - 1, cell.lane, *cell.through, *cell.forks))
        pitch = self.lane_width
        right = lane_x(widest, pitch) + pitch / 2
        if cell.link_width and cell.link_base <= TEXT_COLUMN_LANES:
            right = max(right, link_x(cell.link_base, cell.link_width - 1, pitch) + LINK_PITCH / 2)
        return right

    def _links(
        self,
        painter: QPainter,
        fonts: _Fonts,
        cell: GraphCell,
        left: float,
        mark_x: float,
        top: float,
        middle: float,
        bottom: float,
    ) -> float:
        """Summary connectors touching the row; returns how far right they (and a badge) reach."""
        links = cell.links
        if not links.passing and not links.ends:
            return 0.0
        painter.setBrush(Qt.BrushStyle.NoBrush)
        base, pitch = cell.link_base, self.lane_width
        right = 0.0
        for column in links.passing:
            x = left + link_x(base, column, pitch)
            painter.setPen(self._bundle_pen if column == links.bundle else self._link_pen)
            painter.drawLine(QPointF(x, top), QPointF(x, bottom))
            right = max(right, x + LINK_PITCH / 2 - left)
        bend = 4.0
        for end in links.ends:
            x = left + link_x(base, end.column, pitch)
            start = mark_x + (MARK_RADIUS + (7 if end.at_summary else 4))
            towards = bottom if end.downward else top
            turn = middle + (bend if end.downward else -bend)
            path = QPainterPath(QPointF(start, middle))
            path.lineTo(QPointF(x - bend, middle))
            path.quadTo(QPointF(x, middle), QPointF(x, turn))
            path.lineTo(QPointF(x, towards))
            painter.setPen(self._link_pen)
            painter.drawPath(path)
            if end.column == links.bundle:  # the bundle itself runs on thicker above or below
                painter.setPen(self._bundle_pen)
                painter.drawLine(QPointF(x, turn), QPointF(x, towards))
            right = max(right, x + LINK_PITCH / 2 - left)
            if end.at_summary:  # an arrowhead pointing at the summary's mark
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(_KIND_COLOURS["summary"])
                painter.drawPolygon(
                    QPolygonF([QPointF(start - 3, middle), QPointF(start + 3, middle - 3.5),
                               QPointF(start + 3, middle + 3.5)])
                )  # fmt: skip
                painter.setBrush(Qt.BrushStyle.NoBrush)
        if links.bundled > 1 and any(end.column == links.bundle for end in links.ends):
            right = max(
                right,
                self._badge(painter, fonts, links.bundled, left + link_x(base, links.bundle, pitch), middle)
                - left,
            )
        return right

    @staticmethod
    def _badge(painter: QPainter, fonts: _Fonts, count: int, x: float, middle: float) -> float:
        """The count of connectors in the bundle, just right of it; returns the badge's right edge."""
        text = str(count)
        width = fonts.tag_metrics.horizontalAdvance(text) + 8
        height = fonts.tag_metrics.height()
        box = QRectF(x + LINK_PITCH / 2 + 1, middle - height / 2, width, height)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(_KIND_COLOURS["summary"])
        painter.drawRoundedRect(box, height / 2, height / 2)
        painter.setFont(fonts.tag)
        painter.setPen(QColor(255, 255, 255))
        painter.drawText(box, int(Qt.AlignmentFlag.AlignCenter), text)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        return box.right()

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
