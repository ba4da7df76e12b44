"""The budget meter's detail popover: the bar at full width with its marks named, each segment's tokens and
share, the governor's elided tokens, and billed traffic in a separate box below (never on the bar)."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtGui import QColor, QPixmap
from PySide6.QtWidgets import QFrame, QGridLayout, QGroupBox, QLabel, QPushButton, QVBoxLayout, QWidget

from piwork.gui.context.budget_meter import BudgetMeter
from piwork.gui.context.colors import segment_color
from piwork.gui.context.reading import (
    SEGMENT_TITLES,
    BilledFigures,
    MeterReading,
    compact_tokens,
    format_cost,
)

ZONE_TEXT = {
    "ok": "below the pressure mark",
    "pressure": "past the pressure mark: the governor may project a smaller working set",
    "over-ceiling": "past the prompt ceiling: the governor elides whatever it may",
    "pricing-zone": "in the pricing zone: requests here cost more per token",
    "overflow": "past the compaction threshold: host compaction will run",
}


def _swatch(color: QColor) -> QLabel:
    pixmap = QPixmap(10, 10)
    pixmap.fill(color)
    label = QLabel()
    label.setPixmap(pixmap)
    return label


class MeterPopover(QFrame):
    contextPanelRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Popup)
        self.setObjectName("meterPopover")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.meter = BudgetMeter(self, labelled=True)
        self.headline = QLabel(self)
        self.headline.setObjectName("meterHeadline")
        self.zone_label = QLabel(self)
        self.zone_label.setWordWrap(True)
        self.segments_box = QGridLayout()
        self.segments_box.setHorizontalSpacing(10)
        working = QGroupBox("Next request (context occupancy)", self)
        working_layout = QVBoxLayout(working)
        working_layout.addWidget(self.headline)
        working_layout.addWidget(self.meter)
        working_layout.addLayout(self.segments_box)
        working_layout.addWidget(self.zone_label)
        self.billed_label = QLabel(self)
        self.billed_label.setObjectName("billedDetail")
        self.billed_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        billed = QGroupBox("Billed traffic (provider usage)", self)
        billed_layout = QVBoxLayout(billed)
        billed_layout.addWidget(self.billed_label)
        self.panel_button = QPushButton("Open the Context panel (Alt+4)", self)
        self.panel_button.clicked.connect(self._open_panel)
        layout = QVBoxLayout(self)
        layout.addWidget(working)
        layout.addWidget(billed)
        layout.addWidget(self.panel_button, 0, Qt.AlignmentFlag.AlignRight)
        self.setMinimumWidth(520)

    def show_figures(self, reading: MeterReading, billed: BilledFigures) -> None:
        self.meter.set_reading(reading)
        percent = reading.percent_text()
        self.headline.setText(f"<b>{reading.label()}</b>" + (f" — {percent}" if percent else ""))
        while self.segments_box.count():
            item = self.segments_box.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        total = reading.segments.total or 1
        rows = [(k, v) for k, v in reading.segments.items()]
        for row, (key, tokens) in enumerate(rows):
            self.segments_box.addWidget(_swatch(segment_color(key, self.palette())), row, 0)
            self.segments_box.addWidget(QLabel(SEGMENT_TITLES[key]), row, 1)
            value = QLabel(f"{compact_tokens(tokens)}  ({100 * tokens / total:.0f}%)")
            value.setAlignment(Qt.AlignmentFlag.AlignRight)
            self.segments_box.addWidget(value, row, 2)
        if reading.elided:
            row = len(rows)
            ghost = QColor(segment_color("messages", self.palette()))
            ghost.setAlpha(70)
            self.segments_box.addWidget(_swatch(ghost), row, 0)
            self.segments_box.addWidget(QLabel("Elided by the governor (ghost)"), row, 1)
            value = QLabel(compact_tokens(reading.elided))
            value.setAlignment(Qt.AlignmentFlag.AlignRight)
            self.segments_box.addWidget(value, row, 2)
        self.zone_label.setText(
            f"Counted {reading.source_label}. Now {ZONE_TEXT.get(reading.zone, reading.zone)}."
            if reading.window > 0
            else "No model selected."
        )
        detail = billed.session_detail
        parts = ", ".join(
            f"{name} {compact_tokens(detail.get(key, 0))}"
            for key, name in (
                ("input", "input"),
                ("output", "output"),
                ("cacheRead", "cache read"),
                ("cacheWrite", "cache write"),
            )
        )
        self.billed_label.setText(
            f"This session: {compact_tokens(billed.session_tokens)} tokens, "
            f"{format_cost(billed.session_cost)}\n  {parts}\n"
            f"Today (all sessions): {compact_tokens(billed.today_tokens)} tokens, {format_cost(billed.today_cost)}"
        )

    def _open_panel(self) -> None:
        self.close()
        self.contextPanelRequested.emit()

    def popup_at(self, anchor: QWidget) -> None:
        """Open above ``anchor`` (the footer meter), kept on screen."""
        self.adjustSize()
        below = anchor.mapToGlobal(QPoint(anchor.width() - self.width(), -self.height() - 4))
        screen = anchor.screen().availableGeometry() if anchor.screen() is not None else None
        if screen is not None:
            below.setX(max(screen.left(), min(below.x(), screen.right() - self.width())))
            below.setY(max(screen.top(), below.y()))
        self.move(below)
        self.show()
