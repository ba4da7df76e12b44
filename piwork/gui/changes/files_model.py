"""The changed files as list rows: reviewed tick, what happened, the path, lines added and removed."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor

from piwork.core.checkpoints import FileChange
from piwork.gui.inert_text import plain_tip

STATUS_LETTERS = {"added": "A", "modified": "M", "removed": "D"}
STATUS_WORDS = {"added": "created", "modified": "modified", "removed": "deleted"}


def file_line(change: FileChange, reviewed: bool) -> str:
    figures = f"  +{change.added} −{change.removed}" if change.hunks else "  (not compared)"
    return f"{'✓' if reviewed else '  '} {STATUS_LETTERS[change.status]}  {change.path}{figures}"


class FilesModel(QAbstractListModel):
    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._files: list[FileChange] = []
        self._marks: frozenset[str] = frozenset()
        self.dim = QColor("#808080")

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._files)

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._files):
            return None
        change = self._files[index.row()]
        reviewed = change.reviewed(self._marks)
        if role == Qt.ItemDataRole.DisplayRole:
            return file_line(change, reviewed)
        if role == Qt.ItemDataRole.ToolTipRole:
            tip = f"{change.path}: {STATUS_WORDS[change.status]}"
            if change.note:
                tip += f"; {change.note}"
            if reviewed:
                tip += " (reviewed)"
            return plain_tip(tip)
        if role == Qt.ItemDataRole.ForegroundRole and reviewed:
            return self.dim
        return None

    def set_files(self, files: tuple[FileChange, ...], marks: frozenset[str]) -> None:
        self.beginResetModel()
        self._files, self._marks = list(files), marks
        self.endResetModel()

    def set_marks(self, marks: frozenset[str]) -> None:
        self._marks = marks
        if self._files:
            self.dataChanged.emit(self.index(0, 0), self.index(len(self._files) - 1, 0))

    def file_at(self, row: int) -> FileChange | None:
        return self._files[row] if 0 <= row < len(self._files) else None

    def row_of(self, path: str) -> int:
        return next((i for i, f in enumerate(self._files) if f.path == path), -1)
