"""The companion of ``flat_models`` for models whose rows have children.

A flat model is one count of rows at the top level; here every parent has its own count and every
change names the parent it happens under, so these bases answer ``index``/``parent``/``rowCount``
themselves. The rest is shared with the flat models: columns and header titles from ``NamedColumns``,
the replace/insert/remove notices from ``RowNotices``. Two shapes:

- ``GroupedRows``: two levels, groups and their members (search hits under their session, resources
  under their kind, governor decisions and the results they elided). A position is enough to find a
  row: a group's internal id is 0 and a member's is its group's row + 1, so no Python object has to
  stay alive behind an index, and groups can be appended while members are shown.
- ``NestedRows``: any depth, over ``nodes``, a ``Hierarchy`` of stable node numbers (the session tree: entries
  under entries, long lists split into group rows). A node's internal id is its number, so finding a
  row's parent is a dictionary hit and indexes stay right when rows are added elsewhere.

Laziness stays with the models: a grouped model shows members only when a view expands their group,
and the session tree puts long lists into groups a view lays out only when expanded.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import ClassVar, Protocol

from PySide6.QtCore import QModelIndex, Qt

from piwork.gui.flat_models import AnyIndex, NamedColumns, RowNotices

_GROUP = 0  # internal id of a group row in a GroupedRows model


class GroupedRows(NamedColumns, RowNotices):
    """Groups at the top level, their members one level down; ``columns`` as in ``NamedColumns``."""

    columns: ClassVar[tuple[str, ...]] = ("",)

    def group_count(self) -> int:
        """How many groups the views may see now (every grouped model defines it)."""
        raise NotImplementedError(f"{type(self).__name__} does not say how many groups it shows")

    def member_count(self, group: int) -> int:
        """How many members group number ``group`` holds (every grouped model defines it)."""
        raise NotImplementedError(f"{type(self).__name__} does not say how many members a group holds")

    @staticmethod
    def group_of(index: AnyIndex) -> int | None:
        """The group number a member row belongs to; None for a group row (or no row)."""
        if not index.isValid() or index.internalId() == _GROUP:
            return None
        return int(index.internalId()) - 1

    @staticmethod
    def is_group(index: AnyIndex) -> bool:
        return index.isValid() and index.internalId() == _GROUP

    @contextmanager
    def appending_groups(self, count: int) -> Iterator[None]:
        """Wrap adding ``count`` groups after the shown ones (nothing is announced for ``count`` 0)."""
        with self.inserting_rows(self.group_count(), count):
            yield

    def index(self, row: int, column: int = 0, parent: AnyIndex = QModelIndex()) -> QModelIndex:  # noqa: B008
        if row < 0 or not 0 <= column < len(self.columns):
            return QModelIndex()
        if not parent.isValid():
            return self.createIndex(row, column, _GROUP) if row < self.group_count() else QModelIndex()
        group = parent.row()
        if parent.internalId() != _GROUP or group >= self.group_count() or row >= self.member_count(group):
            return QModelIndex()
        return self.createIndex(row, column, group + 1)

    def parent(self, index: AnyIndex = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        group = self.group_of(index)
        return QModelIndex() if group is None else self.createIndex(group, 0, _GROUP)

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        if not parent.isValid():
            return self.group_count()
        if parent.internalId() == _GROUP and parent.column() == 0 and parent.row() < self.group_count():
            return self.member_count(parent.row())
        return 0

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable


class Hierarchy(Protocol):
    """Nodes (stable numbers) and where each sits: what ``NestedRows`` reads to answer views."""

    @property
    def rows(self) -> Mapping[int | None, Sequence[int]]:
        """The nodes under each parent in order (``None``: the top level); a leaf may be absent."""
        ...

    @property
    def container(self) -> Mapping[int, int | None]:
        """The parent of each shown node (``None`` or absent: the top level)."""
        ...

    @property
    def row(self) -> Mapping[int, int]:
        """Each shown node's position under its parent."""
        ...


class NestedRows(NamedColumns, RowNotices):
    """Rows of any depth over ``nodes``; an index's internal id is its node number.

    A model sets ``nodes`` when it is made and whenever it replaces them (inside ``replacing_rows``).
    ``index``/``parent``/``rowCount`` run once per shown row whenever a view lays itself out (tens of
    thousands of calls for a big session), so they stay minimal and read ``nodes`` as a plain attribute.
    ``flags`` and ``hasChildren`` are left to Qt's defaults (selectable + enabled, and ``rowCount() > 0``)."""

    columns: ClassVar[tuple[str, ...]] = ("",)
    nodes: Hierarchy  # the nodes the views may see now

    def index(self, row: int, column: int = 0, parent: AnyIndex = QModelIndex()) -> QModelIndex:  # noqa: B008
        rows = self.nodes.rows.get(parent.internalId() if parent.isValid() else None)
        if rows is None or column != 0 or not 0 <= row < len(rows):
            return QModelIndex()
        return self.createIndex(row, 0, rows[row])

    def parent(self, index: AnyIndex = QModelIndex()) -> QModelIndex:  # type: ignore[override]  # noqa: B008
        if not index.isValid():
            return QModelIndex()
        nodes = self.nodes
        container = nodes.container.get(index.internalId())
        if container is None:
            return QModelIndex()
        return self.createIndex(nodes.row[container], 0, container)

    def rowCount(self, parent: AnyIndex = QModelIndex()) -> int:  # noqa: B008
        rows = self.nodes.rows.get(parent.internalId() if parent.isValid() else None)
        return len(rows) if rows is not None and parent.column() <= 0 else 0

    def index_of_node(self, node: int | None) -> QModelIndex:
        """The row of a shown node (an invalid index for ``None``, the top level, or a node not shown)."""
        row = self.nodes.row.get(node) if node is not None else None
        return QModelIndex() if row is None else self.createIndex(row, 0, node)

    def node_changed(self, node: int | None) -> bool:
        """Tell the views a shown node's row changed; False when it is not shown."""
        index = self.index_of_node(node)
        if index.isValid():
            self.dataChanged.emit(index, index)
        return index.isValid()
