"""The chat follows the newest message: sending scrolls to the bottom, and when the person scrolled up a
"Jump to latest" button brings them back and resumes following."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from piwork.gui.chat.chat_panel import ChatPanel
from piwork.gui.theme import load_theme


def _long_chat(qtbot: QtBot) -> ChatPanel:
    panel = ChatPanel(load_theme("light"))
    qtbot.addWidget(panel)
    panel.resize(600, 500)
    panel.show()
    qtbot.waitExposed(panel)
    messages: list[dict[str, Any]] = []
    for i in range(40):
        messages.append({"role": "user", "content": f"question {i}", "timestamp": 2 * i})
        reply = {"type": "text", "text": f"answer {i}\n\nwith a second paragraph"}
        messages.append(
            {"role": "assistant", "content": [reply], "stopReason": "stop", "timestamp": 2 * i + 1}
        )
    panel.presenter.show_messages(messages)
    bar = panel.view.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0 and bar.value() == bar.maximum())
    return panel


def test_scrolling_up_offers_jump_to_latest(qtbot: QtBot) -> None:
    panel = _long_chat(qtbot)
    view = panel.view
    bar = view.verticalScrollBar()
    assert not view.jump_button.isVisible()
    bar.setValue(0)
    qtbot.waitUntil(view.jump_button.isVisible)
    assert view.jump_button.text() == "Jump to latest ↓"
    assert view.viewport().geometry().contains(view.jump_button.geometry())
    qtbot.mouseClick(view.jump_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: bar.value() == bar.maximum())
    assert view.is_following() and not view.jump_button.isVisible()


def test_sending_scrolls_to_the_bottom(qtbot: QtBot) -> None:
    panel = _long_chat(qtbot)
    bar = panel.view.verticalScrollBar()
    bar.setValue(0)
    assert not panel.view.is_following()
    panel.composer.setFocus()
    qtbot.keyClicks(panel.composer, "one more question")
    with qtbot.waitSignal(panel.promptSubmitted):
        qtbot.keyClick(panel.composer, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: bar.value() == bar.maximum())
    assert panel.view.is_following() and not panel.view.jump_button.isVisible()
