"""The presenter turns engine events into rows, batching deltas; the view paints and toggles them."""

from __future__ import annotations

import asyncio
from typing import Any

from PySide6.QtCore import QPoint
from pytestqt.qtbot import QtBot

from piwork.core.agent import events as ev
from piwork.core.llm import types as lt
from piwork.gui.chat.chat_panel import ChatPanel
from piwork.gui.chat.delegate import skill_title, tool_title
from piwork.gui.chat.rows import RowKind
from piwork.gui.chat.tool_views import cut_text, view_for
from piwork.gui.theme import load_theme


def _panel(qtbot: QtBot) -> ChatPanel:
    panel = ChatPanel(load_theme("light"))
    qtbot.addWidget(panel)
    panel.resize(700, 600)
    panel.show()
    qtbot.waitExposed(panel)
    return panel


def _stream_text(panel: ChatPanel, message: dict[str, Any], index: int, chunks: list[str]) -> None:
    message["content"].append({"type": "text", "text": ""})
    panel.presenter.handle(ev.MessageUpdate(message, lt.TextStartEvent(index, message)))
    for chunk in chunks:
        message["content"][index]["text"] += chunk
        panel.presenter.handle(ev.MessageUpdate(message, lt.TextDeltaEvent(index, chunk, message)))


def test_deltas_are_batched_and_appended(qtbot: QtBot) -> None:
    panel = _panel(qtbot)
    changes: list[int] = []
    panel.model.rowChangedInPlace.connect(changes.append)
    message: dict[str, Any] = {"role": "assistant", "content": [], "timestamp": 1}
    panel.presenter.handle(ev.MessageStart(message))
    _stream_text(panel, message, 0, [f"word{i} " for i in range(500)])
    assert changes == []  # nothing applied synchronously per delta
    with qtbot.waitSignal(panel.presenter.flushed, timeout=1000):
        pass
    row = panel.model.row_at(0)
    assert row.kind is RowKind.TEXT and row.streaming
    assert row.text == "".join(f"word{i} " for i in range(500)), row.text[:80]
    assert len(changes) == 1  # 500 deltas -> one row update
    final = message["content"][0]["text"]
    panel.presenter.handle(ev.MessageUpdate(message, lt.TextEndEvent(0, final, message)))
    message["stopReason"] = "stop"
    panel.presenter.handle(ev.MessageEnd(message))
    assert not row.streaming and row.text == final


def test_tool_card_lifecycle_and_truncated_badge(qtbot: QtBot) -> None:
    panel = _panel(qtbot)
    p = panel.presenter
    message: dict[str, Any] = {"role": "assistant", "content": [], "timestamp": 1}
    p.handle(ev.AgentStart())
    assert panel.send_button.text() == "Stop"
    p.handle(ev.MessageStart(message))
    call = {"type": "toolCall", "id": "call_1", "name": "bash", "arguments": {}}
    message["content"].append(call)
    p.handle(ev.MessageUpdate(message, lt.ToolCallStartEvent(0, message)))
    call["arguments"] = {"command": "ls -la"}
    p.handle(ev.MessageUpdate(message, lt.ToolCallDeltaEvent(0, '{"command":"ls -la"}', message)))
    p.handle(ev.MessageUpdate(message, lt.ToolCallEndEvent(0, call, message)))
    message["stopReason"] = "toolUse"
    p.handle(ev.MessageEnd(message))
    card_row = panel.model.row_at(0)
    assert card_row.tool is not None and card_row.tool.status == "pending"
    assert view_for("bash").summary(card_row.tool) == "ls -la"
    p.handle(ev.ToolExecutionStart("call_1", "bash", {"command": "ls -la"}))
    assert card_row.tool.status == "running"
    p.handle(ev.ToolExecutionUpdate("call_1", "bash", {}, {"content": [{"type": "text", "text": "partial"}]}))
    qtbot.waitUntil(lambda: card_row.tool is not None and card_row.tool.result_text == "partial")
    result = {
        "content": [{"type": "text", "text": "x\n" * 50}],
        "details": {"fullOutputPath": "/tmp/full.log"},
    }
    p.handle(ev.ToolExecutionEnd("call_1", "bash", result, False))
    p.handle(
        ev.MessageEnd(
            {
                "role": "toolResult",
                "toolCallId": "call_1",
                "toolName": "bash",
                "isError": False,
                "timestamp": 2,
                **result,
            }
        )
    )
    assert card_row.tool.status == "done" and card_row.tool.truncated
    assert card_row.tool.duration is not None
    assert panel.model.rowCount() == 1  # the result joined its card

    # the badge opens the log; the header toggles the card
    view = panel.view
    view.doItemsLayout()
    geo = view.chat_delegate.geometry(card_row, view.visualRect(panel.model.index(0)))
    with qtbot.waitSignal(view.openLogRequested) as opened:
        assert view.click_row(0, geo.badge.center() - view.visualRect(panel.model.index(0)).topLeft())
    assert opened.args == ["/tmp/full.log"]
    assert card_row.collapsed and tool_title(card_row) == "▸ bash"  # says that it opens
    assert (
        view_for("bash")
        .preview(card_row.tool, False)
        .endswith("… 42 more lines (click the header to expand)")
    )
    row_top = view.visualRect(panel.model.index(0)).top()
    assert view.click_row(0, QPoint(20, geo.header.center().y() - row_top))
    assert not card_row.collapsed and tool_title(card_row) == "▾ bash"
    p.handle(ev.AgentSettled())
    assert panel.send_button.text() == "Send"


