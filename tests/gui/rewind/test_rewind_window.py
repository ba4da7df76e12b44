"""Rewinding the project's files from the window: the branch dialog's "Also restore the files to this point",
the tree's "Restore files to here…" and Session → Undo File Restore, over the engine's real checkpoints of
files changed by write, edit and bash (a real git shadow store), with the real window and controller."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication, QMenu, QMessageBox

from piwork.gui.chat.rows import RowKind
from piwork.gui.rewind.plan_list import OUTSIDE_MARK
from piwork.gui.rewind.work import NO_CHECKPOINT
from piwork.gui.tree.branch_dialog import BranchChoiceDialog
from piwork.gui.tree.tree_panel import CHANGES_SINCE_TEXT, RESTORE_FILES_TEXT
from tests.gui.rewind.conftest import Workbench
from tests.support.checkpoint_runs import files_of, tree_hash


def changes(now: dict[str, bytes], target: dict[str, bytes]) -> dict[str, list[str]]:
    """What restoring ``target`` over ``now`` must change, grouped as the window lists it."""
    found = {
        "added": sorted(set(target) - set(now)),
        "modified": sorted(p for p in set(now) & set(target) if now[p] != target[p]),
        "removed": sorted(set(now) - set(target)),
    }
    return {kind: paths for kind, paths in found.items() if paths}


def open_branch_dialog(bench: Workbench, entry_id: str) -> BranchChoiceDialog:
    tree = bench.window.tree_panel
    assert tree.select_entry(entry_id)
    tree.activate_current()
    bench.qtbot.waitUntil(lambda: tree.branch_dialog is not None and tree.branch_dialog.isVisible())
    dialog = tree.branch_dialog
    assert dialog is not None and dialog.restore is not None
    option = dialog.restore
    bench.qtbot.waitUntil(lambda: option.look is not None, timeout=10_000)
    return dialog


def menu_action(bench: Workbench, entry_id: str, text: str) -> QAction:
    tree = bench.window.tree_panel
    assert tree.select_entry(entry_id)
    menu = tree.build_context_menu()
    bench.qtbot.addWidget(menu)
    return next(a for a in menu.actions() if a.text() == text)


def notices(bench: Workbench) -> list[tuple[str, str]]:
    model = bench.controller.chat.model
    rows = [model.row_at(i) for i in range(model.rowCount())]
    return [(r.title, r.text) for r in rows if r.kind in (RowKind.NOTICE, RowKind.ERROR)]


def test_branch_dialog_lists_the_files_restores_them_exactly_and_undo_brings_the_later_state_back(
    bench: Workbench,
) -> None:
    qtbot, tree, rewind = bench.qtbot, bench.window.tree_panel, bench.window.rewind
    undo = bench.window.action_map["undo_restore"]
    bench.ask("first", "a")
    bench.ask("second", "b")
    _start, after_a, end = bench.states
    second = bench.user_ids()[1]
    assert not undo.isEnabled()

    dialog = open_branch_dialog(bench, second)
    option = dialog.restore
    assert option is not None and option.box.isEnabled() and not option.box.isChecked()
    assert option.files.isHidden()  # listed once asked for
    expected = changes(end, after_a)
    assert expected == {"modified": ["base.txt"], "removed": ["b/new.txt", "made-b.txt"]}
    option.box.setChecked(True)
    assert option.files.isVisible() and option.files.listed() == expected
    assert option.status.text() == "3 files would change: 1 modified, 2 removed."
    assert files_of(bench.project) == end  # nothing happened yet
    with qtbot.waitSignal(rewind.restored, timeout=15_000):
        dialog.ok_button.click()
    assert files_of(bench.project) == after_a  # byte for byte, the new files of the later reply gone
    qtbot.waitUntil(lambda: undo.isEnabled(), timeout=10_000)
    heading, text = notices(bench)[-1]
    assert heading == "Files restored" and text.startswith("3 files restored to how they were at “second”")
    assert tree.status.text().startswith("Files restored: 3 files (1 modified, 2 removed).")

    again = open_branch_dialog(bench, second)  # the files are already as they were there: it says so
    assert again.restore is not None and not again.restore.box.isEnabled()
    assert again.restore.status.text().startswith("The files are already as they were at this point")
    again.reject()
    qtbot.waitUntil(lambda: tree.branch_dialog is None)

    undo.trigger()
    qtbot.waitUntil(lambda: rewind.dialog is not None and rewind.dialog.isVisible(), timeout=10_000)
    asked = rewind.dialog
    assert asked is not None and not asked.blocked and asked.files.listed() == changes(after_a, end)
    assert files_of(bench.project) == after_a
    with qtbot.waitSignal(rewind.restored, timeout=15_000):
        asked.ok_button.click()
    assert files_of(bench.project) == end
    assert notices(bench)[-1][0] == "File restore undone"
    assert tree.status.text() == (
        "File restore undone: 3 files (2 added, 1 modified). Session → Undo File Restore again restores them."
    )


def test_restore_files_to_here_brings_back_deleted_files_and_a_hand_change_is_asked_about(
    bench: Workbench,
) -> None:
    qtbot, rewind = bench.qtbot, bench.window.rewind
    bench.ask("first", "a")
    bench.ask("second", "b")
    start = bench.states[0]
    (bench.project / "base.txt").write_text("changed by hand\n")
    now = files_of(bench.project)
    first = bench.user_ids()[0]

    restore = menu_action(bench, first, RESTORE_FILES_TEXT)
    assert restore.isEnabled()
    restore.trigger()
    qtbot.waitUntil(lambda: rewind.dialog is not None and rewind.dialog.isVisible(), timeout=10_000)
    asked = rewind.dialog
    assert asked is not None and asked.blocked and asked.ok_button.text() == "Restore Anyway"
    assert asked.cancel_button.isDefault()  # Enter keeps the user's own change
    assert "base.txt" in asked.warning.text() and "not by the agent" in asked.warning.text()
    listed = asked.files.listed()
    assert listed == changes(now, start) and "old.txt" in listed["added"]  # deleted by bash, coming back
    rows = [asked.files.topLevelItem(i) for i in range(asked.files.topLevelItemCount())]
    marked = [r.child(j).text(0) for r in rows if r for j in range(r.childCount()) if r.child(j)]  # type: ignore[union-attr]
    assert "base.txt" + OUTSIDE_MARK in marked
    asked.cancel_button.click()
    qtbot.waitUntil(lambda: not rewind.busy)
    assert files_of(bench.project) == now  # the hand change is kept, nothing else moved either

    menu_action(bench, first, RESTORE_FILES_TEXT).trigger()
    qtbot.waitUntil(lambda: rewind.dialog is not None and rewind.dialog.isVisible(), timeout=10_000)
    assert rewind.dialog is not None
    with qtbot.waitSignal(rewind.restored, timeout=15_000):
        rewind.dialog.ok_button.click()  # Restore Anyway: asked once, not again by the engine's stop
    assert files_of(bench.project) == start
    assert notices(bench)[-1][1].startswith("6 files restored")  # 1 added, 1 modified, 4 removed

    undo = bench.window.action_map["undo_restore"]
    qtbot.waitUntil(lambda: undo.isEnabled(), timeout=10_000)
    undo.trigger()
    qtbot.waitUntil(lambda: rewind.dialog is not None and rewind.dialog.isVisible(), timeout=10_000)
    with qtbot.waitSignal(rewind.restored, timeout=15_000):
        rewind.dialog.ok_button.click()  # type: ignore[union-attr]
    assert files_of(bench.project) == now  # the hand change is back too


def test_a_hand_change_stops_the_restore_after_a_move_and_cancel_keeps_it(bench: Workbench) -> None:
    qtbot, tree, rewind = bench.qtbot, bench.window.tree_panel, bench.window.rewind
    bench.ask("first", "a")
    bench.ask("second", "b")
    (bench.project / "made-b.txt").write_text("mine now\n")
    now = files_of(bench.project)
    second = bench.user_ids()[1]

    dialog = open_branch_dialog(bench, second)
    option = dialog.restore
    assert option is not None
    option.box.setChecked(True)
    assert option.warning.isVisible() and "made-b.txt" in option.warning.text()
    assert "asked before they are overwritten" in option.warning.text()
    with qtbot.waitSignal(tree.navigated, timeout=10_000):
        dialog.ok_button.click()
    qtbot.waitUntil(lambda: rewind.dialog is not None and rewind.dialog.isVisible(), timeout=10_000)
    asked = rewind.dialog
    assert asked is not None and asked.blocked and "made-b.txt" in asked.warning.text()
    asked.cancel_button.click()
    qtbot.waitUntil(lambda: not rewind.busy)
    assert files_of(bench.project) == now
    assert notices(bench)[-1] == (
        "Files not restored",
        "Every file was left as it is, your own changes included.",
    )
    assert not bench.window.action_map["undo_restore"].isEnabled()


def test_no_checkpoint_disables_the_option_with_the_reason(bench: Workbench) -> None:
    qtbot, tree = bench.qtbot, bench.window.tree_panel
    bench.ask("hello", None)
    bench.ask("again", None)
    first = bench.user_ids()[0]

    dialog = open_branch_dialog(bench, first)
    assert dialog.restore is not None and not dialog.restore.box.isEnabled()
    assert dialog.restore.status.text() == NO_CHECKPOINT
    assert not dialog.choice().restore_files
    dialog.reject()
    qtbot.waitUntil(lambda: tree.branch_dialog is None)


def test_changes_since_here_opens_the_changes_panel_at_that_entry(bench: Workbench) -> None:
    bench.ask("first", "a")
    bench.ask("second", "b")
    second = bench.user_ids()[1]
    dock = bench.window.docks["changes"]
    assert not dock.isVisible()
    since = menu_action(bench, second, CHANGES_SINCE_TEXT)
    assert since.isEnabled()
    since.trigger()
    assert dock.isVisible()
    panel, model = bench.window.changes_panel, bench.window.changes_panel.files_model

    def shown() -> set[str]:
        return {str(model.data(model.index(i, 0))).split()[1] for i in range(model.rowCount())}

    expected = changes(bench.states[1], bench.states[2])  # since the second message: the second reply's work
    bench.qtbot.waitUntil(
        lambda: shown() == {p for paths in expected.values() for p in paths}, timeout=10_000
    )
    assert panel.since_label.text() != "Since the session began"


def test_a_file_reverted_in_the_changes_panel_is_undone_from_the_session_menu(bench: Workbench) -> None:
    qtbot, window = bench.qtbot, bench.window
    bench.ask("first", "a")
    after_a = bench.states[1]
    undo = window.action_map["undo_restore"]
    assert not undo.isEnabled()
    first = bench.user_ids()[0]
    menu_action(bench, first, CHANGES_SINCE_TEXT).trigger()
    panel = window.changes_panel
    qtbot.waitUntil(lambda: panel.changes is not None and len(panel.changes.files) == 4, timeout=10_000)
    panel.files.setCurrentIndex(panel.files_model.index(panel.files_model.row_of("base.txt"), 0))
    panel.revert_file_button.click()
    qtbot.waitUntil(lambda: _message_box() is not None, timeout=5000)
    _message_box().button(QMessageBox.StandardButton.Yes).click()  # type: ignore[union-attr]
    qtbot.waitUntil(lambda: (bench.project / "base.txt").read_bytes() == bench.states[0]["base.txt"])

    session_menu = window.menus["Session"]
    assert isinstance(session_menu, QMenu)
    session_menu.aboutToShow.emit()  # opening the menu looks again (in a worker)
    qtbot.waitUntil(lambda: undo.isEnabled(), timeout=10_000)
    undo.trigger()
    qtbot.waitUntil(lambda: window.rewind.dialog is not None and window.rewind.dialog.isVisible())
    assert window.rewind.dialog is not None and window.rewind.dialog.files.listed() == {
        "modified": ["base.txt"]
    }
    with qtbot.waitSignal(window.rewind.restored, timeout=15_000):
        window.rewind.dialog.ok_button.click()
    assert files_of(bench.project) == after_a


def _message_box() -> QMessageBox | None:
    found = [w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible()]
    return found[0] if found else None


def move_with_files(bench: Workbench, entry_id: str) -> None:
    """Move to ``entry_id`` in the tree with "Also restore the files to this point" checked."""
    dialog = open_branch_dialog(bench, entry_id)
    assert dialog.restore is not None and dialog.restore.box.isEnabled(), dialog.restore.status.text()
    dialog.restore.box.setChecked(True)
    with bench.qtbot.waitSignal(bench.window.rewind.restored, timeout=15_000):
        dialog.ok_button.click()


@pytest.mark.parametrize("bench", ["history", "plain"], indirect=True)
def test_moving_between_branches_takes_each_branch_s_files_along(bench: Workbench) -> None:
    runtime = bench.controller.runtime
    assert runtime is not None
    git_dir = bench.project / ".git"
    git_before = tree_hash(git_dir) if git_dir.exists() else None
    bench.ask("first", "a")
    bench.ask("second", "b")
    leaf_b = runtime.store.tree.leaf_id
    _start, after_a, after_b = bench.states
    second = bench.user_ids()[1]

    move_with_files(bench, second)  # back to before "second": the first reply's files
    assert files_of(bench.project) == after_a
    bench.ask("other", "c")  # a second branch from there
    leaf_c = runtime.store.tree.leaf_id
    after_c = bench.states[-1]
    assert after_c != after_b

    assert leaf_b is not None and leaf_c is not None
    move_with_files(bench, leaf_b)
    assert files_of(bench.project) == after_b
    move_with_files(bench, leaf_c)
    assert files_of(bench.project) == after_c

    undo = bench.window.action_map["undo_restore"]
    bench.qtbot.waitUntil(lambda: undo.isEnabled(), timeout=10_000)
    undo.trigger()
    bench.qtbot.waitUntil(lambda: bench.window.rewind.dialog is not None, timeout=10_000)
    with bench.qtbot.waitSignal(bench.window.rewind.restored, timeout=15_000):
        bench.window.rewind.dialog.ok_button.click()  # type: ignore[union-attr]
    assert files_of(bench.project) == after_b
    assert (tree_hash(git_dir) if git_dir.exists() else None) == git_before  # the project's own .git
