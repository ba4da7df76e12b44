"""FilesTouchedDialog: every file a path read, wrote or edited, the entries that touched it, each edit's diff.

Left: the files, in the order they were first touched, with what was done to them. Right: the tool
calls on the selected file (clicking one selects its entry in the tree and the graph, through
`entry_clicked`) and, for an edit, the diff its tool recorded; for a write, the whole content written.
Where the session has checkpoints, the files they saw change during the calls (a command's too) and
outside piwork are listed as well; their diff is read from the checkpoints in a worker thread.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtWidgets import QDialog, QListView, QSplitter, QVBoxLayout, QWidget

from piwork.gui.background import BackgroundTasks
from piwork.gui.inert_text import plain_label
from piwork.gui.tree.diff_view import DiffView
from piwork.gui.tree.entry_list_model import EntryListModel
from piwork.gui.tree.title_reader import loop_running
from piwork.gui.tree.tree_model import ENTRY_ID_ROLE
from piwork.gui.window_flags import dialog_buttons

if TYPE_CHECKING:
    from piwork.core.checkpoints import SessionCheckpoints
    from piwork.core.session import BranchActivity, FileSummary, FileTouch

READING_DIFF = "Reading the checkpoints…"


def file_line(summary: FileSummary) -> str:
    done = ", ".join(summary.words)
    calls = len(summary.touches)
    return f"{summary.display} — {done} ({calls} call{'s' if calls != 1 else ''})"


def touch_line(touch: FileTouch) -> str:
    if touch.action == "changed":
        return f"{touch.words} (seen by the checkpoints)"
    if touch.action == "outside":
        return f"{touch.words} before this reply's calls (seen by the checkpoints)"
    outcome = " — failed" if touch.failed and touch.result_entry_id else ""
    if touch.result_entry_id is None:
        outcome = " — no result"
    first = touch.result_text.strip().splitlines()[0] if touch.result_text.strip() else ""
    return f"{touch.action}{outcome}: {first[:100]}" if first else f"{touch.action}{outcome}"


def files_heading(activity: BranchActivity, where: str, count: int) -> str:
    """What the list holds: the files of the read, write and edit tools; shell commands are counted, the
    files they changed are listed only where the checkpoints saw them."""
    commands = len(activity.commands)
    if activity.checkpointed_calls:
        plural = "s" if count != 1 else ""
        changed = len(activity.changed_files())
        seen = activity.checkpointed_calls
        return (
            f"{where}: {count} file{plural} ({changed} changed) by the read, write and edit tools, and as "
            f"the checkpoints of {seen} tool call{'s' if seen != 1 else ''} saw them change (commands included)."
        )
    shells = (
        f"; {commands} shell command{'s' if commands != 1 else ''} ran here too, and the files "
        f"{'they' if commands != 1 else 'it'} changed are not listed"
        if commands
        else ""
    )
    if count:
        plural = "s" if count != 1 else ""
        changed = len(activity.changed_files())
        return f"{where}: {count} file{plural} ({changed} changed) by the read, write and edit tools{shells}."
    if commands:
        return f"{where}: no file was read, written or edited by the file tools{shells}."
    return f"{where}: no file was read, written or edited."


class FilesTouchedDialog(QDialog):
    entry_clicked = Signal(str)

    def __init__(
        self,
        activity: BranchActivity,
        where: str,
        parent: QWidget | None = None,
        checkpoints: SessionCheckpoints | None = None,
    ) -> None:
        """``checkpoints``: where the diffs of the touches the checkpoints added are read."""
        super().__init__(parent)
        self.checkpoints = checkpoints
        self._background = BackgroundTasks()
        self.finished.connect(lambda _code: self._background.cancel_all())
        dialog_buttons(self, maximize=True)
        self.setWindowTitle("Files touched")
        self.files = activity.files()
        self.heading = plain_label(files_heading(activity, where, len(self.files)))
        self.heading.setWordWrap(True)
        self.file_list = QListView()
        self.file_list.setAccessibleName("Files touched")
        self.file_list.setAccessibleDescription(
            "Files read, written or edited on the path; select one to see its calls and diff"
        )
        self.file_model = EntryListModel(
            len(self.files),
            lambda row: file_line(self.files[row]),
            tooltip_of=lambda row: self.files[row].key,
            parent=self,
        )
        self.file_list.setModel(self.file_model)
        self.touch_list = QListView()
        self.touch_list.setAccessibleName("Calls on the selected file")
        self.touch_list.setToolTip("Click a call to select its entry in the session tree")
        self.diff = DiffView()
        self.diff.setAccessibleName("Diff of the selected call")
        self.diff.setAccessibleDescription("What the selected call changed in the file")
        self._touches: list[FileTouch] = []
        right = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(self.touch_list)
        right.addWidget(self.diff)
        right.setStretchFactor(1, 2)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.file_list)
        split.addWidget(right)
        split.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(split, 1)
        self.resize(900, 560)
        self.file_list.selectionModel().currentChanged.connect(self._on_file)
        self.touch_list.clicked.connect(self._on_touch)
        self.touch_list.activated.connect(self._on_touch)
        if self.files:
            self.file_list.setCurrentIndex(self.file_model.index(0, 0))

    def _on_file(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self._touches = self.files[current.row()].touches if current.isValid() else []
        touches = self._touches
        model = EntryListModel(
            len(touches),
            lambda row: touch_line(touches[row]),
            lambda row: touches[row].result_entry_id or touches[row].call_entry_id,
            tooltip_of=lambda row: touches[row].result_text[:1000] or None,
            failed=lambda row: touches[row].failed,
            parent=self,
        )
        old = self.touch_list.model()
        self.touch_list.setModel(model)
        if old is not None:
            old.deleteLater()
        self.touch_list.selectionModel().currentChanged.connect(lambda index, _p: self._show_diff(index))
        edits = [i for i, t in enumerate(touches) if t.diff is not None]
        self.touch_list.setCurrentIndex(model.index(edits[-1] if edits else 0, 0))

    def _show_diff(self, index: QModelIndex) -> None:
        if not index.isValid() or index.row() >= len(self._touches):
            self.diff.show_diff(None)
            return
        touch = self._touches[index.row()]
        if touch.revision is not None:
            if self.checkpoints is None or not loop_running():
                self.diff.show_diff(None, "The checkpoints of this session are not at hand.")
                return
            self.diff.show_diff(None, READING_DIFF)
            self._background.cancel_all()  # only the latest selection's diff is wanted
            self._background.spawn(self._read_diff(self.checkpoints, touch))
            return
        if touch.action == "write" and touch.content is not None:
            self.diff.show_diff(
                "\n".join(f"+{n} {line}" for n, line in enumerate(touch.content.splitlines(), 1))
            )
            return
        note = {
            "read": "A read: nothing changed.",
            "write": "This write recorded no content.",
            "edit": "This edit recorded no diff.",
        }.get(touch.action, "")
        self.diff.show_diff(touch.diff, note)

    async def _read_diff(self, checkpoints: SessionCheckpoints, touch: FileTouch) -> None:
        from piwork.core.checkpoints import touch_diff  # the engine's, loaded with the session

        diff, note = await asyncio.to_thread(touch_diff, checkpoints, touch)
        current = self.touch_list.currentIndex()
        if current.isValid() and current.row() < len(self._touches) and self._touches[current.row()] is touch:
            self.diff.show_diff(diff, note)

    def _on_touch(self, index: QModelIndex) -> None:
        entry_id = index.data(ENTRY_ID_ROLE)
        if entry_id is not None:
            self.entry_clicked.emit(str(entry_id))
