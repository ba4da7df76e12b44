"""A window driving a real AgentSession against the loopback provider server, in a project with an
AGENTS.md and files the model reads, for the Context panel and meter tests."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from piwork.core.paths import agent_dir
from piwork.gui.main_window import MainWindow
from piwork.gui.notifications import NotificationCenter
from piwork.gui.session_controller import SessionController
from piwork.gui.theme import load_theme
from tests.support import LoopbackServer

CONTEXT_WINDOW = 32_000
SNAPSHOT = "# Snapshot\n" + "".join(f"module {i}: parses and stores notes\n" for i in range(60))


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running


def configure_models(server: LoopbackServer, window: int = CONTEXT_WINDOW) -> None:
    adir = agent_dir()
    model = {"id": "loopback-model", "name": "Loopback", "contextWindow": window, "maxTokens": 4096}
    models = {
        "providers": {
            "loopback": {
                "baseUrl": server.url,
                "api": "anthropic-messages",
                "apiKey": "test-key",
                "models": [model],
            }
        }
    }
    (adir / "models.json").write_text(json.dumps(models))
    (adir / "settings.json").write_text(
        json.dumps({"defaultProvider": "loopback", "defaultModel": "loopback-model"})
    )


def make_project(root: Path) -> Path:
    project = root / "project"
    project.mkdir()
    (project / "AGENTS.md").write_text("# Project rules\n\nRun pytest before you say done.\n" * 20)
    (project / "notes.txt").write_text("alpha\nbeta\n")
    (project / "big.txt").write_text("".join(f"line {i}: some words to read\n" for i in range(1500)))
    return project


def _window_on(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, project: Path, tmp_path: Path, approve: bool
) -> Iterator[SessionController]:
    """A shown main window whose controller opened a new session in ``project``; shut down afterwards."""
    window = MainWindow(QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat), load_theme("light"))
    qtbot.addWidget(window)
    window.show()
    notifications = NotificationCenter(window)
    ctl = SessionController(window, notifications, str(project), agent_dir(), approve=approve, env={})
    ctl.spawn(ctl.open_session(None))
    qtbot.waitUntil(lambda: ctl.runtime is not None, timeout=10_000)
    yield ctl
    done = qloop.create_task(ctl.shutdown())
    qtbot.waitUntil(done.done, timeout=10_000)
    notifications.close_all()


@pytest.fixture
def controller(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, server: LoopbackServer, tmp_path: Path
) -> Iterator[SessionController]:
    configure_models(server)
    yield from _window_on(qtbot, qloop, make_project(tmp_path), tmp_path, approve=False)


@pytest.fixture
def trusted_controller(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, server: LoopbackServer, tmp_path: Path
) -> Iterator[SessionController]:
    """A window on a trusted project with a snapshot and a profile, so the task's bundle layers load."""
    configure_models(server)
    project = make_project(tmp_path)
    (project / ".pi").mkdir()
    (project / ".pi" / "project-context.md").write_text(SNAPSHOT)
    (project / ".pi" / "piwork-profile.json").write_text(json.dumps({"version": 1, "verify": ["pytest -q"]}))
    yield from _window_on(qtbot, qloop, project, tmp_path, approve=True)
