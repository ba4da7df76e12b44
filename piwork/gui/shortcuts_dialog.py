"""Help → Keyboard Shortcuts: every window action and editor key, from the one action table, and every slash
command, from the command registry."""

from __future__ import annotations

from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from piwork.gui.actions import ACTIONS, EDITOR_KEYS, PANEL_KEYS
from piwork.gui.commands import BUILTIN
from piwork.gui.window_flags import dialog_buttons


def shortcut_rows() -> list[tuple[str, str, str]]:
    """(where, action, keys) for every action with a shortcut, then the editor's and the panels' keys."""
    rows = []
    for spec in ACTIONS:
        if spec.shortcut:
            keys = QKeySequence(spec.shortcut).toString(QKeySequence.SequenceFormat.NativeText)
            rows.append((spec.menu, spec.text.replace("&", "").rstrip("…"), keys))
    rows += [("Chat", what, keys) for keys, what in EDITOR_KEYS]
    rows += [(panel, what, keys) for panel, keys, what in PANEL_KEYS]
    return rows


def command_rows() -> list[tuple[str, str, str]]:
    """(where, what it does, what to type) for every slash command of the registry."""
    rows = [("Command", c.about, f"/{c.name} {c.hint}".strip()) for c in BUILTIN]
    rows += [
        ("Command", "Run a shell command; its output goes to the model with your next message", "!command"),
        (
            "Command",
            "Run a shell command; its output is shown and saved, never sent to the model",
            "!!command",
        ),
    ]
    return rows


class ShortcutsDialog(QDialog):
    def __init__(
        self, extra: list[tuple[str, str, str]] | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        dialog_buttons(self)
        self.setWindowTitle("Keyboard Shortcuts")
        rows = shortcut_rows() + (extra or []) + command_rows()
        table = QTableWidget(len(rows), 3, self)
        table.setAccessibleName("Keyboard shortcuts")
        table.setAccessibleDescription("Where each key works, what it does and the keys")
        table.setObjectName("shortcutsTable")
        table.setHorizontalHeaderLabels(["Where", "Action", "Keys"])
        for r, (where, what, keys) in enumerate(rows):
            for c, text in enumerate((where, what, keys)):
                table.setItem(r, c, QTableWidgetItem(text))
        table.verticalHeader().hide()
        table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        table.resizeColumnsToContents()
        self.table = table
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(table)
        layout.addWidget(buttons)
        self.resize(620, 560)
