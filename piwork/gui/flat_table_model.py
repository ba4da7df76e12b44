"""The shared part of the window's flat table models: named columns, headers, flags, change notification.

A subclass says how many rows it shows now (``shown_rows``: a lazy model exposes only what it has fetched)
and answers ``data``; row counts, column counts, header titles and selectable cells come from here, as do
the helpers that tell views about a changed row or a replaced set of rows.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

AnyIndex = QModelIndex | QPersistentModelIndex


class FlatTableModel(QAbstractTableModel):
    """Rows without children under named ``columns`` (the header titles, in order)."""

    columns: ClassVar[tuple[str, ...]] = ()

    def shown_rows(self) -> int:
        """How many rows the views may see now."""
        raise NotImplementedError

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else self.shown_rows()

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.columns)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.columns[section] if 0 <= section < len(self.columns) else None
        return None

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemNeverHasChildren

    def is_shown(self, index: AnyIndex) -> bool:
        """``index`` is a cell of a row the views can see (and not a child of one)."""
        return index.isValid() and not index.parent().isValid() and 0 <= index.row() < self.shown_rows()

    def row_changed(self, row: int) -> None:
        """Tell the views every cell of ``row`` changed."""
        self.dataChanged.emit(self.index(row, 0), self.index(row, max(0, len(self.columns) - 1)))

    @contextmanager
    def replacing_rows(self) -> Iterator[None]:
        """Wrap a change of every row (a new list): views drop what they knew and ask again."""
        self.beginResetModel()
        try:
            yield
        finally:
            self.endResetModel()
