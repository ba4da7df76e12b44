"""Each answer is headed with the model that wrote it and when: once per assistant message (its first row,
whether text, thinking or a tool call), for answers read from a session file and answers streamed live."""

from __future__ import annotations

import time
from datetime import date, datetime
from pathlib import Path

from PySide6.QtCore import QDateTime, QEvent, QLocale
from PySide6.QtGui import QHelpEvent
from PySide6.QtWidgets import QApplication, QToolTip
from pytestqt.qtbot import QtBot

from piwork.gui.chat.answer_header import head_label
from piwork.gui.chat.rows import ChatRow, RowKind
from piwork.gui.session_controller import SessionController
from tests.core.session.helpers import HEADER, user, write_session
from tests.gui.test_session_controller import controller, server  # noqa: F401  (fixtures)
from tests.support import LoopbackServer, Text, ToolCall, Turn


def _rows(ctl: SessionController) -> list[ChatRow]:
    model = ctl.chat.model
    return [model.row_at(i) for i in range(model.rowCount())]


def _short_time(ms: int) -> str:
    return QLocale().toString(
        QDateTime.fromMSecsSinceEpoch(ms).toLocalTime().time(), QLocale.FormatType.ShortFormat
    )


def _saved_session(path: Path, cwd: str, now_ms: int) -> Path:
    old_ms = 1_733_234_400_000  # 3 December 2024
    call = {"type": "toolCall", "id": "call_1", "name": "bash", "arguments": {"command": "ls"}}
    first = {
        "role": "assistant",
        "content": [{"type": "thinking", "thinking": "List it."}, {"type": "text", "text": "Listing."}, call],
        "provider": "anthropic",
        "model": "claude-sonnet-4",
        "stopReason": "toolUse",
        "timestamp": old_ms,
    }
    result = {
        "role": "toolResult",
        "toolCallId": "call_1",
        "toolName": "bash",
        "content": [{"type": "text", "text": "a.txt"}],
        "isError": False,
        "timestamp": old_ms + 1000,
    }
    second = {
        "role": "assistant",
        "content": [{"type": "text", "text": "There is **a.txt**."}],
        "provider": "openai",
        "model": "gpt-4o",
        "stopReason": "stop",
        "timestamp": now_ms,
    }

    def entry(entry_id: str, parent: str, message: dict[str, object]) -> dict[str, object]:
        return {
            "type": "message",
            "id": entry_id,
            "parentId": parent,
            "timestamp": HEADER["timestamp"],
            "message": message,
        }

    entries = [user("u1", None, "what is here?"), entry("a1", "u1", first), entry("r1", "a1", result)]
    entries.append(entry("a2", "r1", second))
    return write_session(path, entries, {**HEADER, "cwd": cwd})


def test_a_saved_answer_is_headed_with_its_model_and_time(
    qtbot: QtBot,
    controller: SessionController,  # noqa: F811
    tmp_path: Path,
) -> None:
    now_ms = int(time.time() * 1000)
    path = _saved_session(tmp_path / "saved.jsonl", controller.cwd, now_ms)
    controller.spawn(controller.open_session(str(path)))
    qtbot.waitUntil(lambda: len(_rows(controller)) == 5, timeout=10_000)
    you, thinking, text, card, answer = _rows(controller)
    assert [r.kind for r in (you, thinking, text, card, answer)] == [
        RowKind.USER,
        RowKind.THINKING,
        RowKind.TEXT,
        RowKind.TOOL,
        RowKind.TEXT,
    ]
    # the first row of each assistant message is headed, the other rows of the same reply are not
    assert you.head is None and text.head is None and card.head is None
    assert thinking.head is not None and answer.head is not None
    day = QDateTime.fromMSecsSinceEpoch(1_733_234_400_000).toLocalTime().date()
    old_day = (  # without a locale (the C locale) the month is named: "3 Dec 2024"
        QLocale().toString(day, "d MMM yyyy")
        if QLocale().language() == QLocale.Language.C
        else QLocale().toString(day, QLocale.FormatType.ShortFormat)
    )
    assert head_label(thinking.head) == f"claude-sonnet-4 · {old_day} {_short_time(1_733_234_400_000)}"
    assert head_label(answer.head) == f"gpt-4o · {_short_time(now_ms)}"  # today: the time alone
    # the head takes a line of its own above the row: the row is taller by it, its card starts below it
    view = controller.chat.view
    index = controller.chat.model.index(4)
    geo = view.chat_delegate.geometry(answer, view.visualRect(index))
    assert geo.head.height() > 0 and geo.head.bottom() < geo.body.top()
    headless = view.chat_delegate.geometry(text, view.visualRect(controller.chat.model.index(2)))
    assert headless.head.height() == 0
    # its tooltip names the provider too, with the full date
    pos = geo.head.center()
    QApplication.sendEvent(
        view.viewport(), QHelpEvent(QEvent.Type.ToolTip, pos, view.viewport().mapToGlobal(pos))
    )
    assert QToolTip.text().startswith("openai / gpt-4o\n")
    QToolTip.hideText()


def test_the_date_shows_only_when_it_is_not_today() -> None:
    from piwork.gui.chat.answer_meta import AnswerHead

    stamp = int(datetime(2026, 3, 4, 9, 5).timestamp() * 1000)
    head = AnswerHead("claude-sonnet-4", "anthropic", stamp)
    assert head_label(head, today=date(2026, 3, 4)) == f"claude-sonnet-4 · {_short_time(stamp)}"
    other_day = head_label(head, today=date(2026, 3, 5))
    assert other_day.startswith("claude-sonnet-4 · ") and other_day.endswith(_short_time(stamp))
    assert other_day != head_label(head, today=date(2026, 3, 4))
    assert head_label(AnswerHead("", "ollama", None)) == "ollama"  # no model named: the provider


def test_without_a_locale_the_date_names_its_month() -> None:
    """The C locale (no LANG set, as offscreen tests and many servers run) would write "4 3 2026"."""
    from piwork.gui.chat.answer_meta import AnswerHead

    previous = QLocale()
    QLocale.setDefault(QLocale.c())
    try:
        stamp = int(datetime(2026, 3, 4, 9, 5).timestamp() * 1000)
        label = head_label(AnswerHead("claude-sonnet-4", "anthropic", stamp), today=date(2026, 3, 5))
    finally:
        QLocale.setDefault(previous)
    assert label == f"claude-sonnet-4 · 4 Mar 2026 {_short_time(stamp)}"


def test_a_streamed_answer_is_headed_once_per_message(
    qtbot: QtBot,
    controller: SessionController,  # noqa: F811
    server: LoopbackServer,  # noqa: F811
) -> None:
    server.script(
        Turn([Text("Reading it."), ToolCall("read", {"path": "notes.txt"})]), Turn([Text("Alpha, beta.")])
    )
    before = int(time.time() * 1000)
    controller.submit("read notes.txt")
    qtbot.waitUntil(lambda: any(r.text == "Alpha, beta." for r in _rows(controller)), timeout=10_000)
    qtbot.waitUntil(lambda: not controller.chat.busy, timeout=10_000)
    rows = _rows(controller)
    assert [r.kind for r in rows] == [RowKind.USER, RowKind.TEXT, RowKind.TOOL, RowKind.TEXT]
    first, card, last = rows[1], rows[2], rows[3]
    assert card.head is None  # the same reply as the text above it
    for row in (first, last):
        assert row.head is not None and row.head.model == "loopback-model"
        assert row.head.timestamp is not None and row.head.timestamp >= before - 1000
        assert head_label(row.head) == f"loopback-model · {_short_time(row.head.timestamp)}"
