"""Under the composer: model and thinking pickers, the context meter and the session's billed cost (the
window's only place for these figures; the status bar keeps trust and notices).

Context occupancy and billed traffic are different series and are shown apart, never summed.
"""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QWidget

from piwork.gui.chat.pickers import ModelPicker, ThinkingPicker


def compact_tokens(value: float) -> str:
    value = float(value)
    if value >= 1_000_000:
        return f"{value / 1_000_000:.1f}M".replace(".0M", "M")
    if value >= 1000:
        return f"{value / 1000:.1f}k".replace(".0k", "k")
    return str(int(value))


def format_cost(usd: float) -> str:
    if usd <= 0:
        return "$0.00"
    if usd < 0.01:
        return f"${usd:.4f}"
    return f"${usd:.2f}"


class ChatFooter(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model_picker = ModelPicker(self)
        self.thinking_picker = ThinkingPicker(self)
        self.context_bar = QProgressBar(self)
        self.context_bar.setObjectName("contextBar")
        self.context_bar.setMaximumWidth(140)
        self.context_bar.setMaximumHeight(12)
        self.context_bar.setTextVisible(False)
        self.context_label = QLabel(self)
        self.context_label.setObjectName("contextLabel")
        self.cost_label = QLabel(self)
        self.cost_label.setObjectName("costLabel")
        self.cost_label.setToolTip(
            "Billed cost and tokens of this session (provider-reported usage × model prices)"
        )
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 0, 6, 2)
        layout.addWidget(self.model_picker)
        layout.addWidget(self.thinking_picker)
        layout.addStretch(1)
        layout.addWidget(self.context_label)
        layout.addWidget(self.context_bar)
        layout.addSpacing(12)
        layout.addWidget(self.cost_label)
        self.set_context(None, 0, exact=False)
        self.set_cost(0.0, 0)

    def set_context(self, tokens: float | None, window: int, exact: bool) -> None:
        if tokens is None or window <= 0:
            self.context_label.setText("context: —")
            self.context_bar.setRange(0, 1)
            self.context_bar.setValue(0)
            self.context_label.setToolTip("No model selected")
            return
        percent = 100.0 * tokens / window
        marker = "" if exact else "≈"
        self.context_label.setText(
            f"context {marker}{compact_tokens(tokens)} / {compact_tokens(window)} ({percent:.0f}%)"
        )
        self.context_label.setToolTip(
            "Tokens the next request would carry, "
            + ("as reported by the provider for the last reply." if exact else "estimated (chars/4).")
        )
        self.context_bar.setRange(0, max(1, window))
        self.context_bar.setValue(min(window, int(tokens)))

    def set_cost(self, usd: float, tokens: int) -> None:
        self.cost_label.setText(f"{format_cost(usd)} · {compact_tokens(tokens)} tok")
