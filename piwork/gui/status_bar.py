"""The window's status bar: project trust as a permanent label, and short-lived notices (showMessage).

Each figure has one place: the model and thinking level, the context meter and the session's cost
are shown by the chat footer next to the composer, not here.
"""

from __future__ import annotations

from PySide6.QtWidgets import QStatusBar, QWidget

from piwork.gui.inert_text import plain_label, plain_tip

TRUST_TEXT = {
    "trusted": ("Project trusted", "Project resources (.pi settings, skills, prompts, plugins) are loaded."),
    "untrusted": ("Project not trusted", "Project resources are not loaded. Project → Trust… to change."),
    "no-project-resources": ("No project resources", "This folder has nothing that needs trust."),
    "unknown": ("Trust: undecided", "Trust has not been decided yet."),
}


class WorkbenchStatusBar(QStatusBar):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.trust_label = plain_label(parent=self)
        self.trust_label.setObjectName("statusTrust")
        self.addPermanentWidget(self.trust_label)
        self.set_trust("unknown")

    def set_trust(self, state: str) -> None:
        text, tip = TRUST_TEXT.get(state, TRUST_TEXT["unknown"])
        self.trust_label.setText(text)
        self.trust_label.setToolTip(plain_tip(tip))
