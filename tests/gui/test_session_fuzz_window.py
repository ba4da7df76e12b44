"""The window opening fuzzed sessions: seeded mutants of a real session file (see
tests/support/session_mutants.py) open in a real window one after another without an unexpected error,
and opening writes nothing (a migrated file keeps its original beside it)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from piwork.core.errors import PiworkError
from piwork.core.paths import agent_dir
from piwork.gui.main_window import MainWindow
from piwork.gui.notifications import NotificationCenter
from piwork.gui.session_controller import SessionController
from piwork.gui.theme import load_theme
from tests.core.test_session_fuzz import SEED, _real_session
from tests.support.session_mutants import mutants

COUNT = 8


def test_the_window_opens_mutants_without_writing_or_failing(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    folder = tmp_path / "sessions"
    folder.mkdir()
    original = _real_session(project)
    window = MainWindow(QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat), load_theme("light"))
    qtbot.addWidget(window)
    notifications = NotificationCenter(window)
    ctl = SessionController(window, notifications, str(project), agent_dir(), approve=None, env={})
    failures: list[str] = []
    for number, data in enumerate(list(mutants(original, SEED + 1, COUNT * 5))[::5]):
        path = folder / f"w{number}.jsonl"
        path.write_bytes(data)
        task = ctl.spawn(ctl.open_session(str(path)))
        qtbot.waitUntil(task.done, timeout=20_000)
        error = task.exception()
        if error is not None and not isinstance(error, PiworkError):
            failures.append(f"{number}: {type(error).__name__}: {error}")
        backups = [p.read_bytes() for p in folder.glob(f"{path.name}.bak-v*")]
        if path.read_bytes() != data and data not in backups:
            failures.append(f"{number}: the file changed on opening")
    done = qloop.create_task(ctl.shutdown())
    qtbot.waitUntil(done.done, timeout=10_000)
    notifications.close_all()
    assert not failures, failures