def test_thinking_is_collapsed_and_errors_say_what_to_do(qtbot: QtBot) -> None:
    panel = _panel(qtbot)
    p = panel.presenter
    message: dict[str, Any] = {
        "role": "assistant",
        "content": [{"type": "thinking", "thinking": ""}],
        "timestamp": 1,
    }
    p.handle(ev.MessageStart(message))
    p.handle(ev.MessageUpdate(message, lt.ThinkingStartEvent(0, message)))
    p.handle(ev.MessageUpdate(message, lt.ThinkingDeltaEvent(0, "Let me think.", message)))
    message["content"][0]["thinking"] = "Let me think."
    message.update(
        stopReason="error", errorMessage='401 {"type":"authentication_error","message":"invalid x-api-key"}'
    )
    p.handle(ev.MessageEnd(message))
    thinking, error = panel.model.row_at(0), panel.model.row_at(1)
    assert thinking.kind is RowKind.THINKING and thinking.collapsed and thinking.text == "Let me think."
    assert error.kind is RowKind.ERROR and "API key" in error.hint


def test_retry_and_compaction_notices_update_in_place(qtbot: QtBot) -> None:
    panel = _panel(qtbot)
    p = panel.presenter
    p.handle(ev.AutoRetryStart(1, 3, 2000, "529 overloaded"))
    p.handle(ev.AutoRetryStart(2, 3, 4000, "529 overloaded"))
    assert panel.model.rowCount() == 1
    assert "attempt 3 of 4" in panel.model.row_at(0).title  # the next attempt of all four (1 + 3 retries)
    p.handle(ev.AutoRetryEnd(False, 3, "529 overloaded"))
    assert panel.model.row_at(0).kind is RowKind.ERROR
    p.handle(ev.CompactionStart("manual"))
    p.handle(ev.CompactionEnd("manual", {"summary": "## Goal\nFix it", "tokensBefore": 12345}))
    compacted = panel.model.row_at(1)
    assert "12,345" in compacted.title and compacted.text.startswith("## Goal")


def test_loading_a_conversation_pairs_results_with_calls(qtbot: QtBot) -> None:
    panel = _panel(qtbot)
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "hi"}], "timestamp": 1},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Reading."},
                {"type": "toolCall", "id": "t1", "name": "read", "arguments": {"path": "a.py"}},
            ],
            "stopReason": "toolUse",
            "timestamp": 2,
        },
        {
            "role": "toolResult",
            "toolCallId": "t1",
            "toolName": "read",
            "content": [{"type": "text", "text": "print(1)"}],
            "isError": False,
            "timestamp": 3,
        },
        {"role": "compactionSummary", "summary": "earlier work", "tokensBefore": 5000, "timestamp": 4},
    ]
    panel.presenter.show_messages(messages)
    kinds = [panel.model.row_at(i).kind for i in range(panel.model.rowCount())]
    assert kinds == [RowKind.USER, RowKind.TEXT, RowKind.TOOL, RowKind.NOTICE]
    tool = panel.model.row_at(2).tool
    assert tool is not None and tool.result_text == "print(1)" and tool.status == "done"


def test_dark_theme_renders_rows(qtbot: QtBot) -> None:
    panel = _panel(qtbot)
    panel.set_theme(load_theme("dark"))
    panel.presenter.show_messages([{"role": "user", "content": "```python\nx = 1\n```", "timestamp": 1}])
    image = panel.view.viewport().grab().toImage()
    assert not image.isNull()


PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def test_images_show_on_user_rows_and_tool_cards(qtbot: QtBot, qloop: asyncio.AbstractEventLoop) -> None:
    panel = _panel(qtbot)
    image = {"type": "image", "data": PNG_1PX, "mimeType": "image/png"}
    panel.presenter.show_messages(
        [
            {"role": "user", "content": [{"type": "text", "text": "see this"}, image], "timestamp": 1},
            {
                "role": "assistant",
                "content": [
                    {"type": "toolCall", "id": "s1", "name": "read", "arguments": {"path": "shot.png"}}
                ],
                "stopReason": "toolUse",
                "timestamp": 2,
            },
            {
                "role": "toolResult",
                "toolCallId": "s1",
                "toolName": "read",
                "content": [image],
                "isError": False,
                "timestamp": 3,
            },
        ]
    )
    user, card = panel.model.row_at(0), panel.model.row_at(1)
    assert user.images and card.images and card.tool is not None and card.tool.result_text == "[image]"
    delegate = panel.view.chat_delegate
    delegate._pixmaps_for(card)  # decoded in a worker thread, then the row is laid out again
    qtbot.waitUntil(lambda: len(delegate._pixmaps_for(card)) == 1)
    assert delegate._pixmaps_for(card)[0].width() == 1


