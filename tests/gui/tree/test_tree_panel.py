"""SessionTreePanel with real widgets, a real session file, the engine's navigation and the loopback
provider: each summary choice, cancellation, the don't-ask preference, labels, fork and clone, and
opening a file off the GUI thread."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QPushButton
from pytestqt.qtbot import QtBot

from piwork.core.compaction.prompts import BRANCH_INSTRUCTIONS
from piwork.core.session.store import Session, create_session
from piwork.core.settings import MemorySettingsStorage, Settings
from piwork.gui.tree.branch_dialog import branch_contents, summarizing_text
from piwork.gui.tree.tree_model import ENTRY_ID_ROLE
from piwork.gui.tree.tree_panel import SessionTreePanel
from tests.gui.tree.navigators import navigator_for
from tests.support.loopback_server import Failure, LoopbackServer, Text, Turn


@pytest.fixture
def loopback() -> Any:
    with LoopbackServer() as server:
        yield server


def _message(role: str, text: str, ts: int) -> dict[str, Any]:
    if role == "assistant":
        return {"role": "assistant", "content": [{"type": "text", "text": text}], "api": "anthropic-messages",
                "provider": "anthropic", "model": "m", "usage": {}, "stopReason": "stop", "timestamp": ts}  # fmt: skip
    return {"role": "user", "content": text, "timestamp": ts}


def _session(tmp_path: Path) -> tuple[Session, dict[str, str]]:
    """u1 → a1 → u2 → a2 (leaf), all on disk."""
    session = create_session(str(tmp_path), tmp_path / "sessions")
    tree = session.tree
    ids = {
        "u1": tree.append_message(_message("user", "plan the parser", 1)),
        "a1": tree.append_message(_message("assistant", "here is a plan", 2)),
        "u2": tree.append_message(_message("user", "now write it in Rust", 3)),
        "a2": tree.append_message(_message("assistant", "rust version written", 4)),
    }
    return session, ids


def _lines(session: Session) -> list[dict[str, Any]]:
    assert session.path is not None
    return [json.loads(line) for line in session.path.read_text().splitlines()]


def _panel(qtbot: QtBot, session: Session, server: LoopbackServer | None, settings: Settings | None = None):  # type: ignore[no-untyped-def]
    panel = SessionTreePanel(settings=settings)
    qtbot.addWidget(panel)
    panel.resize(700, 600)
    panel.show()
    panel.set_session(
        session, navigator_for(session, server.anthropic_model() if server is not None else None)
    )
    return panel


def _answer_dialog(qtbot: QtBot, panel: SessionTreePanel, choose: str, focus: str = "", replace: bool = False,
                   label: str = "", dont_ask: bool = False) -> None:  # fmt: skip
    qtbot.waitUntil(
        lambda: (
            (panel.branch_dialog is not None and panel.branch_dialog.isVisible()) or panel.status.text() != ""
        )
    )
    assert panel.status.text() == ""
    dialog = panel.branch_dialog
    assert dialog is not None
    {"none": dialog.no_summary, "summary": dialog.summarize, "focus": dialog.focused}[choose].setChecked(True)
    dialog.focus_text.setPlainText(focus)
    dialog.replace_box.setChecked(replace)
    dialog.label_field.setText(label)
    dialog.dont_ask.setChecked(dont_ask)
    dialog.ok_button.click()


def test_selecting_a_user_message_moves_to_its_parent_and_fills_the_composer(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    session, ids = _session(tmp_path)
    before = _lines(session)
    panel = _panel(qtbot, session, None)
    assert panel.current_entry_id() == ids["a2"]  # the leaf is selected when the session is shown
    assert panel.select_entry(ids["u2"])
    assert "now write it in Rust" in panel.detail.toPlainText()
    with qtbot.waitSignal(panel.editor_text_requested) as editor, qtbot.waitSignal(panel.navigated):
        panel.activate_current()
        _answer_dialog(qtbot, panel, "none")
    assert editor.args == ["now write it in Rust"]
    assert session.tree.leaf_id == ids["a1"]
    assert _lines(session) == before  # moving the leaf writes nothing
    assert panel.model is not None and panel.model.landing_index().data() == "● assistant: here is a plan"


def test_summarize_writes_a_branch_summary_with_label(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path, loopback: LoopbackServer
) -> None:
    session, ids = _session(tmp_path)
    loopback.script(Turn([Text("## Goal\nPort the parser to Rust.")]))
    panel = _panel(qtbot, session, loopback)
    panel.select_entry(ids["a1"])
    with qtbot.waitSignal(panel.navigated, timeout=10000) as moved:
        panel.activate_current()
        _answer_dialog(qtbot, panel, "summary", label="rust attempt")
    result = moved.args[0]
    written = _lines(session)[-2:]
    summary, label = written
    assert summary["type"] == "branch_summary" and summary["parentId"] == ids["a1"]
    assert summary["fromId"] == ids["a2"]
    assert summary["summary"].endswith("## Goal\nPort the parser to Rust.")
    assert label == {**label, "type": "label", "targetId": summary["id"], "label": "rust attempt"}
    assert result.summary_entry["id"] == summary["id"]
    assert panel.progress is None
    request = loopback.requests[-1].body
    assert "now write it in Rust" in json.dumps(request["messages"])


def test_summarize_with_focus_replacing_the_instructions(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path, loopback: LoopbackServer
) -> None:
    session, ids = _session(tmp_path)
    loopback.script(Turn([Text("Only the API names.")]), Turn([Text("Focused, with defaults.")]))
    panel = _panel(qtbot, session, loopback)
    panel.select_entry(ids["a1"])
    with qtbot.waitSignal(panel.navigated, timeout=10000):
        panel.activate_current()
        _answer_dialog(qtbot, panel, "focus", focus="List only the API names", replace=True)
    prompt = json.dumps(loopback.requests[-1].body["messages"])
    assert "List only the API names" in prompt and "## Constraints" not in prompt
    assert _lines(session)[-1]["summary"].endswith("Only the API names.")
    panel.select_entry(ids["u2"])  # back to the abandoned branch's user message, focus added to defaults
    with qtbot.waitSignal(panel.navigated, timeout=10000):
        panel.activate_current()
        _answer_dialog(qtbot, panel, "focus", focus="Mention file names")
    prompt = json.dumps(loopback.requests[-1].body["messages"])
    assert "Additional focus: Mention file names" in prompt and "## Constraints" in prompt


def test_cancelling_a_summary_writes_nothing(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path, loopback: LoopbackServer
) -> None:
    session, ids = _session(tmp_path)
    before = _lines(session)
    loopback.script(Turn(failure=Failure.hang()))
    panel = _panel(qtbot, session, loopback)
    panel.select_entry(ids["a1"])
    task = None

    def start() -> None:
        nonlocal task
        panel.activate_current()
        task = panel._navigation

    start()
    _answer_dialog(qtbot, panel, "summary")
    qtbot.waitUntil(lambda: panel.progress is not None and panel.progress.isVisible())
    qtbot.waitUntil(lambda: len(loopback.requests) == 1, timeout=5000)
    assert panel.progress is not None
    panel.progress.findChild(QPushButton).click()  # the dialog's Cancel button
    qtbot.waitUntil(lambda: task is not None and task.done(), timeout=5000)
    assert task is not None and task.cancelled()
    assert panel.status.text() == "Navigation cancelled; nothing was changed."
    assert _lines(session) == before
    assert session.tree.leaf_id == ids["a2"]


def test_dont_ask_again_is_saved_and_then_honoured(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    storage = MemorySettingsStorage()
    settings = Settings.load(storage, project_trusted=True)
    session, ids = _session(tmp_path)
    panel = _panel(qtbot, session, None, settings)
    panel.select_entry(ids["a1"])
    with qtbot.waitSignal(panel.navigated):
        panel.activate_current()
        _answer_dialog(qtbot, panel, "none", dont_ask=True)
    assert json.loads(storage.read("global") or "{}")["branchSummary"]["skipPrompt"] is True
    assert settings.get("branchSummary.skipPrompt") is True
    panel.select_entry(ids["a2"])
    with qtbot.waitSignal(panel.navigated):
        panel.activate_current()  # no dialog this time
    assert panel.branch_dialog is None
    assert session.tree.leaf_id == ids["a2"]


def test_labels_fork_and_clone(qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path) -> None:
    session, ids = _session(tmp_path)
    panel = _panel(qtbot, session, None)
    panel.select_entry(ids["u1"])
    panel.prompt_label()
    panel.label_dialog.setTextValue("start here")
    panel.label_dialog.accept()
    qtbot.waitUntil(lambda: not panel.labels.writing)  # written in a worker thread
    last = _lines(session)[-1]
    assert (last["type"], last["targetId"], last["label"]) == ("label", ids["u1"], "start here")
    assert panel.model is not None
    assert panel.model.index_of_id(ids["u1"]).data() == "[start here] user: plan the parser"
    panel.select_entry(ids["u1"])
    panel.clear_label()
    qtbot.waitUntil(lambda: not panel.labels.writing)
    assert "label" not in _lines(session)[-1]
    menu = panel.build_context_menu()
    assert [a.text() for a in menu.actions() if a.isEnabled()] == [
        "Go to entry", "Set label…", "Fork from here", "Clone up to here", "Copy entry id",
        "Leave out of the model's context", "Replace what the model sees…", "",
        "Compare with the current position", "Mark for comparison", "Files touched up to here…",
    ]  # fmt: skip
    panel.select_entry(ids["u2"])
    with qtbot.waitSignal(panel.session_created) as forked:
        panel.fork_current()
    fork, text = forked.args
    assert text == "now write it in Rust"
    assert [r.id for r in fork.tree.path()] == [ids["u1"], ids["a1"]]
    assert fork.header["parentSession"] == str(session.path)
    panel.select_entry(ids["a1"])
    with qtbot.waitSignal(panel.session_created) as cloned:
        panel.clone_current()
    assert [r.id for r in cloned.args[0].tree.path()][:2] == [ids["u1"], ids["a1"]]


def test_open_file_off_the_gui_thread_shows_diagnostics(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    session, ids = _session(tmp_path)
    assert session.path is not None
    with open(session.path, "a") as handle:
        handle.write("{not json\n")
    session.close()
    panel = SessionTreePanel()
    qtbot.addWidget(panel)
    with qtbot.waitSignal(panel.loaded, timeout=10000):
        qloop.create_task(panel.open_file(str(session.path)))
    assert panel.current_entry_id() == ids["a2"]
    assert panel.diagnostics_label.isVisibleTo(panel) and "1 problem" in panel.diagnostics_label.text()
    panel.navigate_to(ids["a1"])
    assert panel.status.text() == "This session is open for browsing only."


def test_keyboard_navigation_and_label_shortcut(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    from PySide6.QtCore import Qt

    session, ids = _session(tmp_path)
    panel = _panel(qtbot, session, None)
    panel.activateWindow()
    panel.view.setFocus()
    qtbot.keyClick(panel.view, Qt.Key.Key_Up)
    assert panel.current_entry_id() == ids["u2"]
    qtbot.keyClick(panel.view, Qt.Key.Key_Home)
    assert panel.current_entry_id() == ids["u1"]
    qtbot.keyClick(panel.view, Qt.Key.Key_L, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(
        lambda: getattr(panel, "label_dialog", None) is not None and panel.label_dialog.isVisible()
    )
    panel.label_dialog.setTextValue("first")
    panel.label_dialog.accept()
    assert session.tree.label(ids["u1"]) == "first"
    qtbot.keyClick(panel.view, Qt.Key.Key_Down)
    with qtbot.waitSignal(panel.navigated):
        qtbot.keyClick(panel.view, Qt.Key.Key_Return)
        _answer_dialog(qtbot, panel, "none")
    assert session.tree.leaf_id == ids["a1"]


def test_live_agent_session_refuses_while_streaming_then_summarizes(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path, loopback: LoopbackServer
) -> None:
    store, ids = _session(tmp_path)
    navigator = navigator_for(store, loopback.anthropic_model())
    agent = navigator.agent
    panel = SessionTreePanel()
    qtbot.addWidget(panel)
    panel.show()
    panel.set_session(store, navigator)
    loopback.script(Turn([Text("slow answer arriving word by word")], drip=0.05))
    run = qloop.create_task(agent.prompt("one more question"))
    qtbot.waitUntil(lambda: agent.is_streaming)
    panel.select_entry(ids["a1"])
    assert panel.navigate_to(ids["a1"]) is None
    assert (
        panel.status.text() == "Wait for the current response to finish before navigating the session tree."
    )
    qtbot.waitUntil(run.done, timeout=10000)
    loopback.script(Turn([Text("## Goal\nBranch goal.")]))
    panel.select_entry(ids["a1"])
    with qtbot.waitSignal(panel.navigated, timeout=10000):
        panel.activate_current()
        _answer_dialog(qtbot, panel, "summary")
    summary = _lines(store)[-1]
    assert summary["type"] == "branch_summary" and summary["summary"].endswith("## Goal\nBranch goal.")
    assert agent.messages[-1]["role"] == "branchSummary"  # the agent's context follows the move
    assert panel.current_entry_id() == summary["id"]
    assert "Branch goal." in panel.detail.toPlainText()  # the summary node reads in full
    loopback.script(Turn([Text("## Files\nnotes.txt")]))
    panel.select_entry(ids["a2"])
    with qtbot.waitSignal(panel.navigated, timeout=10000):
        panel.activate_current()
        _answer_dialog(qtbot, panel, "focus", focus="Name the files only.", replace=True)
    sent = json.dumps(loopback.requests[-1].body)
    assert "Name the files only." in sent and BRANCH_INSTRUCTIONS.split("\n")[0] not in sent
    assert _lines(store)[-1]["summary"].endswith("## Files\nnotes.txt")


def test_selection_follows_new_entries_only_when_on_the_leaf(qtbot: QtBot, tmp_path: Path) -> None:
    session, ids = _session(tmp_path)
    panel = _panel(qtbot, session, None)
    new_id = session.tree.append_message(_message("user", "follow me", 5))
    qtbot.waitUntil(lambda: panel.current_entry_id() == new_id)  # was on the leaf: follows
    panel.select_entry(ids["u1"])  # the user reads an older entry meanwhile
    later = session.tree.append_message(_message("assistant", "still streaming", 6))
    qtbot.wait(50)
    assert panel.current_entry_id() == ids["u1"]
    assert panel.model is not None and panel.model.landing_index().data(ENTRY_ID_ROLE) == later


def test_long_sessions_show_groups_and_selecting_opens_them(qtbot: QtBot, tmp_path: Path) -> None:
    session = create_session(str(tmp_path), tmp_path / "sessions")
    first = session.tree.append_message(_message("user", "the very first question", 0))
    for i in range(1, 1200):
        session.tree.append_message(_message("assistant" if i % 2 else "user", f"turn {i}", i))
    panel = _panel(qtbot, session, None)
    model = panel.model
    assert model is not None
    assert [model.index(r, 0).data() for r in range(model.rowCount())] == [
        "entries 1–1,000",
        "● entries 1,001–1,200",
    ]
    assert panel.view.isExpanded(model.index(1, 0)) and not panel.view.isExpanded(model.index(0, 0))
    assert panel.select_entry(first)
    assert panel.view.isExpanded(model.index(0, 0)) and panel.current_entry_id() == first
    panel.view.setCurrentIndex(model.index(0, 0))  # a group row is not an entry
    assert panel.current_entry_id() is None and panel.detail.toPlainText() == ""


def test_dialog_and_progress_count_the_same_branch(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path, loopback: LoopbackServer
) -> None:
    session, ids = _session(tmp_path)
    tree = session.tree
    call = {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "cargo build"}}
    tree.append_message({**_message("assistant", "", 5), "content": [call], "stopReason": "toolUse"})
    tree.append_message(
        {"role": "toolResult", "toolCallId": "c1", "toolName": "bash", "isError": False, "timestamp": 6,
         "content": [{"type": "text", "text": "Finished"}]}
    )  # fmt: skip
    tree.append_message(_message("assistant", "it builds", 7))
    loopback.script(Turn(failure=Failure.hang()))
    panel = _panel(qtbot, session, loopback)
    panel.select_entry(ids["a1"])
    panel.activate_current()
    task = panel._navigation
    qtbot.waitUntil(lambda: panel.branch_dialog is not None and panel.branch_dialog.isVisible())
    dialog = panel.branch_dialog
    assert dialog is not None
    # u2, a2, the tool call, its result and the last reply: the tool result is not summarized.
    assert "holds 5 entries, of which 4 messages would be summarized." in dialog.intro.text()
    dialog.summarize.setChecked(True)
    dialog.ok_button.click()
    qtbot.waitUntil(lambda: len(loopback.requests) == 1, timeout=5000)
    assert panel.progress is not None
    qtbot.waitUntil(
        lambda: (
            panel.progress is not None
            and panel.progress.labelText()
            == "Asking the model to summarize 4 messages (5 entries of the branch)…"
        )
    )
    panel.cancel_navigation()
    qtbot.waitUntil(lambda: task is not None and task.done(), timeout=5000)


def test_branch_texts_for_single_and_empty_branches() -> None:
    assert branch_contents(1, 1) == "1 entry, of which 1 message would be summarized"
    assert branch_contents(3, 0) == "3 entries, none of them conversation to summarize"
    assert summarizing_text(1200, None) == "Asking the model to summarize the branch (1,200 entries)…"


def test_dialog_counts_only_what_fits_the_summary_budget(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, tmp_path: Path, loopback: LoopbackServer
) -> None:
    session, ids = _session(tmp_path)
    panel = SessionTreePanel()
    qtbot.addWidget(panel)
    panel.show()
    small = loopback.anthropic_model(context_window=16_400)
    # 10 tokens for the branch: the two newest messages (5 tokens each) fit, "here is a plan" (4) does not.
    navigator = navigator_for(session, small, {"branchSummary": {"reserveTokens": 16_390}})
    panel.set_session(session, navigator)
    panel.select_entry(ids["u1"])
    task = panel.navigate_to(ids["u1"])
    qtbot.waitUntil(lambda: panel.branch_dialog is not None and panel.branch_dialog.isVisible())
    assert "holds 3 entries, of which 2 messages would be summarized." in panel.branch_dialog.intro.text()  # type: ignore[union-attr]
    panel.branch_dialog.reject()  # type: ignore[union-attr]
    qtbot.waitUntil(lambda: task is not None and task.done(), timeout=5000)


def test_typing_in_the_focus_box_picks_summarize_with_my_focus(qtbot: QtBot) -> None:
    """The focus box takes text at once: typing there (or clicking into it) means a focused summary."""
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    from piwork.gui.tree.branch_dialog import BranchChoiceDialog

    dialog = BranchChoiceDialog(4, 2, "an earlier question")
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    assert dialog.no_summary.isChecked() and dialog.focus_text.isEnabled()
    QTest.keyClicks(dialog.focus_text, "the parser changes")
    assert dialog.focused.isChecked() and dialog.ok_button.isEnabled()
    assert dialog.focus_text.toPlainText() == "the parser changes"
    choice = dialog.choice()
    assert choice.summarize and choice.focus == "the parser changes"
    dialog.summarize.setChecked(True)
    QTest.mouseClick(dialog.focus_text.viewport(), Qt.MouseButton.LeftButton)
    qtbot.waitUntil(dialog.focused.isChecked, timeout=2000)
