"""What is asked of the window between its first frame and its session's parts being made. A file or folder
dropped meanwhile is kept (the status bar says it will open) and opens once the parts are made, instead of
the session the window started with: each drop in the order made, each once, none for a window closed
meanwhile. The project switcher is disabled meanwhile, as File → Open Recent and Open Folder are, its
tooltip saying why."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QMenu, QWidget
from pytestqt.qtbot import QtBot

from piwork.gui.app import WindowOptions, build_window, open_first_session, tab_manager
from piwork.gui.main_window import MainWindow
from piwork.gui.notifications import NotificationCenter
from piwork.gui.recent_projects import remember_project
from piwork.gui.session_controller import SessionController
from piwork.gui.tabs.manager import TabManager
from piwork.gui.theme import ThemeManager
from tests.support.long_session import write_session_of

ACTIONS = Qt.DropAction.CopyAction | Qt.DropAction.MoveAction | Qt.DropAction.LinkAction


def _drop(widget: QWidget, path: Path) -> QDropEvent:
    """A whole drag of ``path`` onto ``widget``: enter, move, drop, through the window's own handlers."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    buttons, keys = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    QApplication.sendEvent(widget, QDragEnterEvent(QPoint(10, 10), ACTIONS, mime, buttons, keys))
    QApplication.sendEvent(widget, QDragMoveEvent(QPoint(12, 12), ACTIONS, mime, buttons, keys))
    drop = QDropEvent(QPointF(12, 12), ACTIONS, mime, buttons, keys)
    QApplication.sendEvent(widget, drop)
    return drop


def _session_file(tmp_path: Path, name: str, cwd: Path, answer: str) -> Path:
    path = tmp_path / f"{name}.jsonl"
    usage = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0}
    write_session_of(
        path,
        cwd,
        [
            {"role": "user", "content": [{"type": "text", "text": "a question"}], "timestamp": 1},
            {
                "role": "assistant",
                "content": [{"type": "text", "text": answer}],
                "stopReason": "stop",
                "usage": usage,
                "timestamp": 2,
            },
        ],
    )
    return path


@dataclass
class Start:
    """A window as ``piwork.gui.app.run`` has it after its first frame, its session's parts not made yet."""

    window: MainWindow
    themes: ThemeManager
    notifications: NotificationCenter
    project: Path
    tabs: TabManager | None = None
    controller: SessionController | None = None
    opened: list[str] = field(default_factory=list)  # each session opened: its folder, or its file

    def make_parts(self) -> SessionController:
        """What ``run`` does once the parts are loaded: the tabs, the first tab's controller, the actions
        enabled, the first session opened."""
        self.tabs = tab_manager(self.window, self.themes, self.notifications, None)
        controller = self.tabs.controller(self.window, str(self.project))
        assert isinstance(controller, SessionController)
        self.controller = controller
        controller.sessionOpened.connect(self._note_opened)
        self.window.session_parts_made()
        open_first_session(self.window, controller, None)
        return controller

    def _note_opened(self, runtime: object) -> None:
        store = runtime.store  # type: ignore[attr-defined]
        self.opened.append(str(store.path) if store.path is not None and store.flushed else store.cwd)


@pytest.fixture
def start(qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path) -> Iterator[Start]:
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    project = tmp_path / "start"
    project.mkdir()
    window, themes, notifications = build_window(app, WindowOptions(cwd=str(project)))
    qtbot.addWidget(window)
    window.wait_for_session_parts()
    window.show()
    qtbot.waitExposed(window)
    started = Start(window, themes, notifications, project)
    yield started
    if started.tabs is not None:
        done = qloop.create_task(started.tabs.shutdown())
        qtbot.waitUntil(done.done, timeout=10_000)
    notifications.close_all()


def _settled(qtbot: QtBot, controller: SessionController) -> None:
    """Every task of the tab has ended (nothing more opens)."""
    qtbot.waitUntil(lambda: not controller.tasks, timeout=10_000)
    qtbot.wait(50)


