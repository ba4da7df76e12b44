"""The window driving the real engine: a reply streamed from the loopback provider server into the chat
through a real AgentSession, persisted to the session file; Stop aborts cleanly; errors show inline."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from piwork.core.paths import agent_dir
from piwork.gui.chat.rows import RowKind
from piwork.gui.main_window import MainWindow
from piwork.gui.notifications import NotificationCenter
from piwork.gui.session_controller import SessionController
from piwork.gui.theme import load_theme
from tests.support import Failure, LoopbackServer, Text, ToolCall, Turn


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running


def _configure(server: LoopbackServer) -> None:
    adir = agent_dir()
    models = {
        "providers": {
            "loopback": {
                "baseUrl": server.url,
                "api": "anthropic-messages",
                "apiKey": "test-key",
                "models": [
                    {"id": "loopback-model", "name": "Loopback", "contextWindow": 200000, "maxTokens": 4096}
                ],
            }
        }
    }
    (adir / "models.json").write_text(json.dumps(models))
    (adir / "settings.json").write_text(
        json.dumps({"defaultProvider": "loopback", "defaultModel": "loopback-model"})
    )


@pytest.fixture
def controller(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, server: LoopbackServer, tmp_path: Path
) -> Iterator[SessionController]:
    _configure(server)
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("alpha\nbeta\n")
    window = MainWindow(QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat), load_theme("light"))
    qtbot.addWidget(window)
    window.show()
    notifications = NotificationCenter(window)
    ctl = SessionController(window, notifications, str(project), agent_dir(), approve=False, env={})
    ctl.spawn(ctl.open_session(None))
    qtbot.waitUntil(lambda: ctl.runtime is not None or ctl.chat.model.rowCount() > 0, timeout=10_000)
    assert ctl.runtime is not None, [r.plain_text() for r in _rows(ctl)]
    yield ctl
    done = qloop.create_task(ctl.shutdown())
    qtbot.waitUntil(done.done, timeout=10_000)
    notifications.close_all()


def _rows(ctl: SessionController) -> list:  # type: ignore[type-arg]
    model = ctl.chat.model
    return [model.row_at(i) for i in range(model.rowCount())]


def test_reply_streams_into_the_chat_and_is_saved(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    server.script(Turn([Text("Hello from the **loopback** server, streamed word by word.")]))
    assert controller.chat.footer.model_picker.current_key() == ("loopback", "loopback-model")
    controller.chat.composer.set_text("say hello")
    controller.chat.composer.submit()
    qtbot.waitUntil(lambda: controller.chat.busy, timeout=5000)
    qtbot.waitUntil(lambda: not controller.chat.busy, timeout=10_000)
    rows = _rows(controller)
    assert [r.kind for r in rows] == [RowKind.USER, RowKind.TEXT]
    assert (
        rows[1].text == "Hello from the **loopback** server, streamed word by word." and not rows[1].streaming
    )
    footer = controller.chat.footer
    qtbot.waitUntil(lambda: "exact" in footer.context_label.text(), timeout=5000)
    assert footer.context_label.text().startswith("context ")
    assert footer.cost_label.text().startswith("billed ") and "$" in footer.cost_label.text()
    # Model, context and cost live in the footer only; the status bar keeps trust and notices (and the
    # branch of a session in a git worktree, hidden here).
    status_texts = [
        label.text() for label in controller.window.status.findChildren(QLabel) if label.isVisible()
    ]
    assert status_texts == [controller.window.status.trust_label.text()]
    path = controller.runtime.store.path  # type: ignore[union-attr]
    assert path is not None and path.exists()
    saved = [json.loads(line) for line in path.read_text().splitlines()]
    assert any(e.get("message", {}).get("role") == "assistant" for e in saved)
    assert "test-key" not in path.read_text()


def test_tool_call_runs_and_shows_as_a_card(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    server.script(Turn([ToolCall("read", {"path": "notes.txt"})]), Turn([Text("It says alpha and beta.")]))
    controller.submit("read notes.txt")
    qtbot.waitUntil(lambda: len(_rows(controller)) >= 3 and not controller.chat.busy, timeout=10_000)
    card = next(r for r in _rows(controller) if r.kind is RowKind.TOOL)
    assert card.tool.name == "read" and card.tool.status == "done"
    assert "alpha" in card.tool.result_text
    assert _rows(controller)[-1].text == "It says alpha and beta."


def test_stop_aborts_a_streaming_reply(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    words = " ".join(f"w{i}" for i in range(400))
    server.script(Turn([Text(words)], drip=0.02))
    controller.submit("talk a lot")
    qtbot.waitUntil(lambda: any(r.kind is RowKind.TEXT and r.text for r in _rows(controller)), timeout=10_000)
    controller.chat.send_button.click()  # the Send button is Stop while busy
    qtbot.waitUntil(lambda: not controller.chat.busy, timeout=10_000)
    last = _rows(controller)[-1]
    # the user's choice, no error: the answer so far says it was stopped, no card of its own
    assert last.kind is RowKind.TEXT and last.mark is not None and last.mark.note == "Incomplete: stopped"
    assert len(last.text) < len(words)


def test_provider_failure_is_shown_inline_with_advice(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    body = '{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}'
    server.script(Turn(failure=Failure.http(401, body)))
    controller.submit("hello?")
    qtbot.waitUntil(
        lambda: bool(_rows(controller)) and _rows(controller)[-1].kind is RowKind.ERROR, timeout=10_000
    )
    qtbot.waitUntil(lambda: not controller.chat.busy, timeout=10_000)
    assert "API key" in _rows(controller)[-1].hint
    assert controller.notifications.open_boxes == []


def test_slash_name_and_new_session(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    server.script(Turn([Text("ok")]))
    controller.submit("first")
    qtbot.waitUntil(lambda: not controller.chat.busy and len(_rows(controller)) == 2, timeout=10_000)
    controller.chat.composer.set_text("/name Parser fixes")
    controller.chat.composer.submit()
    assert controller.window.windowTitle().startswith("Parser fixes")
    first_path = controller.runtime.store.path  # type: ignore[union-attr]
    controller.chat.composer.set_text("/new")
    controller.chat.composer.submit()
    qtbot.waitUntil(
        lambda: controller.runtime is not None and controller.runtime.store.path != first_path, timeout=10_000
    )
    assert controller.chat.model.rowCount() == 0


def test_tree_and_resource_docks_follow_the_session(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    server.script(Turn([Text("first answer")]))
    controller.submit("question one")
    qtbot.waitUntil(lambda: not controller.chat.busy and len(_rows(controller)) == 2, timeout=10_000)
    controller.chat.composer.set_text("/tree")
    controller.chat.composer.submit()
    window = controller.window
    assert window.docks["tree"].isVisible()
    tree = window.tree_panel
    assert tree.session is controller.runtime.store  # type: ignore[union-attr]
    assert tree.model is not None and tree.model.rowCount() > 0
    assert window.resource_panel.loaded is controller.runtime.resources  # type: ignore[union-attr]


def test_system_prompt_tab_shows_the_sessions_prompt_part_by_part(
    qtbot: QtBot, controller: SessionController
) -> None:
    view = controller.window.resource_panel.prompt_view
    qtbot.waitUntil(lambda: len(view.counts) == len(view.parts) > 0, timeout=10_000)
    session = controller.session
    assert session is not None
    assert "".join(part.text for part in view.parts) == session.system_prompt()
    names = [part.name for part in view.parts]
    assert names[0] == "role" and "tools" in names and names[-1] == "cwd"
    assert all(count > 0 for count in view.counts) and view.total > 0
    assert view.table.rowCount() == len(view.parts)
    assert "tokens" in view.summary.text()


def test_clone_from_the_tree_continues_in_a_writable_copy(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    server.script(Turn([Text("first answer")]))
    controller.submit("question one")
    qtbot.waitUntil(lambda: not controller.chat.busy and len(_rows(controller)) == 2, timeout=10_000)
    first = controller.runtime
    assert first is not None and first.store.path is not None
    tree = controller.window.tree_panel
    assert tree.select_entry(first.store.tree.leaf_id or "")
    tree.clone_current()
    qtbot.waitUntil(
        lambda: controller.runtime is not None and controller.runtime is not first, timeout=10_000
    )
    clone = controller.runtime
    assert clone is not None and clone.store.path != first.store.path
    assert clone.session.read_only_reason is None  # the copy's lock was handed over, not kept by the tree
    assert [m["role"] for m in clone.session.messages] == ["user", "assistant"]
    assert [r.title for r in _rows(controller) if r.kind is RowKind.NOTICE] == ["Cloned"]
    server.script(Turn([Text("second answer")]))
    controller.submit("question two")
    qtbot.waitUntil(lambda: not controller.chat.busy and len(_rows(controller)) == 5, timeout=10_000)
    saved = [json.loads(line) for line in Path(str(clone.store.path)).read_text().splitlines()]
    assert saved[-1]["message"]["content"][0]["text"] == "second answer"


def test_skill_commands_are_offered_and_expanded_by_the_engine(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, server: LoopbackServer, tmp_path: Path
) -> None:
    _configure(server)
    skill_dir = agent_dir() / "skills" / "release-notes"
    skill_dir.mkdir(parents=True)
    (skill_dir / "SKILL.md").write_text(
        "---\nname: release-notes\ndescription: Write release notes from the git log.\n---\nSummarise the changes.\n"
    )
    project = tmp_path / "p2"
    project.mkdir()
    window = MainWindow(QSettings(str(tmp_path / "w2.ini"), QSettings.Format.IniFormat), load_theme("light"))
    qtbot.addWidget(window)
    notifications = NotificationCenter(window)
    ctl = SessionController(window, notifications, str(project), agent_dir(), approve=False, env={})
    ctl.spawn(ctl.open_session(None))
    qtbot.waitUntil(lambda: ctl.runtime is not None, timeout=10_000)
    words = window.chat.composer.completion_words()
    assert "/skill:release-notes" in words and "/compact" in words
    server.script(Turn([Text("Here are the notes.")]))
    window.chat.composer.set_text("/skill:release-notes for 1.2")
    window.chat.composer.submit()
    qtbot.waitUntil(lambda: len(server.requests) == 1 and not window.chat.busy, timeout=10_000)
    sent = json.dumps(server.requests[0].body)
    assert "Summarise the changes." in sent and "for 1.2" in sent
    rows = [window.chat.model.row_at(i) for i in range(window.chat.model.rowCount())]
    assert [r.kind for r in rows] == [RowKind.SKILL, RowKind.USER, RowKind.TEXT]  # a card, not raw XML
    assert rows[0].title == "release-notes" and rows[0].collapsed and rows[1].text == "for 1.2"
    done = qloop.create_task(ctl.shutdown())
    qtbot.waitUntil(done.done, timeout=10_000)


def test_without_any_key_the_chat_says_where_to_add_one(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    project = tmp_path / "nokey"
    project.mkdir()
    window = MainWindow(QSettings(str(tmp_path / "w3.ini"), QSettings.Format.IniFormat), load_theme("light"))
    qtbot.addWidget(window)
    ctl = SessionController(
        window, NotificationCenter(window), str(project), agent_dir(), approve=False, env={}
    )
    ctl.spawn(ctl.open_session(None))
    qtbot.waitUntil(lambda: ctl.runtime is not None, timeout=10_000)
    assert window.chat.footer.context_label.text() == "context: —"
    ctl.submit("hello")
    qtbot.waitUntil(lambda: window.chat.model.rowCount() > 0, timeout=10_000)
    row = window.chat.model.row_at(window.chat.model.rowCount() - 1)
    assert row.kind is RowKind.ERROR and "Settings" in row.hint
    done = qloop.create_task(ctl.shutdown())
    qtbot.waitUntil(done.done, timeout=10_000)


def test_reopening_a_saved_session_shows_its_conversation(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    server.script(Turn([Text("stored answer")]))
    controller.submit("stored question")
    qtbot.waitUntil(lambda: not controller.chat.busy and len(_rows(controller)) == 2, timeout=10_000)
    path = str(controller.runtime.store.path)  # type: ignore[union-attr]
    controller.spawn(controller.open_session(None))
    qtbot.waitUntil(lambda: controller.chat.model.rowCount() == 0, timeout=10_000)
    controller.spawn(controller.open_session(path))
    qtbot.waitUntil(lambda: controller.chat.model.rowCount() == 2, timeout=10_000)
    assert [r.plain_text() for r in _rows(controller)] == ["stored question", "stored answer"]
    assert controller.window.tree_panel.session is controller.runtime.store  # type: ignore[union-attr]


def test_a_project_reopens_its_latest_session_unless_that_is_turned_off(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    """Opening a project continues its latest session at its leaf (what the window does at start); with
    Session → Reopen Last Session at Start turned off, the choice is remembered and a start is fresh."""
    server.script(Turn([Text("kept answer")]))
    controller.submit("kept question")
    qtbot.waitUntil(lambda: not controller.chat.busy and len(_rows(controller)) == 2, timeout=10_000)
    path = controller.runtime.store.path  # type: ignore[union-attr]
    controller.spawn(controller.open_session(None))  # File → New Session
    qtbot.waitUntil(lambda: controller.chat.model.rowCount() == 0, timeout=10_000)
    window = controller.window
    assert window.reopens_last_session() and window.action_map["reopen_last"].isChecked()
    controller.spawn(controller.open_session(None, most_recent=window.reopens_last_session()))
    qtbot.waitUntil(lambda: controller.chat.model.rowCount() == 2, timeout=10_000)
    assert controller.runtime is not None and controller.runtime.store.path == path
    window.action_map["reopen_last"].setChecked(False)
    again = MainWindow(window.ui_state, load_theme("light"))
    qtbot.addWidget(again)
    assert not again.reopens_last_session() and not again.action_map["reopen_last"].isChecked()


def test_another_project_opens_from_the_menu_and_open_recent_brings_the_first_back(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer, tmp_path: Path
) -> None:
    """File → Open Folder switches the window to another project (its own resources and sessions); File →
    Open Recent lists the projects opened, newest first with when, and picking one goes back to it, in
    its latest session."""
    server.script(Turn([Text("first project's answer")]))
    controller.submit("a question here")
    qtbot.waitUntil(lambda: not controller.chat.busy and len(_rows(controller)) == 2, timeout=10_000)
    first, kept = controller.cwd, controller.runtime.store.path  # type: ignore[union-attr]
    other = tmp_path / "other-project"
    other.mkdir()
    task = controller.spawn(controller.open_project(str(other)))
    qtbot.waitUntil(task.done, timeout=10_000)
    assert controller.runtime is not None and controller.runtime.store.cwd == str(other)
    assert controller.chat.model.rowCount() == 0 and other.name in controller.window.windowTitle()
    menu = controller.window.recent_menu
    controller.window.fill_recent_menu(menu)
    entries = [a.text() for a in menu.actions()]
    assert entries[0].startswith(f"{other}    (") and entries[1].startswith(f"{first}    (")
    menu.actions()[1].trigger()
    qtbot.waitUntil(lambda: controller.cwd == first and controller.chat.model.rowCount() == 2, timeout=10_000)
    assert controller.runtime is not None and controller.runtime.store.path == kept
    missing = controller.spawn(controller.open_project(str(tmp_path / "gone")))
    qtbot.waitUntil(missing.done, timeout=10_000)
    assert controller.cwd == first and any("is not a folder" in r.plain_text() for r in _rows(controller))


def test_a_thinking_level_the_model_cannot_take_says_why(qtbot: QtBot, controller: SessionController) -> None:
    """The loopback model does not think: picking "high" (or the cycling shortcut) leaves it off, and
    the status bar and the picker's tooltip say so instead of nothing happening."""
    picker = controller.chat.footer.thinking_picker
    controller.window.action_map["cycle_thinking"].trigger()
    assert picker.currentData() == "off"
    assert "does not think" in controller.window.status.currentMessage()
    assert "loopback-model does not think" in picker.toolTip()
    controller.model_choice.pick_thinking("high")
    assert controller.session is not None and controller.session.thinking_level == "off"
    assert "(asked: high)" in controller.window.status.currentMessage()