def test_a_cut_tool_card_says_how_many_lines_the_model_saw(qtbot: QtBot) -> None:
    panel = _panel(qtbot)
    p = panel.presenter
    call = {"type": "toolCall", "id": "call_9", "name": "bash", "arguments": {"command": "make all"}}
    assistant = {"role": "assistant", "content": [call], "stopReason": "toolUse", "timestamp": 1}
    p.handle(ev.MessageStart(assistant))
    p.handle(ev.MessageEnd(assistant))
    p.handle(ev.ToolExecutionStart("call_9", "bash", call["arguments"]))
    truncation = {"truncated": True, "truncatedBy": "lines", "totalLines": 3000, "outputLines": 2000}
    result = {
        "content": [{"type": "text", "text": "".join(f"line {i}\n" for i in range(1001, 3001))}],
        "details": {"truncation": truncation, "fullOutputPath": "/tmp/make.log"},
    }
    p.handle(ev.ToolExecutionEnd("call_9", "bash", result, False))
    card = panel.model.row_at(0).tool
    assert card is not None and card.truncated
    assert cut_text(card) == "model saw 2,000 of 3,000 lines · open log"  # while the turn still runs
    p.handle(ev.MessageEnd({"role": "toolResult", "toolCallId": "call_9", "toolName": "bash", "isError": False,
                            "timestamp": 2, **result}))  # fmt: skip
    assert (card.model_lines, card.total_lines) == (2000, 3000)
    row = panel.model.row_at(0)
    view = panel.view
    view.doItemsLayout()
    geo = view.chat_delegate.geometry(row, view.visualRect(panel.model.index(0)))
    width = view.fontMetrics().horizontalAdvance("model saw 2,000 of 3,000 lines · open log")
    assert geo.badge.width() >= width * 0.8  # the badge is sized for its words
    row.collapsed = False
    assert (
        view_for(card.name).preview(card, True).endswith("… 1,600 more lines (the full output is in the log)")
    )


def test_a_skill_invocation_shows_as_a_collapsed_skill_card(qtbot: QtBot) -> None:
    panel = _panel(qtbot)
    block = (
        '<skill name="release-notes" location="/home/ana/.pi/agent/skills/release-notes/SKILL.md">\n'
        "Paths in this skill are relative to /home/ana/.pi/agent/skills/release-notes.\n\n"
        "Summarise the changes since the last tag.\n</skill>\n\nfor 1.2"
    )
    message = {"role": "user", "content": [{"type": "text", "text": block}], "timestamp": 1}
    panel.presenter.handle(ev.MessageStart(message))
    panel.presenter.handle(ev.MessageEnd(message))
    rows = [panel.model.row_at(i) for i in range(panel.model.rowCount())]
    assert [r.kind for r in rows] == [RowKind.SKILL, RowKind.USER]
    skill, typed = rows
    assert skill.collapsed and skill.title == "release-notes"
    assert skill_title(skill) == "▸ Skill: release-notes — /home/ana/.pi/agent/skills/release-notes/SKILL.md"
    assert skill.text.endswith("Summarise the changes since the last tag.") and typed.text == "for 1.2"
    assert not any("<skill" in r.text for r in rows)
    view = panel.view
    view.doItemsLayout()
    collapsed_height = view.visualRect(panel.model.index(0)).height()
    geo = view.chat_delegate.geometry(skill, view.visualRect(panel.model.index(0)))
    assert geo.body.height() == 0  # collapsed: the header only
    row_top = view.visualRect(panel.model.index(0)).top()
    assert view.click_row(0, QPoint(20, geo.header.center().y() - row_top))
    assert not skill.collapsed and skill_title(skill).startswith("▾ Skill: release-notes")
    qtbot.waitUntil(lambda: view.visualRect(panel.model.index(0)).height() > collapsed_height)
    # The same message read back from the session file shows the same way; without args, only the card.
    bare = block.split("\n\nfor 1.2")[0]
    panel.presenter.show_messages([{"role": "user", "content": bare, "timestamp": 2}])
    assert [panel.model.row_at(i).kind for i in range(panel.model.rowCount())] == [RowKind.SKILL]


def test_a_live_compaction_notice_lists_its_files_as_a_reopened_one_does(qtbot: QtBot) -> None:
    panel = _panel(qtbot)
    summary = "## Goal\nFix it\n\n<read-files>\nREADME.md\nsrc/app.py\n</read-files>\n\n<modified-files>\nout.txt\n</modified-files>"
    panel.presenter.handle(ev.CompactionStart("manual"))
    panel.presenter.handle(ev.CompactionEnd("manual", {"summary": summary, "tokensBefore": 16787}))
    text = panel.model.row_at(0).text
    assert "<read-files>" not in text and "<modified-files>" not in text
    assert "Files read:" in text and "Files modified:" in text
