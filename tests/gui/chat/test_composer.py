"""Composer keys: Enter sends, Shift+Enter breaks, Up/Down history, Esc stops; slash commands."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from piwork.gui.chat.chat_panel import ChatPanel
from piwork.gui.chat.composer import Composer
from piwork.gui.commands import parse_slash


def _composer(qtbot: QtBot) -> Composer:
    composer = Composer()
    qtbot.addWidget(composer)
    composer.show()
    composer.setFocus()
    return composer


def test_enter_sends_and_shift_enter_adds_a_line(qtbot: QtBot) -> None:
    composer = _composer(qtbot)
    qtbot.keyClicks(composer, "first")
    qtbot.keyClick(composer, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(composer, "second")
    with qtbot.waitSignal(composer.submitted) as sent:
        qtbot.keyClick(composer, Qt.Key.Key_Return)
    assert sent.args == ["first\nsecond"]
    assert composer.toPlainText() == ""


def test_blank_text_is_not_sent(qtbot: QtBot) -> None:
    composer = _composer(qtbot)
    with qtbot.assertNotEmitted(composer.submitted):
        qtbot.keyClicks(composer, "   ")
        qtbot.keyClick(composer, Qt.Key.Key_Return)


def test_up_and_down_walk_the_history_and_keep_the_draft(qtbot: QtBot) -> None:
    composer = _composer(qtbot)
    for text in ("one", "two"):
        qtbot.keyClicks(composer, text)
        qtbot.keyClick(composer, Qt.Key.Key_Return)
    qtbot.keyClicks(composer, "draft")
    qtbot.keyClick(composer, Qt.Key.Key_Up)
    assert composer.toPlainText() == "two"
    qtbot.keyClick(composer, Qt.Key.Key_Up)
    assert composer.toPlainText() == "one"
    qtbot.keyClick(composer, Qt.Key.Key_Up)
    assert composer.toPlainText() == "one"
    qtbot.keyClick(composer, Qt.Key.Key_Down)
    qtbot.keyClick(composer, Qt.Key.Key_Down)
    assert composer.toPlainText() == "draft"


def test_up_inside_a_multiline_message_moves_the_cursor(qtbot: QtBot) -> None:
    composer = _composer(qtbot)
    composer.remember("old")
    composer.set_text("line 1\nline 2")
    qtbot.keyClick(composer, Qt.Key.Key_Up)
    assert composer.toPlainText() == "line 1\nline 2"


def test_escape_and_stop_button_stop_only_while_busy(qtbot: QtBot) -> None:
    panel = ChatPanel()
    qtbot.addWidget(panel)
    panel.show()
    with qtbot.assertNotEmitted(panel.stopRequested):
        qtbot.keyClick(panel.composer, Qt.Key.Key_Escape)
    panel.set_busy(True)
    with qtbot.waitSignal(panel.stopRequested):
        qtbot.keyClick(panel.composer, Qt.Key.Key_Escape)
    with qtbot.waitSignal(panel.stopRequested):
        panel.send_button.click()
    with qtbot.waitSignal(panel.promptSubmitted) as steer:
        panel.composer.set_text("also check tests")
        panel.send_button.click()
    assert steer.args == ["also check tests"]


def test_slash_commands_are_routed(qtbot: QtBot) -> None:
    panel = ChatPanel()
    qtbot.addWidget(panel)
    with qtbot.waitSignal(panel.commandSubmitted) as command:
        panel.composer.set_text("/compact keep the API decisions")
        panel.composer.submit()
    assert command.args[0].name == "compact" and command.args[0].args == "keep the API decisions"
    with qtbot.waitSignal(panel.promptSubmitted) as prompt:
        panel.composer.set_text("/skill:review src/app.py")
        panel.composer.submit()
    assert prompt.args == ["/skill:review src/app.py"]


def test_parse_slash() -> None:
    assert parse_slash("hello") is None
    assert parse_slash("/") is None
    assert parse_slash("// not a command") is None
    assert parse_slash("/ spaced") is None
    tree = parse_slash("/tree")
    assert tree is not None and tree.name == "tree" and tree.args == "" and tree.known
    skill = parse_slash("/skill:lint  fix all ")
    assert skill is not None and skill.name == "skill" and skill.skill == "lint" and skill.args == "fix all"
    template = parse_slash("/review the diff")
    assert template is not None and not template.known


def test_copy_selected_chat_rows(qtbot: QtBot) -> None:
    from PySide6.QtGui import QGuiApplication

    panel = ChatPanel()
    qtbot.addWidget(panel)
    panel.show()
    panel.presenter.show_messages(
        [
            {"role": "user", "content": "first question", "timestamp": 1},
            {
                "role": "assistant",
                "content": [{"type": "text", "text": "an answer"}],
                "stopReason": "stop",
                "timestamp": 2,
            },
        ]
    )
    panel.view.selectAll()
    panel.view.setFocus()
    qtbot.keyClick(panel.view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text() == "first question\n\nan answer"


def test_escape_closes_the_command_completer_and_enter_runs_a_whole_command(qtbot: QtBot) -> None:
    composer = _composer(qtbot)
    qtbot.waitUntil(composer.hasFocus)
    stops: list[bool] = []
    composer.stopRequested.connect(lambda: stops.append(True))
    popup = composer._completer.popup()
    assert popup is not None
    qtbot.keyClicks(composer, "/compact")
    qtbot.waitUntil(popup.isVisible)
    qtbot.keyClick(popup, Qt.Key.Key_Escape)  # keys reach the open popup first, as on screen
    assert not popup.isVisible()
    assert stops == []  # closing the list is not a request to stop the agent
    assert composer.toPlainText() == "/compact"

    composer.clear()
    qtbot.keyClicks(composer, "/compact")
    qtbot.waitUntil(popup.isVisible)
    with qtbot.waitSignal(composer.submitted) as sent:  # typed in full: Enter runs it
        qtbot.keyClick(popup, Qt.Key.Key_Return)
    assert sent.args == ["/compact"]
    assert not popup.isVisible()


def test_the_button_says_what_a_click_does_while_the_agent_works(qtbot: QtBot) -> None:
    from piwork.gui.theme import load_theme

    panel = ChatPanel(load_theme("light"))
    qtbot.addWidget(panel)
    panel.show()
    panel.set_busy(True)
    assert panel.send_button.text() == "Stop"
    panel.composer.set_text("also check README")  # a click now sends this after the current step
    assert panel.send_button.text() == "Send"
    with qtbot.waitSignal(panel.composer.submitted):
        panel.send_button.click()
    assert panel.send_button.text() == "Stop"  # the editor is empty again
    stops: list[bool] = []
    panel.stopRequested.connect(lambda: stops.append(True))
    panel.send_button.click()
    assert stops == [True]
    panel.set_busy(False)
    assert panel.send_button.text() == "Send"


def test_a_new_placeholder_is_painted_at_once(qtbot: QtBot) -> None:
    """Qt repaints an editor's placeholder only when it appears or goes; a changed placeholder on an empty
    editor (the agent starting or finishing) must be painted too, or the old words stay on screen."""
    from PySide6.QtCore import QEvent, QObject

    from piwork.gui.theme import load_theme

    panel = ChatPanel(load_theme("light"))
    qtbot.addWidget(panel)
    panel.show()
    qtbot.waitExposed(panel)
    paints: list[int] = []

    class Counter(QObject):
        def eventFilter(self, watched: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint:
                paints.append(1)
            return False

    counter = Counter(panel)
    panel.composer.viewport().installEventFilter(counter)
    for busy in (True, False):
        before = len(paints)
        panel.set_busy(busy)
        qtbot.waitUntil(lambda before=before: len(paints) > before, timeout=2000)
