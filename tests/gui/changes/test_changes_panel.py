"""The Changes panel in the real window: a real session's tool calls (bash included) change real files under
real git checkpoints; the panel lists them, shows hunks in colour, keeps reviewed marks in the session and
reverts a hunk or a file after asking."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QApplication, QMessageBox
from pytestqt.qtbot import QtBot

from piwork.core.checkpoints import NO_GIT_NOTICE, REVIEW_CUSTOM_TYPE
from piwork.core.paths import agent_dir
from piwork.gui.changes.colouring import DiffRow
from piwork.gui.changes.panel import ChangesPanel
from piwork.gui.main_window import MainWindow
from piwork.gui.notifications import NotificationCenter
from piwork.gui.session_controller import SessionController
from piwork.gui.theme import load_theme
from tests.gui.test_session_controller import _configure
from tests.support import LoopbackServer, Text, ToolCall, Turn
from tests.support.checkpoint_runs import git

ORIGINAL = "".join(f"value_{i} = {i}\n" for i in range(1, 21))


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "code.py").write_text(ORIGINAL)
    (root / "notes.txt").write_text("keep me\n")
    git(root, "init", "-q")
    return root


def open_window(
    qtbot: QtBot, server: LoopbackServer, tmp_path: Path, project: Path, session: str | None = None
) -> SessionController:
    _configure(server)
    window = MainWindow(QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat), load_theme("light"))
    qtbot.addWidget(window)
    window.resize(1000, 700)
    window.show()
    ctl = SessionController(
        window, NotificationCenter(window), str(project), agent_dir(), approve=False, env={}
    )
    ctl.spawn(ctl.open_session(session))
    qtbot.waitUntil(lambda: ctl.runtime is not None, timeout=10_000)
    return ctl


def close(qtbot: QtBot, qloop: asyncio.AbstractEventLoop, ctl: SessionController) -> None:
    done = qloop.create_task(ctl.shutdown())
    qtbot.waitUntil(done.done, timeout=10_000)
    ctl.notifications.close_all()


@pytest.fixture
def controller(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, server: LoopbackServer, tmp_path: Path, project: Path
) -> Iterator[SessionController]:
    ctl = open_window(qtbot, server, tmp_path, project)
    yield ctl
    close(qtbot, qloop, ctl)


def change_code(qtbot: QtBot, ctl: SessionController, server: LoopbackServer) -> None:
    """One reply: an edit near the top of code.py, a command changing its end, creating and deleting files."""
    server.script(
        Turn(
            [
                ToolCall(
                    "edit",
                    {"path": "code.py", "edits": [{"oldText": "value_2 = 2", "newText": "value_2 = 'two'"}]},
                )
            ]
        ),
        Turn(
            [
                ToolCall(
                    "bash",
                    {
                        "command": "sed -i 's/value_19 = 19/value_19 = 190/' code.py && echo hi > made.txt && rm notes.txt"
                    },
                )
            ]
        ),
        Turn([Text("Changed.")]),
    )
    asked = len(server.requests)
    ctl.submit("change the code")
    qtbot.waitUntil(lambda: len(server.requests) == asked + 3 and not ctl.chat.busy, timeout=15_000)


def panel_of(qtbot: QtBot, ctl: SessionController) -> ChangesPanel:
    window = ctl.window
    window.action_map  # noqa: B018 - the window is built
    toggle = window.docks["changes"].toggleViewAction()
    assert toggle.shortcut().toString() == "Alt+6" and toggle in window.menus["View"].actions()  # type: ignore[attr-defined]
    taken = [a.shortcut().toString() for a in window.findChildren(QAction) if a is not toggle]
    assert "Alt+6" not in taken  # no other action of the window has it
    if not window.docks["changes"].isVisible():
        toggle.trigger()
    panel = window.changes_panel
    qtbot.waitUntil(lambda: panel.isVisible(), timeout=5000)
    return panel


def listed(panel: ChangesPanel) -> list[str]:
    model = panel.files_model
    return [str(model.data(model.index(i, 0))) for i in range(model.rowCount())]


def wait_files(qtbot: QtBot, panel: ChangesPanel, paths: set[str]) -> None:
    def shown() -> bool:
        return panel.changes is not None and {f.path for f in panel.changes.files} == paths

    qtbot.waitUntil(shown, timeout=10_000)


def choose(qtbot: QtBot, panel: ChangesPanel, path: str) -> None:
    """Select the file and wait for its rows (made in a worker)."""
    panel.files.setCurrentIndex(panel.files_model.index(panel.files_model.row_of(path), 0))
    qtbot.waitUntil(
        lambda: panel.current is not None and panel.diff_model.change is panel.current, timeout=10_000
    )


def header_reviewed(panel: ChangesPanel) -> list[bool]:
    model = panel.diff_model
    return [model.hunk_reviewed(h) for h in range(len(model.change.hunks if model.change else ()))]


def diff_rows(panel: ChangesPanel) -> list[DiffRow]:
    rows = [panel.diff_model.row_at(i) for i in range(panel.diff_model.rowCount())]
    return [r for r in rows if r is not None]


def answer(qtbot: QtBot, yes: bool) -> str:
    def box() -> QMessageBox | None:
        found = [w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible()]
        return found[0] if found else None

    qtbot.waitUntil(lambda: box() is not None, timeout=5000)
    found = box()
    assert found is not None
    text = found.text()
    button = found.button(QMessageBox.StandardButton.Yes if yes else QMessageBox.StandardButton.No)
    button.click()
    return text


def test_the_panel_lists_every_file_changed_and_shows_hunks_in_colour(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    panel = panel_of(qtbot, controller)
    qtbot.waitUntil(lambda: "No file has changed" in panel.summary.text(), timeout=10_000)
    change_code(qtbot, controller, server)
    wait_files(qtbot, panel, {"code.py", "made.txt", "notes.txt"})  # the command's files too
    assert [line.split()[:2] for line in listed(panel)] == [
        ["M", "code.py"],
        ["A", "made.txt"],
        ["D", "notes.txt"],
    ]
    assert "3 file(s) changed: 1 created, 1 modified, 1 deleted; 0 reviewed." in panel.summary.text()
    assert panel.since_label.text() == "Since the session began"
    choose(qtbot, panel, "code.py")
    assert panel.current is not None and panel.current.path == "code.py"
    assert panel.hunk_label.text() == "Hunk 1 of 2"
    headers = [r.text for r in diff_rows(panel) if r.line is None]
    assert headers == ["@@ -1,5 +1,5 @@", "@@ -16,5 +16,5 @@"]
    assert any(r.spans for r in diff_rows(panel))  # coloured in the worker
    added = next(r for r in diff_rows(panel) if r.line is not None and r.line.kind == "+")
    assert added.line is not None and added.line.text == "value_2 = 'two'"
    assert added.spans is not None and len({s.rgb for s in added.spans}) > 1  # name, number, string
    panel.diff.setFocus()
    qtbot.keyClick(panel.diff, Qt.Key.Key_N)  # the next hunk, by keyboard
    assert panel.hunk_label.text() == "Hunk 2 of 2" and not panel.next_hunk.isEnabled()
    qtbot.keyClick(panel.diff, Qt.Key.Key_R)
    assert panel.hunk_reviewed.isChecked() and header_reviewed(panel) == [False, True]
    qtbot.keyClick(panel.diff, Qt.Key.Key_P)
    assert panel.hunk_label.text() == "Hunk 1 of 2" and not panel.hunk_reviewed.isChecked()


def test_reviewed_marks_are_kept_in_the_session_and_survive_reopening(
    qtbot: QtBot,
    qloop: asyncio.AbstractEventLoop,
    server: LoopbackServer,
    tmp_path: Path,
    project: Path,
) -> None:
    ctl = open_window(qtbot, server, tmp_path, project)
    panel = panel_of(qtbot, ctl)
    change_code(qtbot, ctl, server)
    wait_files(qtbot, panel, {"code.py", "made.txt", "notes.txt"})
    choose(qtbot, panel, "code.py")
    panel.hunk_reviewed.click()
    assert panel.hunk_reviewed.isChecked() and not panel.file_reviewed.isChecked()
    assert header_reviewed(panel) == [True, False]
    choose(qtbot, panel, "made.txt")
    panel.file_reviewed.click()
    assert panel.file_reviewed.isChecked() and listed(panel)[1].startswith("✓")
    assert "1 reviewed" in panel.summary.text()
    session_file = ctl.runtime.store.path  # type: ignore[union-attr]
    assert session_file is not None

    def marks_written() -> list[dict[str, Any]]:
        entries = [json.loads(line) for line in session_file.read_text().splitlines()]
        return [e for e in entries if e.get("customType") == REVIEW_CUSTOM_TYPE]

    qtbot.waitUntil(lambda: len(marks_written()) == 2, timeout=5000)  # the store writes in a worker
    marks = marks_written()
    assert [e["type"] for e in marks] == ["custom", "custom"] and marks[1]["data"]["paths"] == ["made.txt"]

    # the next request holds no mark: Pi's context leaves custom entries out
    server.script(Turn([Text("Fine.")]))
    asked = len(server.requests)
    ctl.submit("thanks")
    qtbot.waitUntil(lambda: len(server.requests) == asked + 1 and not ctl.chat.busy, timeout=15_000)
    assert REVIEW_CUSTOM_TYPE not in json.dumps(server.requests[-1].body)
    close(qtbot, qloop, ctl)
    ctl.window.close()

    # reopened: the marks are read back; the hunk that changes again is unreviewed, the other still reviewed
    (project / "code.py").write_text((project / "code.py").read_text().replace("'two'", "'TWO'"))
    again = open_window(qtbot, server, tmp_path, project, str(session_file))
    panel = panel_of(qtbot, again)
    wait_files(qtbot, panel, {"code.py", "made.txt", "notes.txt"})
    qtbot.waitUntil(lambda: listed(panel)[1].startswith("✓"), timeout=5000)
    choose(qtbot, panel, "code.py")
    assert not panel.hunk_reviewed.isChecked()
    assert header_reviewed(panel) == [False, False]  # the hunk reviewed changed again
    close(qtbot, qloop, again)


def test_revert_a_hunk_asks_first_and_puts_back_only_that_hunk(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer, project: Path
) -> None:
    panel = panel_of(qtbot, controller)
    change_code(qtbot, controller, server)
    wait_files(qtbot, panel, {"code.py", "made.txt", "notes.txt"})
    choose(qtbot, panel, "code.py")
    panel.go_to_hunk(1)
    changed = (project / "code.py").read_bytes()
    panel.revert_hunk_button.click()
    assert "@@ -16,5 +16,5 @@ of code.py" in answer(qtbot, yes=False)
    assert (project / "code.py").read_bytes() == changed  # No: nothing happens
    panel.revert_hunk_button.click()
    answer(qtbot, yes=True)
    expected = ORIGINAL.replace("value_2 = 2", "value_2 = 'two'").encode()
    qtbot.waitUntil(lambda: (project / "code.py").read_bytes() == expected, timeout=10_000)
    qtbot.waitUntil(lambda: panel.current is not None and len(panel.current.hunks) == 1, timeout=10_000)
    assert "A hunk of code.py was reverted." in panel.summary.text()

    choose(qtbot, panel, "notes.txt")  # a deleted file comes back whole
    panel.revert_file_button.click()
    assert "back as it was" in answer(qtbot, yes=True)
    wait_files(qtbot, panel, {"code.py", "made.txt"})
    assert (project / "notes.txt").read_text() == "keep me\n"
    choose(qtbot, panel, "made.txt")  # a created file is deleted
    panel.revert_file_button.click()
    assert answer(qtbot, yes=True).startswith("Delete made.txt?")
    wait_files(qtbot, panel, {"code.py"})
    assert not (project / "made.txt").exists()


def test_show_since_an_entry_opens_the_panel_and_compares_from_its_checkpoint(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer
) -> None:
    window = controller.window
    change_code(qtbot, controller, server)
    tree = controller.runtime.store.tree  # type: ignore[union-attr]
    assistants = [str(r.id) for r in tree.path() if r.role == "assistant"]
    # the second assistant entry holds the command: since it, only the command's changes
    assert not window.docks["changes"].isVisible()
    window.changes_panel.showSince.emit(assistants[1])
    panel = window.changes_panel
    qtbot.waitUntil(lambda: window.docks["changes"].isVisible(), timeout=5000)
    wait_files(qtbot, panel, {"code.py", "made.txt", "notes.txt"})
    choose(qtbot, panel, "code.py")
    assert [r.text for r in diff_rows(panel) if r.line is None] == ["@@ -16,5 +16,5 @@"]
    assert panel.since_label.text().startswith("Since assistant")
    assert panel.branch_start_button.isEnabled()
    panel.branch_start_button.click()
    qtbot.waitUntil(lambda: panel.since_label.text() == "Since the session began", timeout=10_000)
    assert not panel.branch_start_button.isEnabled()

    # "Since…" offers the branch's prompts, newest first
    server.script(
        Turn([ToolCall("write", {"path": "later.txt", "content": "later\n"})]), Turn([Text("Wrote.")])
    )
    asked = len(server.requests)
    controller.submit("write one more")
    qtbot.waitUntil(lambda: len(server.requests) == asked + 2 and not controller.chat.busy, timeout=15_000)
    wait_files(qtbot, panel, {"code.py", "made.txt", "notes.txt", "later.txt"})
    qtbot.waitUntil(lambda: len(panel.since_menu.actions()) == 2, timeout=10_000)
    offered = [a.text() for a in panel.since_menu.actions()]
    assert offered == ["user: “write one more”", "user: “change the code”"]
    panel.since_menu.actions()[0].trigger()
    wait_files(qtbot, panel, {"later.txt"})
    assert panel.since_label.text() == "Since user: “write one more”"
    assert panel.since_menu.actions()[0].isChecked()


def test_a_binary_file_is_listed_with_its_reason_and_reviewed_or_reverted_whole(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer, project: Path
) -> None:
    panel = panel_of(qtbot, controller)
    server.script(
        Turn([ToolCall("bash", {"command": "printf 'GIF\\000\\001' > image.gif"})]), Turn([Text("Drew it.")])
    )
    asked = len(server.requests)
    controller.submit("draw")
    qtbot.waitUntil(lambda: len(server.requests) == asked + 2 and not controller.chat.busy, timeout=15_000)
    wait_files(qtbot, panel, {"image.gif"})
    assert listed(panel)[0].split()[:3] == ["A", "image.gif", "(not"]
    choose(qtbot, panel, "image.gif")
    (note,) = diff_rows(panel)
    assert note.line is None and note.text.startswith("Binary file (5 bytes)")
    assert not panel.revert_hunk_button.isEnabled() and not panel.hunk_reviewed.isEnabled()
    assert panel.hunk_label.text() == ""
    panel.file_reviewed.click()
    assert panel.file_reviewed.isChecked() and "1 reviewed" in panel.summary.text()
    panel.revert_file_button.click()
    answer(qtbot, yes=True)
    wait_files(qtbot, panel, set())
    assert not (project / "image.gif").exists() and panel.summary.text().startswith("image.gif was reverted.")


def test_without_git_the_panel_shows_the_edit_and_write_targets_and_says_so(
    qtbot: QtBot,
    qloop: asyncio.AbstractEventLoop,
    server: LoopbackServer,
    tmp_path: Path,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))
    ctl = open_window(qtbot, server, tmp_path, project)
    panel = panel_of(qtbot, ctl)
    server.script(
        Turn([ToolCall("write", {"path": "notes.txt", "content": "keep me\nand me\n"})]),
        Turn([Text("Done.")]),
    )
    asked = len(server.requests)
    ctl.submit("add a line")
    qtbot.waitUntil(lambda: len(server.requests) == asked + 2 and not ctl.chat.busy, timeout=15_000)
    wait_files(qtbot, panel, {"notes.txt"})
    assert NO_GIT_NOTICE in panel.summary.text()
    choose(qtbot, panel, "notes.txt")
    assert [(r.line.kind, r.line.text) for r in diff_rows(panel) if r.line is not None] == [
        (" ", "keep me"),
        ("+", "and me"),
    ]
    panel.revert_hunk_button.click()
    answer(qtbot, yes=True)
    wait_files(qtbot, panel, set())
    assert (project / "notes.txt").read_text() == "keep me\n"
    close(qtbot, qloop, ctl)


def test_a_large_change_is_laid_out_without_holding_the_gui_thread(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, server: LoopbackServer, tmp_path: Path, project: Path
) -> None:
    """15,000 changed lines of Python, 30,000 rows: lexed, diffed and made into rows in workers; the stall
    guard fails the test if laying them out or painting them holds the GUI thread."""
    (project / "big.py").write_text("".join(f"item_{i} = {{'n': {i}}}  # row {i}\n" for i in range(15_000)))
    ctl = open_window(qtbot, server, tmp_path, project)
    panel = panel_of(qtbot, ctl)
    server.script(
        Turn([ToolCall("bash", {"command": "sed -i 's/^item_/thing_/' big.py"})]), Turn([Text("Renamed.")])
    )
    asked = len(server.requests)
    ctl.submit("rename")
    qtbot.waitUntil(lambda: len(server.requests) == asked + 2 and not ctl.chat.busy, timeout=15_000)
    wait_files(qtbot, panel, {"big.py"})
    choose(qtbot, panel, "big.py")
    assert panel.diff_model.rowCount() == 30_001 and panel.hunk_label.text() == "Hunk 1 of 1"
    panel.diff.scrollToBottom()
    qtbot.wait(50)
    last = diff_rows(panel)[-1]
    assert last.line is not None and last.line.text == "thing_14999 = {'n': 14999}  # row 14999"
    assert last.spans is not None
    close(qtbot, qloop, ctl)


def test_a_read_only_session_shows_its_changes_but_marks_and_reverts_nothing(
    qtbot: QtBot, controller: SessionController, server: LoopbackServer, project: Path
) -> None:
    from piwork.core.session import open_session

    panel = panel_of(qtbot, controller)
    change_code(qtbot, controller, server)
    wait_files(qtbot, panel, {"code.py", "made.txt", "notes.txt"})
    path = str(controller.runtime.store.path)  # type: ignore[union-attr]
    previous = controller.runtime
    controller.spawn(controller.open_session(None))
    qtbot.waitUntil(lambda: controller.runtime not in (None, previous), timeout=10_000)
    holder = open_session(path)  # another window has the file open for writing
    try:
        controller.spawn(controller.open_session(path))
        qtbot.waitUntil(
            lambda: controller.runtime is not None and controller.runtime.store.read_only, timeout=10_000
        )
        wait_files(qtbot, panel, {"code.py", "made.txt", "notes.txt"})
        choose(qtbot, panel, "code.py")
        for button in (
            panel.file_reviewed,
            panel.hunk_reviewed,
            panel.revert_file_button,
            panel.revert_hunk_button,
        ):
            assert not button.isEnabled() and "read-only" in button.toolTip()
    finally:
        holder.close()
