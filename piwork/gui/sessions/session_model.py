"""Table model of ``SessionInfo`` rows (lazy: rows are exposed a page at a time) and its search/sort proxy."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from datetime import datetime
from typing import Any

from PySide6.QtCore import QModelIndex, QObject, QSortFilterProxyModel, Qt
from PySide6.QtGui import QFont

from piwork.core.session import SessionInfo
from piwork.gui.flat_models import AnyIndex as Index
from piwork.gui.flat_models import FlatTableModel
from piwork.gui.inert_text import plain_tip
from piwork.gui.sessions.titles import first_message_title

InfoRole = Qt.ItemDataRole.UserRole + 1
SortRole = Qt.ItemDataRole.UserRole + 2
PAGE = 200

COLUMNS = ("Session", "Project", "Modified", "Created", "Messages")
COL_TITLE, COL_PROJECT, COL_MODIFIED, COL_CREATED, COL_COUNT = range(5)


def _created_ms(info: SessionInfo) -> float:
    try:
        return datetime.fromisoformat(info.created.replace("Z", "+00:00")).timestamp() * 1000
    except ValueError:
        return 0.0


def _when(ms: float) -> str:
    if not math.isfinite(ms) or ms <= 0:
        return "—"
    return datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M")


def title_of(info: SessionInfo) -> str:
    if info.name:
        return info.name
    lines = first_message_title(info.first_message).strip().splitlines()
    return lines[0][:200] if lines else "—"


class SessionListModel(FlatTableModel):
    columns = COLUMNS

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._all: list[SessionInfo] = []
        self._shown = 0

    def set_sessions(self, infos: list[SessionInfo]) -> None:
        with self.replacing_rows():
            self._all = list(infos)
            self._shown = min(PAGE, len(self._all))

    def shown_rows(self) -> int:
        return self._shown  # a page at a time: views ask for more as they scroll

    def sessions(self) -> list[SessionInfo]:
        return list(self._all)

    def remove_path(self, path: str) -> None:
        for i, info in enumerate(self._all[: self._shown]):
            if str(info.path) == path:
                with self.removing_rows(i, 1):
                    del self._all[i]
                    self._shown -= 1
                return
        self._all = [info for info in self._all if str(info.path) != path]

    def rename_path(self, path: str, name: str) -> None:
        for i, info in enumerate(self._all[: self._shown]):
            if str(info.path) == path:
                info.name = name or None
                self.rows_changed(i)
                return

    def fetch_all(self) -> None:
        """Expose every row (searching and re-sorting must see all of them)."""
        while self.canFetchMore():
            self.fetchMore()

    # lazy loading: views ask for more as they scroll
    def canFetchMore(self, parent: Index = QModelIndex()) -> bool:  # noqa: B008
        return not parent.isValid() and self._shown < len(self._all)

    def fetchMore(self, parent: Index = QModelIndex()) -> None:  # noqa: B008
        if parent.isValid():
            return
        extra = min(PAGE, len(self._all) - self._shown)
        if extra <= 0:
            return
        with self.appending_rows(extra):
            self._shown += extra

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not self.is_shown(index):
            return None
        info = self._all[index.row()]
        column = index.column()
        if role == InfoRole:
            return info
        if role == Qt.ItemDataRole.DisplayRole:
            if column == COL_TITLE:
                return title_of(info)
            if column == COL_PROJECT:
                marker = " ⚠" if info.cwd_mismatch else ""
                return (os.path.basename(info.cwd.rstrip("/\\")) or info.cwd or "—") + marker
            if column == COL_MODIFIED:
                return _when(info.modified_ms)
            if column == COL_CREATED:
                return _when(_created_ms(info))
            if column == COL_COUNT:
                return info.message_count
        if role == SortRole:
            return {
                COL_TITLE: title_of(info).lower(),
                COL_PROJECT: info.cwd.lower(),
                COL_MODIFIED: info.modified_ms if math.isfinite(info.modified_ms) else 0.0,
                COL_CREATED: _created_ms(info),
                COL_COUNT: info.message_count,
            }[column]
        if role == Qt.ItemDataRole.ToolTipRole:
            lines = [str(info.path), f"cwd: {info.cwd or '—'}"]
            if info.cwd_mismatch:
                lines.append("This file is in this project's folder but was started in another folder.")
            if info.parent_session_path:
                lines.append(f"branched from: {info.parent_session_path}")
            if info.first_message:
                lines.append("")
                lines.append(info.first_message[:500])
            return plain_tip("\n".join(lines))
        if role == Qt.ItemDataRole.FontRole and column == COL_TITLE and info.name:
            font = QFont()
            font.setBold(True)
            return font
        return None


class SessionFilterProxy(QSortFilterProxyModel):
    """Whitespace-separated, case-insensitive tokens must all occur; optionally named sessions only."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._tokens: list[str] = []
        self._named_only = False
        self.setSortRole(SortRole)
        self.setDynamicSortFilter(True)

    def set_query(self, text: str) -> None:
        self._change_filter(lambda: setattr(self, "_tokens", [t.lower() for t in text.split()]))

    def set_named_only(self, named_only: bool) -> None:
        self._change_filter(lambda: setattr(self, "_named_only", named_only))

    def _change_filter(self, change: Callable[[], None]) -> None:
        if hasattr(self, "beginFilterChange"):  # Qt >= 6.9; invalidateRowsFilter is deprecated there
            self.beginFilterChange()
            change()
            self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        else:
            change()
            self.invalidateRowsFilter()

    def filterAcceptsRow(self, source_row: int, source_parent: Index) -> bool:
        info = self.sourceModel().index(source_row, 0, source_parent).data(InfoRole)
        if not isinstance(info, SessionInfo):
            return False
        if self._named_only and not info.name:
            return False
        if not self._tokens:
            return True
        haystack = " ".join(
            (info.name or "", info.first_message, info.all_messages_text, info.cwd, info.id)
        ).lower()
        return all(token in haystack for token in self._tokens)
