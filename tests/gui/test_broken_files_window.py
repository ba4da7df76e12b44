"""The window opening a folder whose files are broken: each problem is a notice in the chat, the files stay
byte-identical, and a session path that cannot be used is explained instead of failing silently."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from piwork.core.paths import agent_dir
from piwork.gui.main_window import MainWindow
from piwork.gui.notifications import NotificationCenter
from piwork.gui.session_controller import SessionController
from piwork.gui.theme import load_theme


def _notices(ctl: SessionController) -> list[str]:
    model = ctl.chat.model
    return [model.row_at(i).plain_text() for i in range(model.rowCount())]


def test_broken_files_are_reported_in_the_chat_and_left_alone(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    adir = agent_dir()
    project = tmp_path / "project"
    (project / ".pi").mkdir(parents=True)
    (project / ".pi" / "settings.json").write_text("{}")
    header = {"type": "session", "version": 3, "id": "0c5f2a7e-1111-4222-8333-444455556666",
              "timestamp": "2026-01-01T00:00:00.000Z", "cwd": str(project)}  # fmt: skip
    files = {
        adir / "settings.json": b'{"defaultModel": "x"',
        adir / "trust.json": b"{bad",
        adir / "models.json": b'{"providers": 5}',
        tmp_path / "s.jsonl": (json.dumps(header) + "\ngarbage\n").encode(),
    }
    for path, data in files.items():
        path.write_bytes(data)
    window = MainWindow(QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat), load_theme("light"))
    qtbot.addWidget(window)
    notifications = NotificationCenter(window)
    ctl = SessionController(window, notifications, str(project), adir, approve=None, env={})
    ctl.spawn(ctl.open_session(str(tmp_path / "s.jsonl")))
    qtbot.waitUntil(lambda: ctl.runtime is not None and not ctl.tasks, timeout=10_000)
    text = "\n".join(_notices(ctl))
    assert f"{adir / 'settings.json'}: the settings file is not valid JSON" in text
    assert f"The trust store {adir / 'trust.json'} is not valid JSON" in text
    assert f"{adir / 'models.json'}: models.json was ignored" in text
    assert f"{tmp_path / 's.jsonl'}: line 2: Line is not valid JSON" in text

    ctl.spawn(ctl.open_session(str(tmp_path)))
    qtbot.waitUntil(lambda: not ctl.tasks, timeout=10_000)
    assert _notices(ctl)[-1] == (
        f"Could not do that\nCannot open the session file {tmp_path}: it is a folder, not a session file."
    )
    done = qloop.create_task(ctl.shutdown())
    qtbot.waitUntil(done.done, timeout=10_000)
    notifications.close_all()
    assert {path: path.read_bytes()[: len(data)] for path, data in files.items()} == files
    assert all(path.read_bytes() == data for path, data in files.items() if path.suffix == ".json")


def test_a_stream_cut_mid_message_keeps_the_partial_reply_and_says_why(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    from tests.gui.test_session_controller import _configure
    from tests.support import Failure, LoopbackServer, Text, Turn

    with LoopbackServer() as server:
        _configure(server)
        settings = agent_dir() / "settings.json"
        settings.write_text(json.dumps({**json.loads(settings.read_text()), "retry": {"enabled": False}}))
        project = tmp_path / "project"
        project.mkdir()
        window = MainWindow(
            QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat), load_theme("light")
        )
        qtbot.addWidget(window)
        notifications = NotificationCenter(window)
        ctl = SessionController(window, notifications, str(project), agent_dir(), approve=False, env={})
        ctl.spawn(ctl.open_session(None))
        qtbot.waitUntil(lambda: ctl.runtime is not None and not ctl.tasks, timeout=10_000)
        server.script(Turn([Text("the first half of an answer " * 10)], failure=Failure.cut(4)))
        ctl.submit("hello?")
        qtbot.waitUntil(lambda: not ctl.chat.busy and ctl.session is not None and bool(ctl.session.messages))
        qtbot.waitUntil(
            lambda: _notices(ctl)[-1].startswith("Error") or "Connection lost" in _notices(ctl)[-1]
        )
        last = ctl.session.messages[-1]
        assert last["stopReason"] == "error" and "Connection lost" in last["errorMessage"]
        partial = last["content"][0]["text"]
        assert partial and ("the first half of an answer " * 10).startswith(partial)  # what came is kept
        assert any("Connection lost" in text for text in _notices(ctl))
        assert notifications.open_boxes == []
        (saved,) = (agent_dir() / "sessions").rglob("*.jsonl")
        assert '"stopReason":"error"' in saved.read_text()
        done = qloop.create_task(ctl.shutdown())
        qtbot.waitUntil(done.done, timeout=10_000)
        notifications.close_all()


def test_refused_setting_values_are_chat_notices_and_the_file_is_kept(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    adir = agent_dir()
    settings_file = adir / "settings.json"
    data = {"theme": "dark", "compaction": {"reserveTokens": -1}, "treeFilterMode": 3}
    original = json.dumps(data, indent=4).encode()
    settings_file.write_bytes(original)
    project = tmp_path / "project"
    project.mkdir()
    window = MainWindow(QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat), load_theme("light"))
    qtbot.addWidget(window)
    notifications = NotificationCenter(window)
    ctl = SessionController(window, notifications, str(project), adir, approve=None, env={})
    ctl.spawn(ctl.open_session(None))
    qtbot.waitUntil(lambda: ctl.runtime is not None and not ctl.tasks, timeout=10_000)
    text = "\n".join(_notices(ctl))
    assert f"{settings_file}: compaction.reserveTokens must be at least 0 (got -1); using 16384" in text
    assert f'{settings_file}: treeFilterMode must be one of "default", "no-tools"' in text
    assert window.tree_panel.filter_box.currentData() == "default"
    done = qloop.create_task(ctl.shutdown())
    qtbot.waitUntil(done.done, timeout=10_000)
    notifications.close_all()
    assert settings_file.read_bytes() == original
