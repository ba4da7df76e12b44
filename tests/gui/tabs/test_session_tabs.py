"""Several sessions in one window, one tab each: each tab's reply streams from the loopback server into
its own chat and its own session file while another tab is in front; the docks, status and title follow
the tab in front; a session open in a tab is never opened twice; closing a tab whose reply runs asks."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QInputDialog, QMessageBox, QPushButton
from pytestqt.qtbot import QtBot

from piwork.core.paths import agent_dir
from piwork.gui.inbox.wiring import follow_tabs, install_inbox
from piwork.gui.main_window import MainWindow
from piwork.gui.notifications import NotificationCenter
from piwork.gui.session_controller import SessionController
from piwork.gui.tabs.labels import TabLabel
from piwork.gui.tabs.manager import TabManager
from piwork.gui.tabs.tab_state import TabState
from piwork.gui.theme import load_theme
from tests.gui.test_approvals_window import choose_mode
from tests.gui.test_session_controller import _configure
from tests.support import LoopbackServer, Text, ToolCall, Turn
from tests.support.scripted_turns import RecordedRequest

WORDS = 40  # words in each scripted answer, streamed one event each


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running


def _answer(request: RecordedRequest, drip: float = 0.01) -> Turn:
    """Each prompt gets an answer that names it, word by word, slowly enough for replies to overlap."""
    sent = json.dumps(request.body)
    word = next((w for w in ("alpha", "beta", "gamma", "delta") if f"question {w}" in sent), "other")
    return Turn([Text(" ".join(f"{word}{i}" for i in range(WORDS)))], drip=drip)


class Tabs:
    def __init__(self, qtbot: QtBot, tmp_path: Path, server: LoopbackServer) -> None:
        _configure(server)
        self.qtbot = qtbot
        self.server = server
        self.project = tmp_path / "project"
        self.project.mkdir()
        self.ui = QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat)
        self.window = self.make_window()
        self.notifications = NotificationCenter(self.window)
        self.manager = TabManager(
            self.notifications, agent_dir(), approve=False, env={}, make_window=self.make_window
        )
        self.first = self.manager.controller(self.window, str(self.project))
        self.first.spawn(self.first.open_session(None))
        qtbot.waitUntil(lambda: self.first.runtime is not None, timeout=10_000)

    def make_window(self) -> MainWindow:
        window = MainWindow(self.ui, load_theme("light"))
        self.qtbot.addWidget(window)
        window.resize(1000, 700)
        window.show()
        return window

    def new_tab(self, window: MainWindow | None = None) -> SessionController:
        task = asyncio.ensure_future(self.manager.new_tab(window or self.window))
        self.qtbot.waitUntil(task.done, timeout=10_000)
        controller = task.result()
        assert controller.runtime is not None
        return controller

    def ask(self, controller: SessionController, word: str, drip: float = 0.01) -> None:
        self.server.script(lambda request: _answer(request, drip))
        controller.submit(f"question {word}")
        self.qtbot.waitUntil(lambda: controller.session is not None and controller.session.is_streaming)


@pytest.fixture
def tabs(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path, server: LoopbackServer
) -> Iterator[Tabs]:
    made = Tabs(qtbot, tmp_path, server)
    yield made
    done = qloop.create_task(made.manager.shutdown())
    qtbot.waitUntil(done.done, timeout=10_000)
    made.notifications.close_all()


def _settled(controller: SessionController) -> bool:
    session = controller.session
    return not controller.chat.busy and session is not None and not session.is_streaming


def _saved(controller: SessionController) -> list[dict[str, Any]]:
    runtime = controller.runtime
    assert runtime is not None and runtime.store.path is not None
    return [json.loads(line) for line in runtime.store.path.read_text().splitlines()]


def _conversation(controller: SessionController) -> list[tuple[str, str]]:
    """(role, text) of each message in the session file, in file order, with the parent chain checked."""
    entries = _saved(controller)
    ids = {entry.get("id") for entry in entries}
    said = []
    for entry in entries:
        if entry.get("type") != "message":
            continue
        assert entry.get("parentId") is None or entry["parentId"] in ids
        message = entry["message"]
        content = message["content"]
        text = content if isinstance(content, str) else "".join(part.get("text", "") for part in content)
        said.append((message["role"], text))
    return said


def _answer_text(word: str) -> str:
    return " ".join(f"{word}{i}" for i in range(WORDS))


def test_two_tabs_stream_at_once_into_their_own_chats_and_files(qtbot: QtBot, tabs: Tabs) -> None:
    first = tabs.first
    tabs.ask(first, "alpha", drip=0.1)  # still streaming while the second tab opens and streams
    second = tabs.new_tab()
    assert tabs.window.front_tab is second.tab and not first.front and second.front
    tabs.ask(second, "beta")
    assert first.session is not None and first.session.is_streaming  # the first one runs on behind
    qtbot.waitUntil(lambda: second.tab.status.state is TabState.RUNNING)
    assert first.tab.status.state is TabState.RUNNING
    assert "running" in tabs.window.strip.bar.tabText(0)
    qtbot.waitUntil(lambda: _settled(first) and _settled(second), timeout=20_000)
    assert _conversation(first) == [("user", "question alpha"), ("assistant", _answer_text("alpha"))]
    assert _conversation(second) == [("user", "question beta"), ("assistant", _answer_text("beta"))]
    assert first.runtime is not None and second.runtime is not None
    assert first.runtime.store.path != second.runtime.store.path
    # each chat shows its own reply
    assert first.chat.model.row_at(1).text == _answer_text("alpha")
    assert second.chat.model.row_at(1).text == _answer_text("beta")
    # the one that finished behind is "done" until looked at
    assert first.tab.status.state is TabState.DONE and second.tab.status.state is TabState.IDLE
    assert "done" in tabs.window.strip.bar.tabText(0)
    tabs.window.strip.show_tab(first.tab)
    assert first.tab.status.state is TabState.IDLE and "done" not in tabs.window.strip.bar.tabText(0)


def test_the_docks_status_and_title_follow_the_tab_in_front(qtbot: QtBot, tabs: Tabs) -> None:
    first = tabs.first
    tabs.ask(first, "alpha")
    qtbot.waitUntil(lambda: _settled(first), timeout=20_000)
    first.name_session("First line of work")
    qtbot.waitUntil(lambda: "First line of work" in tabs.window.windowTitle())
    second = tabs.new_tab()
    assert tabs.window.strip.bar.tabText(0) == "First line of work"  # named while in front
    assert tabs.window.strip.bar.tabText(1) == "New session"
    tree = tabs.window.tree_panel
    assert second.runtime is not None and first.runtime is not None
    qtbot.waitUntil(lambda: tree.session is second.runtime.store, timeout=5000)  # type: ignore[union-attr]
    assert "First line of work" not in tabs.window.windowTitle()
    assert tabs.window.chat is second.chat
    tabs.window.strip.show_tab(first.tab)
    qtbot.waitUntil(lambda: tree.session is first.runtime.store, timeout=5000)  # type: ignore[union-attr]
    qtbot.waitUntil(lambda: "First line of work" in tabs.window.windowTitle(), timeout=5000)
    assert tabs.window.chat is first.chat
    assert "First line of work" in tabs.window.strip.bar.tabText(0)
    # a window action reaches the tab in front only: Stop in front leaves the reply behind running
    tabs.ask(second, "beta", drip=0.05)
    tabs.window.action_map["stop"].trigger()
    assert second.session is not None and second.session.is_streaming
    qtbot.waitUntil(lambda: _settled(second), timeout=20_000)
    assert _conversation(second)[-1] == ("assistant", _answer_text("beta"))


def test_a_session_open_in_a_tab_is_brought_to_the_front_not_opened_twice(qtbot: QtBot, tabs: Tabs) -> None:
    first = tabs.first
    tabs.ask(first, "alpha")
    qtbot.waitUntil(lambda: _settled(first), timeout=20_000)
    assert first.runtime is not None and first.runtime.store.path is not None
    path = str(first.runtime.store.path)
    second = tabs.new_tab()
    before = second.runtime
    tabs.window.sessionFileChosen.emit(path)  # as File → Open or the sessions browser would
    qtbot.waitUntil(lambda: tabs.window.front_tab is first.tab, timeout=5000)
    assert second.runtime is before and len(tabs.manager.registry.controllers()) == 2
    assert first.runtime.session.read_only_reason is None  # still the one writer


def test_opening_while_a_reply_runs_opens_a_new_tab_beside_it(qtbot: QtBot, tabs: Tabs) -> None:
    first = tabs.first
    tabs.ask(first, "alpha", drip=0.02)
    tabs.window.action_map["new_session"].trigger()
    qtbot.waitUntil(lambda: len(tabs.manager.registry.controllers()) == 2, timeout=10_000)
    qtbot.waitUntil(lambda: _settled(first), timeout=20_000)
    assert _conversation(first) == [("user", "question alpha"), ("assistant", _answer_text("alpha"))]


def _box(qtbot: QtBot, window: MainWindow) -> QMessageBox:
    qtbot.waitUntil(lambda: window.findChild(QMessageBox, "stopRunningBox") is not None, timeout=5000)
    box = window.findChild(QMessageBox, "stopRunningBox")
    assert isinstance(box, QMessageBox)
    return box


def test_closing_a_tab_whose_reply_runs_asks(qtbot: QtBot, tabs: Tabs) -> None:
    first = tabs.first
    second = tabs.new_tab()
    tabs.ask(second, "beta", drip=0.05)
    tabs.manager.close_tab(second)
    box = _box(qtbot, tabs.window)
    assert "still replying" in box.text()
    box.button(QMessageBox.StandardButton.Cancel).click()
    qtbot.waitUntil(lambda: tabs.window.findChild(QMessageBox, "stopRunningBox") is None, timeout=5000)
    assert second in tabs.manager.registry.controllers() and second.session.is_streaming  # type: ignore[union-attr]
    tabs.manager.close_tab(second)
    box = _box(qtbot, tabs.window)
    stop = box.findChild(QPushButton, "stopAndClose")
    assert stop is not None and stop.text() == "Stop and Close"
    stop.click()
    qtbot.waitUntil(lambda: second not in tabs.manager.registry.controllers(), timeout=10_000)
    assert tabs.window.strip.tabs == [first.tab] and tabs.window.front_tab is first.tab
    assert not tabs.window.strip.bar.isVisible()  # one tab: no tab bar


def test_four_tabs_stream_without_holding_the_gui_thread(qtbot: QtBot, tabs: Tabs) -> None:
    """The stall guard (on for every GUI test) fails this if any event held the GUI thread over 50 ms."""
    controllers = [tabs.first] + [tabs.new_tab() for _ in range(3)]
    for controller, word in zip(controllers, ("alpha", "beta", "gamma", "delta"), strict=True):
        tabs.ask(controller, word, drip=0.02)
    assert all(c.session is not None and c.session.is_streaming for c in controllers)
    tabs.window.strip.show_tab(controllers[1].tab)  # switching while they all stream
    tabs.window.strip.show_tab(controllers[3].tab)
    qtbot.waitUntil(lambda: all(_settled(c) for c in controllers), timeout=30_000)
    for controller, word in zip(controllers, ("alpha", "beta", "gamma", "delta"), strict=True):
        assert _conversation(controller) == [("user", f"question {word}"), ("assistant", _answer_text(word))]


def test_a_tab_label_and_colour_are_remembered_for_its_session_file(qtbot: QtBot, tabs: Tabs) -> None:
    first = tabs.first
    tabs.ask(first, "alpha")
    qtbot.waitUntil(lambda: _settled(first), timeout=20_000)
    second = tabs.new_tab()
    assert tabs.window.strip.bar.tabText(0) == "question alpha"  # an unnamed session: its first prompt
    tabs.manager.set_label(first, TabLabel("Refactor", "#3a9a4a"))
    assert tabs.window.strip.bar.tabText(0).startswith("Refactor")
    menu = tabs.manager.tab_menu(first)
    actions = {action.text(): action for action in menu.actions()}
    assert {"&Label…", "&Colour", "Move to New &Window", "&Close Tab"} <= set(actions)
    actions["&Label…"].trigger()  # asks for the label, the current one filled in
    qtbot.waitUntil(lambda: tabs.window.findChild(QInputDialog) is not None, timeout=5000)
    dialog = tabs.window.findChild(QInputDialog)
    assert isinstance(dialog, QInputDialog) and dialog.textValue() == "Refactor"
    dialog.setTextValue("Parser refactor")
    dialog.accept()
    qtbot.waitUntil(lambda: tabs.window.strip.bar.tabText(0) == "Parser refactor", timeout=5000)
    colours = actions["&Colour"].menu()
    assert colours is not None
    blue = next(action for action in colours.actions() if action.text() == "Blue")
    blue.trigger()
    assert tabs.manager.label_of(first) == TabLabel("Parser refactor", "#2f6fd6")
    menu.close()
    assert first.runtime is not None and first.runtime.store.path is not None
    path = str(first.runtime.store.path)
    close = tabs.manager.close_tab(first)
    qtbot.waitUntil(close.done, timeout=10_000)
    tabs.window.sessionFileChosen.emit(path)  # reopened in the tab in front
    qtbot.waitUntil(lambda: second.is_open_file(path), timeout=10_000)
    assert tabs.manager.label_of(second) == TabLabel("Parser refactor", "#2f6fd6")


def test_a_tab_moved_to_a_new_window_keeps_streaming_there(qtbot: QtBot, tabs: Tabs) -> None:
    first = tabs.first
    second = tabs.new_tab()
    tabs.ask(second, "beta", drip=0.02)
    moved = tabs.manager.move_to_new_window(second)
    assert moved is not None and second.window is moved and moved is not tabs.window
    assert tabs.window.front_tab is first.tab and moved.front_tab is second.tab
    assert second.chat.window() is moved
    qtbot.waitUntil(lambda: _settled(second), timeout=20_000)
    assert _conversation(second) == [("user", "question beta"), ("assistant", _answer_text("beta"))]
    assert second.runtime is not None
    qtbot.waitUntil(lambda: moved.tree_panel.session is second.runtime.store, timeout=5000)  # type: ignore[union-attr]
    assert tabs.window.tree_panel.session is first.runtime.store  # type: ignore[union-attr]
    assert second.chat.model.row_at(1).text == _answer_text("beta")


def test_quitting_with_replies_running_in_two_tabs_asks_once(qtbot: QtBot, tabs: Tabs) -> None:
    first = tabs.first
    second = tabs.new_tab()
    tabs.ask(first, "alpha", drip=0.05)
    tabs.ask(second, "beta", drip=0.05)
    tabs.window.action_map["quit"].trigger()
    box = _box(qtbot, tabs.window)
    assert box.text() == "2 replies are still running. Stop them and quit?"
    box.button(QMessageBox.StandardButton.Cancel).click()
    qtbot.waitUntil(lambda: tabs.window.findChild(QMessageBox, "stopRunningBox") is None, timeout=5000)
    assert tabs.window.isVisible() and first.session.is_streaming  # type: ignore[union-attr]
    tabs.window.action_map["quit"].trigger()
    box = _box(qtbot, tabs.window)
    stop = box.findChild(QPushButton, "stopAndClose")
    assert stop is not None and stop.text() == "Stop and Quit"
    stop.click()
    qtbot.waitUntil(lambda: not tabs.window.isVisible(), timeout=5000)
    assert tabs.window.findChild(QMessageBox, "stopRunningBox") is None  # the close did not ask again


def test_an_approval_in_a_background_tab_waits_in_the_inbox_and_is_answered_there(
    qtbot: QtBot, tabs: Tabs
) -> None:
    inbox = install_inbox(tabs.window)
    follow_tabs(inbox, tabs.manager.registry, tabs.manager.registry.controllers())
    first = tabs.first
    choose_mode(qtbot, first, "ask")
    second = tabs.new_tab()  # in front; the first goes behind
    tabs.server.script(Turn([ToolCall("bash", {"command": "touch made.txt"})]), Turn([Text("Made it.")]))
    first.submit("make a file")
    qtbot.waitUntil(lambda: first.tab.status.state is TabState.WAITING, timeout=10_000)
    assert "waiting" in tabs.window.strip.bar.tabText(0) and tabs.window.front_tab is second.tab
    qtbot.waitUntil(lambda: inbox.inbox.count() == 1, timeout=5000)
    waiting = inbox.inbox.waiting()[0]
    assert waiting.feed.controller is first
    inbox.inbox.approve(waiting)
    qtbot.waitUntil(lambda: _settled(first) and (tabs.project / "made.txt").exists(), timeout=10_000)
    assert first.tab.status.state is TabState.DONE and inbox.inbox.count() == 1  # the run finished behind
    inbox.inbox.act(inbox.inbox.waiting()[0])  # Enter on it: its tab comes to the front
    qtbot.waitUntil(lambda: tabs.window.front_tab is first.tab, timeout=5000)


def test_the_tab_actions_open_move_between_and_close_tabs(qtbot: QtBot, tabs: Tabs) -> None:
    window, registry = tabs.window, tabs.manager.registry
    first = tabs.first
    assert not window.strip.bar.isVisible()  # one tab: the window as it was
    window.action_map["new_tab"].trigger()  # File → New Tab, in the front tab's project
    qtbot.waitUntil(lambda: len(registry.controllers()) == 2, timeout=10_000)
    second = registry.controllers()[1]
    qtbot.waitUntil(lambda: second.runtime is not None, timeout=10_000)
    assert second.cwd == first.cwd and window.front_tab is second.tab and window.strip.bar.isVisible()
    window.action_map["next_tab"].trigger()  # wraps round to the first
    assert window.front_tab is first.tab and registry.front(window) is first
    window.action_map["previous_tab"].trigger()
    assert window.front_tab is second.tab
    window.strip.bar.moveTab(1, 0)  # dragged to the left: the bar's order is the tabs' order
    assert window.strip.tabs == [second.tab, first.tab] and registry.in_window(window) == [second, first]
    window.strip.bar.setCurrentIndex(1)
    assert window.front_tab is first.tab and window.strip.stack.currentWidget() is first.chat
    window.action_map["close_tab"].trigger()  # nothing runs: closes without asking
    qtbot.waitUntil(lambda: registry.controllers() == [second], timeout=10_000)
    assert window.front_tab is second.tab and window.findChild(QMessageBox, "stopRunningBox") is None
    qtbot.waitUntil(lambda: window.tree_panel.session is second.runtime.store, timeout=5000)  # type: ignore[union-attr]


def test_a_moved_tab_can_go_back_and_the_window_it_leaves_empty_closes(qtbot: QtBot, tabs: Tabs) -> None:
    first = tabs.first
    second = tabs.new_tab()
    third = tabs.new_tab()
    assert tabs.manager.move_targets(second) == []  # one window: nowhere else to go
    tabs.ask(third, "gamma", drip=0.02)
    moved = tabs.manager.move_to_new_window(third)
    assert moved is not None
    assert tabs.manager.move_targets(first) == [moved]
    menu = tabs.manager.tab_menu(third)
    into = next(action.menu() for action in menu.actions() if action.text() == "Move to &Window")
    assert into is not None and into.isEnabled()
    (back,) = into.actions()
    assert back.text().endswith("(2 tabs)")  # the first window, with its two tabs
    back.trigger()  # while its reply streams
    menu.close()
    assert third.window is tabs.window and tabs.window.front_tab is third.tab
    assert [c.tab for c in tabs.manager.registry.in_window(tabs.window)] == [first.tab, second.tab, third.tab]
    qtbot.waitUntil(lambda: moved not in tabs.manager.windows, timeout=5000)
    assert not moved.isVisible()
    qtbot.waitUntil(lambda: _settled(third), timeout=20_000)
    assert _conversation(third) == [("user", "question gamma"), ("assistant", _answer_text("gamma"))]
    assert third.runtime is not None
    qtbot.waitUntil(lambda: tabs.window.tree_panel.session is third.runtime.store, timeout=5000)  # type: ignore[union-attr]
    # The first window's last tab stays: the window stays while piwork runs.
    assert tabs.manager.move_to_window(first, moved) is False
