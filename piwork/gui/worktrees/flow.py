"""The window's worktree actions, attached to the open session like a panel.

When a session opens, a worker asks git whether its folder can get worktrees and whether it is one; the
actions are enabled (or say why not in their tooltip) and the status bar and title name the branch and the
worktree. Creating, comparing and removing run git in workers; a new worktree opens as Open Folder does
(``projectChosen``), so its trust is asked at a first open, for its own real path.
"""

from __future__ import annotations

import asyncio
import os
from typing import TYPE_CHECKING

import shiboken6
from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QDialog

from piwork.core.fs import (
    WorktreeError,
    WorktreeInfo,
    WorktreeSupport,
    changes_against_base,
    create_worktree,
    current_base,
    remove_worktree,
    uncommitted_changes,
    worktree_of,
    worktree_support,
)
from piwork.core.settings_schema import WORKTREES_LOCATION
from piwork.gui.background import BackgroundTasks
from piwork.gui.inert_text import plain_label, plain_tip
from piwork.gui.worktrees.dialogs import CompareDialog, NewWorktreeDialog, RemoveWorktreeDialog

if TYPE_CHECKING:
    from piwork.core.workflows import AgentRuntime
    from piwork.gui.main_window import MainWindow

NEW_TIP = "Start a session in a new git worktree and branch of this repository"


def _where(support: WorktreeSupport, info: WorktreeInfo | None) -> tuple[str | None, str | None]:
    """Why Compare and Remove are unavailable (``None`` when they are), for their tooltips."""
    if support.repo is None:
        return support.reason, support.reason
    if info is None:
        return (
            "This session runs in the main checkout, not in a worktree",
            "This session runs in the main checkout",
        )
    if info.base is None:
        return "This worktree's base branch is not known", None
    return None, None


class WorktreeFlow(QObject):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self.window = window
        self.cwd = ""
        self.location = WORKTREES_LOCATION.default
        self.support = WorktreeSupport(None, "No project is open")
        self.info: WorktreeInfo | None = None
        self.tasks = BackgroundTasks()
        self.label = plain_label(parent=window.status)
        self.label.setObjectName("statusWorktree")
        self.label.hide()
        window.status.addPermanentWidget(self.label)
        a = window.action_map
        self.new_action, self.compare_action, self.remove_action = (
            a["new_worktree_session"],
            a["compare_base"],
            a["remove_worktree"],
        )
        self.new_action.triggered.connect(self.new_session)
        self.compare_action.triggered.connect(self.compare)
        self.remove_action.triggered.connect(self.remove)
        self._show()

    # ---- SessionPanel ----------------------------------------------------------------------

    def attach(self, runtime: AgentRuntime) -> None:
        self.cwd = runtime.store.cwd
        self.location = runtime.resources.settings.values.value(WORKTREES_LOCATION)
        self.tasks.spawn(self._look(runtime.store.cwd))

    def detach(self) -> None:
        pass

    def shutdown(self) -> None:
        self.tasks.cancel_all()

    async def _look(self, cwd: str) -> None:
        support = await asyncio.to_thread(worktree_support, cwd)
        info = await asyncio.to_thread(worktree_of, cwd) if support.repo else None
        if cwd == self.cwd and shiboken6.isValid(self.label):
            self.support, self.info = support, info
            self._show()

    def _show(self) -> None:
        support, info = self.support, self.info
        self.new_action.setEnabled(support.repo is not None)
        self.new_action.setToolTip(plain_tip(NEW_TIP if support.repo else f"Unavailable: {support.reason}"))
        no_compare, no_remove = _where(support, info)
        for action, why, tip in (
            (self.compare_action, no_compare, "Show what this worktree changed against its base branch"),
            (self.remove_action, no_remove, "Remove this session's worktree (the main checkout stays)"),
        ):
            action.setEnabled(why is None)
            action.setToolTip(plain_tip(tip if why is None else f"Unavailable: {why}"))
        if info is None:
            self.label.hide()
            self.window.set_worktree(None, None)
            return
        branch = info.branch or "detached HEAD"
        repo = os.path.basename(info.repo)
        self.label.setText(f"⎇ {branch} · worktree of {repo}")
        self.label.setToolTip(
            plain_tip(
                f"Worktree: {info.path}\nBranch: {branch}\nBase: {info.base or 'unknown'}\nRepository: {info.repo}"
            )
        )
        self.label.show()
        self.window.set_worktree(branch, repo)

    # ---- actions ---------------------------------------------------------------------------

    def new_session(self) -> None:
        self.tasks.spawn(self._new_session())

    async def _new_session(self) -> NewWorktreeDialog | None:
        repo = self.support.repo
        if repo is None:
            return None
        try:
            base = await asyncio.to_thread(current_base, self.cwd)
        except WorktreeError:
            base = "HEAD"  # a repository without a commit yet: git says so on Create
        dialog = NewWorktreeDialog(repo, base, self.location, self.window)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.create_button.clicked.connect(lambda: self.tasks.spawn(self._create(dialog)))
        dialog.open()
        return dialog

    async def _create(self, dialog: NewWorktreeDialog) -> WorktreeInfo | None:
        name, base = dialog.name.text().strip(), dialog.base.text().strip()
        dialog.create_button.setEnabled(False)
        dialog.error.setText("Creating the worktree…")
        try:
            info = await asyncio.to_thread(create_worktree, self.cwd, name, base or None, self.location)
        except WorktreeError as err:
            if shiboken6.isValid(dialog):
                dialog.error.setText(str(err))
                dialog.create_button.setEnabled(True)
            return None
        if shiboken6.isValid(dialog):
            dialog.accept()
        self.window.status.showMessage(f"Created the worktree {info.path} on the branch {info.branch}", 8000)
        self.window.projectChosen.emit(info.path)
        return info

    def compare(self) -> None:
        self.tasks.spawn(self._compare())

    async def _compare(self) -> CompareDialog | None:
        info = self.info
        if info is None or info.base is None:
            return None
        try:
            files = await asyncio.to_thread(changes_against_base, info.path, info.base)
        except WorktreeError as err:
            self.window.status.showMessage(f"Cannot compare with {info.base}: {err}", 10_000)
            return None
        dialog = CompareDialog(info, files, self.window)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog

    def remove(self) -> None:
        self.tasks.spawn(self._ask_remove())

    async def _ask_remove(self) -> RemoveWorktreeDialog | None:
        info = self.info
        if info is None:
            return None
        try:
            dirty = await asyncio.to_thread(uncommitted_changes, info.path)
        except WorktreeError as err:
            self.window.status.showMessage(f"Cannot read the worktree's state: {err}", 10_000)
            return None
        dialog = RemoveWorktreeDialog(info, dirty, self.window)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.finished.connect(
            lambda result: (
                result == QDialog.DialogCode.Accepted
                and self.tasks.spawn(
                    self._remove(info, dialog.force.isChecked(), dialog.delete_branch.isChecked())
                )
            )
        )
        dialog.open()
        return dialog

    async def _remove(self, info: WorktreeInfo, force: bool, delete_branch: bool) -> bool:
        try:
            kept = await asyncio.to_thread(remove_worktree, info, force, delete_branch)
        except WorktreeError as err:
            self.window.status.showMessage(f"The worktree was not removed: {err}", 15_000)
            return False
        done = f"Removed the worktree {info.path}"
        self.window.status.showMessage(f"{done}; the branch was kept: {kept}" if kept else done, 15_000)
        self.window.projectChosen.emit(info.repo)
        return True
