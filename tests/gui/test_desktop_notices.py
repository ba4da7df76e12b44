"""Desktop notifications: a reply that ends or fails, or a question that waits for the user, while the
window is not the active one, is handed to the tray's notification service (when the desktop has one);
never while the window is in front, nor when turned off; a notice holds no reply text and no secret, and
clicking it brings the window forward."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from piwork.core.paths import agent_dir
from piwork.gui.desktop_notices import DesktopFacts, DesktopNotice
from piwork.gui.main_window import MainWindow
from piwork.gui.notifications import NotificationCenter
from piwork.gui.session_controller import SessionController
from piwork.gui.theme import load_theme
from piwork.gui.trust_dialog import TrustDialog
from tests.gui.test_session_controller import _configure
from tests.support import Failure, LoopbackServer, Text, Turn

SECRET_REPLY = "the deploy token is sk-live-0123456789"


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running


@pytest.fixture
def window(qtbot: QtBot, tmp_path: Path) -> MainWindow:
    win = MainWindow(QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat), load_theme("light"))
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    # The desktop's one fact a test cannot have offscreen: a tray. Whether the window is active stays real.
    win.reply_notifier.facts = DesktopFacts(win.reply_notifier.facts.window_active, lambda: True)
    return win


@pytest.fixture
def elsewhere(qtbot: QtBot) -> QWidget:
    """Another window, activated to put the main window in the background."""
    other = QWidget()
    other.setWindowTitle("another application")
    qtbot.addWidget(other)
    return other


def _to_background(qtbot: QtBot, window: MainWindow, other: QWidget) -> None:
    other.show()
    other.activateWindow()
    qtbot.waitUntil(lambda: other.isActiveWindow() and not window.isActiveWindow())


@pytest.fixture
def controller(
    qtbot: QtBot,
    qloop: asyncio.AbstractEventLoop,
    window: MainWindow,
    server: LoopbackServer,
    tmp_path: Path,
) -> Iterator[SessionController]:
    _configure(server)
    project = tmp_path / "shop-api"
    project.mkdir()
    ctl = SessionController(
        window, NotificationCenter(window), str(project), agent_dir(), approve=False, env={}
    )
    ctl.spawn(ctl.open_session(None))
    qtbot.waitUntil(lambda: ctl.runtime is not None, timeout=10_000)
    yield ctl
    done = qloop.create_task(ctl.shutdown())
    qtbot.waitUntil(done.done, timeout=10_000)
    ctl.notifications.close_all()


def _reply(qtbot: QtBot, ctl: SessionController, text: str = "go") -> None:
    ctl.submit(text)
    qtbot.waitUntil(lambda: ctl.chat.busy, timeout=5000)
    qtbot.waitUntil(lambda: not ctl.chat.busy, timeout=10_000)


def test_a_reply_that_ends_or_fails_in_the_background_is_notified_without_its_text(
    qtbot: QtBot,
    window: MainWindow,
    controller: SessionController,
    server: LoopbackServer,
    elsewhere: QWidget,
) -> None:
    shown: list[DesktopNotice] = []
    window.reply_notifier.shown.connect(shown.append)
    server.script(Turn([Text("in front, nothing to tell")]))
    _reply(qtbot, controller)
    assert shown == [] and window.reply_notifier.tray is None  # the window was in front

    controller.name_session("Checkout bug")
    _to_background(qtbot, window, elsewhere)
    server.script(Turn([Text(SECRET_REPLY)]))
    _reply(qtbot, controller)
    assert shown == [
        DesktopNotice("Reply finished — shop-api — Checkout bug", "The agent has finished replying.")
    ]
    tray = window.reply_notifier.tray
    assert tray is not None and tray.isVisible() and not tray.icon().isNull()

    server.script(
        Turn(failure=Failure.http(400, '{"type":"error","error":{"message":"bad key sk-ant-xyz"}}'))
    )
    _reply(qtbot, controller)
    assert shown[-1].title == "Reply failed — shop-api — Checkout bug"
    for notice in shown:
        for secret in ("sk-live", "sk-ant", "test-key", "deploy token"):
            assert secret not in notice.title + notice.text

    tray.messageClicked.emit()  # the user clicks the notice
    qtbot.waitUntil(window.isActiveWindow)
    assert not tray.isVisible()


def test_no_notice_when_turned_off_or_without_a_notification_service(
    qtbot: QtBot,
    window: MainWindow,
    controller: SessionController,
    server: LoopbackServer,
    elsewhere: QWidget,
) -> None:
    shown: list[DesktopNotice] = []
    window.reply_notifier.shown.connect(shown.append)
    _to_background(qtbot, window, elsewhere)
    window.action_map["desktop_notices"].setChecked(False)
    server.script(Turn([Text("one")]))
    _reply(qtbot, controller)
    assert shown == []
    again = MainWindow(window.ui_state, load_theme("light"))  # the choice is kept
    qtbot.addWidget(again)
    assert not again.action_map["desktop_notices"].isChecked()

    window.action_map["desktop_notices"].setChecked(True)
    window.reply_notifier.facts = DesktopFacts(window.reply_notifier.facts.window_active, lambda: False)
    server.script(Turn([Text("two")]))
    _reply(qtbot, controller)
    assert shown == [] and window.reply_notifier.tray is None
    window.reply_notifier.facts = DesktopFacts(window.reply_notifier.facts.window_active)  # Qt's own answer
    server.script(Turn([Text("three")]))
    _reply(qtbot, controller)
    assert shown == []  # offscreen has no tray


def test_a_trust_question_in_the_background_says_piwork_waits(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, window: MainWindow, elsewhere: QWidget, tmp_path: Path
) -> None:
    project = tmp_path / "gated"
    skill = project / ".pi" / "skills" / "deploy" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: deploy\ndescription: Ship the build.\n---\nShip it.\n")
    shown: list[DesktopNotice] = []
    window.reply_notifier.shown.connect(shown.append)
    _to_background(qtbot, window, elsewhere)
    ctl = SessionController(window, NotificationCenter(window), str(project), agent_dir(), env={})
    ctl.spawn(ctl.open_session(None))
    qtbot.waitUntil(lambda: bool(shown), timeout=10_000)
    assert shown == [DesktopNotice("piwork is waiting for you", "Trust the project folder gated?")]
    dialog = next(w for w in QApplication.topLevelWidgets() if isinstance(w, TrustDialog) and w.isVisible())
    dialog.option_buttons["distrust"].click()
    qtbot.waitUntil(lambda: ctl.runtime is not None, timeout=10_000)
    done = qloop.create_task(ctl.shutdown())
    qtbot.waitUntil(done.done, timeout=10_000)
    ctl.notifications.close_all()
