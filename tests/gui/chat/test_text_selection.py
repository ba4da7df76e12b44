"""Selecting the chat's text with the mouse and the keys, and copying it as plain text or as Markdown."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtCore import QEvent, QPoint, Qt
from PySide6.QtGui import QGuiApplication
from pytestqt.qtbot import QtBot

from piwork.gui.chat.chat_panel import ChatPanel
from piwork.gui.chat.conversation import prepare_conversation
from piwork.gui.chat.rows import RowKind
from piwork.gui.theme import load_theme
from tests.gui.chat.selection_support import LEFT, NO_BUTTON, char_pos, click, double_click, drag, send
from tests.support.long_session import long_conversation

REPLY = (
    "The **parser** reads the notes file and keeps every entry.\n\n"
    "Then it writes them back with `save_notes` when the session ends."
)
SECOND = "All modules pass their tests now."


def _messages() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": [{"type": "text", "text": "Explain the parser please"}], "timestamp": 1},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": REPLY}],
            "stopReason": "stop",
            "timestamp": 2,
        },
        {"role": "user", "content": [{"type": "text", "text": "And the tests?"}], "timestamp": 3},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": SECOND}],
            "stopReason": "stop",
            "timestamp": 4,
        },
    ]


_KEPT: list[ChatPanel] = []


@pytest.fixture(autouse=True)
def _panels_kept_to_teardown() -> Iterator[None]:
    """Each test's panel stays referenced until the test's teardown (qtbot keeps only a weak reference): a
    top-level widget left to the cycle collector could be freed while it paints."""
    yield
    _KEPT.clear()


def _panel(qtbot: QtBot, messages: list[dict[str, Any]] | None = None) -> ChatPanel:
    panel = ChatPanel(load_theme("light"))
    qtbot.addWidget(panel)
    _KEPT.append(panel)
    panel.resize(800, 700)
    panel.show()
    qtbot.waitExposed(panel)
    messages = messages if messages is not None else _messages()
    panel.presenter.show_messages(messages, prepare_conversation(messages))
    qtbot.waitUntil(lambda: panel.view.chat_delegate.pending_rows() == 0, timeout=10_000)
    panel.view.doItemsLayout()
    return panel


def _clipboard() -> str:
    return QGuiApplication.clipboard().text()


def test_dragging_within_a_reply_selects_and_copies_that_text(qtbot: QtBot) -> None:
    panel = _panel(qtbot)
    view = panel.view
    assert panel.model.row_at(1).kind is RowKind.TEXT
    doc = view.chat_delegate.body_document(panel.model.row_at(1))
    assert doc is not None
    text = doc.toPlainText()
    start, end = text.index("parser"), text.index(" file")
    drag(view, char_pos(view, 1, start), char_pos(view, 1, end))
    QGuiApplication.clipboard().clear()
    qtbot.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert _clipboard() == "parser reads the notes"
    # the rows were not selected as rows by the drag
    assert not view.selectionModel().selectedIndexes()
    qtbot.keyClick(
        view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    )
    assert _clipboard() == "**parser** reads the notes"


def test_dragging_across_two_messages_copies_both_parts(qtbot: QtBot) -> None:
    panel = _panel(qtbot)
    view = panel.view
    first = view.chat_delegate.body_document(panel.model.row_at(1))
    assert first is not None
    start = first.toPlainText().index("writes")
    drag(view, char_pos(view, 1, start), char_pos(view, 2, len("And the")))
    view.copy_selection()
    assert _clipboard() == "writes them back with save_notes when the session ends.\n\nAnd the"
    view.copy_markdown()
    assert _clipboard() == "writes them back with `save_notes` when the session ends.\n\nAnd the"


def test_a_row_covered_whole_is_copied_as_its_markdown_source(qtbot: QtBot) -> None:
    panel = _panel(qtbot)
    view = panel.view
    drag(view, char_pos(view, 0, len("Explain the ")), char_pos(view, 2, len("And")))
    view.copy_markdown()
    assert _clipboard() == f"parser please\n\n{REPLY}\n\nAnd"


def test_double_click_selects_a_word_and_a_third_click_its_paragraph(qtbot: QtBot) -> None:
    panel = _panel(qtbot)
    view = panel.view
    doc = view.chat_delegate.body_document(panel.model.row_at(1))
    assert doc is not None
    at = char_pos(view, 1, doc.toPlainText().index("notes") + 2)
    double_click(view, at)
    assert view.text_selector.text() == "notes"
    click(view, at)  # the third click, at once
    assert view.text_selector.text() == "The parser reads the notes file and keeps every entry."


def test_select_all_copy_and_escape(qtbot: QtBot) -> None:
    panel = _panel(qtbot)
    view = panel.view
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert _clipboard() == f"Explain the parser please\n\n{REPLY}\n\nAnd the tests?\n\n{SECOND}"
    qtbot.keyClick(view, Qt.Key.Key_Escape)
    assert not view.text_selector.has_text()
    # with no text selected, Ctrl+C copies the selected row whole, as before
    click(view, char_pos(view, 3, 3))
    assert not view.text_selector.has_text()
    qtbot.keyClick(view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert _clipboard() == SECOND


def test_shift_arrows_extend_the_selection_within_the_message(qtbot: QtBot) -> None:
    panel = _panel(qtbot)
    view = panel.view
    drag(view, char_pos(view, 3, 0), char_pos(view, 3, len("All")))
    assert view.text_selector.text() == "All"
    for _ in range(len(" modules")):
        qtbot.keyClick(view, Qt.Key.Key_Right, Qt.KeyboardModifier.ShiftModifier)
    assert view.text_selector.text() == "All modules"
    qtbot.keyClick(view, Qt.Key.Key_Left, Qt.KeyboardModifier.ShiftModifier)
    assert view.text_selector.text() == "All module"
    qtbot.keyClick(view, Qt.Key.Key_End, Qt.KeyboardModifier.ShiftModifier)
    assert view.text_selector.text() == SECOND


def test_a_click_elsewhere_clears_the_selection_and_headers_still_toggle(qtbot: QtBot) -> None:
    messages = _messages()
    messages[1]["content"].insert(0, {"type": "thinking", "thinking": "Let me read the parser first."})
    panel = _panel(qtbot, messages)
    view = panel.view
    thinking = panel.model.row_at(1)
    assert thinking.kind is RowKind.THINKING and thinking.collapsed
    drag(view, char_pos(view, 0, 0), char_pos(view, 0, len("Explain")))
    assert view.text_selector.text() == "Explain"
    geo = view.chat_delegate.geometry(thinking, view.visualRect(panel.model.index(1)))
    click(view, QPoint(geo.header.left() + 30, geo.header.center().y()))
    assert not view.text_selector.has_text()
    assert not thinking.collapsed  # a click without a drag still opens the thinking block
    # a drag that starts on the header selects and does not toggle it
    view.doItemsLayout()
    geo = view.chat_delegate.geometry(thinking, view.visualRect(panel.model.index(1)))
    drag(view, QPoint(geo.header.left() + 30, geo.header.center().y()), char_pos(view, 1, len("Let me")))
    assert not thinking.collapsed
    assert view.text_selector.text() == "Let me"


def test_shift_arrows_go_on_into_the_next_message(qtbot: QtBot) -> None:
    panel = _panel(qtbot)
    view = panel.view
    drag(view, char_pos(view, 2, len("And the")), char_pos(view, 2, len("And the tests?")))
    qtbot.keyClick(view, Qt.Key.Key_Right, Qt.KeyboardModifier.ShiftModifier)  # past the end: the next row
    qtbot.keyClick(view, Qt.Key.Key_Right, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClick(view, Qt.Key.Key_Right, Qt.KeyboardModifier.ShiftModifier)
    assert view.text_selector.text() == " tests?\n\nAl"


def test_a_drag_after_a_double_click_extends_by_whole_words(qtbot: QtBot) -> None:
    panel = _panel(qtbot)
    view = panel.view
    doc = view.chat_delegate.body_document(panel.model.row_at(1))
    assert doc is not None
    text = doc.toPlainText()
    at = char_pos(view, 1, text.index("notes") + 1)
    click(view, at)
    send(view, QEvent.Type.MouseButtonDblClick, at, LEFT, LEFT)  # the second press, held down
    send(view, QEvent.Type.MouseMove, char_pos(view, 1, text.index("file") + 2), NO_BUTTON, LEFT)
    assert view.text_selector.text() == "notes file"
    send(view, QEvent.Type.MouseMove, char_pos(view, 1, text.index("reads") + 2), NO_BUTTON, LEFT)
    assert view.text_selector.text() == "reads the notes"


def test_shift_click_extends_the_selection(qtbot: QtBot) -> None:
    panel = _panel(qtbot)
    view = panel.view
    drag(view, char_pos(view, 0, 0), char_pos(view, 0, len("Explain")))
    pos = char_pos(view, 2, len("And"))
    send(view, QEvent.Type.MouseButtonPress, pos, LEFT, LEFT, Qt.KeyboardModifier.ShiftModifier)
    send(view, QEvent.Type.MouseButtonRelease, pos, LEFT, NO_BUTTON, Qt.KeyboardModifier.ShiftModifier)
    assert view.text_selector.text() == f"Explain the parser please\n\n{REPLY}\n\nAnd"


def test_dragging_past_the_bottom_edge_scrolls_and_selects_on(qtbot: QtBot) -> None:
    panel = _panel(qtbot, long_conversation(60))
    view = panel.view
    bar = view.verticalScrollBar()
    view.scrollToTop()
    qtbot.waitUntil(lambda: bar.value() == 0)
    first = next(i for i in range(6) if panel.model.row_at(i).kind is RowKind.TEXT)
    start = char_pos(view, first, 2)
    send(view, QEvent.Type.MouseButtonPress, start, LEFT, LEFT)
    below = QPoint(start.x(), view.viewport().height() + 60)
    send(view, QEvent.Type.MouseMove, below, NO_BUTTON, LEFT)
    qtbot.waitUntil(lambda: bar.value() > view.viewport().height(), timeout=5_000)
    send(view, QEvent.Type.MouseButtonRelease, below, LEFT, NO_BUTTON)
    scrolled = bar.value()
    selection = view.text_selector.selection
    assert selection is not None
    last_on_screen = view.indexAt(QPoint(5, view.viewport().height() - 2)).row()
    assert selection.end.row >= panel.model.position_of_visible(last_on_screen)
    qtbot.wait(60)
    assert bar.value() == scrolled  # the release stopped the scrolling


def test_the_pointer_is_an_i_beam_over_text(qtbot: QtBot) -> None:
    messages = _messages()
    messages[1]["content"].insert(0, {"type": "thinking", "thinking": "Let me read the parser first."})
    panel = _panel(qtbot, messages)
    view = panel.view
    send(view, QEvent.Type.MouseMove, char_pos(view, 2, 4), NO_BUTTON, NO_BUTTON)
    assert view.viewport().cursor().shape() == Qt.CursorShape.IBeamCursor
    geo = view.chat_delegate.geometry(panel.model.row_at(1), view.visualRect(panel.model.index(1)))
    send(view, QEvent.Type.MouseMove, geo.header.center(), NO_BUTTON, NO_BUTTON)  # the thinking's header
    assert view.viewport().cursor().shape() != Qt.CursorShape.IBeamCursor


def test_with_no_text_selected_copy_as_markdown_takes_the_selected_rows_sources(qtbot: QtBot) -> None:
    panel = _panel(qtbot)
    view = panel.view
    click(view, char_pos(view, 1, 3))
    assert not view.text_selector.has_text()
    view.copy_markdown()
    assert _clipboard() == REPLY
    view.copy_selection()
    assert _clipboard() == REPLY  # a row copied whole gives its text as written, as ever
