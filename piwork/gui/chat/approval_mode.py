"""The footer's approval mode button: what the agent may run in this project, switched from its menu."""

from __future__ import annotations

from PySide6.QtCore import QSize, Signal
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QMenu, QSizePolicy, QToolButton, QWidget

from piwork.core.approvals import MODE_LABELS, MODE_SHORT, MODES, ApprovalMode

MODE_GLYPHS: dict[ApprovalMode, str] = {"run": "▶", "ask": "?", "read-only": "⊘"}
MODE_HINTS: dict[ApprovalMode, str] = {
    "run": "Every tool call runs (Pi's behaviour).",
    "ask": "Commands and file changes wait in the chat for Approve, Deny or Always allow.",
    "read-only": "Commands, edits and writes are refused; reads and searches still run.",
}
MODE_LABELS_SHORT_FULL: dict[ApprovalMode, str] = {
    "run": "Run everything",
    "ask": "Ask before changes",
    "read-only": "Read only",
}
WHERE = "Kept for this project in the agent folder (piwork-approvals.json), never in the project."


class ApprovalModeButton(QToolButton):
    modeChosen = Signal(str)  # an ApprovalMode

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("approvalMode")
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.setAutoRaise(True)
        # shrinks below its text in the narrowest window (see ``minimumSizeHint``)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, self.sizePolicy().verticalPolicy())
        self.setAccessibleName("Approvals")
        menu = QMenu(self)
        group = QActionGroup(self)
        self.actions_by_mode: dict[ApprovalMode, QAction] = {}
        for mode in MODES:
            action = QAction(f"{MODE_GLYPHS[mode]}  {MODE_LABELS[mode]}", self)
            action.setCheckable(True)
            action.setToolTip(MODE_HINTS[mode])
            action.triggered.connect(lambda _checked=False, m=mode: self._chosen(m))
            group.addAction(action)
            menu.addAction(action)
            self.actions_by_mode[mode] = action
        menu.setToolTipsVisible(True)
        self.setMenu(menu)
        self.mode: ApprovalMode = "run"
        self._room = 10_000  # the width the footer leaves it (see ``fit``)
        self.show_mode("run")
        self.setEnabled(False)  # until a session is open

    def show_mode(self, mode: ApprovalMode) -> None:
        self.mode = mode
        self.actions_by_mode[mode].setChecked(True)
        self.fit(self._room)
        self.setToolTip(f"Approvals: {MODE_LABELS[mode]}\n{MODE_HINTS[mode]}\n{WHERE}")
        self.setAccessibleDescription(f"{MODE_LABELS[mode]}. {MODE_HINTS[mode]}")

    def texts(self) -> list[str]:
        """What the button can say, longest first: the mode's name with its glyph, then the glyph."""
        glyph = MODE_GLYPHS[self.mode]
        return [f"{glyph} {MODE_LABELS_SHORT_FULL[self.mode]}", f"{glyph} {MODE_SHORT[self.mode]}", glyph]

    def fit(self, room: int) -> None:
        """Say as much as fits in ``room`` pixels (the footer's figures keep their place: the button
        takes what they leave)."""
        self._room = room
        texts = self.texts()
        chosen = texts[-1]
        for text in texts:
            self.setText(text)
            if self.sizeHint().width() <= room:
                chosen = text
                break
        self.setText(chosen)
        self.updateGeometry()

    def minimumSizeHint(self) -> QSize:
        """No minimum width: in the narrowest window the button gives way rather than widen the chat (its
        glyph shows whenever the footer's parts fit at their own minimums)."""
        return QSize(0, super().minimumSizeHint().height())

    def _chosen(self, mode: ApprovalMode) -> None:
        self.show_mode(mode)
        self.modeChosen.emit(mode)
