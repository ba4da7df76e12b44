"""Asks for the text the model should see instead of an entry's own (a Pi 1.6 context edit)."""

from __future__ import annotations

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QPlainTextEdit, QVBoxLayout, QWidget

from piwork.gui.inert_text import plain_label
from piwork.gui.window_flags import dialog_buttons

LEAVE_OUT_TEXT = "Leave out of the model's context"
REPLACE_TEXT = "Replace what the model sees…"
RESTORE_TEXT = "Restore"
# The three context edits a message or tool result offers (chat and tree), with the engine action of each.
CONTEXT_EDITS = ((LEAVE_OUT_TEXT, "leave-out"), (REPLACE_TEXT, "replace"), (RESTORE_TEXT, "restore"))


class ReplacementDialog(QDialog):
    def __init__(self, current: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        dialog_buttons(self)
        self.setWindowTitle("Replace what the model sees")
        intro = plain_label(
            "From the next request on, the model sees this text instead of the entry's own content. "
            "The session file and the chat keep the original; Restore gives it back.",
            self,
        )
        intro.setWordWrap(True)
        self.text = QPlainTextEdit(self)
        self.text.setPlainText(current)
        self.text.setAccessibleName("What the model sees")
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.text, 1)
        layout.addWidget(buttons)
        self.resize(560, 360)
