"""Approvals in the real window: the footer's mode, a waiting call's card and its answers, Stop."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QApplication, QInputDialog
from pytestqt.qtbot import QtBot

from piwork.core.approvals import READ_ONLY_TEXT, RULES_FILE_NAME, ApprovalStore
from piwork.core.paths import agent_dir
from piwork.gui.chat.rows import ChatRow, RowKind
from piwork.gui.chat.tool_views import CardAction, view_for
from piwork.gui.main_window import MainWindow
from piwork.gui.notifications import NotificationCenter
from piwork.gui.session_controller import SessionController
from piwork.gui.theme import load_theme
from tests.gui.test_session_controller import _configure
from tests.support import LoopbackServer, Text, ToolCall, Turn


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "notes.txt").write_text("alpha\nbeta\n")
    return root


def open_window(qtbot: QtBot, server: LoopbackServer, tmp_path: Path, project: Path) -> SessionController:
    _configure(server)
    window = MainWindow(QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat), load_theme("light"))
    qtbot.addWidget(window)
    window.resize(1000, 700)
    window.show()
    ctl = SessionController(
        window, NotificationCenter(window), str(project), agent_dir(), approve=False, env={}
    )
    ctl.spawn(ctl.open_session(None))
    qtbot.waitUntil(lambda: ctl.runtime is not None, timeout=10_000)
    return ctl


@pytest.fixture
def controller(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, server: LoopbackServer, tmp_path: Path, project: Path
) -> Iterator[SessionController]:
    ctl = open_window(qtbot, server, tmp_path, project)
    yield ctl
    done = qloop.create_task(ctl.shutdown())
    qtbot.waitUntil(done.done, timeout=10_000)
    ctl.notifications.close_all()


def choose_mode(qtbot: QtBot, ctl: SessionController, mode: str) -> None:
    button = ctl.chat.footer.approval_mode
    assert button.isEnabled()
    button.actions_by_mode[mode].trigger()  # type: ignore[index]
    gate = ctl.runtime.approvals  # type: ignore[union-attr]
    qtbot.waitUntil(lambda: gate is not None and gate.mode == mode, timeout=5000)


def waiting_card(qtbot: QtBot, ctl: SessionController) -> tuple[int, ChatRow]:
    model = ctl.chat.model

    def find() -> tuple[int, ChatRow] | None:
        for i in range(model.rowCount()):
            row = model.row_at(i)
            if row.kind is RowKind.TOOL and row.tool is not None and row.tool.approval is not None:
                return i, row
        return None

    qtbot.waitUntil(lambda: find() is not None, timeout=10_000)
    found = find()
    assert found is not None
    return found


def click_badge(qtbot: QtBot, ctl: SessionController, index: int, row: ChatRow, action: CardAction) -> None:
    """A real mouse click on the card's badge for ``action``."""
    view = ctl.chat.view
    view.scrollTo(ctl.chat.model.index(index, 0))
    qtbot.waitUntil(lambda: view.visualRect(ctl.chat.model.index(index, 0)).isValid(), timeout=5000)
    rect = view.visualRect(ctl.chat.model.index(index, 0))
    geo = view.chat_delegate.geometry(row, rect)
    (badge_rect,) = [r for r, badge in geo.badges if badge.action is action]
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=badge_rect.center())


def answer_dialog(qtbot: QtBot, text: str | None = None) -> str:
    """Fill in and accept the open text question; returns the text it was opened with."""

    def dialog() -> QInputDialog | None:
        found = [w for w in QApplication.topLevelWidgets() if isinstance(w, QInputDialog) and w.isVisible()]
        return found[0] if found else None

    qtbot.waitUntil(lambda: dialog() is not None, timeout=5000)
    box = dialog()
    assert box is not None
    offered = box.textValue()
    if text is not None:
        box.setTextValue(text)
    box.accept()
    return offered


