"""The tree panel's compare and files-touched actions, and the dialogs they open.

`menu_actions(entry_id)` gives the context-menu entries the outline and the graph share:
compare with the current position, mark an entry and compare another with it, and the files touched
on an entry's path. The comparison and the file lists load message bodies, so they are computed in
a worker thread (bodies are read with `pread`, safe beside the GUI thread); the dialogs open when
they are ready. Clicking an entry in a dialog selects it in the tree and the graph; "Move here"
goes through the panel's navigation (the usual summary choice). Where the session has checkpoints of the
project's files, both add the files they saw change (a command's too), read in the same worker.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QDialog

from piwork.core.errors import PiworkError
from piwork.core.paths import agent_dir
from piwork.gui.tree.compare_dialog import CompareDialog
from piwork.gui.tree.display_tree import entry_title
from piwork.gui.tree.files_dialog import FilesTouchedDialog
from piwork.gui.tree.title_reader import read_previews

if TYPE_CHECKING:
    from piwork.core.checkpoints import SessionCheckpoints
    from piwork.core.session import BranchActivity, BranchComparison, EntryRecord, SessionTree
    from piwork.gui.tree.tree_panel import SessionTreePanel

MenuAction = tuple[str, Callable[[], Any], bool]


Where = tuple[Path | None, Path]  # the session file (None: unsaved) and the agent folder of its checkpoints


def _compare_and_read_titles(
    tree: SessionTree, a_id: str, b_id: str, where: Where
) -> tuple[BranchComparison, SessionCheckpoints | None]:
    """Compare two points (a worker thread's call: opening the checkpoints may read their journal) and read
    the titles the dialog shows above its lists: the two entries and the one where the paths part."""
    from piwork.core.checkpoints import checkpointed_comparison, session_checkpoints

    checkpoints = session_checkpoints(tree, *where)
    result = checkpointed_comparison(tree, a_id, b_id, checkpoints)
    ids = (result.a_id, result.b_id, result.ancestor_id)
    read_previews(tree, [r for r in (tree.record(i) for i in ids if i is not None) if r is not None])
    return result, checkpoints


def _activity_and_title(
    tree: SessionTree, entry_id: str | None, where: Where
) -> tuple[BranchActivity, str | None, SessionCheckpoints | None]:
    """The files touched on the path to ``entry_id`` and that entry's title (a worker thread's call)."""
    from piwork.core.checkpoints import checkpointed_path_activity, session_checkpoints

    checkpoints = session_checkpoints(tree, *where)
    activity = checkpointed_path_activity(tree, entry_id, checkpoints)
    record = tree.record(entry_id) if entry_id is not None else None
    return activity, entry_title(record, tree) if record is not None else None, checkpoints


class BranchTools(QObject):
    opened = Signal(object)  # a dialog, once shown

    def __init__(self, panel: SessionTreePanel) -> None:
        super().__init__(panel)
        self.panel = panel
        self.marked: str | None = None
        self.agent_dir: Path | None = None  # where the session's checkpoints are (None: the usual folder)
        self.dialogs: list[QDialog] = []
        self._tasks: set[asyncio.Task[Any]] = set()

    def reset(self) -> None:
        """A new session: forget the mark, close the dialogs of the old one."""
        self.marked = None
        for dialog in list(self.dialogs):
            dialog.close()

    def menu_actions(self, entry_id: str | None) -> list[MenuAction]:
        from piwork.core.session import conversation_leaf

        tree = self.panel.tree
        leaf = conversation_leaf(tree) if tree is not None else None
        has = entry_id is not None and tree is not None
        marked = (
            self.marked if self.marked is not None and tree is not None and tree.has(self.marked) else None
        )
        return [
            ("Compare with the current position", lambda: self.compare(entry_id, leaf), has and leaf not in (None, entry_id)),
            ("Mark for comparison", lambda: self.mark(entry_id), has),
            ("Compare with the marked entry", lambda: self.compare(marked, entry_id), has and marked not in (None, entry_id)),
            ("Files touched up to here…", lambda: self.files_touched(entry_id), has),
            ("Show the summarised branch", lambda: self.show_summarised(entry_id), self._summarised(entry_id) is not None),
        ]  # fmt: skip

    def _summarised(self, entry_id: str | None) -> str | None:
        """For a branch summary: the last entry of the branch it summarises (if it is in the tree)."""
        tree = self.panel.tree
        record = tree.record(entry_id) if tree is not None and entry_id is not None else None
        if record is None or tree is None or record.type != "branch_summary":
            return None
        from_id = record.meta.get("fromId")
        return from_id if isinstance(from_id, str) and tree.has(from_id) else None

    def show_summarised(self, entry_id: str | None) -> None:
        target = self._summarised(entry_id)
        if target is not None:
            self.panel.select_entry(target)

    def mark(self, entry_id: str | None) -> None:
        self.marked = entry_id
        tree = self.panel.tree
        if entry_id is None or tree is None:
            return
        record = tree.record(entry_id)
        if record is None or record.has_details:
            title = entry_title(record, tree) if record is not None else entry_id
            self.panel.show_status(f"Marked for comparison: {title}")
        else:  # its text is not in memory: read it in a worker, never on the GUI thread
            self._spawn(self._announce_mark(tree, record, entry_id))

    async def _announce_mark(self, tree: SessionTree, record: EntryRecord, entry_id: str) -> None:
        await asyncio.to_thread(read_previews, tree, [record])
        if tree is self.panel.tree and self.marked == entry_id:
            self.panel.show_status(f"Marked for comparison: {entry_title(record, tree)}")

    def compare_with_current(self, entry_id: str | None) -> asyncio.Task[Any] | None:
        """The selected entry beside the current position. The current position itself has nothing to be
        compared with: it is marked, and the next entry compared goes beside it."""
        from piwork.core.session import conversation_leaf

        tree = self.panel.tree
        if tree is None or entry_id is None:
            return None
        current = conversation_leaf(tree)
        if entry_id == current:
            if self.marked is not None and self.marked != entry_id and tree.has(self.marked):
                return self.compare(self.marked, entry_id, ("Marked", "Current position"))
            self.mark(entry_id)
            self.panel.show_status(
                "That is the current position: it is marked for comparison. Select the other entry "
                "(or Ctrl+click it in the Graph) and compare again."
            )
            return None
        return self.compare(entry_id, current, ("Selected", "Current position"))

    def compare(
        self, a_id: str | None, b_id: str | None, names: tuple[str, str] = ("A", "B")
    ) -> asyncio.Task[Any] | None:
        tree = self.panel.tree
        if tree is None or a_id is None or b_id is None:
            return None
        return self._spawn(self._compare(a_id, b_id, names))

    def files_touched(self, entry_id: str | None = None) -> asyncio.Task[Any] | None:
        """Files touched on the path to `entry_id` (default: the active path)."""
        if self.panel.tree is None:
            return None
        return self._spawn(self._files(entry_id))

    def _where(self) -> Where:
        """Where the open session's checkpoints are (opened in the worker)."""
        session = self.panel.session
        return (session.path if session is not None else None), self.agent_dir or agent_dir()

    # -- work -------------------------------------------------------------------------------------
    def _spawn(self, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _compare(self, a_id: str, b_id: str, names: tuple[str, str] = ("A", "B")) -> None:
        tree = self.panel.tree
        assert tree is not None
        try:
            result, checkpoints = await asyncio.to_thread(
                _compare_and_read_titles, tree, a_id, b_id, self._where()
            )
        except PiworkError as exc:
            self.panel.show_status(f"Cannot compare: {exc}")
            return
        if tree is not self.panel.tree:
            return  # another session was opened meanwhile
        dialog = CompareDialog(tree, result, self.panel, names)
        dialog.entry_clicked.connect(self.panel.select_entry)
        dialog.move_requested.connect(self.panel.navigate_to)
        dialog.files_requested.connect(lambda activity, where: self._show_files(activity, where, checkpoints))
        self._show(dialog)

    async def _files(self, entry_id: str | None) -> None:
        from piwork.core.session import conversation_leaf

        tree = self.panel.tree
        assert tree is not None
        try:
            activity, title, checkpoints = await asyncio.to_thread(
                _activity_and_title, tree, entry_id, self._where()
            )
        except PiworkError as exc:
            self.panel.show_status(f"Cannot list the files: {exc}")
            return
        if tree is not self.panel.tree:
            return
        if entry_id is None or entry_id in (tree.leaf_id, conversation_leaf(tree)):
            where = "The active path"
        else:
            where = f"The path to “{title or entry_id}”"
        self._show_files(activity, where, checkpoints)

    def _show_files(
        self, activity: BranchActivity, where: str, checkpoints: SessionCheckpoints | None = None
    ) -> None:
        dialog = FilesTouchedDialog(activity, where, self.panel, checkpoints)
        dialog.entry_clicked.connect(self.panel.select_entry)
        self._show(dialog)

    def _show(self, dialog: QDialog) -> None:
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.dialogs.append(dialog)
        dialog.destroyed.connect(
            lambda _o=None, d=dialog: self.dialogs.remove(d) if d in self.dialogs else None
        )
        dialog.show()
        self.opened.emit(dialog)

    def shutdown(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        self.reset()
