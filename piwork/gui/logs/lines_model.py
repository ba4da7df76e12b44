"""A list model over a `LineIndex`: one row per line, text decoded only when a row is shown.

Rows appear as the index grows (`sync_rows` after each indexing batch). Decoded rows live in a
small LRU cache, so scrolling a 1 GB file touches only the lines on screen.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt

from piwork.gui.flat_models import FlatListModel
from piwork.gui.logs.sgr import Span, parse_sgr_spans, strip_ansi

if TYPE_CHECKING:
    from piwork.gui.logs.line_index import LineIndex

SPANS_ROLE = Qt.ItemDataRole.UserRole + 1
MATCH_ROLE = Qt.ItemDataRole.UserRole + 2
CLIPPED_ROLE = Qt.ItemDataRole.UserRole + 3
MAX_DISPLAY_CHARS = 4000
_CACHE_ROWS = 4000
_MAX_ROWS = 2**31 - 1

AnyIndex = QModelIndex | QPersistentModelIndex


class LogLinesModel(FlatListModel):
    def __init__(self, index: LineIndex, parent: Any = None) -> None:
        super().__init__(parent)
        self._index = index
        self._rows = 0
        self._cache: OrderedDict[int, tuple[str, list[Span], bool]] = OrderedDict()
        self._matches: set[int] = set()

    def sync_rows(self) -> None:
        """Expose lines indexed since the last call."""
        known = min(self._index.line_count, _MAX_ROWS)
        with self.appending_rows(known - self._rows):
            self._rows = max(self._rows, known)

    def shown_rows(self) -> int:
        return self._rows  # lines indexed so far: the index grows in the background

    def _decoded(self, row: int) -> tuple[str, list[Span], bool]:
        cached = self._cache.get(row)
        if cached is not None:
            self._cache.move_to_end(row)
            return cached
        data, length = self._index.line_bytes(row)
        text = data.decode("utf-8", errors="replace").replace("\r", "")
        clipped = length > len(data) or len(text) > MAX_DISPLAY_CHARS
        spans = parse_sgr_spans(text[:MAX_DISPLAY_CHARS])
        plain = "".join(span.text for span in spans)
        entry = (plain, spans, clipped)
        self._cache[row] = entry
        if len(self._cache) > _CACHE_ROWS:
            self._cache.popitem(last=False)
        return entry

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not self.is_shown(index):
            return None
        row = index.row()
        if role == Qt.ItemDataRole.DisplayRole:
            return self._decoded(row)[0]
        if role == SPANS_ROLE:
            return self._decoded(row)[1]
        if role == CLIPPED_ROLE:
            return self._decoded(row)[2]
        if role == MATCH_ROLE:
            return row in self._matches
        return None

    def full_line_text(self, row: int) -> str:
        """The whole line without escape codes (for copying and sending to the chat)."""
        return strip_ansi(self._index.line_text(row, limit=1 << 24).replace("\r", ""))

    def set_matches(self, lines: set[int]) -> None:
        changed = self._matches ^ lines
        self._matches = set(lines)
        self._refresh(changed)

    def add_matches(self, lines: list[int]) -> None:
        new = [line for line in lines if line not in self._matches]
        self._matches.update(new)
        self._refresh(new)

    def _refresh(self, rows: Any) -> None:
        visible = [r for r in rows if r < self._rows]
        if visible:
            self.rows_changed(min(visible), max(visible), [MATCH_ROLE])
