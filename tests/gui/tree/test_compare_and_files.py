"""Compare and files-touched dialogs on a session recorded by real agent runs (loopback provider, real
tools), opened in the tree panel: what each side shows, clicks selecting entries in the tree and the
graph, the edit's diff, and moving to a side through the usual summary choice."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtGui import QFont
from pytestqt.qtbot import QtBot

from piwork.core.session.branch_activity import BranchActivity
from piwork.core.session.store import in_memory_session, open_session
from piwork.gui.tree.compare_dialog import BranchSide, CompareDialog
from piwork.gui.tree.files_dialog import FilesTouchedDialog
from piwork.gui.tree.tree_model import ENTRY_ID_ROLE
from piwork.gui.tree.tree_panel import SessionTreePanel
from tests.gui.tree.navigators import navigator_for
from tests.support.branch_runs import RecordedBranches, record_two_branches
from tests.support.checkpoint_runs import record_checkpointed


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> RecordedBranches:
    return record_two_branches(tmp_path_factory.mktemp("branches"))


def _panel(qtbot: QtBot, path: Path) -> SessionTreePanel:
    session = open_session(path, writable=True)
    panel = SessionTreePanel()
    qtbot.addWidget(panel)
    panel.resize(700, 600)
    panel.show()
    panel.set_session(session, navigator_for(session))
    return panel


def _rows(view: object) -> list[str]:
    model = view.model()  # type: ignore[attr-defined]
    return [model.index(r, 0).data() for r in range(model.rowCount())]


def _opened(qtbot: QtBot, panel: SessionTreePanel, kind: type) -> object:
    qtbot.waitUntil(lambda: any(isinstance(d, kind) for d in panel.branch_tools.dialogs))
    return next(d for d in panel.branch_tools.dialogs if isinstance(d, kind))


def test_compare_two_tips_then_move_to_one(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, recorded: RecordedBranches, tmp_path: Path
) -> None:
    copy = tmp_path / "session.jsonl"
    copy.write_bytes(recorded.path.read_bytes())
    panel = _panel(qtbot, copy)
    ids = recorded.ids
    panel.views.setCurrentWidget(panel.graph)
    qtbot.waitUntil(
        lambda: panel.graph.model is not None and not panel.graph.laying_out
    )  # laid out in a worker
    assert panel.select_entry(ids["tip_a"])
    menu = panel.build_context_menu()
    action = next(a for a in menu.actions() if a.text() == "Compare with the current position")
    assert action.isEnabled()
    action.trigger()
    dialog = _opened(qtbot, panel, CompareDialog)
    assert isinstance(dialog, CompareDialog)
    assert "Ready. What should the script print?" in dialog.ancestor.text()
    a, b = dialog.side_a, dialog.side_b
    assert a.entry_id == ids["tip_a"] and b.entry_id == ids["tip_b"]
    assert _rows(a.files) == ["hello.py — written, read, edited (3 calls)"]
    assert _rows(b.files) == ["notes/plan.txt — written (1 call)", "nope.txt — read (1 call)"]
    assert [r.split() for r in _rows(a.commands)] == [["exit", "0", "$", "python3", "hello.py"]]
    assert "exit 2" in _rows(b.commands)[0] and "missing-dir" in _rows(b.commands)[0]
    assert b.commands.model().index(0, 0).data(Qt.ItemDataRole.ForegroundRole) is not None  # failed: red
    assert b.titles["commands"].text() == "Commands (1, 1 failed)"
    assert a.answer.toPlainText() == "Done: hello.py prints hello."
    assert b.answer.toPlainText() == "Plan B written to notes/plan.txt."
    assert "[branch summary]" in _rows(b.messages)[0]
    assert "882 tokens (in 800, out 82, cache 0)" in a.figures.text()
    # a click on a message selects it in the graph and the outline
    message = b.messages.model().index(1, 0)
    b.messages.clicked.emit(message)
    assert panel.current_entry_id() == message.data(ENTRY_ID_ROLE)
    assert panel.view.currentIndex().data(ENTRY_ID_ROLE) == message.data(ENTRY_ID_ROLE)
    # files and diffs of side A
    a.files_button.click()
    files = _opened(qtbot, panel, FilesTouchedDialog)
    assert isinstance(files, FilesTouchedDialog)
    assert "+1 print('hello')" in files.diff.toPlainText() and "-1 print('hi')" in files.diff.toPlainText()
    edit_row = files.touch_list.currentIndex()
    assert edit_row.data(ENTRY_ID_ROLE) == ids["edit_result"]
    files.touch_list.clicked.emit(edit_row)
    assert panel.current_entry_id() == ids["edit_result"]
    # "Move here" asks about the branch being left, then moves
    a.move_button.click()
    qtbot.waitUntil(lambda: panel.branch_dialog is not None and panel.branch_dialog.isVisible())
    assert panel.branch_dialog is not None
    panel.branch_dialog.no_summary.setChecked(True)
    panel.branch_dialog.ok_button.click()
    qtbot.waitUntil(lambda: panel.tree is not None and panel.tree.leaf_id == ids["tip_a"])
    menu.deleteLater()
    panel.shutdown()
    qtbot.waitUntil(lambda: not panel.branch_tools.dialogs)


def test_files_touched_of_the_active_path_and_a_marked_comparison(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, recorded: RecordedBranches
) -> None:
    panel = _panel(qtbot, recorded.path)
    ids = recorded.ids
    panel.views.setCurrentWidget(panel.graph)
    qtbot.waitUntil(
        lambda: panel.graph.model is not None and not panel.graph.laying_out
    )  # laid out in a worker
    panel.select_entry(ids["tip_b"])
    panel.files_button.click()
    files = _opened(qtbot, panel, FilesTouchedDialog)
    assert isinstance(files, FilesTouchedDialog)
    assert files.heading.text() == (
        "The active path: 2 files (1 changed) by the read, write and edit tools; 1 shell command ran here "
        "too, and the files it changed are not listed."
    )  # says what the list follows
    assert _rows(files.touch_list) == ["write: Successfully wrote to notes/plan.txt"]
    assert files.diff.toPlainText() == "+1 try another way"  # a write shows the content it wrote
    files.file_list.setCurrentIndex(files.file_model.index(1, 0))
    assert _rows(files.touch_list)[0].startswith("read — failed: ENOENT")
    # mark one entry, compare another with it
    panel.select_entry(ids["fork"])
    menu = panel.build_context_menu()
    next(a for a in menu.actions() if a.text() == "Mark for comparison").trigger()
    qtbot.waitUntil(lambda: "Marked for comparison" in panel.status.text(), timeout=5_000)
    panel.select_entry(ids["tip_a"])
    menu = panel.build_context_menu()
    next(a for a in menu.actions() if a.text() == "Compare with the marked entry").trigger()
    dialog = _opened(qtbot, panel, CompareDialog)
    assert isinstance(dialog, CompareDialog)
    assert dialog.side_a.entry_id == ids["fork"] and "lies on the other's path" in dialog.ancestor.text()
    assert dialog.side_a.answer.toPlainText().startswith("(no answer")
    panel.shutdown()


def test_two_entries_selected_in_the_graph_and_the_summary_link(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, recorded: RecordedBranches
) -> None:
    panel = _panel(qtbot, recorded.path)
    ids = recorded.ids
    panel.views.setCurrentWidget(panel.graph)
    qtbot.waitUntil(
        lambda: panel.graph.model is not None and not panel.graph.laying_out
    )  # laid out in a worker
    graph = panel.graph
    assert graph.model is not None
    graph.list.setCurrentIndex(graph.model.index_of_id(ids["tip_b"]))
    selection = graph.list.selectionModel()
    selection.select(
        graph.model.index_of_id(ids["tip_a"]), QItemSelectionModel.SelectionFlag.Select
    )  # Ctrl+click
    assert graph.selected_entry_ids() == [ids["tip_a"], ids["tip_b"]]  # top to bottom
    panel.compare_button.click()
    dialog = _opened(qtbot, panel, CompareDialog)
    assert isinstance(dialog, CompareDialog)
    assert (dialog.side_a.entry_id, dialog.side_b.entry_id) == (ids["tip_a"], ids["tip_b"])
    # the branch summary leads to the branch it summarises
    panel.select_entry(ids["summary"])
    menu = panel.build_context_menu()
    show = next(a for a in menu.actions() if a.text() == "Show the summarised branch")
    assert show.isEnabled()
    show.trigger()
    assert panel.current_entry_id() == ids["tip_a"]
    menu = panel.build_context_menu()
    assert not next(a for a in menu.actions() if a.text() == "Show the summarised branch").isEnabled()
    panel.shutdown()


def test_a_side_shows_its_last_answer_as_the_chat_would(qtbot: QtBot) -> None:
    tree = in_memory_session().tree
    entry = tree.append_message({"role": "user", "content": "hi", "timestamp": 1})
    activity = BranchActivity(last_answer="The answer is **42**, see `calc.py`.")
    side = BranchSide(tree, entry, activity, "A")
    qtbot.addWidget(side)
    assert side.answer.toPlainText() == "The answer is 42, see calc.py."
    bold = side.answer.document().find("42")
    assert bold.charFormat().fontWeight() >= QFont.Weight.Bold.value


def test_a_call_without_a_result_reads_no_result_without_a_dangling_colon(qtbot: QtBot) -> None:
    from piwork.core.session.branch_activity import FileTouch

    touch = FileTouch("notes.txt", "/p/notes.txt", "read", "e1", None, False)
    dialog = FilesTouchedDialog(BranchActivity(entry_ids=["e1"], touches=[touch]), "The active path")
    qtbot.addWidget(dialog)
    assert _rows(dialog.touch_list) == ["read — no result"]


def test_comparing_the_current_position_with_itself_asks_for_the_other_entry(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, recorded: RecordedBranches, tmp_path: Path
) -> None:
    """The current position has nothing to compare with: it is marked and the status asks for the other
    entry; comparing another entry then labels the sides by what they are."""
    copy = tmp_path / "session.jsonl"
    copy.write_bytes(recorded.path.read_bytes())
    panel = _panel(qtbot, copy)
    ids = recorded.ids
    assert panel.tree is not None and panel.select_entry(ids["tip_b"])  # the current position
    assert panel.branch_tools.compare_with_current(ids["tip_b"]) is None
    assert panel.branch_tools.marked == ids["tip_b"] and not panel.branch_tools.dialogs
    assert "That is the current position" in panel.status.text()
    panel.branch_tools.compare_with_current(ids["tip_a"])
    dialog = _opened(qtbot, panel, CompareDialog)
    assert isinstance(dialog, CompareDialog)
    assert dialog.side_a.title.text().startswith("Selected: ")
    assert dialog.side_b.title.text().startswith("Current position: ")
    panel.shutdown()
    qtbot.waitUntil(lambda: not panel.branch_tools.dialogs)


@pytest.fixture
def checkpointed(tmp_path: Path) -> Path:
    return record_checkpointed(tmp_path)[0]  # recorded before the test's loop runs


def test_files_a_command_changed_are_listed_with_the_diff_the_checkpoints_hold(
    qtbot: QtBot, checkpointed: Path, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    path = checkpointed
    panel = _panel(qtbot, path)
    panel.branch_tools.agent_dir = tmp_path / "agent"
    panel.files_button.click()
    files = _opened(qtbot, panel, FilesTouchedDialog)
    assert isinstance(files, FilesTouchedDialog)
    assert files.heading.text() == (
        "The active path: 4 files (4 changed) by the read, write and edit tools, and as the checkpoints "
        "of 3 tool calls saw them change (commands included)."
    )
    assert _rows(files.file_list) == [
        "a/new.txt — written (1 call)",
        "base.txt — edited (1 call)",
        "made-a.txt — changed by bash (1 call)",
        "old.txt — changed by bash (1 call)",
    ]
    files.file_list.setCurrentIndex(files.file_model.index(2, 0))
    assert _rows(files.touch_list) == ["changed by bash (seen by the checkpoints)"]
    qtbot.waitUntil(lambda: files.diff.toPlainText() == "+1 a", timeout=5_000)  # read in a worker
    files.file_list.setCurrentIndex(files.file_model.index(3, 0))
    qtbot.waitUntil(lambda: files.diff.toPlainText() == "-1 to be removed", timeout=5_000)
    reply = files.touch_list.model().index(0, 0)
    files.touch_list.clicked.emit(reply)  # selects the reply whose calls changed it
    tree = panel.tree
    assert tree is not None and tree.record(panel.current_entry_id()).role == "assistant"
    # the comparison's side lists them too, and its "Files and diffs…" reads their diffs the same way
    first_user = next(str(r.id) for r in tree.path() if r.role == "user")
    panel.branch_tools.compare(first_user, tree.leaf_id)
    dialog = _opened(qtbot, panel, CompareDialog)
    assert isinstance(dialog, CompareDialog)
    assert "made-a.txt — changed by bash (1 call)" in _rows(dialog.side_b.files)
    dialog.side_b.files_button.click()
    qtbot.waitUntil(
        lambda: len([d for d in panel.branch_tools.dialogs if isinstance(d, FilesTouchedDialog)]) == 2
    )
    side_files = [d for d in panel.branch_tools.dialogs if isinstance(d, FilesTouchedDialog)][-1]
    assert isinstance(side_files, FilesTouchedDialog) and side_files.checkpoints is not None
    side_files.file_list.setCurrentIndex(side_files.file_model.index(2, 0))
    qtbot.waitUntil(lambda: side_files.diff.toPlainText() == "+1 a", timeout=5_000)
    panel.shutdown()
