"""First launch with an empty agent folder: the chat says what to do next, the model picker does not offer
models that cannot answer, a message typed too early stays in the editor, and a local server added from
the empty state's button (a real loopback server) makes the window ready to answer."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from piwork.core.paths import agent_dir
from piwork.gui.chat.empty_state import CHOOSE, MISSING, READY
from piwork.gui.chat.rows import RowKind
from piwork.gui.main_window import MainWindow
from piwork.gui.notifications import NotificationCenter
from piwork.gui.session_controller import SessionController
from piwork.gui.settings.settings_dialog import SettingsDialog
from piwork.gui.theme import load_theme
from tests.support import LoopbackServer, Text, Turn


@pytest.fixture
def fresh(qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path) -> Iterator[SessionController]:
    assert not any(agent_dir().iterdir())  # an empty agent folder, no keys in the environment
    project = tmp_path / "project"
    project.mkdir()
    window = MainWindow(QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat), load_theme("light"))
    qtbot.addWidget(window)
    window.show()
    notifications = NotificationCenter(window)
    ctl = SessionController(window, notifications, str(project), agent_dir(), approve=False, env={})
    ctl.spawn(ctl.open_session(None))
    qtbot.waitUntil(lambda: ctl.runtime is not None, timeout=10_000)
    yield ctl
    for widget in QApplication.topLevelWidgets():
        if isinstance(widget, SettingsDialog) or widget.objectName() == "serverDialog":
            widget.close()
    done = qloop.create_task(ctl.shutdown())
    qtbot.waitUntil(done.done, timeout=10_000)
    notifications.close_all()


def test_without_a_model_the_chat_says_what_to_do(qtbot: QtBot, fresh: SessionController) -> None:
    chat = fresh.chat
    assert chat.model_state == MISSING
    assert chat.empty_state.isVisible() and "Set up a model" in chat.empty_state.title.text()
    assert chat.empty_state.server_button.isVisible() and chat.empty_state.key_button.isVisible()
    picker = chat.footer.model_picker
    assert picker.count() > 1
    assert picker.currentData() is None and picker.currentText() == "Set up a model…"
    assert picker.width() >= picker.fontMetrics().horizontalAdvance(picker.currentText())  # not cut off
    assert not any(picker.is_selectable(i) for i in range(picker.count()))
    labelled = [picker.itemText(i) for i in range(1, picker.count())]
    assert all("(no API key)" in text for text in labelled)
    assert "ANTHROPIC_API_KEY" in str(picker.itemData(1, Qt.ItemDataRole.ToolTipRole)) or any(
        "API_KEY" in str(picker.itemData(i, Qt.ItemDataRole.ToolTipRole)) for i in range(1, picker.count())
    )

    chat.composer.setFocus()
    qtbot.keyClicks(chat.composer, "hello there")
    qtbot.keyClick(chat.composer, Qt.Key.Key_Return)
    assert chat.composer.toPlainText() == "hello there"
    assert chat.empty_state.kept.isVisible()
    assert fresh.session is not None and fresh.session.messages == []
    assert [r.kind for r in (chat.model.row_at(i) for i in range(chat.model.rowCount()))] == []

    qtbot.mouseClick(chat.empty_state.key_button, Qt.MouseButton.LeftButton)
    dialog = fresh.window.findChild(SettingsDialog, "settingsDialog")
    assert dialog is not None and dialog.isVisible() and dialog.tabs.currentWidget() is dialog.providers_page
    dialog.close()


def test_a_server_added_from_the_empty_state_answers_the_kept_message(
    qtbot: QtBot, fresh: SessionController
) -> None:
    chat = fresh.chat
    qtbot.keyClicks(chat.composer, "say hi")
    chat.composer.submit()
    assert chat.composer.toPlainText() == "say hi"
    with LoopbackServer(model="local-coder") as server:
        server.script(Turn([Text("Hi from the local server.")]))
        qtbot.mouseClick(chat.empty_state.server_button, Qt.MouseButton.LeftButton)
        dialog = fresh.window.findChild(SettingsDialog, "settingsDialog")
        assert dialog is not None
        editor = dialog.providers_page.server_dialog
        assert editor is not None and editor.isVisible()
        qtbot.keyClicks(editor.name_edit, "Local")
        editor.url_edit.setText(server.openai_url)
        qtbot.mouseClick(editor.test_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: editor.checked_models() == ["local-coder"], timeout=10_000)
        with qtbot.waitSignal(dialog.providers_page.providersChanged):  # written in a worker
            editor.save()
        assert chat.model_state == READY and not chat.empty_state.isVisible()
        assert chat.footer.model_picker.current_key() == ("local", "local-coder")
        assert (
            chat.footer.model_picker.currentText() == "local-coder — Local"
        )  # the provider's name, not its id
        from piwork.gui.palette.sources import model_items

        details = {item.title: item.detail for item in model_items(fresh.model_choice)}
        assert details["local/local-coder"] == "local-coder"  # usable: no "cannot answer" mark
        assert all("cannot answer" in d for t, d in details.items() if t.startswith("anthropic/"))
        dialog.close()
        chat.composer.setFocus()
        qtbot.keyClick(chat.composer, Qt.Key.Key_Return)
        assert chat.composer.toPlainText() == ""
        qtbot.waitUntil(lambda: chat.model.rowCount() >= 2 and not chat.busy, timeout=10_000)
        rows = [chat.model.row_at(i) for i in range(chat.model.rowCount())]
        assert [r.kind for r in rows] == [RowKind.USER, RowKind.TEXT]
        assert rows[1].text == "Hi from the local server."


def test_a_model_without_key_asks_to_pick_another(
    qtbot: QtBot, fresh: SessionController, tmp_path: Path
) -> None:
    fresh.credentials.set_session_key("openai", "sk-test")
    fresh.model_choice.fill_pickers()
    chat = fresh.chat
    assert chat.model_state == CHOOSE and "Pick a model" in chat.empty_state.title.text()
    picker = chat.footer.model_picker
    usable = [i for i in range(picker.count()) if picker.is_selectable(i)]
    assert usable and all(picker.itemData(i)[0] == "openai" for i in usable)
    assert usable == list(range(1, len(usable) + 1))  # usable models come first, after the prompt


def test_over_a_conversation_the_empty_state_is_a_banner(qtbot: QtBot, fresh: SessionController) -> None:
    chat = fresh.chat
    chat.presenter.add_notice("Session file", "opened read-only")
    qtbot.wait(20)
    assert chat.empty_state.isVisible() and chat.view.isVisible()
    assert chat.view.height() > chat.empty_state.height()


def test_after_adding_a_server_from_the_empty_state_typing_goes_to_the_composer(
    qtbot: QtBot, fresh: SessionController
) -> None:
    """The button that opened Settings disappears with the empty state; the keyboard must not be left
    on a hidden control when the window is active again."""
    chat = fresh.chat
    fresh.window.activateWindow()
    chat.empty_state.server_button.setFocus()
    with LoopbackServer(model="local-coder") as server:
        qtbot.keyClick(chat.empty_state.server_button, Qt.Key.Key_Space)
        dialog = fresh.window.findChild(SettingsDialog, "settingsDialog")
        assert dialog is not None
        editor = dialog.providers_page.server_dialog
        assert editor is not None
        editor.url_edit.setText(server.openai_url)
        editor.name_edit.setText("Local")
        qtbot.mouseClick(editor.test_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: editor.checked_models() == ["local-coder"], timeout=10_000)
        with qtbot.waitSignal(dialog.providers_page.providersChanged):  # written in a worker
            editor.save()
        assert not chat.empty_state.isVisible()
        dialog.close()
    fresh.window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is fresh.window, timeout=5_000)
    assert fresh.window.focusWidget() is chat.composer
