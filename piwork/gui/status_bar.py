"""The window's status bar: model, project trust, context occupancy against the window, session cost."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QStatusBar, QWidget

from piwork.gui.chat.footer import compact_tokens, format_cost

TRUST_TEXT = {
    "trusted": ("Project trusted", "Project resources (.pi settings, skills, prompts, plugins) are loaded."),
    "untrusted": ("Project not trusted", "Project resources are not loaded. Project → Trust… to change."),
    "no-project-resources": ("No project resources", "This folder has nothing that needs trust."),
    "unknown": ("Trust: undecided", "Trust has not been decided yet."),
}


class WorkbenchStatusBar(QStatusBar):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model_label = QLabel(self)
        self.model_label.setObjectName("statusModel")
        self.trust_label = QLabel(self)
        self.trust_label.setObjectName("statusTrust")
        self.context_label = QLabel(self)
        self.context_label.setObjectName("statusContext")
        self.cost_label = QLabel(self)
        self.cost_label.setObjectName("statusCost")
        for label in (self.model_label, self.trust_label, self.context_label, self.cost_label):
            self.addPermanentWidget(label)
        self.set_model(None)
        self.set_trust("unknown")
        self.set_context(None, 0)
        self.set_cost(0.0)

    def set_model(self, name: str | None, thinking: str | None = None) -> None:
        text = name or "no model"
        if thinking and thinking != "off":
            text += f" · thinking {thinking}"
        self.model_label.setText(text)

    def set_trust(self, state: str) -> None:
        text, tip = TRUST_TEXT.get(state, TRUST_TEXT["unknown"])
        self.trust_label.setText(text)
        self.trust_label.setToolTip(tip)

    def set_context(self, tokens: float | None, window: int, exact: bool = True) -> None:
        if tokens is None or window <= 0:
            self.context_label.setText("ctx —")
            return
        marker = "" if exact else "≈"
        self.context_label.setText(
            f"ctx {marker}{compact_tokens(tokens)}/{compact_tokens(window)} ({100 * tokens / window:.0f}%)"
        )

    def set_cost(self, usd: float) -> None:
        self.cost_label.setText(format_cost(usd))
        self.cost_label.setToolTip("Billed cost of this session (provider-reported usage × model prices)")
