"""Copy buttons: hovering a code block shows "Copy" at its top right and a click puts exactly its code on
the clipboard (tabs and all); a tool card's header copies the call's command. The row's context menu has
the same copies for the keyboard."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt, QTimer
from PySide6.QtGui import QContextMenuEvent, QGuiApplication
from PySide6.QtWidgets import QApplication, QMenu
from pytestqt.qtbot import QtBot

from piwork.gui.chat import code_copy
from piwork.gui.chat.chat_panel import ChatPanel
from piwork.gui.chat.code_copy import CopyButtons, CopyTarget, read_code_targets
from piwork.gui.chat.code_fences import fenced_code, person_markdown
from piwork.gui.chat.rows import ChatRow
from piwork.gui.theme import load_theme

MAKEFILE = "all: main.o util.o\n\tcc -o app main.o util.o\n\n\t@echo done"
SCRIPT = "make -j8 all"
COMMAND = "cd build &&\n  cmake .. && make -j8 2>&1 | tail -20"


def _messages() -> list[dict[str, Any]]:
    reply = (
        f"Use this **Makefile**:\n\n```make\n{MAKEFILE}\n```\n\nthen run:\n\n```sh\n{SCRIPT}\n```\n\nDone."
    )
    call = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": COMMAND}}
    return [
        {"role": "user", "content": "make it faster", "timestamp": 1},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": reply}],
            "stopReason": "stop",
            "timestamp": 2,
        },
        {"role": "user", "content": "and build it", "timestamp": 3},
        {"role": "assistant", "content": [call], "stopReason": "toolUse", "timestamp": 4},
        {
            "role": "toolResult",
            "toolCallId": "c1",
            "toolName": "bash",
            "content": [{"type": "text", "text": "[100%] Built target app"}],
            "isError": False,
            "timestamp": 5,
        },
    ]


def _panel(qtbot: QtBot) -> ChatPanel:
    panel = ChatPanel(load_theme("light"))
    qtbot.addWidget(panel)
    panel.resize(1000, 900)
    panel.show()
    qtbot.waitExposed(panel)
    panel.presenter.show_messages(_messages())
    qtbot.waitUntil(lambda: panel.view.chat_delegate.pending_rows() == 0, timeout=10_000)
    return panel


def _row(panel: ChatPanel, predicate: Any) -> tuple[int, ChatRow]:
    model = panel.model
    return next((i, model.row_at(i)) for i in range(model.rowCount()) if predicate(model.row_at(i)))


def test_clicking_a_code_blocks_copy_button_copies_exactly_its_code(qtbot: QtBot) -> None:
    panel = _panel(qtbot)
    view, buttons = panel.view, panel.view.chat_delegate.copy_buttons
    visible, reply = _row(panel, lambda r: "Makefile" in r.text)
    rect = view.visualRect(panel.model.index(visible))
    targets = buttons.targets(reply, rect)
    assert [t.text for t in targets] == [MAKEFILE, SCRIPT]  # as written: the tabs kept
    QGuiApplication.clipboard().setText("before")
    # hover the first block: its button shows
    qtbot.mouseMove(view.viewport(), targets[0].area.center())
    qtbot.waitUntil(lambda: buttons.hovered == (reply.key, 0))
    button = buttons.button(targets[0], reply)
    assert targets[0].area.contains(button) and button.right() > targets[0].area.center().x()  # top right
    qtbot.mouseMove(view.viewport(), button.center())
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=button.center())
    assert QGuiApplication.clipboard().text() == MAKEFILE
    assert buttons.copied == (reply.key, 0)  # the button says "Copied" a moment
    assert not view.selectionModel().isSelected(panel.model.index(visible))  # the click was the button's
    qtbot.waitUntil(lambda: buttons.copied is None, timeout=3000)
    # the second block's button copies the second block; a click on the code itself copies nothing
    second = buttons.button(targets[1], reply)
    qtbot.mouseMove(view.viewport(), second.center())
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=second.center())
    assert QGuiApplication.clipboard().text() == SCRIPT
    QGuiApplication.clipboard().setText("untouched")
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=targets[0].area.topLeft() + QPoint(4, 4))
    assert QGuiApplication.clipboard().text() == "untouched"


def test_the_button_is_painted_only_on_the_hovered_block(qtbot: QtBot) -> None:
    panel = _panel(qtbot)
    view, buttons = panel.view, panel.view.chat_delegate.copy_buttons
    visible, reply = _row(panel, lambda r: "Makefile" in r.text)
    targets = buttons.targets(reply, view.visualRect(panel.model.index(visible)))
    button = buttons.button(targets[0], reply)
    plain = view.viewport().grab().toImage().copy(button)
    qtbot.mouseMove(view.viewport(), targets[0].area.center())
    qtbot.waitUntil(lambda: buttons.hovered == (reply.key, 0))
    view.viewport().repaint()
    hovered = view.viewport().grab().toImage().copy(button)
    assert hovered != plain  # the "Copy" chip is drawn there now
    qtbot.mouseMove(view.viewport(), QPoint(2, view.viewport().height() - 2))
    qtbot.waitUntil(lambda: buttons.hovered != (reply.key, 0))


def test_a_tool_cards_header_copies_its_whole_command(qtbot: QtBot) -> None:
    panel = _panel(qtbot)
    view, buttons = panel.view, panel.view.chat_delegate.copy_buttons
    visible, card = _row(panel, lambda r: r.tool is not None)
    rect = view.visualRect(panel.model.index(visible))
    (target,) = buttons.targets(card, rect)
    assert target.text == COMMAND and target.label == "Copy command"
    header = view.chat_delegate.geometry(card, rect).header
    qtbot.mouseMove(view.viewport(), header.center())
    qtbot.waitUntil(lambda: buttons.hovered == (card.key, 0))
    button = buttons.button(target, card)
    assert header.contains(button.center())
    qtbot.mouseMove(view.viewport(), button.center())
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=button.center())
    assert QGuiApplication.clipboard().text() == COMMAND  # every line, not the summary's first
    assert card.collapsed  # the click copied; it did not open the card


def _menu_entries(view: Any, visible: int, reason: QContextMenuEvent.Reason, pos: QPoint) -> list[str]:
    """Open the row's context menu as the keyboard (or mouse) does; the entries' texts."""
    seen: list[str] = []

    def read_and_close() -> None:
        menu = QApplication.activePopupWidget()
        assert isinstance(menu, QMenu)
        seen.extend(a.text() for a in menu.actions() if not a.isSeparator())
        entry = next((a for a in menu.actions() if a.text().startswith(("Copy code", "Copy command"))), None)
        if entry is not None:
            entry.trigger()
        menu.close()

    QTimer.singleShot(0, read_and_close)
    view.setCurrentIndex(view.model().index(visible))
    view.contextMenuEvent(QContextMenuEvent(reason, pos, view.viewport().mapToGlobal(pos)))
    return seen


def test_the_context_menu_copies_code_blocks_and_commands(qtbot: QtBot) -> None:
    panel = _panel(qtbot)
    view = panel.view
    visible, reply = _row(panel, lambda r: "Makefile" in r.text)
    rect = view.visualRect(panel.model.index(visible))
    entries = _menu_entries(view, visible, QContextMenuEvent.Reason.Keyboard, rect.center())
    assert [e for e in entries if "code block" in e] == [
        "Copy code block 1 (make: all: main.o util.o)",
        "Copy code block 2 (sh: make -j8 all)",
    ]
    assert QGuiApplication.clipboard().text() == MAKEFILE
    second = view.chat_delegate.copy_buttons.targets(reply, rect)[1].area.center()
    entries = _menu_entries(view, visible, QContextMenuEvent.Reason.Mouse, second)
    assert [e for e in entries if "code block" in e] == ["Copy code block"]  # the one under the pointer
    assert QGuiApplication.clipboard().text() == SCRIPT
    visible, _card = _row(panel, lambda r: r.tool is not None)
    rect = view.visualRect(panel.model.index(visible))
    entries = _menu_entries(view, visible, QContextMenuEvent.Reason.Keyboard, rect.center())
    assert "Copy command" in entries
    assert QGuiApplication.clipboard().text() == COMMAND


def test_fences_are_read_as_written() -> None:
    text = "a\n\n```go\nfunc f() {\n\treturn\n}\n```\n- item\n\n  ~~~\n  indented\n   more\n  ~~~\n````\nx ``` y\n````"
    assert [(b.language, b.code) for b in fenced_code(text)] == [
        ("go", "func f() {\n\treturn\n}"),
        ("", "indented\n more"),
        ("", "x ``` y"),
    ]
    assert fenced_code("no fences here") == []
    assert person_markdown("one\ntwo\n\n```\nkeep\nas is\n```") == "one  \ntwo\n\n```\nkeep\nas is\n```"


def test_copy_buttons_cost_nothing_for_rows_never_hovered(qtbot: QtBot) -> None:
    panel = _panel(qtbot)
    buttons: CopyButtons = panel.view.chat_delegate.copy_buttons
    assert buttons._found == {}  # painting rows looks for no code blocks


def test_a_long_messages_code_blocks_are_found_a_few_milliseconds_at_a_time(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hovering the last of many code blocks: the blocks are found over several event-loop turns (here
    every fifty blocks: no time budget) and its button shows once they are."""
    monkeypatch.setattr(code_copy, "READ_BUDGET_S", 0.0)
    monkeypatch.setattr(code_copy, "PAUSE_BLOCKS", 50)
    text = "".join(f"Step {i}:\n\n```python\nprint({i})\nx = {i}\n```\n\n" for i in range(120))
    panel = ChatPanel(load_theme("light"))
    qtbot.addWidget(panel)
    panel.resize(1000, 800)
    panel.show()
    qtbot.waitExposed(panel)
    delegate = panel.view.chat_delegate
    message = {"role": "assistant", "content": [{"type": "text", "text": text}], "stopReason": "stop"}
    panel.presenter.show_messages([{**message, "timestamp": 1}])
    view, model = panel.view, panel.model
    row = model.row_at(0)

    def rendered() -> bool:  # a long reply is rendered in slices; its plain text shows meanwhile
        doc = delegate.body_document(row)
        return doc is not None and "```" not in doc.toPlainText()

    qtbot.waitUntil(rendered, timeout=20_000)
    qtbot.waitUntil(lambda: view.chat_delegate.pending_rows() == 0)
    view.scrollToBottom()
    doc = delegate.body_document(row)
    assert doc is not None
    found: list[CopyTarget] = []
    for _pause in read_code_targets(doc, text, found):  # where the last block is, read as the view does
        pass
    assert len(found) == 120 and found[-1].text == "print(119)\nx = 119"
    rect = view.visualRect(model.index(0))
    last = found[-1].area.translated(delegate.geometry(row, rect).body.topLeft())
    assert view.viewport().rect().contains(last.center())
    qtbot.mouseMove(view.viewport(), last.center())
    buttons = delegate.copy_buttons
    assert buttons.hovered is None  # only the first blocks are found at once
    qtbot.waitUntil(lambda: buttons.hovered == (row.key, 119), timeout=10_000)
