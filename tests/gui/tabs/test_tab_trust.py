"""A trust answer given "for this session only" holds for the whole run: a new tab in the same project
opens without asking again, and shows the question as its state while one waits."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from piwork.core.paths import agent_dir
from piwork.gui.main_window import MainWindow
from piwork.gui.notifications import NotificationCenter
from piwork.gui.tabs.manager import TabManager
from piwork.gui.tabs.tab_state import TabState
from piwork.gui.theme import load_theme
from piwork.gui.trust_dialog import TrustDialog


def _visible_dialog() -> TrustDialog | None:
    shown = [w for w in QApplication.topLevelWidgets() if isinstance(w, TrustDialog) and w.isVisible()]
    return shown[0] if shown else None


@pytest.fixture
def manager(qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path) -> Iterator[TabManager]:
    window = MainWindow(QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat), load_theme("light"))
    qtbot.addWidget(window)
    window.show()
    made = TabManager(NotificationCenter(window), agent_dir(), approve=None, env={})
    made.add_window(window)
    yield made
    done = qloop.create_task(made.shutdown())
    qtbot.waitUntil(done.done, timeout=10_000)
    made.notifications.close_all()


def test_a_session_only_trust_answer_holds_in_a_new_tab(
    qtbot: QtBot, manager: TabManager, tmp_path: Path
) -> None:
    project = tmp_path / "proj"
    skill = project / ".pi" / "skills" / "deploy" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: deploy\ndescription: Ship the build.\n---\nShip it.\n")
    window = manager.windows[0]
    first = manager.controller(window, str(project))
    first.spawn(first.open_session(None))
    qtbot.waitUntil(lambda: _visible_dialog() is not None, timeout=10_000)
    assert first.tab.status.state is TabState.WAITING  # the question waits for the user
    dialog = _visible_dialog()
    assert dialog is not None
    dialog.option_buttons["trust-session"].click()
    qtbot.waitUntil(lambda: first.runtime is not None, timeout=10_000)
    assert first.tab.status.state is TabState.IDLE
    task = asyncio.ensure_future(manager.new_tab(window))
    qtbot.waitUntil(task.done, timeout=10_000)
    second = task.result()
    assert _visible_dialog() is None and second.runtime is not None
    assert "deploy" in [s.name for s in second.runtime.resources.skills]
    assert not (agent_dir() / "trust.json").exists()  # nothing saved: for this run only
