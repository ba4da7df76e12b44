"""Opening a tool card with a long output keeps its header where it was clicked, whether the chat followed
the bottom or the person had scrolled: the output opens below the header, the view does not jump."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt
from pytestqt.qtbot import QtBot

from piwork.gui.chat.chat_panel import ChatPanel
from piwork.gui.theme import load_theme


def _session() -> list[dict[str, Any]]:
    seq = "\n".join(str(n) for n in range(1, 5001))
    call = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "seq 1 5000"}}
    listing = "\n".join(f"-rw-r--r-- 1 me me {n * 37} file{n}.py" for n in range(30))
    return [
        {"role": "user", "content": [{"type": "text", "text": "count to 5000"}], "timestamp": 1},
        {"role": "assistant", "content": [{"type": "text", "text": "Running it."}, call], "timestamp": 2},
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "bash",
            "content": [{"type": "text", "text": seq}],
        },
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "It printed 5000 lines."}],
            "timestamp": 4,
        },
        {"role": "user", "content": [{"type": "text", "text": "list the files"}], "timestamp": 5},
        {
            "role": "assistant",
            "content": [{"type": "toolCall", "id": "c2", "name": "bash", "arguments": {"command": "ls -l"}}],
            "timestamp": 6,
        },
        {
            "role": "toolResult",
            "toolCallId": "c2",
            "toolName": "bash",
            "content": [{"type": "text", "text": listing}],
        },
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Thirty files.\n\nDone."}],
            "timestamp": 8,
        },
    ]


def _panel(qtbot: QtBot) -> ChatPanel:
    panel = ChatPanel(load_theme("light"))
    qtbot.addWidget(panel)
    panel.resize(1000, 700)
    panel.show()
    qtbot.waitExposed(panel)
    panel.presenter.show_messages(_session())
    view = panel.view
    bar = view.verticalScrollBar()
    qtbot.waitUntil(lambda: view.chat_delegate.pending_rows() == 0 and bar.value() == bar.maximum() > 0)
    return panel


@pytest.mark.parametrize("following", [True, False])
def test_opening_a_card_keeps_its_header_in_place(qtbot: QtBot, following: bool) -> None:
    panel = _panel(qtbot)
    view, model = panel.view, panel.model
    bar = view.verticalScrollBar()
    visible = next(i for i in range(model.rowCount()) if model.row_at(i).tool is not None)
    card = model.row_at(visible)
    assert card.collapsed
    if not following:
        bar.setValue(bar.maximum() - 20)
    assert view.is_following() is following
    before = view.visualRect(model.index(visible))
    assert view.viewport().rect().contains(before.topLeft() + QPoint(60, 14))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=before.topLeft() + QPoint(60, 14))
    qtbot.waitUntil(lambda: not card.collapsed)
    qtbot.waitUntil(lambda: view.visualRect(model.index(visible)).height() > 20 * before.height())
    assert view.visualRect(model.index(visible)).top() == before.top()
    view.scrollTo(model.index(visible))  # what Qt does a moment after a click on the row
    assert view.visualRect(model.index(visible)).top() == before.top()
    assert not view.is_following() and view.jump_button.isVisible()
