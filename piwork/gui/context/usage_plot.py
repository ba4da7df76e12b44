"""Plot tab: context occupancy and billed tokens per request over the session, with the marks as lines.

Two separate series on one token axis — occupancy as a line (what each request held), billed tokens as
thin bars (what each call was charged: input + output + cache read + cache write) — never summed or
stacked. Painted with QPainter: no charting dependency, and the colours follow the palette.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QPainter, QPainterPath, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from piwork.core.context import BilledSample, Marks, OccupancySample
from piwork.gui.context.colors import mark_color, series_color
from piwork.gui.context.reading import compact_tokens

MARGIN_LEFT = 52.0
MARGIN_RIGHT = 12.0
MARGIN_TOP = 26.0  # one legend line; more when the legend wraps in a narrow panel
MARGIN_BOTTOM = 24.0
LEGEND_TOP = 6.0
# Each series' legend title, long then short: the short one where the long one does not fit on a line.
LEGEND = (
    ("occupancy", ("context occupancy per request", "occupancy")),
    ("billed", ("billed tokens per request", "billed")),
)
SWATCH = 14.0  # the colour square and the space after it
LEGEND_GAP = 18.0


def billed_tokens(sample: BilledSample) -> int:
    return sample.input + sample.output + sample.cache_read + sample.cache_write


AXIS_STEPS = 4  # labelled divisions of the token axis


def nice_step(raw: float) -> float:
    """The smallest round step (1, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a power of ten) of at least ``raw``,
    so the axis reads 30k, 60k, 90k, 120k rather than 27.6k, 55.2k..."""
    power = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
    for factor in (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        if factor * power >= raw:
            return factor * power
    return 10 * power


class UsagePlot(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("usagePlot")
        self.occupancy: list[OccupancySample] = []
        self.billed: list[BilledSample] = []
        self.marks: Marks | None = None
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    def sizeHint(self) -> QSize:
        return QSize(520, 260)

    def minimumSizeHint(self) -> QSize:
        return QSize(160, 140)

    def set_series(
        self, occupancy: Sequence[OccupancySample], billed: Sequence[BilledSample], marks: Marks | None
    ) -> None:
        self.occupancy = list(occupancy)
        self.billed = list(billed)
        self.marks = marks
        self.update()

    # ---- geometry ---------------------------------------------------------------------------------

    def legend_items(self) -> list[tuple[str, str, QPointF]]:
        """(series, title, top-left of its swatch): entries flow left to right and wrap onto a new line
        when the plot is narrow; a title too long for a line alone is shortened."""
        metrics = self.fontMetrics()
        left, right = MARGIN_LEFT, self.width() - MARGIN_RIGHT
        line_height = max(metrics.height(), 14) + 2
        x, y = left, LEGEND_TOP
        items: list[tuple[str, str, QPointF]] = []
        for key, (long_title, short_title) in LEGEND:
            title = (
                long_title if SWATCH + metrics.horizontalAdvance(long_title) <= right - left else short_title
            )
            width = SWATCH + metrics.horizontalAdvance(title)
            if x > left and x + width > right:
                x, y = left, y + line_height
            items.append((key, title, QPointF(x, y)))
            x += width + LEGEND_GAP
        return items

    def _top_margin(self) -> float:
        last_line = max(item[2].y() for item in self.legend_items())
        return MARGIN_TOP + (last_line - LEGEND_TOP)

    def plot_rect(self) -> QRectF:
        top = self._top_margin()
        return QRectF(
            MARGIN_LEFT,
            top,
            max(1.0, self.width() - MARGIN_LEFT - MARGIN_RIGHT),
            max(1.0, self.height() - top - MARGIN_BOTTOM),
        )

    def requests(self) -> int:
        return max(len(self.occupancy), len(self.billed))

    def y_max(self) -> float:
        """Top of the token axis: above every point, and high enough to show the pressure mark."""
        values = [s.tokens for s in self.occupancy] + [billed_tokens(s) for s in self.billed]
        top = max(values, default=0) * 1.15
        if self.marks is not None:
            top = max(top, self.marks.pressure * 1.08)
        return AXIS_STEPS * nice_step(max(top, 1.0) / AXIS_STEPS)

    def visible_marks(self) -> dict[str, int]:
        if self.marks is None:
            return {}
        out = {
            "pressure": self.marks.pressure,
            "ceiling": self.marks.ceiling,
            "compaction": self.marks.compaction_threshold,
        }
        if self.marks.pricing is not None:
            out["pricing"] = self.marks.pricing
        top = self.y_max()
        return {k: v for k, v in out.items() if v <= top}

    def y_for(self, tokens: float) -> float:
        rect = self.plot_rect()
        return rect.bottom() - min(1.0, tokens / self.y_max()) * rect.height()

    def x_for(self, request: int) -> float:
        """Centre of request ``request`` (0-based) along the axis."""
        rect = self.plot_rect()
        count = max(1, self.requests())
        return rect.left() + (request + 0.5) * rect.width() / count

    def occupancy_points(self) -> list[QPointF]:
        return [QPointF(self.x_for(i), self.y_for(s.tokens)) for i, s in enumerate(self.occupancy)]

    # ---- painting ---------------------------------------------------------------------------------

    def paintEvent(self, _event: QPaintEvent) -> None:
        painter = QPainter(self)
        palette = self.palette()
        rect = self.plot_rect()
        text_color = palette.color(QPalette.ColorRole.WindowText)
        painter.fillRect(rect, palette.color(QPalette.ColorRole.Base))
        painter.setPen(QPen(palette.color(QPalette.ColorRole.Mid), 1))
        painter.drawRect(rect)
        self._paint_axis(painter, rect, palette)
        self._paint_marks(painter, rect, palette)
        count = self.requests()
        if count == 0:
            painter.setPen(text_color)
            painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, "No requests yet in this session")
            painter.end()
            return
        slot = rect.width() / count
        bar_width = max(1.0, min(14.0, slot * 0.35))
        billed_color = series_color("billed", palette)
        for i, sample in enumerate(self.billed):
            x = self.x_for(i) + bar_width * 0.2
            top = self.y_for(billed_tokens(sample))
            painter.fillRect(QRectF(x, top, bar_width, rect.bottom() - top), billed_color)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        points = self.occupancy_points()
        occupancy_color = series_color("occupancy", palette)
        if points:
            path = QPainterPath(points[0])
            for point in points[1:]:
                path.lineTo(point)
            painter.setPen(QPen(occupancy_color, 2))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawPath(path)
            painter.setBrush(occupancy_color)
            radius = 2.5 if len(points) < 80 else 1.5
            for point in points:
                painter.drawEllipse(point, radius, radius)
        self._paint_legend(painter, palette)
        painter.end()

    def _paint_axis(self, painter: QPainter, rect: QRectF, palette: QPalette) -> None:
        painter.setPen(palette.color(QPalette.ColorRole.PlaceholderText))
        metrics = painter.fontMetrics()
        top = self.y_max()
        for step in range(AXIS_STEPS + 1):
            value = top * step / AXIS_STEPS
            y = self.y_for(value)
            label = compact_tokens(value)
            painter.drawText(
                QPointF(rect.left() - 6 - metrics.horizontalAdvance(label), y + metrics.ascent() / 2 - 1),
                label,
            )
        count = self.requests()
        if count:
            painter.drawText(QPointF(rect.left(), rect.bottom() + metrics.ascent() + 4), "request 1")
            last = f"{count}"
            painter.drawText(
                QPointF(rect.right() - metrics.horizontalAdvance(last), rect.bottom() + metrics.ascent() + 4),
                last,
            )

    def _paint_marks(self, painter: QPainter, rect: QRectF, palette: QPalette) -> None:
        metrics = painter.fontMetrics()
        for key, value in self.visible_marks().items():
            y = round(self.y_for(value))
            pen = QPen(mark_color(key, palette), 1, Qt.PenStyle.DashLine)
            painter.setPen(pen)
            painter.drawLine(QPointF(rect.left(), y), QPointF(rect.right(), y))
            label = f"{key} {compact_tokens(value)}"
            painter.drawText(QPointF(rect.right() - metrics.horizontalAdvance(label) - 4, y - 3), label)

    def _paint_legend(self, painter: QPainter, palette: QPalette) -> None:
        metrics = painter.fontMetrics()
        for key, title, corner in self.legend_items():
            painter.fillRect(QRectF(corner.x(), corner.y() + 3, 10, 10), series_color(key, palette))
            painter.setPen(palette.color(QPalette.ColorRole.WindowText))
            painter.drawText(QPointF(corner.x() + SWATCH, corner.y() + metrics.ascent()), title)
