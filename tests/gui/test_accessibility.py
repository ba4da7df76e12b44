"""Accessibility: every interactive control of the main window (every dock open) and of each dialog the
window's actions open has an accessible name — see tests/gui/accessibility.py for exactly what counts.

A failure lists each unnamed control with its class, object name, text, tooltip and named parents. The usual
fix is ``widget.setAccessibleName("What it is")`` (and ``setAccessibleDescription`` for what it does), or a
``QFormLayout`` row / ``QLabel.setBuddy`` so the label names it. New panels and dialogs are covered as soon as
they are reachable from the window: docks through ``MainWindow.docks``, dialogs through ``DIALOG_ACTIONS``
(add an action here when a new one opens a non-modal dialog).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QApplication, QDialog, QDialogButtonBox, QWidget
from pytestqt.qtbot import QtBot

from piwork.core.paths import agent_dir
from piwork.gui.main_window import MainWindow
from piwork.gui.notifications import NotificationCenter
from piwork.gui.session_controller import SessionController
from piwork.gui.settings.settings_dialog import SettingsDialog
from piwork.gui.shortcuts_dialog import shortcut_rows
from piwork.gui.theme import load_theme
from tests.gui.accessibility import (
    accessible_description,
    accessible_name,
    describe,
    interactive_controls,
    unnamed_controls,
)
from tests.support import LoopbackServer, Text, ToolCall, Turn

# Dialogs whose controls must also describe what they do (a dialog button box's standard buttons are exempt:
# "Save", "Close" say it all).
DESCRIBED_DIALOGS = {
    "SessionBrowser",
    "SearchDialog",
    "PaletteDialog",
    "ShortcutsDialog",
    "SettingsDialog",
    "TrustDialog",
    "PreflightDialog",
}

# Window actions that open a dialog without blocking (modal file pickers and input boxes are Qt's own).
DIALOG_ACTIONS = (
    "settings",
    "sessions_browser",
    "search_sessions",
    "command_palette",
    "trust",
    "shortcuts",
    "about",
    "context_preflight",
)


@pytest.fixture
def session_window(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> Iterator[SessionController]:
    with LoopbackServer() as server:
        adir = agent_dir()
        models = {
            "providers": {
                "loopback": {
                    "name": "Loopback",
                    "baseUrl": server.openai_url,
                    "api": "openai-completions",
                    "models": [{"id": "loopback-model"}],
                }
            }
        }
        (adir / "models.json").write_text(json.dumps(models))
        project = tmp_path / "project"
        project.mkdir()
        (project / "notes.txt").write_text("alpha\n" * 50)
        window = MainWindow(
            QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat), load_theme("light")
        )
        qtbot.addWidget(window)
        window.resize(1200, 800)
        window.show()
        notifications = NotificationCenter(window)
        ctl = SessionController(window, notifications, str(project), adir, approve=False, env={})
        ctl.spawn(ctl.open_session(None))
        qtbot.waitUntil(lambda: ctl.runtime is not None, timeout=10_000)
        server.script(Turn([ToolCall("read", {"path": "notes.txt"})]), Turn([Text("It says alpha.")]))
        ctl.submit("read notes.txt")
        qtbot.waitUntil(lambda: server.pending == 0 and not ctl.chat.busy, timeout=10_000)
        for dock in window.docks.values():
            dock.show()
        yield ctl
        for widget in QApplication.topLevelWidgets():
            if widget is not window and widget.isVisible():
                widget.close()
        done = qloop.create_task(ctl.shutdown())
        qtbot.waitUntil(done.done, timeout=10_000)
        notifications.close_all()


def _open_dialogs(ctl: SessionController) -> list[QWidget]:
    before = {id(w) for w in QApplication.topLevelWidgets() if w.isVisible()}
    for action_id in DIALOG_ACTIONS:
        action = ctl.window.action_map.get(action_id)
        if action is not None:
            action.trigger()
    # the preflight dialog opens once its figures are computed in the executor
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not (
        ctl.preflight.dialog is not None and ctl.preflight.dialog.isVisible()
    ):
        QApplication.processEvents()
    settings = ctl.window.findChild(SettingsDialog, "settingsDialog")
    if settings is not None:
        settings.providers_page.edit_server(None)  # the Add Server dialog
    # the session tree's own dialogs: files touched and the comparison of the first entry with the current one
    tree = ctl.window.tree_panel
    first = tree.model.index(0, 0) if tree.model is not None else None
    if first is not None and first.isValid():
        tree.view.setCurrentIndex(first)
        for task in (
            tree.branch_tools.files_touched(None),
            tree.branch_tools.compare_with_current(tree.current_entry_id()),
        ):
            if task is not None:
                deadline = time.monotonic() + 10
                while not task.done() and time.monotonic() < deadline:
                    QApplication.processEvents()
    QApplication.processEvents()
    return [w for w in QApplication.topLevelWidgets() if w.isVisible() and id(w) not in before]


def test_every_interactive_control_has_an_accessible_name(
    qtbot: QtBot, session_window: SessionController
) -> None:
    window = session_window.window
    problems = {"main window": unnamed_controls(window)}
    dialogs = _open_dialogs(session_window)
    assert any(isinstance(d, SettingsDialog) for d in dialogs)
    assert len(dialogs) >= 6, [type(d).__name__ for d in dialogs]
    for dialog in dialogs:
        problems[f"{type(dialog).__name__} {dialog.windowTitle()!r}"] = unnamed_controls(dialog)
    problems = {where: items for where, items in problems.items() if items}
    listing = "\n".join(f"{where}:\n  " + "\n  ".join(items) for where, items in problems.items())
    assert not problems, f"interactive controls without an accessible name:\n{listing}"
    assert len(interactive_controls(window)) > 30  # the walk really reaches the panels


def test_dialogs_take_the_focus_and_focus_is_visible(qtbot: QtBot, session_window: SessionController) -> None:
    for dialog in _open_dialogs(session_window):
        if not isinstance(dialog, QDialog):
            continue
        dialog.activateWindow()
        qtbot.waitUntil(lambda d=dialog: d.focusWidget() is not None, timeout=2000)
        focus = dialog.focusWidget()
        assert focus is not None and focus.focusPolicy() & Qt.FocusPolicy.TabFocus, type(dialog).__name__
        assert accessible_name(focus) or type(focus).__name__ == "QTextBrowser", (
            type(dialog).__name__,
            focus,
        )


def test_shortcuts_dialog_lists_the_tree_and_log_viewer_keys() -> None:
    rows = shortcut_rows()
    places = {where for where, _what, _keys in rows}
    assert {"Session Tree", "Tool Output Logs"} <= places
    keys = {(where, keys) for where, _what, keys in rows}
    assert ("Chat", "Enter") in keys and ("View", "Alt+1") not in keys  # dock toggles come from the window
    assert ("Session Tree", "Ctrl+L") in keys and ("Tool Output Logs", "F3") in keys


def test_shortcuts_dialog_lists_every_shortcut_of_the_window(qtbot: QtBot, tmp_path: Path) -> None:
    window = MainWindow(QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat), load_theme("light"))
    qtbot.addWidget(window)
    dialog = window.show_shortcuts()
    qtbot.addWidget(dialog)
    table = dialog.table
    listed = {table.item(r, 2).text() for r in range(table.rowCount())}
    native = QKeySequence.SequenceFormat.NativeText
    wanted = {
        action.shortcut().toString(native)
        for action in window.findChildren(QAction)
        if not action.shortcut().isEmpty()
    }
    wanted |= {
        shortcut.key().toString(native)
        for shortcut in window.findChildren(QShortcut)
        if not shortcut.key().isEmpty()
    }
    assert wanted, "the window has shortcuts"
    missing = {keys for keys in wanted if not any(keys in entry for entry in listed)}
    assert not missing, f"shortcuts missing from Help → Keyboard Shortcuts: {sorted(missing)}"


def test_chat_panels_and_provider_settings_describe_their_controls(
    qtbot: QtBot, session_window: SessionController
) -> None:
    """Besides a name, these controls say what they do (accessible description, or a tooltip)."""
    window = session_window.window
    window.action_map["settings"].trigger()
    settings = window.findChild(SettingsDialog, "settingsDialog")
    assert settings is not None
    server = settings.providers_page.edit_server(None)
    roots: list[QWidget] = [
        window.chat,
        window.tree_panel,
        window.resource_panel,
        window.context_panel,
        settings,
        server,
    ]
    dialogs = _open_dialogs(session_window)
    roots += [d for d in dialogs if type(d).__name__ in DESCRIBED_DIALOGS]
    assert {type(d).__name__ for d in roots} >= DESCRIBED_DIALOGS
    missing = [
        describe(control)
        for root in roots
        for control in interactive_controls(root)
        if not accessible_description(control) and not isinstance(control.parentWidget(), QDialogButtonBox)
    ]
    assert not missing, "controls without a description:\n  " + "\n  ".join(missing)


def test_tab_walks_the_chat_in_reading_order(qtbot: QtBot, session_window: SessionController) -> None:
    chat = session_window.chat
    chat.composer.setFocus()
    qtbot.waitUntil(chat.composer.hasFocus, timeout=2000)
    order = []
    for _ in range(4):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        order.append(QApplication.focusWidget())
    footer = chat.footer
    assert order == [chat.send_button, footer.model_picker, footer.thinking_picker, footer.meter]
    qtbot.keyClick(footer.meter, Qt.Key.Key_Space)  # the meter's details open from the keyboard
    assert footer.popover is not None and footer.popover.isVisible()
    footer.popover.close()
    footer.thinking_picker.setFocus()
    qtbot.keyClick(chat.footer.thinking_picker, Qt.Key.Key_Backtab)
    assert QApplication.focusWidget() is chat.footer.model_picker


def test_the_branch_dialog_names_and_describes_its_controls(qtbot: QtBot) -> None:
    """It opens modally while moving in the tree, so the window walk above never reaches it."""
    from piwork.gui.tree.branch_dialog import BranchChoiceDialog

    dialog = BranchChoiceDialog(12, 5, "user: try the other approach")
    qtbot.addWidget(dialog)
    assert unnamed_controls(dialog) == []
    for control in interactive_controls(dialog):
        if not isinstance(control.parentWidget(), QDialogButtonBox):
            assert accessible_description(control), describe(control)


def test_the_log_viewer_names_its_own_controls(qtbot: QtBot) -> None:
    """Outside the window too (no dock or tab to lend a name), every control of the log viewer is named."""
    from piwork.gui.logs import FullOutputView, LogViewerPanel

    for widget in (LogViewerPanel(), FullOutputView()):
        qtbot.addWidget(widget)
        assert unnamed_controls(widget) == []


def test_keyboard_focus_is_visible_on_the_chat_controls(
    qtbot: QtBot, session_window: SessionController
) -> None:
    """Tabbing onto a control changes how it is drawn (Fusion's focus frame, the meter's own), so a person
    using the keyboard sees where they are."""
    chat = session_window.chat
    footer = chat.footer
    order = [chat.send_button, footer.model_picker, footer.thinking_picker, footer.meter]
    unfocused = [control.grab().toImage() for control in order]
    chat.composer.setFocus()
    qtbot.waitUntil(chat.composer.hasFocus, timeout=2000)
    for control, before in zip(order, unfocused, strict=True):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        assert QApplication.focusWidget() is control
        assert control.grab().toImage() != before, f"no visible focus on {describe(control)}"
