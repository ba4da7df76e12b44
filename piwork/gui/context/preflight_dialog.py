"""The preflight dialog: the next request's estimate by source against the marks, the verdict, and the
ways out — compact now, start fresh from the task (/fresh task), or send once anyway.

It opens on demand (Session → Context Preflight, the panel's button) and when a request would land in
the pricing zone or overflow. It only reports the person's choice (``choice``); the controller acts.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPushButton, QVBoxLayout, QWidget

from piwork.gui.context.budget_meter import BudgetMeter
from piwork.gui.context.reading import SEGMENT_TITLES, MeterReading, compact_tokens

VERDICT_TEXT = {
    "ok": ("Fits", "The next request stays below the pressure mark."),
    "pressure": ("Under pressure", "Past the pressure mark: the governor may elide old reads and logs."),
    "over-ceiling": (
        "Over the ceiling",
        "Past the prompt ceiling: the governor elides whatever it safely can before sending.",
    ),
    "pricing-zone": (
        "In the pricing zone",
        "This request would be billed at the higher price tier. Compact, start fresh from the task, "
        "or send it once anyway.",
    ),
    "overflow": (
        "Too large for the model",
        "Past the compaction threshold: the request does not leave room for a reply. Compact now or "
        "start fresh from the task.",
    ),
}
ADVICE = {
    "ok": [],
    "pressure": ["Old raw reads and test logs are elided automatically when that saves enough."],
    "over-ceiling": ["Compact now to keep later requests small and cache-friendly."],
    "pricing-zone": [
        "Compact now (a summary replaces older turns)",
        "/fresh task: a new session seeded with the task",
    ],
    "overflow": ["Compact now", "/fresh task: a new session seeded with the task"],
}


class PreflightDialog(QDialog):
    choice = Signal(str)  # "compact" | "fresh" | "send-anyway"

    def __init__(
        self, reading: MeterReading, parent: QWidget | None = None, *, can_fresh: bool = False
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Context Preflight")
        self.setObjectName("preflightDialog")
        self.reading = reading
        self.verdict = reading.zone
        title, text = VERDICT_TEXT.get(self.verdict, (self.verdict, ""))
        heading = QLabel(f"<h3>{title}</h3>")
        heading.setObjectName("preflightVerdict")
        explanation = QLabel(text)
        explanation.setWordWrap(True)
        meter = BudgetMeter(self, labelled=True)
        meter.set_reading(reading)
        lines = [f"Next request: <b>{reading.label()}</b>"]
        lines += [f"{SEGMENT_TITLES[k]}: {compact_tokens(v)}" for k, v in reading.segments.items()]
        if reading.elided:
            lines.append(f"Elided by the governor: {compact_tokens(reading.elided)}")
        if reading.marks is not None:
            m = reading.marks
            lines.append(
                f"Marks: pressure {compact_tokens(m.pressure)} · ceiling {compact_tokens(m.ceiling)} · "
                f"compaction {compact_tokens(m.compaction_threshold)}"
                + (f" · pricing {compact_tokens(m.pricing)}" if m.pricing is not None else "")
            )
        lines += [f"• {advice}" for advice in ADVICE.get(self.verdict, [])]
        figures = QLabel("<br>".join(lines))
        figures.setTextFormat(Qt.TextFormat.RichText)
        figures.setWordWrap(True)
        buttons = QDialogButtonBox(self)
        self.compact_button = QPushButton("Compact now")
        self.fresh_button = QPushButton("/fresh task")
        self.fresh_button.setEnabled(can_fresh)
        if not can_fresh:
            self.fresh_button.setToolTip("Needs a task: start one with /task first")
        self.send_button = QPushButton("Send once anyway")
        self.send_button.setVisible(self.verdict == "pricing-zone")
        for button, name in (
            (self.compact_button, "compact"),
            (self.fresh_button, "fresh"),
            (self.send_button, "send-anyway"),
        ):
            buttons.addButton(button, QDialogButtonBox.ButtonRole.ActionRole)
            button.clicked.connect(lambda _checked=False, n=name: self._choose(n))
        buttons.addButton(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(heading)
        layout.addWidget(explanation)
        layout.addWidget(meter)
        layout.addWidget(figures)
        layout.addWidget(buttons)
        self.setMinimumWidth(520)

    def _choose(self, name: str) -> None:
        self.choice.emit(name)
        self.accept()

    def to_json(self) -> dict[str, object]:
        """The /context preflight shape of what the dialog shows."""
        r = self.reading
        marks = r.marks.to_json() if r.marks is not None else {}
        return {
            "estimate": {
                "systemPrompt": r.segments.system_prompt,
                "tools": r.segments.tools,
                "bundle": r.segments.bundle,
                "messages": r.segments.messages,
                "projected": r.shown_tokens,
            },
            "marks": {k: marks.get(k) for k in ("pressure", "ceiling", "pricing", "compaction")},
            "verdict": self.verdict,
            "advice": ADVICE.get(self.verdict, []),
        }
