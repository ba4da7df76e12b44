"""The window's first frame comes before its session's parts (the first tab's controller, the tabs) are made:
until then the menu actions they answer are disabled (greyed, their shortcuts inert) instead of doing
nothing, and once the parts are made they act as usual."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from PySide6.QtCore import SIGNAL, Qt
from PySide6.QtWidgets import QApplication, QDialog
from pytestqt.qtbot import QtBot

from piwork.gui.actions import ACTIONS, SESSION_ACTIONS
from piwork.gui.app import WindowOptions, build_window, tab_manager
from piwork.gui.session_controller import SessionController


def _receivers(window_actions: dict[str, object]) -> dict[str, int]:
    return {
        action_id: action.receivers(SIGNAL("triggered(bool)")) for action_id, action in window_actions.items()
    }  # type: ignore[attr-defined]


def _dialogs() -> list[QDialog]:
    return [w for w in QApplication.topLevelWidgets() if isinstance(w, QDialog) and w.isVisible()]


def test_the_session_actions_wait_for_the_session_parts(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PIWORK_CONFIG_DIR", str(tmp_path / "cfg"))
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    project = tmp_path / "project"
    project.mkdir()
    window, themes, notifications = build_window(app, WindowOptions(cwd=str(project)))
    qtbot.addWidget(window)
    actions = window.action_map
    before = _receivers(actions)  # type: ignore[arg-type]
    usual = {action_id: action.isEnabled() for action_id, action in actions.items()}

    window.wait_for_session_parts()
    window.show()
    qtbot.waitExposed(window)
    for action_id in SESSION_ACTIONS:
        assert not actions[action_id].isEnabled(), action_id
    assert not window.recent_menu.menuAction().isEnabled()
    # the rest of the window works as before
    assert {a.id for a in ACTIONS if a.id not in SESSION_ACTIONS and usual[a.id]} <= {
        action_id for action_id, action in actions.items() if action.isEnabled()
    }
    # a held action does nothing, from its menu or its shortcut (the palette, the settings do not open, the
    # thinking level stays)
    level = window.chat.footer.thinking_picker.currentIndex()
    actions["command_palette"].trigger()
    for keys in ("Ctrl+Shift+P", "Ctrl+,", "Ctrl+Shift+M"):
        qtbot.keyClick(window, keys.split("+")[-1], _modifiers(keys))
    qtbot.wait(50)
    assert _dialogs() == []
    assert window.chat.footer.thinking_picker.currentIndex() == level

    tabs = tab_manager(window, themes, notifications, None)
    controller = tabs.controller(window, str(project))
    assert isinstance(controller, SessionController)
    window.session_parts_made()
    after = _receivers(actions)  # type: ignore[arg-type]
    # every action the session's parts answer was one of those held
    answered = {action_id for action_id in actions if after[action_id] > before[action_id]}
    assert answered <= set(SESSION_ACTIONS) | {"quit"}  # quit: the window's close until then, the tabs' after
    assert answered >= set(SESSION_ACTIONS) - {
        "cycle_thinking"
    }  # the picker's own action, heard by the session
    for action_id, enabled in usual.items():
        assert actions[action_id].isEnabled() is enabled, action_id
    assert window.recent_menu.menuAction().isEnabled()

    actions["command_palette"].trigger()
    qtbot.waitUntil(lambda: len(_dialogs()) == 1)
    for dialog in _dialogs():
        dialog.close()
    done = qloop.create_task(tabs.shutdown())
    qtbot.waitUntil(done.done, timeout=10_000)
    notifications.close_all()


def _modifiers(keys: str) -> Qt.KeyboardModifier:
    modifiers = Qt.KeyboardModifier.NoModifier
    for name in keys.split("+")[:-1]:
        modifiers |= {
            "Ctrl": Qt.KeyboardModifier.ControlModifier,
            "Shift": Qt.KeyboardModifier.ShiftModifier,
        }[name]
    return modifiers
