"""The budget meter bar, painted with QPainter.

The bar spans the model's context window. Left to right: the working set as stacked segments (system
prompt, tool schemas, context bundle, messages); after it, a ghost segment for the tokens the governor's
projection left out; the pricing zone hatched from its mark to the end; vertical marks for pressure
(amber), ceiling (orange) and the compaction threshold (red). QPainter keeps it dependency-free and
crisp at any device pixel ratio, with colours chosen from the widget's palette (light or dark).
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QKeyEvent, QMouseEvent, QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from piwork.gui.context.colors import mark_color, segment_color
from piwork.gui.context.reading import SEGMENT_TITLES, MeterReading, compact_tokens
from piwork.gui.inert_text import plain_tip

MARK_TITLES = {
    "pressure": "pressure",
    "ceiling": "ceiling",
    "compaction": "compaction",
    "pricing": "pricing zone",
}


class BudgetMeter(QWidget):
    """Paints one ``MeterReading``. ``labelled`` adds mark captions under the bar (popover size)."""

    clicked = Signal()

    def __init__(self, parent: QWidget | None = None, *, labelled: bool = False) -> None:
        super().__init__(parent)
        self.setObjectName("budgetMeter")
        self.reading = MeterReading()
        self.labelled = labelled
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setCursor(Qt.CursorShape.PointingHandCursor if not labelled else Qt.CursorShape.ArrowCursor)
        self.setMouseTracking(False)
        if not labelled:  # the footer's meter opens its details from the keyboard too (Space or Enter)
            self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
            self.setAccessibleName("Context budget")
            self.setAccessibleDescription("How full the next request is; Space or Enter opens the details")

    # ---- state ----------------------------------------------------------------------------------

    def set_reading(self, reading: MeterReading) -> None:
        if reading != self.reading:
            self.reading = reading
            self.setToolTip(plain_tip(self.tooltip_text()))
            self.update()

    def sizeHint(self) -> QSize:
        return QSize(460, 64) if self.labelled else QSize(180, 14)

    def minimumSizeHint(self) -> QSize:
        return QSize(200, 40) if self.labelled else QSize(90, 12)

    # ---- geometry (also what tests check) ---------------------------------------------------------

    def bar_rect(self) -> QRectF:
        height = 16.0 if self.labelled else min(12.0, float(self.height()))
        top = 2.0 if self.labelled else (self.height() - height) / 2
        return QRectF(1.0, top, max(1.0, self.width() - 2.0), height)

    def x_for(self, tokens: float) -> float:
        rect = self.bar_rect()
        window = self.reading.window
        if window <= 0:
            return rect.left()
        share = min(1.0, max(0.0, tokens / window))
        return rect.left() + share * rect.width()

    def mark_positions(self) -> dict[str, float]:
        """x of each visible mark (pressure, ceiling, compaction, pricing) in widget coordinates."""
        marks = self.reading.marks
        if marks is None or self.reading.window <= 0:
            return {}
        out = {
            "pressure": self.x_for(marks.pressure),
            "ceiling": self.x_for(marks.ceiling),
            "compaction": self.x_for(marks.compaction_threshold),
        }
        if marks.pricing is not None and marks.pricing < self.reading.window:
            out["pricing"] = self.x_for(marks.pricing)
        return out

    def segment_spans(self) -> list[tuple[str, float, float]]:
        """(segment key, x start, x end) of the stacked working set, then ``("elided", …)`` for the ghost."""
        spans: list[tuple[str, float, float]] = []
        position = 0.0
        for key, tokens in self.reading.scaled_segments():
            start, position = position, position + tokens
            spans.append((key, self.x_for(start), self.x_for(position)))
        if self.reading.elided > 0:
            spans.append(("elided", self.x_for(position), self.x_for(position + self.reading.elided)))
        return spans

    # ---- text -----------------------------------------------------------------------------------

    def tooltip_text(self) -> str:
        r = self.reading
        if r.window <= 0:
            return "No model selected"
        lines = [f"Context: {r.label()} ({r.percent_text()})"]
        lines += [f"  {SEGMENT_TITLES[k]}: {compact_tokens(v)}" for k, v in r.segments.items()]
        if r.elided:
            lines.append(f"  elided by the governor: {compact_tokens(r.elided)}")
        if r.marks is not None:
            m = r.marks
            lines.append(
                f"Marks: pressure {compact_tokens(m.pressure)}, ceiling {compact_tokens(m.ceiling)}, "
                f"compaction {compact_tokens(m.compaction_threshold)}"
                + (f", pricing {compact_tokens(m.pricing)}" if m.pricing is not None else "")
            )
        lines.append("Click for details")
        return "\n".join(lines)

    # ---- painting -------------------------------------------------------------------------------

    def paintEvent(self, _event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        palette = self.palette()
        rect = self.bar_rect()
        painter.fillRect(rect, palette.color(QPalette.ColorRole.Base))
        self._paint_pricing_zone(painter, rect, palette)
        for key, start, end in self.segment_spans():
            span = QRectF(start, rect.top(), max(0.0, end - start), rect.height())
            if key == "elided":
                ghost = QColor(segment_color("messages", palette))
                ghost.setAlpha(55)
                painter.fillRect(span, ghost)
                pen = QPen(segment_color("messages", palette), 1, Qt.PenStyle.DashLine)
                painter.setPen(pen)
                painter.drawRect(span.adjusted(0, 0, -1, -1))
            else:
                painter.fillRect(span, segment_color(key, palette))
        painter.setPen(QPen(palette.color(QPalette.ColorRole.Mid), 1))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRect(rect.adjusted(0, 0, -1, -1))
        self._paint_marks(painter, rect, palette)
        if self.hasFocus():  # keyboard users see where they are
            painter.setPen(QPen(palette.color(QPalette.ColorRole.Highlight), 2))
            painter.drawRect(rect.adjusted(-1, -1, 0, 0))
        painter.end()

    def _paint_pricing_zone(self, painter: QPainter, rect: QRectF, palette: QPalette) -> None:
        x = self.mark_positions().get("pricing")
        if x is None:
            return
        zone = QRectF(x, rect.top(), rect.right() - x, rect.height())
        tint = QColor(mark_color("pricing", palette))
        tint.setAlpha(40)
        painter.fillRect(zone, tint)
        hatch = QBrush(mark_color("pricing", palette), Qt.BrushStyle.BDiagPattern)
        painter.fillRect(zone, hatch)

    def _paint_marks(self, painter: QPainter, rect: QRectF, palette: QPalette) -> None:
        top = rect.top() - (0 if self.labelled else 1)
        bottom = rect.bottom() + (4 if self.labelled else 1)
        positions = self.mark_positions()
        drawn: list[float] = []
        for key in ("pressure", "ceiling", "compaction", "pricing"):
            x = positions.get(key)
            if x is None:
                continue
            x = round(x)
            while any(abs(x - other) < 2 for other in drawn):  # equal marks side by side, all visible
                x += 2
            drawn.append(x)
            pen = QPen(mark_color(key, palette), 2)
            pen.setCapStyle(Qt.PenCapStyle.FlatCap)
            painter.setPen(pen)
            painter.drawLine(QPointF(x, top), QPointF(x, bottom))
        if self.labelled:
            self._paint_captions(painter, rect, palette, positions)

    def _paint_captions(
        self, painter: QPainter, rect: QRectF, palette: QPalette, positions: dict[str, float]
    ) -> None:
        """Each mark's name and value under the bar; a caption that would overlap goes one line lower."""
        marks = self.reading.marks
        if marks is None:
            return
        values = {
            "pressure": marks.pressure,
            "ceiling": marks.ceiling,
            "compaction": marks.compaction_threshold,
            "pricing": marks.pricing or 0,
        }
        metrics = painter.fontMetrics()
        baseline = rect.bottom() + 6 + metrics.ascent()
        rows: list[list[tuple[float, float]]] = []
        for keys in _coinciding(positions):
            names = " = ".join(MARK_TITLES[k] for k in keys)
            text = f"{names} {compact_tokens(values[keys[0]])}"
            width = float(metrics.horizontalAdvance(text))
            left = min(max(0.0, positions[keys[0]] - width / 2), self.width() - width - 1.0)
            row = 0
            while row < len(rows) and any(not (left + width + 6 < a or left > b + 6) for a, b in rows[row]):
                row += 1
            if row == len(rows):
                rows.append([])
            rows[row].append((left, left + width))
            painter.setPen(mark_color(keys[-1], palette))
            painter.drawText(QPointF(left, baseline + row * metrics.height()), text)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if not self.labelled and event.key() in (Qt.Key.Key_Space, Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.clicked.emit()
            return
        super().keyPressEvent(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self.clicked.emit()
        super().mousePressEvent(event)


def _coinciding(positions: dict[str, float]) -> list[list[str]]:
    """Mark keys grouped by position (marks of equal value share one caption), left to right."""
    groups: list[list[str]] = []
    for key in sorted(positions, key=lambda k: positions[k]):
        if groups and abs(positions[groups[-1][0]] - positions[key]) < 0.5:
            groups[-1].append(key)
        else:
            groups.append([key])
    return groups
