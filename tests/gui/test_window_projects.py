"""The window's projects. The title and the status bar's switcher name the open project; the switcher's
menu lists the others opened lately and Open Folder…, and picking one opens it. Dropping on the window: a project folder opens as File → Open Folder does (its trust asked as at a
first open), a session file opens that session, anything else is refused with a status message, and the
drag is accepted (the drop cursor) only for what would open."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, QSettings, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from piwork.core.paths import agent_dir
from piwork.gui.main_window import MainWindow
from piwork.gui.notifications import NotificationCenter
from piwork.gui.recent_projects import remember_project
from piwork.gui.session_controller import SessionController
from piwork.gui.theme import load_theme
from piwork.gui.trust_dialog import TrustDialog
from tests.gui.test_session_controller import _configure
from tests.support import LoopbackServer, Text, Turn

ACTIONS = Qt.DropAction.CopyAction | Qt.DropAction.MoveAction | Qt.DropAction.LinkAction


def _mime(*paths: Path | str, text: str = "") -> QMimeData:
    mime = QMimeData()
    if paths:
        mime.setUrls([QUrl.fromLocalFile(str(p)) if isinstance(p, Path) else QUrl(p) for p in paths])
    if text:
        mime.setText(text)
    return mime


def _drag_enter(widget: QWidget, mime: QMimeData) -> QDragEnterEvent:
    event = QDragEnterEvent(
        QPoint(10, 10), ACTIONS, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    )
    QApplication.sendEvent(widget, event)
    return event


def _drop(widget: QWidget, mime: QMimeData) -> QDropEvent:
    """A whole drag: enter, move, drop (the drop's acceptance is what a real drag would end with)."""
    _drag_enter(widget, mime)
    move = QDragMoveEvent(
        QPoint(12, 12), ACTIONS, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    )
    QApplication.sendEvent(widget, move)
    drop = QDropEvent(
        QPointF(12, 12), ACTIONS, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    )
    QApplication.sendEvent(widget, drop)
    return drop


@pytest.fixture
def window(qtbot: QtBot, tmp_path: Path) -> MainWindow:
    win = MainWindow(QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat), load_theme("light"))
    qtbot.addWidget(win)
    win.show()
    qtbot.waitExposed(win)
    return win