def tool_result_texts(server: LoopbackServer) -> list[tuple[bool, str]]:
    out = []
    for message in server.requests[-1].body["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_result":
                content = block["content"]
                text = content if isinstance(content, str) else "".join(c.get("text", "") for c in content)
                out.append((bool(block.get("is_error")), text))
    return out


def settled(qtbot: QtBot, ctl: SessionController) -> None:
    qtbot.waitUntil(lambda: not ctl.chat.busy, timeout=10_000)


def test_the_footer_shows_and_saves_the_projects_mode(
    qtbot: QtBot, controller: SessionController, project: Path
) -> None:
    button = controller.chat.footer.approval_mode
    assert button.texts() == ["▶ Run everything", "▶ Run all", "▶"] and button.text() in button.texts()
    choose_mode(qtbot, controller, "ask")
    assert button.text() in ("? Ask before changes", "? Ask first", "?")
    assert "Ask before commands and file changes" in button.toolTip()
    # a wide footer names the mode in full; a narrow one keeps its glyph (the figures keep their place)
    controller.window.resize(1600, 1000)
    qtbot.waitUntil(lambda: button.text() == "? Ask before changes", timeout=5000)
    saved = json.loads((agent_dir() / RULES_FILE_NAME).read_text())
    assert saved["projects"][str(project.resolve())]["mode"] == "ask"
    assert not (project / ".pi").exists()


def test_an_approved_command_runs_after_its_card_shows_it(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer, project: Path
) -> None:
    choose_mode(qtbot, controller, "ask")
    server.script(Turn([ToolCall("bash", {"command": "touch made.txt"})]), Turn([Text("Made it.")]))
    controller.submit("make a file")
    index, row = waiting_card(qtbot, controller)
    assert row.tool is not None
    body = view_for("bash").body(row.tool, expanded=False)
    assert body.splitlines() == ["Waiting for your approval to run", "$ touch made.txt", f"in {project}"]
    assert not (project / "made.txt").exists()
    click_badge(qtbot, controller, index, row, CardAction.APPROVE)
    settled(qtbot, controller)
    assert (project / "made.txt").exists()
    assert row.tool.approval is None and row.tool.status == "done"
    assert tool_result_texts(server) == [(False, "(no output)")]


def test_a_denied_call_gives_the_model_the_reason(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer, project: Path
) -> None:
    choose_mode(qtbot, controller, "ask")
    server.script(Turn([ToolCall("bash", {"command": "rm notes.txt"})]), Turn([Text("Kept it.")]))
    controller.submit("clean up")
    index, row = waiting_card(qtbot, controller)
    click_badge(qtbot, controller, index, row, CardAction.DENY)
    answer_dialog(qtbot, "the notes are still needed")
    settled(qtbot, controller)
    assert (project / "notes.txt").exists()
    assert tool_result_texts(server) == [
        (True, "Not run: the user denied this bash call. Their reason: the notes are still needed")
    ]
    assert controller.chat.model.row_at(controller.chat.model.rowCount() - 1).text == "Kept it."


def test_an_edit_waits_as_its_diff_and_always_allow_saves_the_path(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer, project: Path
) -> None:
    choose_mode(qtbot, controller, "ask")
    edit = {"path": "notes.txt", "edits": [{"oldText": "beta", "newText": "gamma"}]}
    server.script(
        Turn([ToolCall("edit", edit)]),
        Turn([ToolCall("write", {"path": "notes.txt", "content": "delta\n"})]),
        Turn([Text("Done.")]),
    )
    controller.submit("change the notes")
    index, row = waiting_card(qtbot, controller)
    assert row.tool is not None
    body = view_for("edit").body(row.tool, expanded=False)
    assert body.splitlines() == [
        "Waiting for your approval to edit notes.txt",
        " 1 alpha",
        "-2 beta",
        "+2 gamma",
    ]
    assert (project / "notes.txt").read_text() == "alpha\nbeta\n"
    click_badge(qtbot, controller, index, row, CardAction.ALWAYS_ALLOW)
    assert answer_dialog(qtbot) == "notes.txt"  # offered, accepted as it is
    settled(qtbot, controller)
    # the write after it matched the saved path: nobody was asked
    assert (project / "notes.txt").read_text() == "delta\n"
    rules = ApprovalStore(agent_dir()).rules_for(str(project))
    assert rules.paths == ("notes.txt",)


def test_always_allow_a_command_prefix_applies_in_the_next_session(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, server: LoopbackServer, tmp_path: Path, project: Path
) -> None:
    ctl = open_window(qtbot, server, tmp_path, project)
    choose_mode(qtbot, ctl, "ask")
    server.script(Turn([ToolCall("bash", {"command": "touch one"})]), Turn([Text("ok")]))
    ctl.submit("one")
    index, row = waiting_card(qtbot, ctl)
    click_badge(qtbot, ctl, index, row, CardAction.ALWAYS_ALLOW)
    assert answer_dialog(qtbot) == "touch"
    settled(qtbot, ctl)
    ctl.spawn(ctl.open_session(None))  # a new session of the project
    qtbot.waitUntil(lambda: ctl.chat.model.rowCount() == 0, timeout=10_000)
    server.script(Turn([ToolCall("bash", {"command": "touch two"})]), Turn([Text("ok")]))
    ctl.submit("two")
    settled(qtbot, ctl)
    qtbot.waitUntil(lambda: (project / "two").exists(), timeout=5000)
    assert ctl.window.approvals.waiting == []
    done = qloop.create_task(ctl.shutdown())
    qtbot.waitUntil(done.done, timeout=10_000)
    ctl.notifications.close_all()


def test_stop_ends_a_waiting_call(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer, project: Path
) -> None:
    choose_mode(qtbot, controller, "ask")
    server.script(Turn([ToolCall("bash", {"command": "touch never"})]))
    controller.submit("go")
    _index, row = waiting_card(qtbot, controller)
    controller.chat.send_button.click()  # Stop
    settled(qtbot, controller)
    assert row.tool is not None and row.tool.approval is None
    assert row.tool.result_text == "Operation aborted" and row.tool.status in ("aborted", "error")
    assert not (project / "never").exists()
    assert controller.window.approvals.waiting == []


def test_read_only_refuses_without_asking(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer, project: Path
) -> None:
    choose_mode(qtbot, controller, "read-only")
    assert controller.chat.footer.approval_mode.text().startswith("⊘")
    server.script(
        Turn([ToolCall("write", {"path": "x.txt", "content": "x"}), ToolCall("read", {"path": "notes.txt"})]),
        Turn([Text("Read it only.")]),
    )
    controller.submit("go")
    qtbot.waitUntil(lambda: len(server.requests) == 2, timeout=10_000)
    settled(qtbot, controller)
    assert not (project / "x.txt").exists()
    results = tool_result_texts(server)
    assert results[0] == (True, READ_ONLY_TEXT) and "alpha" in results[1][1]
