"""A session per line of work in a git worktree, in the window: created from Session → New Session in a
Worktree…, it runs there (a reply's write changes the worktree only), the title and status bar name its
branch, Compare with Base Branch lists what changed, and Remove Worktree… asks (forcing only when told)."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from piwork.core.paths import agent_dir
from piwork.gui.main_window import MainWindow
from piwork.gui.notifications import NotificationCenter
from piwork.gui.palette.sources import action_items
from piwork.gui.session_controller import SessionController
from piwork.gui.theme import load_theme
from piwork.gui.worktrees.dialogs import CompareDialog, NewWorktreeDialog, RemoveWorktreeDialog
from tests.gui.test_session_controller import _configure
from tests.support import LoopbackServer, Text, ToolCall, Turn
from tests.support.git_repos import git, make_repo, tree_hashes

W = TypeVar("W", bound=QWidget)


def _shown(kind: type[W]) -> W | None:
    found = [w for w in QApplication.topLevelWidgets() if isinstance(w, kind) and w.isVisible()]
    return found[0] if found else None


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running


def _controller(
    qtbot: QtBot, tmp_path: Path, server: LoopbackServer, project: Path, location: str | None = None
) -> SessionController:
    _configure(server)
    if location is not None:  # piwork.worktrees.location in the global settings
        settings = agent_dir() / "settings.json"
        data = json.loads(settings.read_text())
        settings.write_text(json.dumps({**data, "piwork": {"worktrees": {"location": location}}}))
    window = MainWindow(QSettings(str(tmp_path / "w.ini"), QSettings.Format.IniFormat), load_theme("light"))
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    ctl = SessionController(window, NotificationCenter(window), str(project), agent_dir(), env={})
    ctl.spawn(ctl.open_session(None))
    qtbot.waitUntil(lambda: ctl.runtime is not None, timeout=10_000)
    return ctl


def _close(qtbot: QtBot, qloop: asyncio.AbstractEventLoop, ctl: SessionController) -> None:
    done = qloop.create_task(ctl.shutdown())
    qtbot.waitUntil(done.done, timeout=10_000)
    ctl.notifications.close_all()


def test_a_worktree_session_from_creation_to_removal(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, server: LoopbackServer, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path)
    before = tree_hashes(repo)
    ctl = _controller(qtbot, tmp_path, server, repo)
    window = ctl.window
    new = window.action_map["new_worktree_session"]
    qtbot.waitUntil(new.isEnabled, timeout=10_000)
    assert not window.action_map["compare_base"].isEnabled()  # the main checkout is no worktree
    assert "main checkout" in window.action_map["compare_base"].toolTip()

    new.trigger()
    qtbot.waitUntil(lambda: _shown(NewWorktreeDialog) is not None, timeout=10_000)
    dialog = _shown(NewWorktreeDialog)
    assert dialog is not None and dialog.base.text() == "main"
    qtbot.keyClicks(dialog.description, "Double the total")
    assert dialog.name.text() == "double-the-total"
    dialog.name.setText("bad..name")
    dialog.create_button.click()
    qtbot.waitUntil(lambda: "not a valid branch name" in dialog.error.text(), timeout=10_000)
    dialog.name.setText("double-total")
    assert dialog.where.text().endswith(os.path.join("shop-worktrees", "double-total"))
    dialog.create_button.click()
    worktree = Path(os.path.realpath(tmp_path / "shop-worktrees" / "double-total"))
    qtbot.waitUntil(
        lambda: ctl.runtime is not None and ctl.runtime.store.cwd == str(worktree), timeout=10_000
    )
    qtbot.waitUntil(lambda: window.worktrees.label.isVisible(), timeout=10_000)
    assert window.windowTitle() == "double-total [double-total, worktree of shop] — piwork"
    assert window.worktrees.label.text() == "⎇ double-total · worktree of shop"
    assert window.switcher.text() == "double-total"

    server.script(
        Turn(
            [
                ToolCall(
                    "write",
                    {"path": "src/app.py", "content": "def total(items):\n    return 2 * sum(items)\n"},
                )
            ]
        ),
        Turn([Text("Doubled.")]),
    )
    ctl.submit("double the total")
    qtbot.waitUntil(
        lambda: not ctl.chat.busy and "2 * sum" in (worktree / "src/app.py").read_text(), timeout=10_000
    )
    assert tree_hashes(repo) == before  # the main checkout is as it was

    compare = window.action_map["compare_base"]
    assert compare.isEnabled()
    compare.trigger()
    qtbot.waitUntil(lambda: _shown(CompareDialog) is not None, timeout=10_000)
    shown = _shown(CompareDialog)
    assert shown is not None and shown.windowTitle() == "Compare double-total with main"
    assert [shown.file_list.item(i).text() for i in range(shown.file_list.count())] == [
        "src/app.py — modified"
    ]
    assert "+    return 2 * sum(items)" in shown.diff.toPlainText()
    shown.close()

    window.action_map["remove_worktree"].trigger()
    qtbot.waitUntil(lambda: _shown(RemoveWorktreeDialog) is not None, timeout=10_000)
    remove = _shown(RemoveWorktreeDialog)
    assert remove is not None and remove.dirty == [" M src/app.py"]
    assert not remove.remove.isEnabled()  # uncommitted changes: only when the user says to discard them
    remove.force.setChecked(True)
    remove.delete_branch.setChecked(True)
    assert remove.remove.isEnabled()
    remove.remove.click()
    qtbot.waitUntil(lambda: ctl.runtime is not None and ctl.runtime.store.cwd == str(repo), timeout=10_000)
    assert not worktree.exists()
    assert git(repo, "branch", "--list", "double-total") == ""  # merged (no commit of its own): deleted
    qtbot.waitUntil(lambda: not window.worktrees.label.isVisible(), timeout=10_000)
    assert window.windowTitle() == "shop — piwork"
    assert tree_hashes(repo) == before
    _close(qtbot, qloop, ctl)


def test_a_clean_worktree_is_removed_without_forcing(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, server: LoopbackServer, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path)
    git(repo, "worktree", "add", "-q", "-b", "spike", str(tmp_path / "spike"), "main")
    ctl = _controller(qtbot, tmp_path, server, tmp_path / "spike", location="beside-repo")
    window = ctl.window
    qtbot.waitUntil(window.action_map["remove_worktree"].isEnabled, timeout=10_000)
    window.action_map["new_worktree_session"].trigger()  # the setting says where a new one would go
    qtbot.waitUntil(lambda: _shown(NewWorktreeDialog) is not None, timeout=10_000)
    asked = _shown(NewWorktreeDialog)
    assert asked is not None and asked.base.text() == "spike"
    asked.name.setText("next")
    assert asked.where.text() == f"Folder: {repo.parent / 'shop-next'}"
    asked.reject()
    window.action_map["remove_worktree"].trigger()
    qtbot.waitUntil(lambda: _shown(RemoveWorktreeDialog) is not None, timeout=10_000)
    remove = _shown(RemoveWorktreeDialog)
    assert remove is not None and remove.dirty == [] and remove.remove.isEnabled()
    assert not remove.force.isVisible()
    remove.remove.click()  # the branch is kept: not asked to delete it
    qtbot.waitUntil(lambda: ctl.runtime is not None and ctl.runtime.store.cwd == str(repo), timeout=10_000)
    assert not (tmp_path / "spike").exists()
    assert "spike" in git(repo, "branch", "--list", "spike")
    _close(qtbot, qloop, ctl)


def test_a_folder_outside_git_has_the_actions_disabled_saying_why(
    qtbot: QtBot, qloop: asyncio.AbstractEventLoop, server: LoopbackServer, tmp_path: Path
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    ctl = _controller(qtbot, tmp_path, server, plain)
    new = ctl.window.action_map["new_worktree_session"]
    qtbot.waitUntil(lambda: "not in a git repository" in new.toolTip(), timeout=10_000)
    assert not new.isEnabled()
    assert not ctl.window.action_map["compare_base"].isEnabled()
    assert not ctl.window.action_map["remove_worktree"].isEnabled()
    listed = {item.key: item for item in action_items(ctl.window)}  # the palette lists it last, saying why
    item = listed["action_new_worktree_session"]
    assert not item.usable and "not in a git repository" in item.detail
    _close(qtbot, qloop, ctl)
