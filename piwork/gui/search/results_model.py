"""Search results as a two-level model: one row per session, its matching entries under it.

Sessions are appended as the worker reports each one (an insert, not a reset), so a long search shows
its first results at once and the view never re-lays out what it already shows. Built on the
two-level ``GroupedRows`` base (nested_models.py).
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from PySide6.QtCore import QAbstractItemModel, QModelIndex, Qt

from piwork.core.session import SESSION_NAME, SearchHit, SessionHits
from piwork.gui.flat_models import AnyIndex
from piwork.gui.inert_text import plain_tip
from piwork.gui.nested_models import GroupedRows
from piwork.gui.sessions.titles import first_message_title

HitRole = Qt.ItemDataRole.UserRole + 1  # the SearchHit of an entry row (None on a session row)
PathRole = Qt.ItemDataRole.UserRole + 2  # the session file of either kind of row
HtmlRole = Qt.ItemDataRole.UserRole + 3  # rich text the delegate paints


def where_text(hit: SearchHit) -> str:
    """Which text matched and on which branch, e.g. ``tool output (bash) · abandoned branch “plan-b”``
    (named by its label, its first prompt or the entry it leaves from, as the tree shows them; the
    session's name is on no branch in particular)."""
    kind = f"{hit.kind} ({hit.detail})" if hit.detail else hit.kind
    if hit.kind == SESSION_NAME:
        return kind
    if hit.on_active_path:
        return f"{kind} · active branch"
    if hit.branch_name:
        return f"{kind} · abandoned branch {hit.branch_name}"
    if hit.branch_point:
        return f"{kind} · abandoned branch"
    return f"{kind} · separate branch"


def snippet_html(hit: SearchHit) -> str:
    out: list[str] = []
    at = 0
    for start, end in hit.spans:
        if start < at:
            continue
        out.append(html.escape(hit.snippet[at:start]))
        out.append("<b>" + html.escape(hit.snippet[start:end]) + "</b>")
        at = end
    out.append(html.escape(hit.snippet[at:]))
    return "".join(out)


def session_title(result: SessionHits, show_cwd: bool = False) -> str:
    first = " ".join(first_message_title(result.first_message).split())
    title = result.name or (first if len(first) <= 70 else first[:69] + "…") or result.path.name
    count = f"{result.total} match" + ("" if result.total == 1 else "es")
    if result.more:
        count = f"first {result.total} matches; more in this session"
    where = f" — {result.cwd}" if show_cwd and result.cwd else ""
    return f"{title} ({count}){where}"


class SearchResultsModel(GroupedRows, QAbstractItemModel):
    """Sessions are the groups, their hits the members."""

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self.sessions: list[SessionHits] = []
        self.show_cwd = False

    @property
    def hit_count(self) -> int:
        return sum(len(s.hits) for s in self.sessions)

    def clear(self) -> None:
        with self.replacing_rows():
            self.sessions = []

    def add(self, result: SessionHits) -> QModelIndex:
        row = len(self.sessions)
        with self.appending_groups(1):
            self.sessions.append(result)
        return self.index(row, 0)

    def hit_at(self, index: AnyIndex) -> tuple[Path, SearchHit] | None:
        group = self.group_of(index)
        if group is None:
            return None
        session = self.sessions[group]
        return session.path, session.hits[index.row()]

    # -- Qt model interface ---------------------------------------------------------------------
    def group_count(self) -> int:
        return len(self.sessions)

    def member_count(self, group: int) -> int:
        return len(self.sessions[group].hits)

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        group = self.group_of(index)
        if group is None:
            result = self.sessions[index.row()]
            if role == Qt.ItemDataRole.DisplayRole:
                return session_title(result, self.show_cwd)
            if role == HtmlRole:
                return "<b>" + html.escape(session_title(result, self.show_cwd)) + "</b>"
            if role == Qt.ItemDataRole.ToolTipRole:
                return plain_tip(str(result.path))
            if role == PathRole:
                return str(result.path)
            return None
        session = self.sessions[group]
        hit = session.hits[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return f"{where_text(hit)}: {hit.snippet}"
        if role == HtmlRole:
            colour = "#2e7d32" if hit.on_active_path else "#b26a00"
            return (
                f'<span style="color:{colour}">{html.escape(where_text(hit))}</span>'
                f"&nbsp;&nbsp;{snippet_html(hit)}"
            )
        if role == Qt.ItemDataRole.ToolTipRole:
            return plain_tip(f"{where_text(hit)}\nentry {hit.entry_id} · {hit.timestamp}\n{session.path}")
        if role == HitRole:
            return hit
        if role == PathRole:
            return str(session.path)
        return None
