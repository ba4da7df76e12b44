"""A view that fails on one session event says what failed and offers the details; the other views and the
session go on (the next prompt is answered and shown)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from piwork.core.agent import events as ev
from piwork.core.paths import agent_dir
from piwork.gui.chat.rows import RowKind
from piwork.gui.main_window import MainWindow
from piwork.gui.notifications import NotificationCenter
from piwork.gui.session_controller import SessionController
from piwork.gui.theme import load_theme
from tests.support import LoopbackServer, Text, Turn


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running


@pytest.fixture
def controller(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path, server: LoopbackServer
) -> Iterator[tuple[SessionController, NotificationCenter]]:
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
    window = MainWindow(QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat), load_theme("light"))
    qtbot.addWidget(window)
    window.show()
    notifications = NotificationCenter(window)
    ctl = SessionController(window, notifications, str(tmp_path), adir, approve=False, env={})
    ctl.spawn(ctl.open_session(None))
    qtbot.waitUntil(lambda: ctl.runtime is not None, timeout=10_000)
    yield ctl, notifications
    notifications.close_all()
    done = qloop.create_task(ctl.shutdown())
    qtbot.waitUntil(done.done, timeout=10_000)


def test_a_chat_failure_on_one_event_is_named_and_the_session_goes_on(
    qtbot: QtBot,
    controller: tuple[SessionController, NotificationCenter],
    server: LoopbackServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ctl, notifications = controller
    presenter = ctl.chat.presenter
    real_handle = presenter.handle
    failed: list[Any] = []

    def failing_once(event: ev.AgentEvent) -> None:
        if isinstance(event, ev.MessageEnd) and event.message.get("role") == "assistant" and not failed:
            failed.append(event)
            raise KeyError("content")
        real_handle(event)

    monkeypatch.setattr(presenter, "handle", failing_once)
    fed: list[str] = []
    real_feed = ctl.context_feed.handle
    monkeypatch.setattr(ctl.context_feed, "handle", lambda event: (fed.append(event.type), real_feed(event)))
    server.script(Turn([Text("First answer.")]), Turn([Text("Second answer.")]))
    ctl.submit("one")
    qtbot.waitUntil(lambda: bool(notifications.history), timeout=15_000)
    note = notifications.history[0]
    assert "The chat failed while showing a “message_end” event: KeyError: 'content'" in note.text
    assert "The session goes on" in note.text
    assert "Traceback" in note.details and "failing_once" in note.details
    assert notifications.open_boxes and notifications.open_boxes[0].detailedText() == note.details
    assert "message_end" in fed  # the Context panel still got the event the chat failed on
    qtbot.waitUntil(lambda: not ctl.chat.busy, timeout=15_000)
    ctl.submit("two")
    qtbot.waitUntil(lambda: len(server.requests) == 2 and not ctl.chat.busy, timeout=15_000)
    model = ctl.chat.model
    texts = [model.row_at(i).text for i in range(model.rowCount()) if model.row_at(i).kind is RowKind.TEXT]
    assert "Second answer." in texts
    assert len(notifications.history) == 1  # reported once
    session = ctl.session
    assert session is not None
    assert [m.get("role") for m in session.messages] == ["user", "assistant", "user", "assistant"]
