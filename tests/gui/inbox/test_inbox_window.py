"""The inbox in the real window: an approval waits there and is answered from it (the call runs or is
refused and the model reads the result), a trust question waits and opens from it, a failed reply waits
without the provider's text, a finished run waits only when its session was out of sight, and the title
and the status bar count what waits."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QObject, QSettings, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from piwork.core.paths import agent_dir
from piwork.gui.inbox.inbox import Waiting
from piwork.gui.inbox.items import InboxKind
from piwork.gui.inbox.wiring import WindowInbox, follow_controller, follow_tabs, install_inbox
from piwork.gui.main_window import MainWindow
from piwork.gui.notifications import NotificationCenter
from piwork.gui.session_controller import SessionController
from piwork.gui.theme import load_theme
from piwork.gui.trust_dialog import TrustDialog
from tests.gui.test_approvals_window import answer_dialog, choose_mode, tool_result_texts
from tests.gui.test_session_controller import _configure
from tests.support import Failure, LoopbackServer, Text, ToolCall, Turn

SECRET = "sk-ant-api03-SECRETSECRET"


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "shop-api"
    root.mkdir()
    (root / "notes.txt").write_text("alpha\nbeta\n")
    return root


def make_window(qtbot: QtBot, tmp_path: Path, name: str = "w") -> tuple[MainWindow, WindowInbox]:
    window = MainWindow(
        QSettings(str(tmp_path / f"{name}.ini"), QSettings.Format.IniFormat), load_theme("light")
    )
    qtbot.addWidget(window)
    installed = install_inbox(window)
    window.resize(1000, 700)
    window.show()
    qtbot.waitExposed(window)
    return window, installed


class Windows:
    """Windows with a session each, shut down at the end."""

    def __init__(self, qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path) -> None:
        self.qtbot, self.qloop, self.tmp_path = qtbot, qloop, tmp_path
        self.controllers: list[SessionController] = []

    def open(
        self, project: Path, name: str = "w", approve: bool | None = False, wait: bool = True
    ) -> tuple[SessionController, WindowInbox]:
        window, installed = make_window(self.qtbot, self.tmp_path, name)
        window.set_session_title(None, str(project))  # as the application does before a session opens
        ctl = SessionController(
            window, NotificationCenter(window), str(project), agent_dir(), approve=approve, env={}
        )
        follow_controller(installed, ctl)
        self.controllers.append(ctl)
        ctl.spawn(ctl.open_session(None))
        if wait:
            self.qtbot.waitUntil(lambda: ctl.runtime is not None, timeout=10_000)
        return ctl, installed

    def close(self) -> None:
        for ctl in self.controllers:
            done = self.qloop.create_task(ctl.shutdown())
            self.qtbot.waitUntil(done.done, timeout=10_000)
            ctl.notifications.close_all()


@pytest.fixture
def windows(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, server: LoopbackServer, tmp_path: Path
) -> Iterator[Windows]:
    _configure(server)
    made = Windows(qtbot, qloop, tmp_path)
    yield made
    made.close()


@pytest.fixture
def elsewhere(qtbot: QtBot) -> QWidget:
    """Another application's window, activated to put piwork's in the background."""
    other = QWidget()
    other.setWindowTitle("another application")
    qtbot.addWidget(other)
    return other


def to_background(qtbot: QtBot, window: QWidget, other: QWidget) -> None:
    other.show()
    other.activateWindow()
    qtbot.waitUntil(lambda: other.isActiveWindow() and not window.isActiveWindow())


def to_front(qtbot: QtBot, window: QWidget) -> None:
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)


def listed(installed: WindowInbox) -> list[tuple[InboxKind, str, str]]:
    return [(w.item.kind, w.feed.label(), w.item.what) for w in installed.inbox.waiting()]


def wait_listed(qtbot: QtBot, installed: WindowInbox, count: int) -> list[Waiting]:
    qtbot.waitUntil(lambda: installed.panel.list.count() == count, timeout=10_000)
    return installed.inbox.waiting()


def select_first(qtbot: QtBot, installed: WindowInbox) -> None:
    installed.show()
    qtbot.waitUntil(installed.panel.list.isVisible)
    installed.panel.list.setCurrentRow(0)


def settled(qtbot: QtBot, ctl: SessionController) -> None:
    qtbot.waitUntil(lambda: not ctl.chat.busy, timeout=10_000)


def reply(qtbot: QtBot, ctl: SessionController, text: str = "go") -> None:
    ctl.submit(text)
    qtbot.waitUntil(lambda: ctl.chat.busy, timeout=5000)
    settled(qtbot, ctl)


def test_an_approval_waits_in_the_inbox_and_is_approved_from_it(
    qtbot: QtBot, windows: Windows, server: LoopbackServer, project: Path
) -> None:
    ctl, installed = windows.open(project)
    window = ctl.window
    assert window.windowTitle() == "shop-api — piwork" and not installed.badge.isVisible()
    assert installed.panel.empty.isVisibleTo(installed.panel)
    assert not installed.panel.buttons.isVisibleTo(installed.panel)  # nothing to act on
    choose_mode(qtbot, ctl, "ask")
    server.script(Turn([ToolCall("bash", {"command": "touch  made.txt"})]), Turn([Text("Made it.")]))
    ctl.submit("make a file")
    wait_listed(qtbot, installed, 1)
    assert listed(installed) == [(InboxKind.APPROVAL, "shop-api", "$ touch made.txt")]
    assert window.windowTitle() == "(1) shop-api — piwork"
    assert installed.badge.isVisible() and installed.badge.text() == "● 1 waiting"
    assert not (project / "made.txt").exists()

    select_first(qtbot, installed)
    panel = installed.panel
    assert panel.approve_button.isEnabled() and panel.deny_button.isEnabled()
    assert not panel.dismiss_button.isEnabled()
    qtbot.mouseClick(panel.approve_button, Qt.MouseButton.LeftButton)
    settled(qtbot, ctl)
    assert (project / "made.txt").exists()
    assert tool_result_texts(server) == [(False, "(no output)")]
    assert ctl.chat.model.row_at(ctl.chat.model.rowCount() - 1).text == "Made it."
    wait_listed(qtbot, installed, 0)
    assert window.windowTitle() == "shop-api — piwork" and not installed.badge.isVisible()
    assert ctl.window.approvals.waiting == []


def test_a_call_denied_from_the_inbox_gives_the_model_the_reason(
    qtbot: QtBot, windows: Windows, server: LoopbackServer, project: Path
) -> None:
    ctl, installed = windows.open(project)
    choose_mode(qtbot, ctl, "ask")
    server.script(Turn([ToolCall("bash", {"command": "rm notes.txt"})]), Turn([Text("Kept it.")]))
    ctl.submit("clean up")
    wait_listed(qtbot, installed, 1)
    select_first(qtbot, installed)
    qtbot.mouseClick(installed.panel.deny_button, Qt.MouseButton.LeftButton)
    answer_dialog(qtbot, "the notes are still needed")
    to_front(qtbot, ctl.window)  # as the desktop does once the question closes (offscreen does not)
    settled(qtbot, ctl)
    assert (project / "notes.txt").exists()
    assert tool_result_texts(server) == [
        (True, "Not run: the user denied this bash call. Their reason: the notes are still needed")
    ]
    wait_listed(qtbot, installed, 0)


def test_an_approval_answered_on_its_card_leaves_the_inbox_and_enter_focuses_the_card(
    qtbot: QtBot, windows: Windows, server: LoopbackServer, project: Path
) -> None:
    ctl, installed = windows.open(project)
    choose_mode(qtbot, ctl, "ask")
    edit = {"path": "notes.txt", "edits": [{"oldText": "beta", "newText": "gamma"}]}
    server.script(Turn([ToolCall("edit", edit)]), Turn([Text("Changed.")]))
    ctl.submit("change the notes")
    wait_listed(qtbot, installed, 1)
    assert listed(installed) == [(InboxKind.APPROVAL, "shop-api", "edit notes.txt")]
    select_first(qtbot, installed)
    installed.panel.list.setFocus()
    qtbot.keyClick(installed.panel.list, Qt.Key.Key_Return)
    view = ctl.chat.view
    qtbot.waitUntil(view.hasFocus)
    current = ctl.chat.model.row_at(view.currentIndex().row())
    assert current.tool is not None and current.tool.approval is not None
    assert current.tool.name == "edit"
    ctl.window.approvals.act(current.tool.call_id, "approve")  # as the card's badge does
    settled(qtbot, ctl)
    assert (project / "notes.txt").read_text() == "alpha\ngamma\n"
    wait_listed(qtbot, installed, 0)


def test_an_approval_in_another_window_is_answered_from_this_windows_inbox(
    qtbot: QtBot, windows: Windows, server: LoopbackServer, project: Path, tmp_path: Path
) -> None:
    """Two sessions at once: the one out of sight asks, and is answered without going to it."""
    other_project = tmp_path / "billing"
    other_project.mkdir()
    here, installed = windows.open(project, "here")
    there, _their_inbox = windows.open(other_project, "there")
    feed = installed.inbox.attach(there)
    assert installed.inbox.attach(there) is feed  # once per session
    choose_mode(qtbot, there, "ask")
    to_front(qtbot, here.window)
    server.script(Turn([ToolCall("bash", {"command": "touch paid.txt"})]), Turn([Text("Paid.")]))
    there.submit("mark it paid")
    wait_listed(qtbot, installed, 1)
    assert listed(installed) == [(InboxKind.APPROVAL, "billing", "$ touch paid.txt")]
    assert here.window.windowTitle() == "(1) shop-api — piwork"
    select_first(qtbot, installed)
    qtbot.mouseClick(installed.panel.approve_button, Qt.MouseButton.LeftButton)
    settled(qtbot, there)
    assert (other_project / "paid.txt").exists() and not (project / "paid.txt").exists()
    assert tool_result_texts(server) == [(False, "(no output)")]
    # it finished out of sight: that waits now, until the user looks at it
    wait_listed(qtbot, installed, 1)
    assert listed(installed) == [(InboxKind.FINISHED, "billing", "Replied to “mark it paid”")]
    installed.panel.list.setCurrentRow(0)
    installed.panel.list.setFocus()
    qtbot.keyClick(installed.panel.list, Qt.Key.Key_Return)  # jumps there
    qtbot.waitUntil(there.window.isActiveWindow)
    wait_listed(qtbot, installed, 0)
    last = there.chat.model.row_at(there.chat.model.rowCount() - 1)
    assert there.chat.view.currentIndex().row() == there.chat.model.rowCount() - 1 and last.text == "Paid."
    installed.inbox.detach(there)
    assert installed.inbox.feed_of(there) is None


def test_a_finished_run_waits_only_while_its_session_was_out_of_sight(
    qtbot: QtBot, windows: Windows, server: LoopbackServer, project: Path, elsewhere: QWidget
) -> None:
    ctl, installed = windows.open(project)
    to_front(qtbot, ctl.window)
    server.script(Turn([Text("Seen as it came.")]))
    reply(qtbot, ctl, "first")
    assert installed.inbox.waiting() == [] and installed.panel.list.count() == 0

    to_background(qtbot, ctl.window, elsewhere)
    server.script(Turn([Text("Done while you were away.")]))
    reply(qtbot, ctl, "second   question\nwith two lines")
    wait_listed(qtbot, installed, 1)
    assert listed(installed) == [
        (InboxKind.FINISHED, "shop-api", "Replied to “second question with two lines”")
    ]
    assert ctl.window.windowTitle() == "(1) shop-api — piwork"
    to_front(qtbot, ctl.window)  # the user is back: seen
    wait_listed(qtbot, installed, 0)
    assert ctl.window.windowTitle() == "shop-api — piwork"


def test_a_failed_reply_waits_without_the_providers_text_until_the_session_replies_again(
    qtbot: QtBot, windows: Windows, server: LoopbackServer, project: Path
) -> None:
    ctl, installed = windows.open(project)
    ctl.name_session("Checkout bug")
    body = (
        '{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key '
        + SECRET
        + '"}}'
    )
    server.script(Turn(failure=Failure.http(401, body)))
    reply(qtbot, ctl, "fix it")
    wait_listed(qtbot, installed, 1)
    assert listed(installed) == [
        (InboxKind.FAILED, "Checkout bug — shop-api", "The provider refused the API key (401)")
    ]
    item = installed.panel.list.item(0)
    assert SECRET not in item.toolTip() and SECRET not in installed.badge.toolTip()
    select_first(qtbot, installed)
    assert installed.panel.dismiss_button.isEnabled() and not installed.panel.approve_button.isEnabled()
    server.script(Turn([Text("Fixed.")]))
    reply(qtbot, ctl, "try again")
    wait_listed(qtbot, installed, 0)


def test_a_failed_reply_can_be_dismissed(
    qtbot: QtBot, windows: Windows, server: LoopbackServer, project: Path
) -> None:
    ctl, installed = windows.open(project)
    server.script(Turn(failure=Failure.http(400, '{"type":"error","error":{"message":"bad request"}}')))
    reply(qtbot, ctl)
    wait_listed(qtbot, installed, 1)
    assert listed(installed)[0][2] == "The provider refused the request (400)"
    select_first(qtbot, installed)
    qtbot.mouseClick(installed.panel.dismiss_button, Qt.MouseButton.LeftButton)
    wait_listed(qtbot, installed, 0)
    assert installed.panel.empty.isVisible()


@pytest.fixture
def gated_project(tmp_path: Path) -> Path:
    root = tmp_path / "work" / "proj"
    skill = root / ".pi" / "skills" / "deploy" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: deploy\ndescription: Ship the build.\n---\nShip it.\n")
    return root


def visible_trust_dialog() -> TrustDialog | None:
    shown = [w for w in QApplication.topLevelWidgets() if isinstance(w, TrustDialog) and w.isVisible()]
    return shown[0] if shown else None


def test_a_trust_question_waits_in_the_inbox_and_opens_from_it(
    qtbot: QtBot, windows: Windows, gated_project: Path
) -> None:
    ctl, installed = windows.open(gated_project, approve=None, wait=False)
    qtbot.waitUntil(lambda: visible_trust_dialog() is not None, timeout=10_000)
    wait_listed(qtbot, installed, 1)
    assert listed(installed) == [(InboxKind.TRUST, "proj", "Trust the project folder proj?")]
    assert ctl.window.windowTitle() == "(1) proj — piwork"
    visible_trust_dialog().option_buttons["trust"].click()  # type: ignore[union-attr]
    qtbot.waitUntil(lambda: ctl.runtime is not None, timeout=10_000)
    wait_listed(qtbot, installed, 0)

    # changed while the user types: the question waits behind the chat's bar, and in the inbox
    skill = gated_project / ".pi" / "skills" / "deploy" / "SKILL.md"
    skill.write_text("---\nname: deploy\ndescription: Ship the build.\n---\nShip it twice.\n")
    window, composer, banner = ctl.window, ctl.chat.composer, ctl.chat.trust_banner
    to_front(qtbot, window)
    composer.setFocus()
    qtbot.keyClicks(composer, "please deploy")
    window.action_map["reload_resources"].trigger()
    qtbot.waitUntil(banner.isVisible, timeout=10_000)
    wait_listed(qtbot, installed, 1)
    assert listed(installed)[0][0] is InboxKind.TRUST and visible_trust_dialog() is None
    select_first(qtbot, installed)
    installed.panel.list.setFocus()
    qtbot.keyClick(installed.panel.list, Qt.Key.Key_Enter)  # opens it
    qtbot.waitUntil(lambda: visible_trust_dialog() is not None, timeout=10_000)
    assert not banner.isVisible() and installed.panel.list.count() == 1  # waits until answered
    visible_trust_dialog().option_buttons["trust"].click()  # type: ignore[union-attr]
    wait_listed(qtbot, installed, 0)


def test_the_inbox_is_a_view_entry_with_its_own_shortcut_and_the_badge_opens_it(
    qtbot: QtBot, windows: Windows, server: LoopbackServer, project: Path
) -> None:
    ctl, installed = windows.open(project)
    window = ctl.window
    toggle = installed.dock.toggleViewAction()
    assert toggle in window.menus["View"].actions()  # type: ignore[attr-defined]
    assert toggle.text() == "Inbox" and toggle.shortcut().toString() == "Alt+5"
    taken = [a.shortcut().toString() for a in window.findChildren(QAction) if a is not toggle]
    assert "Alt+5" not in taken  # no other action of the window has it
    dialog = window.show_shortcuts()
    rows = {
        (dialog.table.item(r, 1).text(), dialog.table.item(r, 2).text())
        for r in range(dialog.table.rowCount())
    }
    assert ("Inbox", "Alt+5") in rows
    dialog.close()
    to_front(qtbot, window)  # as the desktop does once the dialog closes (offscreen does not)
    assert not installed.dock.isVisible()
    qtbot.keyClick(window, Qt.Key.Key_5, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(installed.dock.isVisible)
    installed.dock.hide()

    server.script(Turn(failure=Failure.http(403, '{"type":"error","error":{"type":"permission_error"}}')))
    reply(qtbot, ctl)
    wait_listed(qtbot, installed, 1)
    assert installed.badge.isVisible() and "failed: 1" in installed.badge.toolTip()
    qtbot.mouseClick(installed.badge, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: installed.dock.isVisible() and installed.panel.list.hasFocus())
    assert listed(installed)[0][2] == "The provider refused the API key (403)"


def test_stop_ends_a_waiting_approval_in_the_inbox_and_a_stopped_run_does_not_wait(
    qtbot: QtBot, windows: Windows, server: LoopbackServer, project: Path, elsewhere: QWidget
) -> None:
    ctl, installed = windows.open(project)
    choose_mode(qtbot, ctl, "ask")
    server.script(Turn([ToolCall("bash", {"command": "touch never"})]))
    ctl.submit("go")
    wait_listed(qtbot, installed, 1)
    item = installed.panel.list.item(0)
    assert item.text() == "Approve: $ touch never (shop-api)"  # what a screen reader says
    to_background(qtbot, ctl.window, elsewhere)
    ctl.window.action_map["stop"].trigger()
    settled(qtbot, ctl)
    wait_listed(qtbot, installed, 0)
    assert not (project / "never").exists()
    qtbot.wait(50)  # the run has settled: nothing more comes
    assert installed.inbox.waiting() == []


def test_opening_another_session_puts_away_what_the_previous_one_left(
    qtbot: QtBot, windows: Windows, server: LoopbackServer, project: Path
) -> None:
    ctl, installed = windows.open(project)
    server.script(Turn(failure=Failure.http(401, '{"type":"error","error":{"type":"authentication_error"}}')))
    reply(qtbot, ctl)
    wait_listed(qtbot, installed, 1)
    ctl.spawn(ctl.open_session(None))
    wait_listed(qtbot, installed, 0)
    # the new session is followed: its own failure waits
    server.script(Turn(failure=Failure.http(401, '{"type":"error","error":{"type":"authentication_error"}}')))
    reply(qtbot, ctl)
    wait_listed(qtbot, installed, 1)


def test_a_session_whose_window_is_deleted_leaves_the_inbox(
    qtbot: QtBot,
    qloop: asyncio.AbstractEventLoop,
    windows: Windows,
    server: LoopbackServer,
    project: Path,
    tmp_path: Path,
) -> None:
    ctl, installed = windows.open(project)
    other = MainWindow(QSettings(str(tmp_path / "o.ini"), QSettings.Format.IniFormat), load_theme("light"))
    other.show()
    there = SessionController(
        other, NotificationCenter(other), str(project), agent_dir(), approve=False, env={}
    )
    there.spawn(there.open_session(None))
    qtbot.waitUntil(lambda: there.runtime is not None, timeout=10_000)
    installed.inbox.attach(there)
    server.script(Turn(failure=Failure.http(401, '{"type":"error","error":{"type":"authentication_error"}}')))
    reply(qtbot, there)
    wait_listed(qtbot, installed, 1)
    done = qloop.create_task(there.shutdown())
    qtbot.waitUntil(done.done, timeout=10_000)
    there.notifications.close_all()
    other.close()
    other.deleteLater()
    wait_listed(qtbot, installed, 0)
    assert installed.inbox.count() == 0 and ctl.window.windowTitle() == "shop-api — piwork"


class Tabs(QObject):
    """The tab registry's signals and calls as ``follow_tabs`` uses them, over real controllers (one per
    window here: a window of tabs has the same signals, one controller per tab)."""

    tabAdded = Signal(object)
    tabRemoved = Signal(object)
    frontChanged = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.open: list[SessionController] = []
        self.brought: list[SessionController] = []

    def controllers(self) -> list[SessionController]:
        return list(self.open)

    def front(self, window: MainWindow) -> SessionController | None:
        return next((c for c in self.open if c.window is window), None)

    def bring_to_front(self, controller: SessionController) -> None:
        self.brought.append(controller)
        controller.window.activateWindow()


def test_follow_tabs_keeps_a_feed_per_tab_and_jumps_through_the_registry(
    qtbot: QtBot, windows: Windows, server: LoopbackServer, project: Path, tmp_path: Path
) -> None:
    other_project = tmp_path / "billing"
    other_project.mkdir()
    here, installed = windows.open(project, "here")
    there, _theirs = windows.open(other_project, "there")
    installed.inbox.detach(here)  # the registry takes over
    tabs = Tabs()
    tabs.open.append(here)
    follow_tabs(installed, tabs)
    assert installed.inbox.feed_of(here) is not None and installed.inbox.feed_of(there) is None
    tabs.open.append(there)
    tabs.tabAdded.emit(there)
    tabs.frontChanged.emit(there)
    to_front(qtbot, here.window)
    server.script(Turn([Text("Refunded.")]))
    reply(qtbot, there, "refund it")
    wait_listed(qtbot, installed, 1)
    assert listed(installed) == [(InboxKind.FINISHED, "billing", "Replied to “refund it”")]
    select_first(qtbot, installed)
    qtbot.mouseClick(installed.panel.go_button, Qt.MouseButton.LeftButton)
    assert tabs.brought == [there]
    qtbot.waitUntil(there.window.isActiveWindow)
    wait_listed(qtbot, installed, 0)

    server.script(Turn(failure=Failure.http(401, '{"type":"error","error":{"type":"authentication_error"}}')))
    reply(qtbot, there)
    wait_listed(qtbot, installed, 1)
    tabs.open.remove(there)
    tabs.tabRemoved.emit(there)  # its tab closed: what it left goes
    wait_listed(qtbot, installed, 0)
    assert installed.inbox.feed_of(there) is None


def test_a_reply_that_failed_out_of_sight_is_seen_once_the_user_comes_back(
    qtbot: QtBot, windows: Windows, server: LoopbackServer, project: Path, elsewhere: QWidget
) -> None:
    ctl, installed = windows.open(project)
    to_background(qtbot, ctl.window, elsewhere)
    server.script(Turn(failure=Failure.http(401, '{"type":"error","error":{"type":"authentication_error"}}')))
    reply(qtbot, ctl)
    wait_listed(qtbot, installed, 1)
    assert ctl.window.windowTitle() == "(1) shop-api — piwork"
    to_front(qtbot, ctl.window)
    wait_listed(qtbot, installed, 0)
