"""Pi 1.6's session entries in the window, and editing what the model sees from the tree and the chat.

A session file holding a context edit, a usage entry and a system-message entry reads as what each is; "Leave
out of the model's context", "Replace what the model sees…" and "Restore" write context_edit entries through
the engine; the chat keeps the original, the tree marks the entry, the X-ray counts the change at once.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QAbstractItemModel, QModelIndex, QSettings, Qt
from pytestqt.qtbot import QtBot

from piwork.core.paths import agent_dir
from piwork.gui.chat.rows import RowKind
from piwork.gui.main_window import MainWindow
from piwork.gui.notifications import NotificationCenter
from piwork.gui.session_controller import SessionController
from piwork.gui.theme import load_theme
from piwork.gui.tree.tree_model import EDIT_MARK_ROLE, ENTRY_ID_ROLE
from tests.core.session.helpers import HEADER, assistant, stamp, user, write_session
from tests.support import LoopbackServer

SECRET_OUTPUT = "API_TOKEN=do-not-send-this-again\n" * 40


def _tool_turn() -> list[dict[str, Any]]:
    call = assistant("a1", "u1", "Reading it.", 2, stopReason="toolUse")
    call["message"]["content"].append(
        {"type": "toolCall", "id": "call_1", "name": "read", "arguments": {"path": "env.txt"}}
    )
    result = {
        "type": "message",
        "id": "r1",
        "parentId": "a1",
        "timestamp": stamp(3),
        "message": {
            "role": "toolResult",
            "toolCallId": "call_1",
            "toolName": "read",
            "content": [{"type": "text", "text": SECRET_OUTPUT}],
            "isError": False,
            "timestamp": 1733234403000,
        },
    }
    # the last reply's usage counts the request that held the tool result (the meter's exact figure)
    usage = {"input": 1800, "output": 6, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 1806}
    answer = assistant("a2", "r1", "It holds a token.", 4, usage=usage)
    return [user("u1", None, "Read env.txt", 1), call, result, answer]


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running


@pytest.fixture
def opened(
    qtbot: QtBot,
    qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    server: LoopbackServer,
    request: pytest.FixtureRequest,
) -> Iterator[SessionController]:
    entries: list[dict[str, Any]] = request.param
    adir = agent_dir()
    provider = {
        "baseUrl": server.url,
        "api": "anthropic-messages",
        "apiKey": "test-key",
        "models": [{"id": "loopback-model", "contextWindow": 200000, "maxTokens": 4096}],
    }
    (adir / "models.json").write_text(json.dumps({"providers": {"loopback": provider}}))
    (adir / "settings.json").write_text(
        json.dumps({"defaultProvider": "loopback", "defaultModel": "loopback-model"})
    )
    session = write_session(tmp_path / "edits.jsonl", entries, {**HEADER, "cwd": str(tmp_path)})
    window = MainWindow(QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat), load_theme("light"))
    qtbot.addWidget(window)
    window.resize(1200, 800)
    window.show()
    notifications = NotificationCenter(window)
    ctl = SessionController(window, notifications, str(tmp_path), adir, approve=False, env={})
    ctl.spawn(ctl.open_session(str(session)))
    qtbot.waitUntil(lambda: ctl.runtime is not None and window.tree_panel.model is not None, timeout=10_000)
    window.tree_panel.set_filter_mode("all")
    qtbot.waitUntil(lambda: not window.tree_panel.laying_out, timeout=10_000)
    yield ctl
    notifications.close_all()
    done = qloop.create_task(ctl.shutdown())
    qtbot.waitUntil(done.done, timeout=10_000)


def _rows(model: QAbstractItemModel) -> dict[str, QModelIndex]:
    found: dict[str, QModelIndex] = {}
    pending = [QModelIndex()]
    while pending:
        parent = pending.pop()
        for row in range(model.rowCount(parent)):
            index = model.index(row, 0, parent)
            pending.append(index)
            entry_id = index.data(ENTRY_ID_ROLE)
            if entry_id:
                found[entry_id] = index
    return found


def _file_entries(ctl: SessionController) -> list[dict[str, Any]]:
    assert ctl.runtime is not None
    path = Path(str(ctl.runtime.store.path))
    return [json.loads(line) for line in path.read_text().splitlines()[1:]]


def _sent(ctl: SessionController) -> str:
    assert ctl.session is not None
    return json.dumps(ctl.session.messages)


PI16_ENTRIES = [
    *_tool_turn(),
    {
        "type": "context_edit",
        "id": "e1",
        "parentId": "a2",
        "timestamp": stamp(5),
        "targetId": "r1",
        "replacement": None,
    },
    {
        "type": "usage",
        "id": "g1",
        "parentId": "e1",
        "timestamp": stamp(6),
        "kind": "cacheWarming",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "usage": {"input": 1200, "output": 0, "cacheRead": 0, "cacheWrite": 1200, "cost": {"total": 0.0045}},
    },
    {
        "type": "message",
        "id": "s1",
        "parentId": "g1",
        "timestamp": stamp(7),
        "message": {"role": "system", "content": "You are a careful assistant.", "timestamp": 1733234407000},
    },
]


@pytest.mark.parametrize("opened", [PI16_ENTRIES], indirect=True)
def test_a_pi16_session_shows_its_edit_usage_and_system_entries(
    qtbot: QtBot, opened: SessionController
) -> None:
    panel = opened.window.tree_panel
    assert panel.model is not None
    qtbot.waitUntil(lambda: _rows(panel.model)["r1"].data(EDIT_MARK_ROLE) is not None, timeout=10_000)  # type: ignore[arg-type]
    rows = _rows(panel.model)
    edited = rows["r1"]
    assert edited.data(Qt.ItemDataRole.DisplayRole).startswith("⊘ left out · [tool result]")
    assert "Left out of the model's context" in edited.data(Qt.ItemDataRole.ToolTipRole)
    assert rows["e1"].data().startswith("[context edit] left out of the model's context: [tool result]")
    assert rows["g1"].data() == "[billed traffic] cacheWarming anthropic/claude-sonnet-4-5"
    assert rows["s1"].data() == "● [system prompt] You are a careful assistant."  # the leaf
    panel.view.setCurrentIndex(rows["g1"])
    qtbot.waitUntil(lambda: "Billed traffic outside a reply" in panel.detail.toPlainText(), timeout=5000)
    detail = panel.detail.toPlainText()
    assert "1,200 input" in detail and "$0.0045" in detail and "never part of the model's context" in detail
    assert "do-not-send-this-again" not in _sent(opened)  # the engine honours the edit
    chat = opened.chat.model
    qtbot.waitUntil(
        lambda: any(
            chat.row_at(i).title == "Context edits in force on this branch: 1 left out"
            for i in range(chat.rowCount())
        ),
        timeout=5000,
    )
    graph = panel.graph
    panel.show_graph()  # a graph out of view is laid out once shown

    def graph_title(entry_id: str) -> str:
        model = graph.model
        rows = _rows(model) if model is not None else {}
        return str(rows[entry_id].data()) if entry_id in rows else ""

    qtbot.waitUntil(lambda: graph_title("r1").startswith("⊘ left out · [tool result]"), timeout=10_000)
    assert graph_title("g1") == "[billed traffic] cacheWarming anthropic/claude-sonnet-4-5"
    panel.views.setCurrentWidget(panel.view)
    menu = {
        a.text(): a for a in (panel.view.setCurrentIndex(rows["r1"]), panel.build_context_menu())[1].actions()
    }
    assert menu["Restore"].isEnabled() and menu["Leave out of the model's context"].isEnabled()


@pytest.mark.parametrize("opened", [_tool_turn()], indirect=True)
def test_leave_out_replace_and_restore_from_the_tree_and_the_chat(
    qtbot: QtBot, opened: SessionController
) -> None:
    window = opened.window
    panel = window.tree_panel
    feed = opened.context_feed
    assert panel.model is not None
    qtbot.waitUntil(lambda: "do-not-send-this-again" in json.dumps(feed.messages), timeout=10_000)

    footer = opened.chat.footer
    qtbot.waitUntil(lambda: footer.reading.occupancy > 0, timeout=10_000)
    before = footer.reading.occupancy
    assert footer.reading.exact and before == 1806
    assert opened.runtime is not None
    resources = opened.runtime.resources

    def projected() -> int:
        task = asyncio.ensure_future(feed.preflight(resources))
        qtbot.waitUntil(task.done, timeout=10_000)
        return int((task.result() or {}).get("estimate", {}).get("projected", 0))

    projected_before = projected()

    # the tree: leave the tool result out
    panel.view.setCurrentIndex(_rows(panel.model)["r1"])
    menu = {action.text(): action for action in panel.build_context_menu().actions()}
    assert not menu["Restore"].isEnabled()
    menu["Leave out of the model's context"].trigger()
    qtbot.waitUntil(lambda: _rows(panel.model)["r1"].data(EDIT_MARK_ROLE) is not None, timeout=10_000)  # type: ignore[arg-type]
    edit = _file_entries(opened)[-1]
    assert edit["type"] == "context_edit" and edit["targetId"] == "r1" and edit["replacement"] is None
    assert "do-not-send-this-again" not in _sent(opened)
    qtbot.waitUntil(
        lambda: "do-not-send-this-again" not in json.dumps(feed.messages), timeout=10_000
    )  # the X-ray
    # the meter: the provider's count held the tool result; now an estimate without it
    qtbot.waitUntil(lambda: footer.reading.occupancy < before and not footer.reading.exact, timeout=10_000)
    assert projected() < projected_before  # preflight
    chat = opened.chat
    rows = [chat.model.row_at(i) for i in range(chat.model.rowCount())]
    assert any(r.tool is not None and "do-not-send-this-again" in r.tool.result_text for r in rows)  # kept
    assert any(
        r.kind is RowKind.NOTICE and r.title.startswith("Left out of the model's context") for r in rows
    )

    # the chat: replace what the model sees of the same tool result (its card)
    card = next(r for r in rows if r.tool is not None)
    chat.view.contextEditRequested.emit("replace", card.key)
    qtbot.waitUntil(
        lambda: panel.replacement_dialog is not None and panel.replacement_dialog.isVisible(), timeout=10_000
    )
    dialog = panel.replacement_dialog
    assert (
        dialog is not None and "do-not-send-this-again" in dialog.text.toPlainText()
    )  # starts from the original
    dialog.text.setPlainText("[env.txt holds one token; its value is withheld]")
    dialog.accept()
    qtbot.waitUntil(lambda: "withheld" in _sent(opened), timeout=10_000)
    edit = _file_entries(opened)[-1]
    assert edit["replacement"] == {
        "content": [{"type": "text", "text": "[env.txt holds one token; its value is withheld]"}]
    }
    qtbot.waitUntil(
        lambda: (mark := _rows(panel.model)["r1"].data(EDIT_MARK_ROLE)) is not None and not mark.left_out,  # type: ignore[arg-type]
        timeout=10_000,
    )
    assert "withheld" in _rows(panel.model)["r1"].data(Qt.ItemDataRole.ToolTipRole)  # type: ignore[arg-type]
    qtbot.waitUntil(lambda: "withheld" in json.dumps(feed.messages), timeout=10_000)

    # and restore it from the chat
    chat.view.contextEditRequested.emit("restore", card.key)
    qtbot.waitUntil(lambda: "do-not-send-this-again" in _sent(opened), timeout=10_000)
    qtbot.waitUntil(lambda: _rows(panel.model)["r1"].data(EDIT_MARK_ROLE) is None, timeout=10_000)  # type: ignore[arg-type]
    edits = [e for e in _file_entries(opened) if e["type"] == "context_edit"]
    assert len(edits) == 3 and edits[-1]["replacement"]["content"][0]["text"] == SECRET_OUTPUT
    assert [e["type"] for e in _file_entries(opened)[:4]] == ["message"] * 4  # the originals stay in the file


REOPENED_EDITS = [
    *_tool_turn(),
    {"type": "context_edit", "id": "e1", "parentId": "a2", "timestamp": stamp(5), "targetId": "r1",
     "replacement": None},
    {"type": "context_edit", "id": "e2", "parentId": "e1", "timestamp": stamp(6), "targetId": "u1",
     "replacement": {"content": "Read the file (asked more briefly)"}},
]  # fmt: skip


@pytest.mark.parametrize("opened", [REOPENED_EDITS], indirect=True)
def test_a_reopened_session_shows_each_message_as_written_and_what_the_model_sees(
    qtbot: QtBot, opened: SessionController
) -> None:
    """The chat of a session with context edits keeps the transcript: the original texts, and under each
    edited entry a card saying it is left out, or what the model sees instead; the engine sends the edit."""
    chat = opened.chat.model
    qtbot.waitUntil(lambda: chat.rowCount() > 0, timeout=5000)
    rows = [chat.row_at(i) for i in range(chat.rowCount())]
    titles = [(row.kind, row.title) for row in rows]
    user_at = next(i for i, row in enumerate(rows) if row.kind == RowKind.USER)
    assert rows[user_at].text == "Read env.txt"  # as written
    replaced = rows[user_at + 1]
    assert (
        replaced.title.startswith("✎ Replaced for the model")
        and replaced.text == "Read the file (asked more briefly)"
    )
    card = next(row for row in rows if row.tool is not None)
    assert (
        card.tool is not None and "do-not-send-this-again" in card.tool.result_text
    )  # the result as written
    left_out = [i for i, (kind, title) in enumerate(titles) if title.startswith("⊘ Left out")]
    assert len(left_out) == 1 and rows.index(card) < left_out[0]
    assert rows[left_out[0] + 1].text == "It holds a token."  # the mark closes the tool turn
    sent = _sent(opened)
    assert (
        "do-not-send-this-again" not in sent and "asked more briefly" in sent and "Read env.txt" not in sent
    )
    assert opened.session is not None
    first_sent = opened.session.messages[0]
    assert (
        opened.chat.presenter.row_key_for_message(first_sent) == rows[user_at].key
    )  # X-ray jumps still land
