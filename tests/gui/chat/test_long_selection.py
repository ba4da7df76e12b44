"""A text selection over a 100,000-message conversation stays cheap: selecting all of it, or dragging from
one row to another thousands of rows further, and copying, keep each GUI-thread event short (the stall
guard) and build no document for the rows between the ends; the text is joined in a worker thread."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from PySide6.QtCore import QEvent, QPoint, Qt, QTimer
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from piwork.gui.chat.chat_panel import ChatPanel
from piwork.gui.chat.conversation import prepare_conversation
from piwork.gui.chat.markdown import warm_up_lexers
from piwork.gui.chat.rows import RowKind
from piwork.gui.chat.text_selection import row_plain_text
from piwork.gui.theme import load_theme
from tests.gui.chat.selection_support import LEFT, NO_BUTTON, char_pos, click, send
from tests.support.long_session import long_conversation

MESSAGES = 100_000


def _messages() -> list[dict[str, Any]]:
    return long_conversation(MESSAGES)


def _in_event(qtbot: QtBot, act: Callable[[], object]) -> None:
    """Run ``act`` from an event of the loop, as a key or a click would, so the stall guard measures it
    (the test's own code between waits is never charged to an event)."""
    done: list[bool] = []
    QTimer.singleShot(0, lambda: done.append(bool(act()) or True))
    qtbot.waitUntil(lambda: bool(done), timeout=10_000)


def _key(qtbot: QtBot, view: QWidget, key: Qt.Key, modifiers: Qt.KeyboardModifier) -> None:
    _in_event(qtbot, lambda: qtbot.keyClick(view, key, modifiers))


_KEPT: list[ChatPanel] = []


@pytest.fixture(autouse=True)
def _panels_kept_to_teardown() -> Iterator[None]:
    """Each test's panel stays referenced until the test's teardown (qtbot keeps only a weak reference): a
    top-level widget left to the cycle collector could be freed while it paints."""
    yield
    _KEPT.clear()


def _panel(qtbot: QtBot) -> ChatPanel:
    panel = ChatPanel(load_theme("light"))
    qtbot.addWidget(panel)
    _KEPT.append(panel)
    panel.resize(900, 700)
    panel.show()
    qtbot.waitExposed(panel)
    warm_up = threading.Thread(target=warm_up_lexers)
    warm_up.start()
    warm_up.join()
    messages = _messages()
    panel.presenter.show_messages(messages, prepare_conversation(messages))
    qtbot.waitUntil(lambda: panel.view.chat_delegate.pending_rows() == 0, timeout=30_000)
    return panel


def test_selections_over_thousands_of_rows_build_no_documents_between_their_ends(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop
) -> None:
    panel = _panel(qtbot)
    view, model = panel.view, panel.model
    for _ in range(10):  # 2,000 more rows shown: "show earlier" clicked that often (it stays at the top)
        _in_event(qtbot, lambda: click(view, view.visualRect(model.index(0)).center()))
    qtbot.waitUntil(lambda: view.chat_delegate.pending_rows() == 0, timeout=30_000)
    assert view.verticalScrollBar().value() == 0
    first = next(i for i in range(1, 10) if model.row_at(i).kind is RowKind.TEXT)
    start = char_pos(view, first, 8)
    first_doc = view.chat_delegate.body_document(model.row_at(first))
    assert first_doc is not None
    head = first_doc.toPlainText()[8:]
    _in_event(qtbot, lambda: send(view, QEvent.Type.MouseButtonPress, start, LEFT, LEFT))
    _in_event(qtbot, lambda: send(view, QEvent.Type.MouseMove, start + QPoint(0, 30), NO_BUTTON, LEFT))
    _in_event(qtbot, view.scrollToBottom)
    last = model.rowCount() - 1
    end = char_pos(view, last, 4)
    _in_event(qtbot, lambda: send(view, QEvent.Type.MouseMove, end, NO_BUTTON, LEFT))
    _in_event(qtbot, lambda: send(view, QEvent.Type.MouseButtonRelease, end, LEFT, NO_BUTTON))
    selection = view.text_selector.selection
    assert selection is not None
    assert selection.end.row - selection.start.row > 2_000
    middle = model.row_at(model.rowCount() // 2)
    assert not view.chat_delegate.documents.holds(middle)
    QGuiApplication.clipboard().clear()
    _in_event(qtbot, view.copy_selection)
    qtbot.waitUntil(lambda: not view.text_selector.copying(), timeout=30_000)
    text = QGuiApplication.clipboard().text()
    assert text.startswith(head + "\n\n")
    assert text.endswith("\n\n" + model.row_at(last).text[:4])
    assert row_plain_text(middle) in text
    assert not view.chat_delegate.documents.holds(middle)

    # Ctrl+A: the whole conversation, the rows behind "show earlier" included
    assert model.total_rows() > MESSAGES and model.hidden_count > 0
    QGuiApplication.clipboard().clear()
    view.setFocus()
    _key(qtbot, view, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    _key(qtbot, view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: not view.text_selector.copying(), timeout=30_000)
    text = QGuiApplication.clipboard().text()
    rows = model.all_rows()
    assert text.startswith(rows[0].text + "\n\n")
    assert text.endswith("\n\n" + rows[-1].text)
    assert rows[len(rows) // 2].text in text  # the rows behind "show earlier" too
    hidden = rows[model.hidden_count // 2]
    assert not view.chat_delegate.documents.holds(hidden)

    _key(qtbot, view, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(lambda: not view.text_selector.copying(), timeout=30_000)
    markdown = QGuiApplication.clipboard().text()
    reply = next(row for row in rows[len(rows) // 2 :] if row.kind is RowKind.TEXT)
    assert "**module" in reply.text and f"\n\n{reply.text}\n\n" in markdown  # its Markdown source