def test_a_folder_dropped_before_the_session_loads_opens_once_it_has_instead_of_the_start(
    qtbot: QtBot, start: Start, tmp_path: Path
) -> None:
    window = start.window
    dropped = tmp_path / "dropped"
    dropped.mkdir()
    heard: list[str] = []
    window.projectChosen.connect(heard.append)

    drop = _drop(window.chat.view.viewport(), dropped)
    assert drop.isAccepted()
    assert window.status.currentMessage() == f"Opening the project {dropped} once piwork has started…"
    assert heard == []  # nothing asked of parts that do not exist yet
    qtbot.wait(100)
    assert window.status.currentMessage().startswith(f"Opening the project {dropped}")  # still said

    said: list[str] = []
    window.status.messageChanged.connect(said.append)
    controller = start.make_parts()
    qtbot.waitUntil(lambda: start.opened != [], timeout=10_000)
    assert said[0] == f"Opening the project {dropped}…"  # as the drop's turn comes
    _settled(qtbot, controller)
    # the dropped project opened, once, and the start's own project not at all (not opened to be replaced)
    assert start.opened == [str(dropped)]
    assert controller.cwd == str(dropped) and window.windowTitle() == "dropped — piwork"
    assert window.switcher.text() == "dropped"
    assert not window.holds_drops()

    # from now on a drop opens as it comes
    later = tmp_path / "later"
    later.mkdir()
    _drop(window, later)
    assert heard == [str(later)]
    assert window.status.currentMessage() == f"Opening the project {later}…"
    qtbot.waitUntil(lambda: len(start.opened) == 2, timeout=10_000)
    _settled(qtbot, controller)
    assert start.opened == [str(dropped), str(later)]


def test_drops_before_the_session_loads_open_in_order_each_once(
    qtbot: QtBot, start: Start, tmp_path: Path
) -> None:
    window = start.window
    first = tmp_path / "first"
    first.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    session = _session_file(tmp_path, "kept", elsewhere, "the kept answer")
    last = tmp_path / "last"
    last.mkdir()

    _drop(window, first)
    _drop(window.chat.composer.viewport(), session)  # the composer would take it as text: not here
    assert window.status.currentMessage() == (
        f"Opening the session {session} once piwork has started… (2 drops waiting)"
    )
    assert window.chat.composer.toPlainText() == ""

    controller = start.make_parts()
    _drop(window, last)  # after the parts are made, before the earlier drops have opened: behind them
    qtbot.waitUntil(lambda: len(start.opened) == 3, timeout=20_000)
    _settled(qtbot, controller)
    assert start.opened == [str(first), str(session), str(last)]
    assert controller.cwd == str(last)


def test_nothing_dropped_opens_for_a_window_closed_meanwhile(
    qtbot: QtBot, start: Start, tmp_path: Path
) -> None:
    window = start.window
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    _drop(window, one)
    _drop(window, two)
    assert "(2 drops waiting)" in window.status.currentMessage()

    controller = start.make_parts()
    # the window closes as the first drop's project opens: the second is forgotten with the window
    controller.sessionOpened.connect(lambda _runtime: window.close())
    qtbot.waitUntil(lambda: start.opened != [], timeout=10_000)
    _settled(qtbot, controller)
    assert start.opened == [str(one)]
    assert not window.isVisible() and not window.holds_drops() and window.next_held_drop() is None


def test_a_drop_on_a_window_closed_before_the_session_loads_is_forgotten(
    qtbot: QtBot, start: Start, tmp_path: Path
) -> None:
    window = start.window
    dropped = tmp_path / "dropped"
    dropped.mkdir()
    _drop(window, dropped)
    assert window.holds_drops()
    window.close()
    assert not window.holds_drops()
    window.session_parts_made()
    assert window.next_held_drop() is None


def test_the_switcher_waits_for_the_session_as_open_recent_does(
    qtbot: QtBot, start: Start, tmp_path: Path
) -> None:
    window = start.window
    switcher = window.switcher
    other = tmp_path / "other"
    other.mkdir()
    remember_project(window.ui_state, str(other))
    assert not window.recent_menu.menuAction().isEnabled()
    assert not switcher.isEnabled()
    assert switcher.text() == "start"  # it still names the project
    tip = switcher.toolTip()
    assert str(start.project) in tip and "switch to another project once piwork has started" in tip
    assert "Click to switch" not in tip
    qtbot.mouseClick(switcher, Qt.MouseButton.LeftButton)
    qtbot.wait(50)
    assert not switcher.menu_.isVisible()
    assert not [w for w in QApplication.topLevelWidgets() if isinstance(w, QMenu) and w.isVisible()]

    controller = start.make_parts()
    assert switcher.isEnabled() and window.recent_menu.menuAction().isEnabled()
    assert "Click to switch to another project." in switcher.toolTip()
    qtbot.waitUntil(lambda: start.opened != [], timeout=10_000)
    _settled(qtbot, controller)
    assert start.opened == [str(start.project)]  # nothing was dropped: the start's own project
    switcher.fill_menu()
    pick = next(a for a in switcher.menu_.actions() if a.text().startswith("other"))
    pick.trigger()
    qtbot.waitUntil(lambda: len(start.opened) == 2, timeout=10_000)
    _settled(qtbot, controller)
    assert start.opened == [str(start.project), str(other)]
