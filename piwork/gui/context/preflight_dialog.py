"""The preflight dialog: the engine's /context preflight for the next request — its estimate by source
(after the governor's projection), the marks, the verdict and the advice — beside the budget meter, with
the ways out: compact now, start fresh from the task (/fresh task), or send once anyway.

It opens on demand (Session → Context Preflight, the Context panel's button) and for the verdicts
``pricing-zone`` and ``overflow``. It only reports the person's choice (``choice``); the controller acts.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPushButton, QVBoxLayout, QWidget

from piwork.gui.context.budget_meter import BudgetMeter
from piwork.gui.context.reading import SEGMENT_TITLES, MeterReading, compact_tokens
from piwork.gui.window_flags import dialog_buttons

VERDICT_TITLES = {
    "ok": "Fits",
    "pressure": "Under pressure",
    "over-ceiling": "Over the prompt ceiling",
    "pricing-zone": "In the pricing zone",
    "overflow": "Too large for the model",
}
DIALOG_VERDICTS = frozenset({"pricing-zone", "overflow"})  # verdicts that open the dialog by themselves
_ESTIMATE_KEYS = ("systemPrompt", "tools", "bundle", "messages")


class PreflightDialog(QDialog):
    choice = Signal(str)  # "compact" | "fresh" | "send-anyway"

    def __init__(
        self,
        result: Mapping[str, Any],
        reading: MeterReading,
        parent: QWidget | None = None,
        *,
        can_fresh: bool = False,
    ) -> None:
        super().__init__(parent)
        dialog_buttons(self)
        self.setWindowTitle("Context Preflight")
        self.setObjectName("preflightDialog")
        self.preflight = dict(result)
        self.verdict = str(result.get("verdict", "ok"))
        heading = QLabel(f"<h3>{VERDICT_TITLES.get(self.verdict, self.verdict)}</h3>")
        heading.setObjectName("preflightVerdict")
        meter = BudgetMeter(self, labelled=True)
        meter.set_reading(reading)
        self.figures = QLabel(self._figures_html())
        self.figures.setObjectName("preflightFigures")
        self.figures.setTextFormat(Qt.TextFormat.RichText)
        self.figures.setWordWrap(True)
        self.figures.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons = QDialogButtonBox(self)
        self.compact_button = QPushButton("Compact now")
        self.fresh_button = QPushButton("/fresh task")
        self.fresh_button.setToolTip("A new session seeded with the Task Contract, manifest and a summary")
        self.fresh_button.setEnabled(can_fresh)
        if not can_fresh:
            self.fresh_button.setToolTip("Needs a session with a task")
        self.send_button = QPushButton("Send once anyway")
        for button, name in (
            (self.compact_button, "compact"),
            (self.fresh_button, "fresh"),
            (self.send_button, "send-anyway"),
        ):
            buttons.addButton(button, QDialogButtonBox.ButtonRole.ActionRole)
            button.setAutoDefault(False)  # each acts on the session: a deliberate click, never a stray Enter
            button.clicked.connect(lambda _checked=False, n=name: self._choose(n))
        self.send_button.setVisible(self.verdict == "pricing-zone")  # after addButton, which shows it
        # The dialog may open by itself while the user types: Enter and the first focus only close it.
        close = buttons.addButton(QDialogButtonBox.StandardButton.Close)
        close.setDefault(True)
        close.setFocus()
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(heading)
        layout.addWidget(meter)
        layout.addWidget(self.figures)
        layout.addWidget(buttons)
        self.setMinimumWidth(540)

    def _figures_html(self) -> str:
        estimate = self.preflight.get("estimate") or {}
        marks = self.preflight.get("marks") or {}
        lines = [
            f"Next request after the governor: <b>{compact_tokens(estimate.get('projected', 0))}</b> tokens"
            f" (≈ {html.escape(str(self.preflight.get('tokenizer', '')).removeprefix('≈').strip())})"
        ]
        lines.append(
            " · ".join(f"{SEGMENT_TITLES[k]} {compact_tokens(estimate.get(k, 0))}" for k in _ESTIMATE_KEYS)
        )
        if estimate.get("plannedFiles"):
            lines.append(f"Planned files and prompt: {compact_tokens(estimate['plannedFiles'])}")
        if marks:
            shown = [
                f"{name} {compact_tokens(marks[name])}"
                for name in ("pressure", "ceiling", "pricing", "compaction")
                if marks.get(name) is not None
            ]
            lines.append("Marks: " + " · ".join(shown))
        lines += [f"• {html.escape(str(advice))}" for advice in self.preflight.get("advice") or []]
        return "<br>".join(lines)

    def _choose(self, name: str) -> None:
        self.choice.emit(name)
        self.accept()
