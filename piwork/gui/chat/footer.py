"""Under the composer: model and thinking pickers, the budget meter and, beside it, billed traffic (the
window's only place for these figures; the status bar keeps trust and notices).

Context occupancy (the meter) and billed traffic (the label after it) are different series and are shown
apart, never summed. Clicking the meter opens its detail popover.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QHBoxLayout, QSizePolicy, QWidget

from piwork.gui.chat.approval_mode import ApprovalModeButton
from piwork.gui.chat.elided_label import ElidedLabel
from piwork.gui.chat.pickers import ModelPicker, ThinkingPicker
from piwork.gui.context.budget_meter import BudgetMeter
from piwork.gui.context.meter_popover import MeterPopover
from piwork.gui.context.reading import BilledFigures, MeterReading, compact_tokens, format_cost
from piwork.gui.inert_text import plain_tip


class ChatFooter(QWidget):
    contextPanelRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model_picker = ModelPicker(self)
        self.thinking_picker = ThinkingPicker(self)
        self.approval_mode = ApprovalModeButton(self)
        self.meter = BudgetMeter(self)
        self.meter.setMaximumWidth(220)
        # The meter keeps its usual width where there is room; a narrow window shrinks it with the figures.
        self.meter.setSizePolicy(QSizePolicy.Policy.Preferred, self.meter.sizePolicy().verticalPolicy())
        self.meter.setMinimumWidth(60)
        # Both labels elide in a narrow window (full text in the tooltip) instead of widening it.
        self.context_label = ElidedLabel(self)
        self.context_label.setObjectName("contextLabel")
        self.cost_label = ElidedLabel(self)
        self.cost_label.setObjectName("costLabel")
        # as wide as the figure usually gets, so the billed figure after it stays put as it changes
        self.context_label.reserve_width_of("context 888.8k / 888k · ≈ chars/4")
        self.cost_label.setToolTip(
            "Billed traffic: tokens and cost the provider reported, for this session and for today "
            "(all sessions). Not the context size."
        )
        self.popover: MeterPopover | None = None
        self.reading = MeterReading()
        self.billed = BilledFigures()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 0, 6, 2)
        layout.addWidget(self.model_picker)
        layout.addWidget(self.thinking_picker)
        layout.addWidget(self.approval_mode)
        # the meter right after the pickers and the figures after it, room to spare at the end: a figure
        # that grows moves nothing before it (and the context figure reserves its usual width)
        layout.addSpacing(12)
        layout.addWidget(self.meter)
        layout.addWidget(self.context_label)
        layout.addSpacing(12)
        layout.addWidget(self.cost_label)
        layout.addStretch(1)
        self.meter.clicked.connect(self.show_popover)
        self.set_reading(MeterReading())
        self.set_billed(BilledFigures())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit_approval_mode()

    def _fit_approval_mode(self) -> None:
        """The approval button says as much as the room the other parts leave (their usual widths)."""
        layout = self.layout()
        if layout is None:
            return
        others = (self.model_picker, self.thinking_picker, self.meter, self.context_label, self.cost_label)
        margins = layout.contentsMargins()
        used = sum(w.sizeHint().width() for w in others) + 24 + margins.left() + margins.right()
        used += layout.spacing() * (len(others) + 3)  # between the widgets and around the two spacings
        self.approval_mode.fit(self.width() - used)

    def set_reading(self, reading: MeterReading) -> None:
        self.reading = reading
        self.meter.set_reading(reading)
        self.meter.setAccessibleName("Context budget")
        self.meter.setAccessibleDescription(self.meter.tooltip_text())
        if reading.window > 0 and reading.occupancy is not None:
            figures = f"{compact_tokens(reading.occupancy)} / {compact_tokens(reading.window)}"
            shortest = compact_tokens(reading.occupancy)  # the bar beside it shows the share of the window
            self.context_label.setText(reading.label(), [f"context {figures}", figures, shortest])
        else:
            self.context_label.setText(reading.label() if reading.window > 0 else "context: —")
        self.context_label.setToolTip(plain_tip(self.meter.tooltip_text()))
        self._fit_approval_mode()
        if self.popover is not None and self.popover.isVisible():
            self.popover.show_figures(reading, self.billed)

    def set_billed(self, billed: BilledFigures) -> None:
        self.billed = billed
        cost = format_cost(billed.session_cost)
        tokens = f"{compact_tokens(billed.session_tokens)} tok · {cost}"
        self.cost_label.setText(billed.text(), [f"billed {tokens}", tokens, cost])
        if self.popover is not None and self.popover.isVisible():
            self.popover.show_figures(self.reading, billed)
        self._fit_approval_mode()

    def show_popover(self) -> MeterPopover:
        if self.popover is None:
            self.popover = MeterPopover(self)
            self.popover.contextPanelRequested.connect(self.contextPanelRequested)
        self.popover.show_figures(self.reading, self.billed)
        self.popover.popup_at(self.meter)
        return self.popover
