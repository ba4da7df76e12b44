"""The real window and controller on a small project whose files two replies change through write, edit
and bash (checkpointed by the engine in its shadow git repository), answered by the loopback server."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from piwork.core.paths import agent_dir
from piwork.gui.main_window import MainWindow
from piwork.gui.notifications import NotificationCenter
from piwork.gui.session_controller import SessionController
from piwork.gui.theme import load_theme
from tests.gui.test_session_controller import _configure
from tests.support import LoopbackServer, Text, Turn
from tests.support.checkpoint_runs import calls, files_of, make_project


@dataclass
class Workbench:
    qtbot: QtBot
    controller: SessionController
    server: LoopbackServer
    project: Path
    states: list[dict[str, bytes]]  # the project's files at the start and after each reply

    @property
    def window(self) -> MainWindow:
        return self.controller.window

    def ask(self, text: str, tag: str | None) -> None:
        """Send ``text``; the reply changes the files through write, edit and bash when ``tag`` is given."""
        turns = [calls(tag), Turn([Text(f"done {tag}")])] if tag else [Turn([Text("just words")])]
        self.server.script(*turns)
        chat = self.controller.chat
        before = chat.model.rowCount()
        self.controller.submit(text)
        self.qtbot.waitUntil(lambda: not chat.busy and chat.model.rowCount() >= before + 2, timeout=15_000)
        self.states.append(files_of(self.project))

    def user_ids(self) -> list[str]:
        runtime = self.controller.runtime
        assert runtime is not None
        return [str(r.id) for r in runtime.store.tree.records if r.role == "user"]


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running


@pytest.fixture
def bench(
    request: pytest.FixtureRequest,
    qtbot: QtBot,
    qloop: asyncio.AbstractEventLoop,
    server: LoopbackServer,
    tmp_path: Path,
) -> Iterator[Workbench]:
    """``kind`` (an indirect parameter): ``history`` (a git repository with a commit, the default),
    ``init`` (one without history) or ``plain`` (a folder, no git repository)."""
    _configure(server)
    project = make_project(tmp_path, getattr(request, "param", "history"))
    window = MainWindow(QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat), load_theme("light"))
    qtbot.addWidget(window)
    window.show()
    notifications = NotificationCenter(window)
    ctl = SessionController(window, notifications, str(project), agent_dir(), approve=False, env={})
    ctl.spawn(ctl.open_session(None))
    qtbot.waitUntil(lambda: ctl.runtime is not None, timeout=10_000)
    yield Workbench(qtbot, ctl, server, project, [files_of(project)])
    done = qloop.create_task(ctl.shutdown())
    qtbot.waitUntil(done.done, timeout=10_000)
    notifications.close_all()
