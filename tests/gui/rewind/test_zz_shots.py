from __future__ import annotations

import os

from piwork.gui.theme import load_theme
from piwork.gui.tree.tree_panel import RESTORE_FILES_TEXT
from tests.gui.rewind.conftest import Workbench
from tests.gui.rewind.test_rewind_window import menu_action, open_branch_dialog

OUT = "/tmp/rewind-shots"


def test_shots(bench: Workbench) -> None:
    os.makedirs(OUT, exist_ok=True)
    theme = os.environ.get("SHOT_THEME", "light")
    bench.window.set_theme(load_theme(theme))
    from PySide6.QtWidgets import QApplication

    QApplication.instance().setPalette(load_theme(theme).palette)
    qtbot, rewind = bench.qtbot, bench.window.rewind
    bench.ask("first", "a")
    bench.ask("second", "b")
    (bench.project / "made-b.txt").write_text("mine\n")
    second = bench.user_ids()[1]
    dialog = open_branch_dialog(bench, second)
    dialog.grab().save(f"{OUT}/{theme}-branch-unchecked.png")
    dialog.restore.box.setChecked(True)
    qtbot.wait(50)
    dialog.grab().save(f"{OUT}/{theme}-branch-checked.png")
    dialog.reject()
    qtbot.waitUntil(lambda: bench.window.tree_panel.branch_dialog is None)
    first = bench.user_ids()[0]
    menu_action(bench, first, RESTORE_FILES_TEXT).trigger()
    qtbot.waitUntil(lambda: rewind.dialog is not None and rewind.dialog.isVisible(), timeout=10_000)
    rewind.dialog.grab().save(f"{OUT}/{theme}-restore-blocked.png")
    with qtbot.waitSignal(rewind.restored, timeout=15_000):
        rewind.dialog.ok_button.click()
    for w, h in ((1000, 700), (1600, 1000)):
        bench.window.resize(w, h)
        qtbot.wait(100)
        bench.window.grab().save(f"{OUT}/{theme}-window-{w}.png")
    bench.window.action_map["undo_restore"].trigger()
    qtbot.waitUntil(lambda: rewind.dialog is not None and rewind.dialog.isVisible(), timeout=10_000)
    rewind.dialog.grab().save(f"{OUT}/{theme}-undo.png")
    rewind.dialog.reject()
    qtbot.waitUntil(lambda: not rewind.busy)
    menu = bench.window.tree_panel.build_context_menu()
    qtbot.addWidget(menu)
    menu.popup(bench.window.mapToGlobal(bench.window.rect().center()))
    qtbot.wait(50)
    menu.grab().save(f"{OUT}/{theme}-menu.png")
    menu.close()


def test_shot_no_checkpoint(bench: Workbench) -> None:
    bench.ask("hello", None)
    bench.ask("again", None)
    dialog = open_branch_dialog(bench, bench.user_ids()[0])
    dialog.grab().save(f"{OUT}/no-checkpoint.png")
    dialog.reject()
    bench.qtbot.waitUntil(lambda: bench.window.tree_panel.branch_dialog is None)
