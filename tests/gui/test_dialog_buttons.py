"""Dialogs show only what a dialog needs on their title bar: a close button, never a minimise button,
and a maximise button only on the big viewers. Every QDialog of piwork sets its buttons through
`window_flags.dialog_buttons`."""

from __future__ import annotations

import ast
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QWidget
from pytestqt.qtbot import QtBot

import piwork.gui
from piwork.gui.context_edit_dialog import ReplacementDialog
from piwork.gui.search.search_dialog import SearchDialog
from piwork.gui.shortcuts_dialog import ShortcutsDialog

GUI = Path(piwork.gui.__file__).parent


def _buttons(widget: QWidget) -> tuple[bool, bool, bool]:
    """(close, minimise, maximise) as the window manager is told them: only with CustomizeWindowHint are
    the buttons the ones asked for (without it the window manager puts its own, minimise included)."""
    flags = widget.windowFlags()
    assert flags & Qt.WindowType.CustomizeWindowHint
    return (
        bool(flags & Qt.WindowType.WindowCloseButtonHint),
        bool(flags & Qt.WindowType.WindowMinimizeButtonHint),
        bool(flags & Qt.WindowType.WindowMaximizeButtonHint),
    )


def test_forms_get_close_only_and_viewers_may_maximise(qtbot: QtBot) -> None:
    parent = QWidget()
    qtbot.addWidget(parent)
    shortcuts, replacement = ShortcutsDialog(parent=parent), ReplacementDialog("old text", parent)
    search = SearchDialog(lambda _everywhere: [], parent)
    for dialog in (shortcuts, replacement, search):
        qtbot.addWidget(dialog)
        dialog.show()
        assert dialog.isWindow() and dialog.windowType() == Qt.WindowType.Dialog
    assert _buttons(shortcuts) == _buttons(replacement) == (True, False, False)
    assert _buttons(search) == (True, False, True)  # a big list of results: more room shows more


def test_every_dialog_class_sets_its_buttons_through_the_helper() -> None:
    missing = []
    for path in GUI.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef):
                continue
            if not any(isinstance(b, ast.Name) and b.id == QDialog.__name__ for b in node.bases):
                continue
            init = next(
                (f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None
            )
            calls = [c for c in ast.walk(init) if isinstance(c, ast.Call)] if init else []
            if not any(isinstance(c.func, ast.Name) and c.func.id == "dialog_buttons" for c in calls):
                missing.append(f"{path.relative_to(GUI)}:{node.name}")
    assert missing == []
