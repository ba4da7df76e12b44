"""ResourceRowsModel: the engine's resource-panel rows grouped by kind, in precedence order.

Top-level rows are the kinds (context files, skills, prompt templates, system prompt, appended
prompt); their children are the engine's `ResourceRow`s in the order the engine gives (first =
highest precedence). Rows that do not reach the model (blocked, disabled, shadowed, losers) are
greyed, and their tooltip says why. Built on the two-level `GroupedRows` base (nested_models.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QAbstractItemModel, Qt
from PySide6.QtGui import QBrush, QColor, QFont

from piwork.core.paths import named_path
from piwork.core.resources import MCP_NOTE, ResourceRow
from piwork.gui.flat_models import AnyIndex
from piwork.gui.inert_text import plain_tip
from piwork.gui.nested_models import GroupedRows

ROW_ROLE = Qt.ItemDataRole.UserRole + 1
KINDS = (
    ("context", "Context files"),
    ("skill", "Skills"),
    ("prompt", "Prompt templates"),
    ("system", "System prompt"),
    ("append", "Appended system prompt"),
    ("settings", "Settings files"),
    ("mcp", "MCP servers (read by Pi)"),
    ("profile", "Project profile"),
    ("project-context", "Project context (snapshot, index, memory)"),
)
COLUMNS = ("Rank", "Name", "Scope", "State", "Path")
# Where a skill or template comes from decides its rank (its precedence): the engine's origin ranks.
RANK_WORDS = {
    0: "this project's settings",
    1: "this project's folders",
    2: "your settings",
    3: "your folders",
    4: "packages",
}
RANK_LEGEND = (
    "Rank: precedence, lowest wins. Skills and templates by origin: "
    + ", ".join(f"{rank} {words}" for rank, words in RANK_WORDS.items())
    + " (a number no row shows: nothing comes from there). Other files: the order they are read."
)
RANK_NOTE = "Rank: precedence, lowest wins; a missing number is an origin nothing comes from."
COLUMN_TIPS = (
    "Precedence: lower numbers win. " + RANK_LEGEND.split(". ", 1)[1],
    "The resource's name (a skill or template name, or the file name)",
    "Where it comes from: this project or your user folder",
    "Whether the model is told about it, and if not, why",
    "The file on disk: relative to the project inside it, ~/… in your home folder",
)
# The words shown for each engine state (the engine's identifiers stay in tooltips and files).
STATE_WORDS = {
    "active": "in effect",
    "not-selected": "not chosen",
    "shadowed": "shadowed",
    "collision-loser": "shadowed",
    "disabled": "turned off",
    "blocked-untrusted": "needs trust",
    "error": "error",
    "not-used": "not used by piwork",
}
INACTIVE_STATES = {
    "not-selected",
    "shadowed",
    "collision-loser",
    "disabled",
    "blocked-untrusted",
    "error",
    "not-used",
}
_GREY = QBrush(QColor(140, 140, 140))
_WARNING = QBrush(QColor(190, 110, 0))


def state_reason(row: ResourceRow, project: str | None = None) -> str:
    """Why a row is (not) in effect, in words (files named as the panel names them: see `named_path`)."""
    winner = named_path(row.winner_path, project) if row.winner_path else None
    reasons = {
        "active": "In effect.",
        "not-selected": "Another file in the same folder was chosen (only one context file per folder).",
        "shadowed": "Shadowed by a file with higher precedence" + (f": {winner}" if winner else "."),
        "collision-loser": f"A skill or template with this name already loaded from {winner or 'elsewhere'}.",
        "disabled": "Disabled by a setting or a command-line switch.",
        "blocked-untrusted": "Not loaded: this project folder is not trusted.",
        "error": "Could not be loaded (see warnings).",
        "not-used": "Not used by piwork.",
    }
    text = reasons.get(row.state, row.state)
    if row.kind == "mcp":
        text += f" {MCP_NOTE}."
    if row.kind == "skill" and row.state == "active" and not row.model_visible:
        text += " Hidden from the model (disable-model-invocation); usable as /skill:" + row.name
    return text


class ResourceRowsModel(GroupedRows, QAbstractItemModel):
    columns = COLUMNS
    column_tips = COLUMN_TIPS

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._groups: list[tuple[str, str, list[ResourceRow]]] = []
        self.project: str | None = None  # paths inside it are named relative to it
        self._bold = QFont()
        self._bold.setBold(True)

    def set_rows(self, rows: Sequence[ResourceRow], project: str | None = None) -> None:
        with self.replacing_rows():
            self.project = project
            self._groups = []
            for kind, title in KINDS:
                members = [r for r in rows if r.kind == kind]
                if members:
                    self._groups.append((kind, title, members))
            known = {k for k, _t in KINDS}
            extra = [r for r in rows if r.kind not in known]
            if extra:
                self._groups.append(("other", "Other", extra))

    def group_rows(self, kind: str) -> list[ResourceRow]:
        return next((members for k, _t, members in self._groups if k == kind), [])

    def row_at(self, index: AnyIndex) -> ResourceRow | None:
        group = self.group_of(index)
        return None if group is None else self._groups[group][2][index.row()]

    def group_count(self) -> int:
        return len(self._groups)

    def member_count(self, group: int) -> int:
        return len(self._groups[group][2])

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid():
            return None
        group = self.group_of(index)
        if group is None:
            _kind, title, members = self._groups[index.row()]
            if role == Qt.ItemDataRole.DisplayRole and index.column() == 0:
                active = sum(1 for r in members if r.state == "active")
                return f"{title} ({active} of {len(members)} in effect)"
            if role == Qt.ItemDataRole.FontRole:
                return self._bold
            return None
        row = self._groups[group][2][index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return self._cell(row, index.row(), index.column(), self.project)
        if role == ROW_ROLE:
            return row
        if role == Qt.ItemDataRole.ForegroundRole:
            if row.state in INACTIVE_STATES:
                return _GREY
            return _WARNING if row.diagnostics else None
        if role == Qt.ItemDataRole.ToolTipRole:
            warnings = "\n".join(f"⚠ {d.message}" for d in row.diagnostics)
            gate = "\nNeeds project trust." if row.trust_gated else ""
            rank = f"\nRank {row.rank}: {RANK_WORDS[row.rank]}." if row.rank in RANK_WORDS else ""
            reason = state_reason(row, self.project)
            where = f"\nFrom: {self._cell(row, index.row(), 2, self.project)}"
            tip = f"{row.path}{where}\n{reason}{gate}{rank}"
            return plain_tip(tip + (f"\n{warnings}" if warnings else ""))
        return None

    @staticmethod
    def _cell(row: ResourceRow, position: int, column: int, project: str | None) -> str:
        if column == 0:
            return str(row.rank if row.rank is not None else position + 1)
        if column == 1:  # the winner of a shadowed row is named in its tooltip and below the table
            return row.name + (" ⚠" if row.diagnostics else "")
        if column == 2:
            return row.scope + (f" ({row.settings_scope} settings)" if row.settings_scope else "")
        if column == 3:
            return STATE_WORDS.get(row.state, row.state)
        return named_path(row.path, project) if row.path else ""