def test_a_failed_reply_can_be_retried_or_its_prompt_edited_and_the_attempt_stays_in_the_tree(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    """The failed reply's row offers Retry and Edit and Resend: Retry sends the same prompt again from
    just before it, Edit and Resend puts it back in the editor; each earlier attempt stays a branch. The
    chat shows the prompt sent again under the branch moved to (whose rows are built in a worker)."""
    server.script(Turn([Text("It reads tokens.")]))
    controller.submit("what does the lexer do")
    qtbot.waitUntil(lambda: any(r.text == "It reads tokens." for r in _rows(controller)), timeout=10_000)
    qtbot.waitUntil(lambda: not controller.chat.busy, timeout=10_000)
    server.script(Turn(failure=Failure.http(400, '{"type":"error","error":{"message":"bad request"}}')))
    controller.submit("explain the parser")
    qtbot.waitUntil(lambda: not controller.chat.busy, timeout=10_000)
    qtbot.waitUntil(lambda: any(r.title == "The reply failed" for r in _rows(controller)), timeout=10_000)
    failed = next(r for r in _rows(controller) if r.title == "The reply failed")
    assert "Right-click here to Retry" in failed.hint
    server.script(Turn([Text("Here is how it parses.")]))
    task = controller.reply_again.request("retry", failed.key)
    assert task is not None
    qtbot.waitUntil(lambda: task.done() and not controller.chat.busy, timeout=10_000)
    qtbot.waitUntil(
        lambda: any(r.text == "Here is how it parses." for r in _rows(controller)), timeout=10_000
    )
    prompts = [m["content"][-1]["text"] for m in server.requests[-1].body["messages"] if m["role"] == "user"]
    assert prompts == ["what does the lexer do", "explain the parser"]  # not after the failed attempt
    qtbot.waitUntil(lambda: not controller.chat.busy, timeout=10_000)
    shown = [(r.kind, r.text) for r in _rows(controller) if r.kind in (RowKind.USER, RowKind.TEXT)]
    assert shown == [
        (RowKind.USER, "what does the lexer do"),
        (RowKind.TEXT, "It reads tokens."),
        (RowKind.USER, "explain the parser"),
        (RowKind.TEXT, "Here is how it parses."),
    ]
    tree = controller.session.tree  # type: ignore[union-attr]
    users = [r for r in tree.records if r.type == "message" and r.role == "user"]
    assert len(users) == 3 and users[1].parent_id == users[2].parent_id  # two attempts, side by side
    qtbot.waitUntil(lambda: not controller.chat.busy, timeout=10_000)  # the retried reply has ended
    answered = next(r for r in _rows(controller) if r.text == "Here is how it parses.")
    edit = controller.reply_again.request("edit", answered.key)
    assert edit is not None
    qtbot.waitUntil(edit.done, timeout=10_000)
    assert controller.chat.composer.toPlainText() == "explain the parser"
    assert tree.leaf_id == users[1].parent_id  # back before the prompt, nothing rewritten


def test_a_session_held_elsewhere_opens_read_only_with_a_notice(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    from piwork.core.session.store import open_session

    server.script(Turn([Text("saved")]))
    controller.submit("keep this")
    qtbot.waitUntil(lambda: not controller.chat.busy and len(_rows(controller)) == 2, timeout=10_000)
    path = str(controller.runtime.store.path)  # type: ignore[union-attr]
    controller.spawn(controller.open_session(None))
    qtbot.waitUntil(lambda: controller.chat.model.rowCount() == 0, timeout=10_000)
    holder = open_session(path)  # another piwork has the file open for writing
    try:
        controller.spawn(controller.open_session(path))
        qtbot.waitUntil(lambda: controller.chat.model.rowCount() == 3, timeout=10_000)
        notice = _rows(controller)[-1]
        assert notice.kind is RowKind.NOTICE and notice.title == "Session file" and notice.text
        assert controller.runtime is not None and controller.runtime.store.read_only
    finally:
        holder.close()


def test_reopening_the_session_already_open_keeps_it_writable(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    server.script(Turn([Text("first answer")]), Turn([Text("second answer")]))
    controller.submit("first question")
    qtbot.waitUntil(lambda: not controller.chat.busy and len(_rows(controller)) == 2, timeout=10_000)
    previous = controller.runtime
    path = str(controller.runtime.store.path)  # type: ignore[union-attr]
    controller.spawn(controller.open_session(path))  # e.g. Project → Reload resources
    qtbot.waitUntil(lambda: controller.runtime not in (None, previous), timeout=10_000)
    assert str(controller.runtime.store.path) == path  # type: ignore[union-attr]
    qtbot.waitUntil(lambda: controller.chat.model.rowCount() == 2, timeout=10_000)
    assert controller.runtime is not None and not controller.runtime.store.read_only
    controller.submit("second question")
    qtbot.waitUntil(lambda: "second answer" in Path(path).read_text(), timeout=10_000)
    qtbot.waitUntil(lambda: not controller.chat.busy, timeout=10_000)
    assert [r.plain_text() for r in _rows(controller)] == [
        "first question",
        "first answer",
        "second question",
        "second answer",
    ]


def test_stop_puts_queued_messages_back_in_the_editor_instead_of_sending_them(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    server.script(Turn([Text("Running."), ToolCall("bash", {"command": "sleep 20"})]))
    controller.submit("run the slow thing")
    qtbot.waitUntil(lambda: any(r.kind is RowKind.TOOL for r in _rows(controller)), timeout=10_000)
    qtbot.waitUntil(lambda: controller.chat.busy, timeout=10_000)
    controller.submit("also check README")  # Enter while busy: after the current step
    controller.sending.submit_follow_up("then summarise")  # Alt+Enter: when the agent is done
    qtbot.waitUntil(lambda: controller.chat.queue_label.isVisible(), timeout=10_000)
    controller.chat.composer.set_text("and one more")
    qtbot.keyClick(controller.chat.composer, Qt.Key.Key_Escape)  # Stop
    qtbot.waitUntil(lambda: not controller.chat.busy, timeout=10_000)
    assert len(server.requests) == 1  # nothing queued went to the model after Stop
    assert controller.chat.composer.toPlainText() == "also check README\n\nthen summarise\n\nand one more"
    assert not controller.chat.queue_label.isVisible()
    assert controller.chat.composer.placeholderText().startswith("Message the agent")


def test_a_cut_output_is_listed_by_its_command_as_it_happens(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    controller.window.open_log("")  # the panel on screen (out of view it lists once shown)
    server.script(Turn([ToolCall("bash", {"command": "seq 1 3000"})]), Turn([Text("Done.")]))
    controller.submit("count")
    qtbot.waitUntil(lambda: not controller.chat.busy and len(server.requests) == 2, timeout=15_000)
    outputs = controller.window.log_panel.outputs
    qtbot.waitUntil(lambda: len(outputs.items) == 1, timeout=5_000)
    assert outputs.items[0].title == "seq 1 3000"  # not the tool's name


def test_reopening_a_session_lists_the_logs_of_its_folder_that_no_message_names(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    from piwork.core.tools.base import ToolContext
    from piwork.core.tools.bash import BashTool

    server.script(Turn([ToolCall("bash", {"command": "seq 1 3000"})]), Turn([Text("Done.")]))
    controller.submit("count")
    qtbot.waitUntil(lambda: not controller.chat.busy and len(server.requests) == 2, timeout=15_000)
    runtime = controller.runtime
    assert runtime is not None and runtime.store.path is not None
    log_dir = runtime.session.log_dir
    assert log_dir is not None
    # a run stopped before its result was saved leaves a full-output log that no message names
    context = ToolContext(cwd=controller.cwd, log_dir=log_dir)
    orphan = controller.spawn(
        BashTool().execute("call-lost", {"command": "seq 1 4000 | sed 's/^/lost /'"}, context)
    )
    qtbot.waitUntil(orphan.done, timeout=15_000)

    controller.spawn(controller.open_session(str(runtime.store.path)))
    qtbot.waitUntil(
        lambda: controller.runtime is not runtime and controller.runtime is not None, timeout=10_000
    )
    controller.window.open_log("")
    outputs = controller.window.log_panel.outputs
    qtbot.waitUntil(lambda: len(outputs.items) == 2, timeout=10_000)
    assert [item.title for item in outputs.items] == ["seq 1 3000", "seq 1 4000 | sed 's/^/lost /'"]
    assert outputs.items[1].limit_notes == ("from the session's log folder",)


def test_the_trees_status_shows_once(qtbot: QtBot, controller: SessionController) -> None:
    """In the tree's panel when it is open; in the window's status bar only when the panel is closed."""
    window = controller.window
    tree = window.tree_panel
    window.docks["tree"].show()
    qtbot.waitUntil(tree.isVisible)
    window.status.clearMessage()
    tree.show_status("This session is open for browsing only.")
    assert tree.status.text() == "This session is open for browsing only."
    assert window.status.currentMessage() == ""
    window.docks["tree"].hide()
    qtbot.waitUntil(lambda: not tree.isVisible())
    tree.show_status("Navigation cancelled; nothing was changed.")
    assert window.status.currentMessage() == "Navigation cancelled; nothing was changed."
