"""A flat, lazy list model of rows that may point at a session entry (click to jump there).

Rows are computed on demand by `text_of(row)`, so a list of 100k entries of a branch costs nothing
until it is scrolled. `entry_id_of(row)` (ENTRY_ID_ROLE) is what the dialogs jump to.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QModelIndex, QObject, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor

from piwork.gui.flat_models import FlatListModel
from piwork.gui.inert_text import plain_tip
from piwork.gui.tree.tree_model import ENTRY_ID_ROLE

AnyIndex = QModelIndex | QPersistentModelIndex
_FAILED = QBrush(QColor(190, 40, 40))


class EntryListModel(FlatListModel):
    def __init__(
        self,
        count: int,
        text_of: Callable[[int], str],
        entry_id_of: Callable[[int], str | None] = lambda _row: None,
        *,
        tooltip_of: Callable[[int], str | None] = lambda _row: None,
        failed: Callable[[int], bool] = lambda _row: False,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._count = count
        self._text_of = text_of
        self._entry_id_of = entry_id_of
        self._tooltip_of = tooltip_of
        self._failed = failed

    def shown_rows(self) -> int:
        return self._count

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not self.is_shown(index):
            return None
        row = index.row()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._text_of(row)
        if role == ENTRY_ID_ROLE:
            return self._entry_id_of(row)
        if role == Qt.ItemDataRole.ToolTipRole:
            return plain_tip(self._tooltip_of(row))
        if role == Qt.ItemDataRole.ForegroundRole and self._failed(row):
            return _FAILED
        return None
