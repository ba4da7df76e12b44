"""The shared part of the window's hand-written models: rows, columns, headers, flags, change notices.

A flat model says how many rows it shows now (``shown_rows``: a lazy model exposes only what it has fetched
or indexed so far) and answers ``data``; row and column counts, header titles and tips, selectable cells
come from here, as do the helpers that tell views about changed, appended or replaced rows. Models whose
rows have children (groups, the session tree) build on the companion bases in ``nested_models``, which
take their columns and headers from ``NamedColumns`` and their change notices from ``RowNotices``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, ClassVar

from PySide6.QtCore import QAbstractListModel, QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

AnyIndex = QModelIndex | QPersistentModelIndex
# a view asks for every visible cell's flags at each paint: combined once, not per call
_CELL_FLAGS = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemNeverHasChildren

if TYPE_CHECKING:
    from PySide6.QtCore import QAbstractItemModel as _ModelBase
else:
    _ModelBase = object  # a mixin: the Qt model class comes with the concrete base below


class RowNotices(_ModelBase):
    """Wrappers that tell views rows are replaced, inserted or removed, so a model never pairs
    ``begin…``/``end…`` calls by hand (the ``end`` runs even when the change raises)."""

    @contextmanager
    def replacing_rows(self) -> Iterator[None]:
        """Wrap a change of every row (a new list): views drop what they knew and ask again."""
        self.beginResetModel()
        try:
            yield
        finally:
            self.endResetModel()

    @contextmanager
    def inserting_rows(self, first: int, count: int, parent: AnyIndex = QModelIndex()) -> Iterator[None]:  # noqa: B008
        """Wrap adding ``count`` rows at ``first`` under ``parent`` (nothing is announced for ``count`` 0)."""
        if count <= 0:
            yield
            return
        self.beginInsertRows(parent, first, first + count - 1)
        try:
            yield
        finally:
            self.endInsertRows()

    @contextmanager
    def removing_rows(self, first: int, count: int, parent: AnyIndex = QModelIndex()) -> Iterator[None]:  # noqa: B008
        """Wrap taking away ``count`` rows from ``first`` under ``parent`` (nothing is announced for 0)."""
        if count <= 0:
            yield
            return
        self.beginRemoveRows(parent, first, first + count - 1)
        try:
            yield
        finally:
            self.endRemoveRows()


class FlatRows(RowNotices):
    """Rows without children; ``columns`` are the header titles (one unnamed column for a list)."""

    columns: ClassVar[tuple[str, ...]] = ("",)

    def shown_rows(self) -> int:
        """How many rows the views may see now; every model built on this base defines it (a Qt model
        class cannot also be an ``abc.ABC``, so the missing override fails here, loudly)."""
        raise NotImplementedError(f"{type(self).__name__} does not say how many rows it shows")

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else self.shown_rows()

    def is_shown(self, index: AnyIndex) -> bool:
        """``index`` is a cell of a row the views can see (and not a child of one)."""
        return index.isValid() and not index.parent().isValid() and 0 <= index.row() < self.shown_rows()

    def rows_changed(self, first: int, last: int | None = None, roles: Sequence[int] = ()) -> None:
        """Tell the views the cells of rows ``first``..``last`` changed (only ``roles``, when given)."""
        end = first if last is None else last
        self.dataChanged.emit(
            self.index(first, 0), self.index(end, max(0, len(self.columns) - 1)), list(roles)
        )

    @contextmanager
    def appending_rows(self, count: int) -> Iterator[None]:
        """Wrap adding ``count`` rows after the shown ones (nothing is announced for ``count`` 0)."""
        with self.inserting_rows(self.shown_rows(), count):
            yield


class NamedColumns(_ModelBase):
    """Columns named by ``columns`` (header titles) with optional ``column_tips`` (header tooltips)."""

    columns: ClassVar[tuple[str, ...]] = ()
    column_tips: ClassVar[tuple[str, ...]] = ()

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return len(self.columns)

    def headerData(
        self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole
    ) -> Any:
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self.columns[section] if 0 <= section < len(self.columns) else None
        if role == Qt.ItemDataRole.ToolTipRole:
            return self.column_tips[section] if 0 <= section < len(self.column_tips) else None
        return None


class FlatTableModel(FlatRows, NamedColumns, QAbstractTableModel):
    """A flat table under named ``columns``."""

    columns: ClassVar[tuple[str, ...]] = ()

    def columnCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.columns)

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        return _CELL_FLAGS if index.isValid() else Qt.ItemFlag.NoItemFlags


class FlatListModel(FlatRows, QAbstractListModel):
    """A flat list: one unnamed column."""
