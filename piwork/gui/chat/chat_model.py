"""The conversation as a list model over ``ChatRow`` objects.

Lazy by design: a long conversation exposes only its last ``window`` rows plus a "show earlier" row at the top,
so opening a session with thousands of messages lays out a few hundred rows, and streaming a delta touches one
row (``dataChanged``) instead of rebuilding anything. Built on ``FlatListModel`` (flat_models.py): the rows
shown are the exposed window plus the "show earlier" row.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Qt, Signal

from piwork.gui.chat.rows import ChatRow, RowKind
from piwork.gui.chat.tool_views import view_for
from piwork.gui.flat_models import AnyIndex, FlatListModel
from piwork.gui.inert_text import plain_tip

RowRole = Qt.ItemDataRole.UserRole + 1
KindRole = Qt.ItemDataRole.UserRole + 2
RevisionRole = Qt.ItemDataRole.UserRole + 3

DEFAULT_WINDOW = 200
PAGE = 200


class ChatModel(FlatListModel):
    rowChangedInPlace = Signal(int)  # visible row number whose content (and maybe height) changed
    rowsPrepended = Signal(int)  # that many rows came before all others: every position moved by it

    def __init__(self, window: int = DEFAULT_WINDOW, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[ChatRow] = []
        self._first = 0  # index into _rows of the first exposed row
        self._more_visible = False  # the "show earlier" row sits at visible row 0
        # row key -> its index in _rows minus _origin: rows prepended since the last reset count back from the
        # first row before them, so prepending (a long branch's earlier rows) does not renumber the others
        self._position: dict[int, int] = {}
        self._origin = 0
        self._window = window
        self._more = ChatRow(RowKind.MORE)

    # ---- Qt model API ------------------------------------------------------------------------

    def shown_rows(self) -> int:
        return len(self._rows) - self._first + (1 if self._more_visible else 0)

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not self.is_shown(index):
            return None
        row = self.row_at(index.row())
        if role == Qt.ItemDataRole.DisplayRole:
            if row.kind is RowKind.MORE:
                return "Show earlier messages"  # constant: the count changes as rows are revealed
            return row.plain_text()
        if role == RowRole:
            return row
        if role == KindRole:
            return str(row.kind)
        if role == RevisionRole:
            return row.revision
        if role == Qt.ItemDataRole.ToolTipRole and row.kind is RowKind.MORE:
            return plain_tip(self.more_label())
        if role == Qt.ItemDataRole.ToolTipRole and row.tool is not None:
            return plain_tip(view_for(row.tool.name).summary(row.tool))
        return None

    # ---- rows --------------------------------------------------------------------------------

    def row_at(self, visible: int) -> ChatRow:
        if self._more_visible:
            if visible == 0:
                return self._more
            return self._rows[self._first + visible - 1]
        return self._rows[self._first + visible]

    def visible_index_of(self, row: ChatRow) -> int | None:
        return self.visible_index_of_key(row.key)

    def visible_index_of_key(self, key: int) -> int | None:
        i = self._position.get(key)
        if i is None:
            return None
        i += self._origin
        if i < self._first:
            return None
        return i - self._first + (1 if self._more_visible else 0)

    # Positions count every row of the conversation, those behind "show earlier" too, from 0; rows are only
    # appended, so a position names the same row until the rows are replaced (text selections keep them).

    def position_of_key(self, key: int) -> int | None:
        i = self._position.get(key)
        return None if i is None else i + self._origin

    def position_of_visible(self, visible: int) -> int:
        """The position of the row at ``visible`` (the "show earlier" row: the first row shown after it)."""
        return self._first + max(0, visible - (1 if self._more_visible else 0))

    def visible_of_position(self, position: int) -> int | None:
        if not self._first <= position < len(self._rows):
            return None
        return position - self._first + (1 if self._more_visible else 0)

    def row_at_position(self, position: int) -> ChatRow | None:
        return self._rows[position] if 0 <= position < len(self._rows) else None

    def rows_between(self, first: int, last: int) -> list[ChatRow]:
        """The rows at positions ``first`` to ``last``, both included."""
        return self._rows[max(0, first) : max(0, last + 1)]

    def total_rows(self) -> int:
        return len(self._rows)

    def all_rows(self) -> list[ChatRow]:
        return list(self._rows)

    def more_label(self) -> str:
        return f"Show {self._first:,} earlier item{'s' if self._first != 1 else ''}"

    @property
    def hidden_count(self) -> int:
        return self._first

    def reset_rows(self, rows: list[ChatRow]) -> None:
        with self.replacing_rows():
            self._rows = list(rows)
            self._position = {row.key: i for i, row in enumerate(self._rows)}
            self._origin = 0
            self._first = max(0, len(self._rows) - self._window)
            self._more_visible = self._first > 0

    def prepend_rows(self, rows: list[ChatRow], positions: dict[int, int] | None = None) -> bool:
        """Put ``rows`` (older than all others) before the first row, behind "show earlier" (which must be
        shown: the rows shown do not change). False (nothing done) when it is not shown. ``positions``: the
        rows' :func:`prepended_positions`, made where the rows were built (the model takes the dict over)."""
        if not rows:
            return True
        if not self._more_visible:
            return False
        count = len(rows)
        self._rows[:0] = rows
        self._first += count
        if positions is None or self._origin:
            positions = prepended_positions(rows, self._origin)
        self._origin += count
        positions.update(self._position)  # the rows shown so far: a few hundred, not a long branch's worth
        self._position = positions
        self.rowsPrepended.emit(count)
        self.rows_changed(0)  # its tooltip counts the rows still hidden
        return True

    def append_rows(self, rows: list[ChatRow]) -> None:
        with self.appending_rows(len(rows)):
            for row in rows:
                self._position[row.key] = len(self._rows) - self._origin
                self._rows.append(row)

    def clear(self) -> None:
        self.reset_rows([])

    def show_earlier(self, count: int = PAGE) -> int:
        """Expose up to ``count`` more of the older rows; returns how many were added."""
        if not self._first:
            return 0
        count = min(count, self._first)
        with self.inserting_rows(1, count):  # below the "show earlier" row
            self._first -= count
        if self._first == 0:
            with self.removing_rows(0, 1):
                self._more_visible = False
        else:
            self.rows_changed(0)  # its tooltip counts the rows still hidden
        return count

    def notify_changed(self, row: ChatRow) -> None:
        """``row`` changed in place (``row.revision`` already bumped)."""
        visible = self.visible_index_of(row)
        if visible is None:
            return
        self.rows_changed(visible)
        self.rowChangedInPlace.emit(visible)


def prepended_positions(rows: list[ChatRow], origin: int = 0) -> dict[int, int]:
    """The positions :meth:`ChatModel.prepend_rows` keeps for ``rows`` put before a model's rows (``origin``:
    the rows that model had prepended already). Pure Python: build it where the rows are built."""
    back = len(rows) + origin
    return {row.key: i - back for i, row in enumerate(rows)}
