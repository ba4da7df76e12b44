"""The Task dialog: the task's contract as the person can shape it — goal, mode, verify command,
acceptance criteria (one a line) and phase — and "Run verifier for real".

It only edits and reports: ``saved`` carries the edited fields, ``verify_requested`` the wish to run the
verifier; the controller records the contract (a phase change re-forms the working set) and runs it.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from piwork.gui.window_flags import dialog_buttons

MODES = ("read-only", "source-write")
PHASES = ("scout", "plan", "implement", "verify")


class TaskDialog(QDialog):
    saved = Signal(dict)  # {"goal", "mode", "verify", "acceptance", "phase"}
    verify_requested = Signal(str)  # the verify command, to run for real

    def __init__(self, contract: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        dialog_buttons(self)
        self.setObjectName("taskDialog")
        self.setWindowTitle("Task")
        self.goal = QLineEdit(contract.goal)
        self.goal.setObjectName("taskGoal")
        self.mode = QComboBox()
        self.mode.setObjectName("taskMode")
        self.mode.addItems(MODES)
        self.mode.setCurrentText(contract.mode)
        self.verify = QLineEdit(contract.verify or "")
        self.verify.setObjectName("taskVerify")
        self.verify.setPlaceholderText("the command that proves the task done, e.g. pytest -q")
        self.acceptance = QPlainTextEdit("\n".join(contract.acceptance))
        self.acceptance.setObjectName("taskAcceptance")
        self.acceptance.setPlaceholderText("one criterion a line")
        self.acceptance.setTabChangesFocus(True)
        self.phase = QComboBox()
        self.phase.setObjectName("taskPhase")
        self.phase.addItems(PHASES)
        self.phase.setCurrentText(contract.phase)
        form = QFormLayout()
        form.addRow("Goal", self.goal)
        form.addRow("Mode", self.mode)
        form.addRow("Verify", self.verify)
        form.addRow("Acceptance", self.acceptance)
        form.addRow("Phase", self.phase)
        self.status = QLabel("")
        self.status.setObjectName("taskStatus")
        self.status.setWordWrap(True)
        self.run_button = QPushButton("Run verifier for real")
        self.run_button.setObjectName("runVerifier")
        self.run_button.setToolTip(
            "Run the verify command now, even when a pass on this exact tree could be reused"
        )
        self.run_button.clicked.connect(self._run)
        self.verify.textChanged.connect(lambda text: self.run_button.setEnabled(bool(text.strip())))
        self.run_button.setEnabled(bool(self.verify.text().strip()))
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Close
        )
        buttons.addButton(self.run_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.button(QDialogButtonBox.StandardButton.Save).clicked.connect(self._save)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.status)
        layout.addWidget(buttons)

    def fields(self) -> dict[str, Any]:
        return {
            "goal": self.goal.text(),
            "mode": self.mode.currentText(),
            "verify": self.verify.text(),
            "acceptance": [line for line in self.acceptance.toPlainText().splitlines() if line.strip()],
            "phase": self.phase.currentText(),
        }

    def _save(self) -> None:
        self.saved.emit(self.fields())

    def _run(self) -> None:
        command = self.verify.text().strip()
        if command:
            self.status.setText(f"Running {command}…")
            self.run_button.setEnabled(False)
            self.verify_requested.emit(command)

    def show_status(self, text: str) -> None:
        self.status.setText(text)
        self.run_button.setEnabled(bool(self.verify.text().strip()))
