"""ResourceReview: the part of the trust dialog where the user reads what would load.

A tree lists each gated resource and, under it, its files (listed by a background job, so a huge
folder never blocks the window); selecting a file reads its beginning off the GUI thread and shows
it, headed by what the agent would see it as (a skill's name and description, a prompt template's
command). When piwork asks again because the resources changed, the tree marks added, removed and
modified files, and the "What changed" tab shows the unified diff of their lines, coloured.
"""

from __future__ import annotations

import asyncio
import html
import os
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QStandardItem,
    QStandardItemModel,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLabel,
    QPlainTextEdit,
    QSplitter,
    QTabWidget,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from piwork.core.resources import (
    KIND_ROLES,
    FileChange,
    FilePreview,
    ResourceListing,
    TrustReading,
    TrustResource,
    display_path,
    list_resource_files,
    preview_file,
    preview_of_text,
)
from piwork.gui.background import BackgroundTasks
from piwork.gui.inert_text import plain_label, plain_tip

PATH_ROLE = Qt.ItemDataRole.UserRole + 1
KIND_ROLE = Qt.ItemDataRole.UserRole + 2
CHANGE_ROLE = Qt.ItemDataRole.UserRole + 3  # "added" / "removed" / "modified" / None

_MARKS = {"added": "+ ", "removed": "− ", "modified": "~ "}
_CHANGE_WORDS = {"added": "added", "removed": "removed", "modified": "modified"}
_COLOURS = {"added": "#1a7f37", "removed": "#cf222e", "modified": "#9a6700"}


class ReviewReads:
    """The review's reads (listing a resource's files, a file's preview), each in a worker thread
    through ``asyncio.to_thread``; its callback gets the result (or the exception) on the GUI thread,
    unless the read was cancelled (a newer preview, the dialog closing) meanwhile."""

    def __init__(self) -> None:
        self._tasks = BackgroundTasks()

    def run(self, work: Callable[[], object], callback: Callable[[object], None]) -> asyncio.Task[None]:
        return self._tasks.spawn(self._run(work, callback))

    async def _run(self, work: Callable[[], object], callback: Callable[[object], None]) -> None:
        try:
            result: object = await asyncio.to_thread(work)
        except Exception as exc:  # reported in the view, never lost in a worker thread
            result = exc
        callback(result)

    @property
    def running(self) -> bool:
        return self._tasks.running

    def shutdown(self) -> None:
        """Drop every read still running (a read already in its thread finishes there, unheard)."""
        self._tasks.cancel_all()


class DiffHighlighter(QSyntaxHighlighter):
    """Colours unified diff lines: additions green, removals red, hunks and file headers set apart."""

    def __init__(self, document: QTextDocument) -> None:
        super().__init__(document)
        self._formats: dict[str, QTextCharFormat] = {}
        for key, colour, bold in (
            ("+", "#1a7f37", False),
            ("-", "#cf222e", False),
            ("@", "#8250df", False),
            ("header", "#57606a", True),
            ("file", "#0550ae", True),
        ):
            fmt = QTextCharFormat()
            fmt.setForeground(QColor(colour))
            if bold:
                fmt.setFontWeight(QFont.Weight.Bold)
            self._formats[key] = fmt

    def format_for(self, line: str) -> QTextCharFormat | None:
        if line.startswith(("+++", "---")):
            return self._formats["header"]
        if line.startswith("■ "):
            return self._formats["file"]
        if line.startswith("@@"):
            return self._formats["@"]
        return self._formats.get(line[:1]) if line[:1] in "+-" else None

    def highlightBlock(self, text: str) -> None:
        fmt = self.format_for(text)
        if fmt is not None:
            self.setFormat(0, len(text), fmt)


def diff_text(changes: Sequence[FileChange], folder: str) -> str:
    """Every change as text: a line naming the file and what happened, then its diff or a note."""
    parts: list[str] = []
    for change in changes:
        parts.append(f"■ {_CHANGE_WORDS[change.kind]}: {display_path(change.path, folder)}")
        parts.extend(change.diff)
        if change.note:
            parts.append(f"({change.note})")
        parts.append("")
    return "\n".join(parts)


def change_summary(changes: Sequence[FileChange]) -> str:
    """E.g. "3 files changed: 1 added, 2 modified (+12 −4 lines)"."""
    if not changes:
        return "no file changed"
    counts = [(kind, sum(1 for c in changes if c.kind == kind)) for kind in ("added", "removed", "modified")]
    kinds = ", ".join(f"{n} {kind}" for kind, n in counts if n)
    plus = sum(c.added_lines for c in changes)
    minus = sum(c.removed_lines for c in changes)
    total = len(changes)
    return f"{total} file{'' if total == 1 else 's'} changed: {kinds} (+{plus} −{minus} lines)"


