"""A long branch shows the rows of its last messages first; the rows of the earlier ones, built after in a
worker, go behind "show earlier" without moving anything shown, and the chat then holds what building the
whole branch at once gives (the same rows, the message each starts, every tool card with its result)."""

from __future__ import annotations

import threading

from pytestqt.qtbot import QtBot

from piwork.gui.chat.chat_panel import ChatPanel
from piwork.gui.chat.conversation import (
    FIRST_TAIL,
    prepare_conversation,
    prepare_earlier,
    prepare_tail,
)
from piwork.gui.chat.markdown import warm_up_lexers
from piwork.gui.chat.rows import RowKind
from piwork.gui.chat.text_selection import TextPoint, TextSelection
from piwork.gui.theme import load_theme
from tests.support.long_session import long_conversation


def _panel(qtbot: QtBot) -> ChatPanel:
    panel = ChatPanel(load_theme("light"))
    qtbot.addWidget(panel)
    panel.resize(900, 800)
    panel.show()
    qtbot.waitExposed(panel)
    warm_up = threading.Thread(target=warm_up_lexers)
    warm_up.start()
    warm_up.join()
    return panel


def _texts(rows: list) -> list[tuple[str, str]]:  # type: ignore[type-arg]
    return [(str(row.kind), row.plain_text()) for row in rows]


def test_the_tail_starts_at_a_prompt_and_the_earlier_rows_complete_it() -> None:
    messages = long_conversation(2_000)
    whole = prepare_conversation(messages)
    tail = prepare_tail(messages, FIRST_TAIL)
    assert 0 < tail.earlier <= len(messages) - FIRST_TAIL
    assert messages[tail.earlier]["role"] == "user"
    assert tail.current_for(messages)  # it stands for the whole branch (the window's check)
    earlier = prepare_earlier(tail)
    assert _texts(earlier.rows + tail.rows) == _texts(whole.rows)
    assert len(earlier.message_rows) + len(tail.message_rows) == len(whole.message_rows)
    assert tail.cards and all(card.status == "done" for card in tail.cards.values())
    short = long_conversation(300)
    assert prepare_tail(short, FIRST_TAIL).earlier == 0  # short enough: built whole


def test_earlier_rows_go_behind_show_earlier_and_keep_what_is_shown(qtbot: QtBot) -> None:
    panel = _panel(qtbot)
    model, presenter, view = panel.model, panel.presenter, panel.view
    messages = long_conversation(2_000)
    tail = prepare_tail(messages, FIRST_TAIL)
    presenter.show_messages(messages, tail)
    shown = [model.row_at(i) for i in range(model.rowCount())]
    assert shown[0].kind is RowKind.MORE and model.hidden_count == len(tail.rows) - (len(shown) - 1)
    newest = shown[-1]
    point = model.position_of_key(newest.key)
    assert point is not None
    panel.view.text_selector.select(TextSelection(TextPoint(point, 0), TextPoint(point, 5)))
    selected = panel.view.text_selector.text()
    assert selected
    earlier = prepare_earlier(tail)
    assert presenter.show_earlier_rows(tail, earlier)
    assert [model.row_at(i) for i in range(1, model.rowCount())] == shown[1:]  # nothing shown moved
    whole = prepare_conversation(messages)
    assert model.total_rows() == len(whole.rows)
    assert _texts(model.all_rows()) == _texts(whole.rows)
    assert model.hidden_count == len(whole.rows) - (len(shown) - 1)
    selection = panel.view.text_selector.selection
    assert selection is not None and selection.anchor.row == model.position_of_key(newest.key)
    assert panel.view.text_selector.text() == selected
    assert len(presenter.message_rows()) == len(whole.message_rows)
    first_message = messages[0]
    assert presenter.row_key_for_message(first_message) == earlier.rows[0].key
    assert presenter.message_of_row(earlier.rows[0].key) is first_message
    assert not presenter.show_earlier_rows(tail, earlier)  # once only
    # the rows behind "show earlier" are revealed page by page as before, the oldest ones too
    while model.show_earlier():
        pass
    assert model.row_at(0) is earlier.rows[0]
    qtbot.waitUntil(lambda: view.chat_delegate.pending_rows() == 0, timeout=30_000)


def test_earlier_rows_are_dropped_once_other_rows_are_shown(qtbot: QtBot) -> None:
    panel = _panel(qtbot)
    presenter, model = panel.presenter, panel.model
    messages = long_conversation(2_000)
    tail = prepare_tail(messages, FIRST_TAIL)
    presenter.show_messages(messages, tail)
    other = long_conversation(100)
    presenter.show_messages(other, prepare_conversation(other))  # e.g. a move in the tree meanwhile
    assert not presenter.show_earlier_rows(tail, prepare_earlier(tail))
    assert _texts(model.all_rows()) == _texts(prepare_conversation(other).rows)


def test_a_result_after_the_first_prompt_shown_whose_call_is_earlier_has_its_card(qtbot: QtBot) -> None:
    panel = _panel(qtbot)
    presenter, model = panel.presenter, panel.model
    messages = long_conversation(2_000)
    start = prepare_tail(messages, FIRST_TAIL).earlier
    call = next(
        block
        for message in reversed(messages[:start])
        if message["role"] == "assistant"
        for block in message["content"]
        if block.get("type") == "toolCall"
    )
    late = {
        "role": "toolResult",
        "toolCallId": call["id"],
        "toolName": call["name"],
        "content": [{"type": "text", "text": "answered after the prompt"}],
        "isError": False,
        "timestamp": 1,
    }
    messages.insert(start + 1, late)
    tail = prepare_tail(messages, FIRST_TAIL)
    assert tail.earlier == start and call["id"] in tail.unanswered
    presenter.show_messages(messages, tail)
    earlier = prepare_earlier(tail)
    assert earlier.whole
    assert presenter.show_earlier_rows(tail, earlier)
    whole = prepare_conversation(messages)
    assert _texts(model.all_rows()) == _texts(whole.rows)
    card = next(row for row in model.all_rows() if row.tool is not None and row.tool.call_id == call["id"])
    assert "answered after the prompt" in card.tool.result_text  # type: ignore[union-attr]
