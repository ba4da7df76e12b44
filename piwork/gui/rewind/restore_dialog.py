"""RestoreFilesDialog: the question before files are restored, with the list of what would change.

Two forms: the plain question ("Restore Files" / "Cancel"), and the one asked when files changed outside
piwork since the last checkpoint would be overwritten: it names them first and asks "Restore Anyway" /
"Cancel", with Cancel the default (a reflexive Enter keeps the user's own changes).
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget

from piwork.gui.inert_text import plain_label
from piwork.gui.rewind.plan_list import PlanList
from piwork.gui.rewind.work import names, would_change
from piwork.gui.window_flags import dialog_buttons

if TYPE_CHECKING:
    from piwork.core.checkpoints import RestorePlan


def outside_text(outside: tuple[str, ...]) -> str:
    count = len(outside)
    files = "1 file was" if count == 1 else f"{count:,} files were"
    return (
        f"{files} changed outside piwork since the last checkpoint, not by the agent: "
        f"{names(outside)}. Restoring overwrites those changes (Undo File Restore can bring them back)."
    )


class RestoreFilesDialog(QDialog):
    def __init__(
        self, plan: RestorePlan, where: str, parent: QWidget | None = None, *, undoing: bool = False
    ) -> None:
        super().__init__(parent)
        dialog_buttons(self)
        self.plan = plan
        self.blocked = bool(plan.outside)
        self.setWindowTitle("Undo file restore" if undoing else "Restore files")
        question = (
            "Bring back the project's files as they were before the last restore?"
            if undoing
            else f"Put the project's files back as they were at “{html.escape(where)}”?"
        )
        self.intro = QLabel(f"{question}<br>{html.escape(would_change(plan))}")
        self.intro.setWordWrap(True)
        self.files = PlanList()
        self.files.show_plan(plan)
        self.warning = plain_label(outside_text(plan.outside) if self.blocked else "")
        self.warning.setWordWrap(True)
        self.warning.setObjectName("restoreWarning")
        self.warning.setVisible(self.blocked)
        self.warning.setStyleSheet("font-weight: bold;")
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.ok_button = buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.cancel_button = buttons.button(QDialogButtonBox.StandardButton.Cancel)
        self.ok_button.setText("Restore Anyway" if self.blocked else "Restore Files")
        if self.blocked:
            self.ok_button.setAutoDefault(False)
            self.cancel_button.setDefault(True)
        self.ok_button.setAccessibleDescription(
            "Overwrite the files changed outside piwork too" if self.blocked else "Restore the files listed"
        )
        self.setMinimumWidth(520)
        layout = QVBoxLayout(self)
        layout.addWidget(self.intro)
        layout.addWidget(self.warning)
        layout.addWidget(self.files)
        layout.addStretch(1)
        layout.addWidget(buttons)
        # as tall as the wrapped texts are at the dialog's width (its size hint wraps them narrower)
        self.resize(self.minimumWidth(), layout.totalHeightForWidth(self.minimumWidth()))