def test_only_a_folder_or_a_session_file_is_accepted_and_the_rest_says_why(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    folder = tmp_path / "some-project"
    folder.mkdir()
    session = tmp_path / "2026-01-01_abc.jsonl"
    session.write_text('{"type":"session","version":3,"id":"abc","timestamp":"x","cwd":"/"}\n')
    other = tmp_path / "notes.txt"
    other.write_text("hi")
    chosen: list[tuple[str, str]] = []
    window.projectChosen.connect(lambda p: chosen.append(("folder", p)))
    window.sessionFileChosen.connect(lambda p: chosen.append(("session", p)))
    composer = window.chat.composer.viewport()  # takes drops itself: the window decides all the same

    for target in (window, composer):
        entered = _drag_enter(target, _mime(folder))
        assert entered.isAccepted() and entered.dropAction() == Qt.DropAction.CopyAction
        assert str(folder) in window.status.currentMessage()
        assert _drag_enter(target, _mime(session)).isAccepted()
        refused = _drag_enter(target, _mime(other))
        assert not refused.isAccepted()
        assert "notes.txt is neither a folder nor a session file" in window.status.currentMessage()
        assert not _drag_enter(target, _mime(folder, session)).isAccepted()
        assert "2 items dropped: one at a time" in window.status.currentMessage()
        assert not _drag_enter(target, _mime("https://example.com/a.jsonl")).isAccepted()
        assert "is not on this computer" in window.status.currentMessage()
        assert not _drag_enter(target, _mime(tmp_path / "gone.jsonl")).isAccepted()

    assert not _drag_enter(window, _mime(text="just some words")).isAccepted()
    assert "not a file or folder" in window.status.currentMessage()
    _drop(composer, _mime(other))
    assert chosen == [] and window.chat.composer.toPlainText() == ""  # no URL pasted into the editor
    _drop(composer, _mime(folder))
    _drop(window, _mime(session))
    assert chosen == [("folder", str(folder)), ("session", str(session))]


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running


@pytest.fixture
def controller(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, window: MainWindow, server: LoopbackServer, tmp_path: Path
) -> Iterator[SessionController]:
    _configure(server)
    project = tmp_path / "first"
    project.mkdir()
    ctl = SessionController(window, NotificationCenter(window), str(project), agent_dir(), env={})
    ctl.spawn(ctl.open_session(None))
    qtbot.waitUntil(lambda: ctl.runtime is not None, timeout=10_000)
    yield ctl
    done = qloop.create_task(ctl.shutdown())
    qtbot.waitUntil(done.done, timeout=10_000)
    ctl.notifications.close_all()


def _trust_dialog() -> TrustDialog | None:
    shown = [w for w in QApplication.topLevelWidgets() if isinstance(w, TrustDialog) and w.isVisible()]
    return shown[0] if shown else None


def test_a_dropped_folder_opens_as_open_folder_does_asking_about_trust(
    qtbot: QtBot, window: MainWindow, controller: SessionController, tmp_path: Path
) -> None:
    gated = tmp_path / "gated"
    skill = gated / ".pi" / "skills" / "deploy" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: deploy\ndescription: Ship the build.\n---\nShip it.\n")
    _drop(window.chat.view.viewport(), _mime(gated))
    qtbot.waitUntil(lambda: _trust_dialog() is not None, timeout=10_000)
    assert controller.runtime is None or controller.runtime.store.cwd != str(gated)
    _trust_dialog().option_buttons["trust"].click()  # type: ignore[union-attr]
    qtbot.waitUntil(
        lambda: controller.runtime is not None and controller.runtime.store.cwd == str(gated), timeout=10_000
    )
    assert [s.name for s in controller.runtime.resources.skills] == ["deploy"]  # type: ignore[union-attr]
    assert window.windowTitle() == "gated — piwork" and window.switcher.text() == "gated"


def test_a_dropped_session_file_opens_that_session(
    qtbot: QtBot, window: MainWindow, controller: SessionController, server: LoopbackServer
) -> None:
    server.script(Turn([Text("kept answer")]))
    controller.submit("a question")
    qtbot.waitUntil(
        lambda: not controller.chat.busy and controller.chat.model.rowCount() == 2, timeout=10_000
    )
    path = controller.runtime.store.path  # type: ignore[union-attr]
    assert path is not None
    controller.spawn(controller.open_session(None))  # a new, empty session
    qtbot.waitUntil(lambda: controller.chat.model.rowCount() == 0, timeout=10_000)
    _drop(window, _mime(Path(path)))
    qtbot.waitUntil(lambda: controller.chat.model.rowCount() == 2, timeout=10_000)
    assert controller.runtime is not None and controller.runtime.store.path == path


def test_the_switcher_names_the_project_and_opens_another_from_its_menu(
    qtbot: QtBot, window: MainWindow, controller: SessionController, tmp_path: Path
) -> None:
    first = controller.cwd
    assert window.switcher.text() == "first" and window.windowTitle() == "first — piwork"
    assert window.switcher.isVisible() and first in window.switcher.toolTip()
    second = tmp_path / "R&D tools"
    second.mkdir()
    task = controller.spawn(controller.open_project(str(second)))
    qtbot.waitUntil(task.done, timeout=10_000)
    assert window.switcher.text() == "R&&D tools" and window.windowTitle() == "R&D tools — piwork"
    controller.name_session("Parser fixes")
    qtbot.waitUntil(lambda: window.windowTitle() == "Parser fixes — R&D tools — piwork", timeout=5000)

    window.switcher.fill_menu()
    actions = window.switcher.menu_.actions()
    assert actions[0].isSeparator() and actions[0].text() == "Recent Projects"
    labels = [a.text() for a in actions if not a.isSeparator()]
    assert len(labels) == 2 and labels[0].startswith("first    (")  # the open project is not listed
    assert labels[-1] == window.action_map["open_folder"].text()
    assert actions[-1] is window.action_map["open_folder"]
    next(a for a in actions if a.text().startswith("first")).trigger()
    qtbot.waitUntil(
        lambda: controller.runtime is not None and controller.runtime.store.cwd == first, timeout=10_000
    )
    assert window.switcher.text() == "first"


def test_starting_fresh_lists_the_recent_sessions_in_the_empty_chat(
    qtbot: QtBot, window: MainWindow, controller: SessionController, server: LoopbackServer
) -> None:
    """Session → Start Fresh is the other answer to Reopen Last Session at Start: the project opens in a new
    session whose empty chat lists the project's sessions, one click continuing one."""
    server.script(Turn([Text("first answer")]), Turn([Text("second answer")]))
    controller.submit("how do I parse this?")
    qtbot.waitUntil(
        lambda: not controller.chat.busy and controller.chat.model.rowCount() == 2, timeout=10_000
    )
    named = controller.runtime.store.path  # type: ignore[union-attr]
    controller.name_session("Parser fixes")
    controller.spawn(controller.open_session(None))
    qtbot.waitUntil(lambda: controller.chat.model.rowCount() == 0, timeout=10_000)
    card = window.recent_sessions.card
    qtbot.waitUntil(card.isVisible, timeout=5000)
    assert [title for title, _detail in card.lines()] == ["Parser fixes"]
    controller.submit("another question")  # the conversation starts: the list goes
    qtbot.waitUntil(
        lambda: not controller.chat.busy and controller.chat.model.rowCount() == 2, timeout=10_000
    )
    assert not card.isVisible()

    fresh, reopen = window.action_map["start_fresh"], window.action_map["reopen_last"]
    assert not fresh.isChecked() and reopen.isChecked()
    fresh.setChecked(True)
    assert not reopen.isChecked() and not window.reopens_last_session()
    task = controller.spawn(controller.open_project(controller.cwd))  # as at the next start
    qtbot.waitUntil(task.done, timeout=10_000)
    assert controller.chat.model.rowCount() == 0
    qtbot.waitUntil(lambda: card.isVisible() and len(card.lines()) == 2, timeout=5000)
    assert card.title.text() == "Recent sessions in first"
    assert card.lines()[0] == ("another question", "2 messages · just now")
    assert card.lines()[1][0] == "Parser fixes"
    card.list.itemClicked.emit(card.list.topLevelItem(1), 0)
    qtbot.waitUntil(lambda: controller.chat.model.rowCount() == 2, timeout=10_000)
    assert controller.runtime is not None and controller.runtime.store.path == named
    assert not card.isVisible()
    reopen.setChecked(True)
    assert not fresh.isChecked() and window.reopens_last_session()


def test_two_recent_projects_of_one_name_say_where_each_is(qtbot: QtBot, window: MainWindow) -> None:
    for folder in ("/srv/old/app", "/home/me/app", "/home/me/notes"):
        remember_project(window.ui_state, folder)
    window.set_session_title(None, "/home/me/notes")
    window.switcher.fill_menu()
    labels = [a.text().split("    ")[0] for a in window.switcher.menu_.actions() if not a.isSeparator()]
    assert labels[:2] == ["app — /home/me", "app — /srv/old"]
    assert not window.switcher.icon().isNull()
