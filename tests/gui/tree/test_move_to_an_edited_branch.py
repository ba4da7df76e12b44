"""Moving in the tree to a long branch that holds a context edit: its transcript (every message as written,
with what the edit changes marked, read from the entries' bodies) is built in a worker, so the window
keeps reacting while it is built; the stall guard fails the test otherwise."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from piwork.core.paths import agent_dir
from piwork.gui.chat.conversation import LEFT_OUT_TITLE
from piwork.gui.main_window import MainWindow
from piwork.gui.notifications import NotificationCenter
from piwork.gui.session_controller import SessionController
from piwork.gui.theme import load_theme
from tests.core.session.helpers import HEADER, assistant, stamp, user, write_session
from tests.support import LoopbackServer

LONG = 6_000  # messages on the branch moved to: building their rows takes the GUI thread well over 50 ms


def _plain_conversation(count: int) -> list[dict[str, Any]]:
    """Short plain turns (cheap to paint, so the window's own share of a move stays small): a prompt, a
    reply calling ``read``, its output, over and over."""
    messages: list[dict[str, Any]] = []
    for i in range(count // 3):
        now = 1_767_600_000_000 + 10_000 * i
        call = {"type": "toolCall", "id": f"call_{i}", "name": "read", "arguments": {"path": f"m{i}.py"}}
        messages += [
            {"role": "user", "content": [{"type": "text", "text": f"Step {i}"}], "timestamp": now},
            {
                "role": "assistant",
                "content": [{"type": "text", "text": f"Reading m{i}.py."}, call],
                "stopReason": "toolUse",
                "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0},
                "timestamp": now + 1,
            },
            {
                "role": "toolResult",
                "toolCallId": f"call_{i}",
                "toolName": "read",
                "content": [{"type": "text", "text": f"value = {i}"}],
                "isError": False,
                "timestamp": now + 2,
            },
        ]
    return messages


def _entries() -> tuple[list[dict[str, Any]], str, str]:
    """A long branch ending in a context edit that leaves a tool result out, then a short branch from the
    same first prompt, written last (the session opens on it). Returns the entries, the long branch's
    leaf and the tool result left out."""
    entries = [user("u0", None, "Start", 1)]
    parent = "u0"
    left_out = ""
    for n, message in enumerate(_plain_conversation(LONG)):
        entry_id = f"m{n:05d}"
        entries.append(
            {"type": "message", "id": entry_id, "parentId": parent, "timestamp": stamp(2), "message": message}
        )
        if message["role"] == "toolResult":  # the last one: its card is among the rows shown
            left_out = entry_id
        parent = entry_id
    edit = {
        "type": "context_edit",
        "id": "edit1",
        "parentId": parent,
        "timestamp": stamp(3),
        "targetId": left_out,
        "replacement": None,
    }
    entries += [edit, assistant("short", "u0", "A short answer.", 4)]
    return entries, "edit1", left_out


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running


def test_moving_to_a_long_edited_branch_builds_its_rows_in_a_worker(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path, server: LoopbackServer
) -> None:
    adir = agent_dir()
    provider = {
        "baseUrl": server.url,
        "api": "anthropic-messages",
        "apiKey": "test-key",
        "models": [{"id": "loopback-model", "contextWindow": 200000, "maxTokens": 4096}],
    }
    (adir / "models.json").write_text(json.dumps({"providers": {"loopback": provider}}))
    settings = {
        "defaultProvider": "loopback",
        "defaultModel": "loopback-model",
        "branchSummary": {"skipPrompt": True},  # move without the summary question
    }
    (adir / "settings.json").write_text(json.dumps(settings))
    entries, leaf, left_out = _entries()
    path = write_session(tmp_path / "long.jsonl", entries, {**HEADER, "cwd": str(tmp_path)})
    window = MainWindow(QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat), load_theme("light"))
    qtbot.addWidget(window)
    window.resize(1200, 800)
    window.show()
    notifications = NotificationCenter(window)
    ctl = SessionController(window, notifications, str(tmp_path), adir, approve=False, env={})
    ctl.spawn(ctl.open_session(str(path)))
    qtbot.waitUntil(lambda: ctl.runtime is not None and window.tree_panel.model is not None, timeout=20_000)
    chat = ctl.chat.model
    assert chat.rowCount() < 10  # the short branch
    try:
        task = window.tree_panel.navigate_to(leaf)
        assert task is not None
        qtbot.waitUntil(task.done, timeout=20_000)
        qtbot.waitUntil(
            lambda: any(chat.row_at(i).title == LEFT_OUT_TITLE for i in range(chat.rowCount())),
            timeout=20_000,
        )
        assert chat.rowCount() > 100  # the long branch's latest rows
        session = ctl.session
        assert session is not None and session.tree.leaf_id == leaf
        assert [e.target_id for e in session.context_edits()] == [left_out]
    finally:
        if ctl.preflight.dialog is not None:  # the long branch is past the context marks
            ctl.preflight.dialog.close()
        notifications.close_all()
        done = qloop.create_task(ctl.shutdown())
        qtbot.waitUntil(done.done, timeout=10_000)