class ResourceReview(QWidget):
    """Tree of gated resources and their files, the selected file's content, and what changed."""

    listed = Signal(str)  # resource path whose files are now in the tree
    previewShown = Signal(str)  # file path now shown in the content pane

    def __init__(
        self,
        folder: str,
        resources: Sequence[TrustResource],
        changes: Sequence[FileChange] | None = None,
        parent: QWidget | None = None,
        reading: TrustReading | None = None,
    ) -> None:
        super().__init__(parent)
        self.folder = folder
        # The one read of the gated files the question is about: files are shown as it holds them.
        self.reading = reading
        self.resources = tuple(resources)
        self.changes = tuple(changes or ())
        self._changes_by_path = {c.path: c for c in self.changes}
        self.jobs = ReviewReads()
        self._preview: asyncio.Task[None] | None = None
        self._listed: set[str] = set()
        self.model = QStandardItemModel(self)
        self.tree = QTreeView()
        self.tree.setModel(self.model)
        self.tree.setHeaderHidden(True)
        self.tree.setUniformRowHeights(True)
        self.tree.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.tree.setAccessibleName("Resources that need trust")
        self.tree.setAccessibleDescription(
            "Each resource this project would load once trusted, with its files; select a file to read it."
        )
        self.heading = QLabel()
        self.heading.setWordWrap(True)
        self.heading.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.note = plain_label()
        self.note.setWordWrap(True)
        self.note.hide()
        fixed = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.content = QPlainTextEdit(readOnly=True)
        self.content.setFont(fixed)
        self.content.setPlaceholderText("Select a file to read it.")
        self.content.setAccessibleName("File content")
        self.content.setAccessibleDescription("The selected file as the agent would load it.")
        self.diff_view = QPlainTextEdit(readOnly=True)
        self.diff_view.setFont(fixed)
        self.diff_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.diff_view.setAccessibleName("What changed")
        self.diff_view.setAccessibleDescription(
            "Lines added and removed since you last decided about this project."
        )
        self.highlighter = DiffHighlighter(self.diff_view.document())
        self.tabs = QTabWidget()
        self.tabs.addTab(self.content, "Content")
        if changes is not None:
            self.tabs.addTab(self.diff_view, f"What changed ({len(self.changes)})")
            self.diff_view.setPlainText(diff_text(self.changes, folder) or "No file changed.")
        right = QWidget()
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.heading)
        right_layout.addWidget(self.note)
        right_layout.addWidget(self.tabs, 1)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.tree)
        splitter.addWidget(right)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 2)
        splitter.setSizes([320, 640])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(splitter)
        self._build_roots()
        self.tree.selectionModel().currentChanged.connect(self._on_current)
        if changes is not None and self.changes:
            self.tabs.setCurrentWidget(self.diff_view)

    # ---- tree ------------------------------------------------------------------------------

    def _build_roots(self) -> None:
        for resource in self.resources:
            label = f"{resource.kind}: {display_path(resource.path, self.folder)}"
            if resource.kind == "mcp":
                label += " — not used by piwork (it runs no MCP servers yet)"
            item = QStandardItem(label)
            item.setData(resource.path, PATH_ROLE)
            item.setData(resource.kind, KIND_ROLE)
            item.setToolTip(plain_tip(f"{resource.path}\n{KIND_ROLES.get(resource.kind, '')}".strip()))
            changed = [c for c in self.changes if _inside(c.path, resource.path)]
            if changed:
                item.setText(item.text() + f"  ({len(changed)} changed)")
                item.setForeground(QColor(_COLOURS["modified"]))
            waiting = QStandardItem("Listing files…")
            waiting.setEnabled(False)
            item.appendRow(waiting)
            self.model.appendRow(item)
            self.jobs.run(partial(list_resource_files, resource.path), partial(self._fill, item))
        self.tree.expandAll()

    def all_listed(self) -> bool:
        """Every resource's files are in the tree."""
        return len(self._listed) == self.model.rowCount()

    def _fill(self, node: QStandardItem, result: object) -> None:
        node.removeRows(0, node.rowCount())
        root = str(node.data(PATH_ROLE))
        self._listed.add(root)
        kind = str(node.data(KIND_ROLE))
        if isinstance(result, Exception):
            node.appendRow(_note_item(f"Cannot list: {result}"))
            self.listed.emit(root)
            return
        assert isinstance(result, ResourceListing)
        if result.files == (root,):  # a file resource: the row itself is the file
            self.listed.emit(root)
            return
        removed = [c.path for c in self.changes if c.kind == "removed" and _inside(c.path, root)]
        for path in sorted([*result.files, *removed]):
            label = os.path.relpath(path, root) if path != root else os.path.basename(path)
            change = self._changes_by_path.get(path)
            item = QStandardItem(_MARKS.get(change.kind, "") + label if change else label)
            item.setData(path, PATH_ROLE)
            item.setData(kind, KIND_ROLE)
            item.setToolTip(plain_tip(path))
            if change is not None:
                item.setData(change.kind, CHANGE_ROLE)
                item.setForeground(QColor(_COLOURS[change.kind]))
                item.setToolTip(plain_tip(f"{path}\n{_CHANGE_WORDS[change.kind]} since your last decision"))
            node.appendRow(item)
        if result.truncated:
            node.appendRow(_note_item(f"… only the first {len(result.files)} files are listed"))
        if result.error and result.error != "missing":
            node.appendRow(_note_item(f"Some entries could not be read: {result.error}"))
        if not result.files and not removed:
            node.appendRow(_note_item("(empty)"))
        self.tree.expand(node.index())
        self.listed.emit(root)

    def file_rows(self, resource_row: int) -> list[str]:
        """The child labels under one resource (for tests and accessibility checks)."""
        node = self.model.item(resource_row)
        return [node.child(i).text() for i in range(node.rowCount())] if node is not None else []

    def select_path(self, path: str) -> bool:
        for row in range(self.model.rowCount()):
            node = self.model.item(row)
            if node.data(PATH_ROLE) == path:
                self.tree.setCurrentIndex(node.index())
                return True
            for child in range(node.rowCount()):
                item = node.child(child)
                if item.data(PATH_ROLE) == path:
                    self.tree.setCurrentIndex(item.index())
                    return True
        return False

    # ---- content ---------------------------------------------------------------------------

    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        path = current.data(PATH_ROLE)
        kind = str(current.data(KIND_ROLE) or "")
        if not isinstance(path, str):
            return
        change = self._changes_by_path.get(path)
        if change is not None:
            self.diff_view.setPlainText(diff_text([change], self.folder))
        elif self.changes:
            self.diff_view.setPlainText(diff_text(self.changes, self.folder))
        if self._preview is not None:
            self._preview.cancel()  # the selection moved on: that file's preview is not wanted
            self._preview = None
        if change is not None and change.kind == "removed":
            self._show_text(path, "", f"This file was removed since your last decision ({path}).")
            self.tabs.setCurrentWidget(self.diff_view)
            return
        self.heading.setText(f"<b>{html.escape(display_path(path, self.folder), quote=False)}</b> — reading…")
        is_file_row = current.parent().isValid()

        reading = self.reading

        def read() -> FilePreview | None:  # a folder resource's own row has no preview
            if not (is_file_row or os.path.isfile(path)):
                return None
            text = reading.text_of(path) if reading is not None else None
            # as read for this question (what a decision covers); a binary or large file's beginning
            return preview_of_text(path, kind, text) if text is not None else preview_file(path, kind)

        self._preview = self.jobs.run(read, lambda result: self._show_preview(path, kind, result))

    def _show_preview(self, path: str, kind: str, result: object) -> None:
        if self._current_path() != path:
            return  # the selection moved on while this file was read
        if result is None:
            role = KIND_ROLES.get(kind, "")
            self._show_text(path, "", f"{role}. Select one of its files to read it." if role else "")
            return
        if isinstance(result, Exception):
            self._show_text(path, "", f"Cannot read this file: {result}")
            return
        assert isinstance(result, FilePreview)
        self.heading.setText(_heading_html(result, self.folder))
        self.content.setPlainText(result.text)
        self.note.setText(result.note)
        self.note.setVisible(bool(result.note))
        if path not in self._changes_by_path:
            self.tabs.setCurrentWidget(self.content)
        self.previewShown.emit(path)

    def _show_text(self, path: str, text: str, note: str) -> None:
        self.heading.setText(f"<b>{html.escape(display_path(path, self.folder), quote=False)}</b>")
        self.content.setPlainText(text)
        self.note.setText(note)
        self.note.setVisible(bool(note))

    def _current_path(self) -> Any:
        return self.tree.currentIndex().data(PATH_ROLE)

    def shutdown(self) -> None:
        self.jobs.shutdown()


def _heading_html(preview: FilePreview, folder: str) -> str:
    where = html.escape(display_path(preview.path, folder), quote=False)
    if not preview.heading:
        return f"<b>{where}</b>"
    text = f"<b>{html.escape(preview.heading, quote=False)}</b> <span style='color: gray'>{where}</span>"
    if preview.description:
        text += f"<br>{html.escape(preview.description, quote=False)}"
    return text


def _note_item(text: str) -> QStandardItem:
    item = QStandardItem(text)
    item.setEnabled(False)
    return item


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)
