"""/onboard run typed in the window: the engine's onboarding, its answer as a chat notice."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from piwork.core.agent.events import BilledEvent
from piwork.core.paths import agent_dir
from piwork.gui.chat.rows import RowKind
from piwork.gui.main_window import MainWindow
from piwork.gui.notifications import NotificationCenter
from piwork.gui.session_controller import SessionController
from piwork.gui.theme import load_theme
from tests.core.context.test_onboard import SNAPSHOT, make_repo
from tests.gui.context.conftest import configure_models
from tests.support import LoopbackServer, Text, Turn, Usage


@pytest.fixture
def trusted_controller(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, server: LoopbackServer, tmp_path: Path
) -> Iterator[SessionController]:
    configure_models(server)
    project = make_repo(tmp_path / "repo")
    window = MainWindow(QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat), load_theme("light"))
    qtbot.addWidget(window)
    window.show()
    notifications = NotificationCenter(window)
    ctl = SessionController(window, notifications, str(project), agent_dir(), approve=True, env={})
    ctl.spawn(ctl.open_session(None))
    qtbot.waitUntil(lambda: ctl.runtime is not None, timeout=10_000)
    yield ctl
    done = qloop.create_task(ctl.shutdown())
    qtbot.waitUntil(done.done, timeout=10_000)
    notifications.close_all()


def _notices(ctl: SessionController) -> list:  # type: ignore[type-arg]
    model = ctl.chat.model
    rows = [model.row_at(i) for i in range(model.rowCount())]
    return [r for r in rows if r.kind in (RowKind.NOTICE, RowKind.ERROR)]


def test_onboard_run_in_the_window(
    qtbot: QtBot, trusted_controller: SessionController, server: LoopbackServer
) -> None:
    ctl = trusted_controller
    runtime = ctl.runtime
    assert runtime is not None and runtime.resources.project_trusted
    project = Path(runtime.resources.cwd)
    server.script(Turn([Text(SNAPSHOT)], usage=Usage(input=700, output=90)))
    billed: list[BilledEvent] = []
    runtime.session.subscribe(lambda e: billed.append(e) if isinstance(e, BilledEvent) else None)
    ctl.chat.composer.set_text("/onboard run")
    ctl.chat.composer.submit()
    qtbot.waitUntil(lambda: any("Onboarded" in r.text for r in _notices(ctl)), timeout=15_000)
    row = next(r for r in _notices(ctl) if "Onboarded" in r.text)
    assert row.kind == RowKind.NOTICE and "(summarised by the model)" in row.text
    assert (project / ".pi" / "project-context.md").read_text() == SNAPSHOT
    assert json.loads((project / ".pi" / "context-index.json").read_text())["version"] == 1
    assert [(b.sample.input, b.sample.output) for b in billed] == [(700, 90)]  # the snapshot call is billed

    ctl.chat.composer.set_text("/onboard sideways")
    ctl.chat.composer.submit()
    qtbot.waitUntil(lambda: any(r.title == "/onboard" for r in _notices(ctl)), timeout=5_000)
    bad = next(r for r in _notices(ctl) if r.title == "/onboard")
    assert bad.kind == RowKind.ERROR and "--refresh" in bad.hint
