"""X-ray tab model: every source of the next request with its tokens and share, largest first.

A flat table over the engine's ``Xray`` parts; each row also knows where it jumps to (a chat message, a
tool result, a context file or skill, a tool schema). Sorting happens once per refresh on a list of ints,
so a session of thousands of messages stays cheap; the view asks only for the rows it shows.

While the tokenizer is still counting a session's messages, those rows say "counting…" (after the counted
ones) and no row shows a share: the counted tokens are exact, the total is not known yet.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QColor

from piwork.core.context import CUSTOM_TYPE_WORDS, Xray, XrayPart
from piwork.core.paths import named_path
from piwork.gui.context.reading import compact_tokens
from piwork.gui.flat_models import AnyIndex, FlatTableModel
from piwork.gui.inert_text import plain_tip

TargetRole = Qt.ItemDataRole.UserRole + 1
TokensRole = Qt.ItemDataRole.UserRole + 2

KIND_TITLES = {
    "system": "system prompt",
    "context_file": "context file",
    "skills": "skills",
    "tool_schema": "tool schema",
    "user": "user",
    "assistant": "assistant",
    "tool_result": "tool result",
    "custom": "custom",
    "bash": "user shell",
    "compaction_summary": "summary",
    "branch_summary": "summary",
}
COLUMNS = ("Source", "Kind", "Tokens", "Share")
# made once: a view asks for them for every visible cell after each update, and combining two Qt flags
# (or building a colour) costs microseconds of Python each time
_DISPLAY = Qt.ItemDataRole.DisplayRole
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_GREY = QColor("#8a8a92")


@dataclass(frozen=True)
class JumpTarget:
    """Where a row leads: ``kind`` is "message" (``message_index`` into the request's messages; a tool
    result also has ``tool_call_id``), "resource" (``path`` of a context file, or "skills"), or "tool"."""

    kind: str
    message_index: int | None = None
    tool_call_id: str | None = None
    path: str | None = None


@dataclass(frozen=True)
class XrayRow:
    part: XrayPart
    target: JumpTarget | None
    elided: bool = False  # the governor sends a stub in place of this tool result


_MESSAGE_KINDS = frozenset(
    {"user", "assistant", "tool_result", "custom", "bash", "compaction_summary", "branch_summary"}
)


def rows_for(
    xray: Xray, message_parts_index: list[int] | None, elided: frozenset[int] = frozenset()
) -> list[XrayRow]:
    """Rows with jump targets; ``message_parts_index[i]`` is the message index of the i-th message part;
    ``elided`` holds the indices of messages the governor replaced with a stub."""
    rows: list[XrayRow] = []
    seen_messages = 0
    for part in xray.parts:
        target: JumpTarget | None = None
        if part.kind in _MESSAGE_KINDS:
            index = None
            if message_parts_index is not None and seen_messages < len(message_parts_index):
                index = message_parts_index[seen_messages]
            seen_messages += 1
            call_id = part.ref if part.kind == "tool_result" else None
            target = JumpTarget("message", index, call_id)
            if index is not None and index in elided:
                rows.append(XrayRow(part, target, elided=True))
                continue
        elif part.kind == "context_file":
            target = JumpTarget("resource", path=part.ref)
        elif part.kind == "skills":
            target = JumpTarget("resource", path="skills")
        elif part.kind == "tool_schema":
            target = JumpTarget("tool", path=part.ref)
        rows.append(XrayRow(part, target))
    return rows


@dataclass(frozen=True)
class XrayTable:
    """The rows of one X-ray and their display order (largest first, rows still counting last): built in
    the feed's worker so a refresh of thousands of rows costs the GUI thread only the model reset."""

    rows: list[XrayRow]
    order: list[int]  # display position -> index in rows


def xray_table(
    xray: Xray, message_parts_index: list[int] | None, elided: frozenset[int] = frozenset()
) -> XrayTable:
    rows = rows_for(xray, message_parts_index, elided)
    order = sorted(range(len(rows)), key=lambda i: (rows[i].part.counting, -rows[i].part.tokens, i))
    return XrayTable(rows, order)


class XrayModel(FlatTableModel):
    columns = COLUMNS

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._rows: list[XrayRow] = []
        self._order: list[int] = []  # display position -> index in _rows (tokens descending)
        self.total = 0
        self.tokenizer = ""
        self.counting = 0  # rows not counted yet
        self.project_dir: str | None = None  # context files inside it show relative to it

    def set_project_dir(self, project_dir: str | None) -> None:
        if project_dir != self.project_dir:
            self.project_dir = project_dir
            if self._order:
                self.dataChanged.emit(self.index(0, 0), self.index(len(self._order) - 1, 0))

    def _label(self, part: XrayPart) -> str:
        if part.kind == "context_file":
            return named_path(part.label, self.project_dir)
        return CUSTOM_TYPE_WORDS.get(part.label, part.label) if part.kind == "custom" else part.label

    def shown_rows(self) -> int:
        return len(self._order)

    def set_xray(
        self,
        xray: Xray,
        message_parts_index: list[int] | None = None,
        elided: frozenset[int] = frozenset(),
        table: XrayTable | None = None,
    ) -> None:
        """Show ``xray``; ``table`` is its rows built already (else they are built here)."""
        table = table or xray_table(xray, message_parts_index, elided)
        with self.replacing_rows():
            self._rows, self._order = table.rows, table.order
            self.total = xray.total
            self.tokenizer = xray.tokenizer
            self.counting = xray.counting

    def clear(self) -> None:
        with self.replacing_rows():
            self._rows, self._order, self.total, self.counting = [], [], 0, 0

    def row_at(self, position: int) -> XrayRow | None:
        if 0 <= position < len(self._order):
            return self._rows[self._order[position]]
        return None

    def position_of(self, predicate: Any) -> int | None:
        """Display position of the first row (largest first) whose ``XrayRow`` satisfies ``predicate``."""
        for position, i in enumerate(self._order):
            if predicate(self._rows[i]):
                return position
        return None

    # ---- Qt model API ----------------------------------------------------------------------------

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not self.is_shown(index):
            return None
        row = self.row_at(index.row())
        if row is None:
            return None
        part, column = row.part, index.column()
        if role == _DISPLAY:
            if column == 0:
                return self._label(part)
            if column == 1:
                return KIND_TITLES.get(part.kind, part.kind) + (" (elided)" if row.elided else "")
            if column == 2:
                return "counting…" if part.counting else f"{part.tokens:,}"
            if column == 3:
                return "" if self.counting else f"{100 * part.share:.1f}%"
            return None
        if role == Qt.ItemDataRole.TextAlignmentRole and column >= 2:
            return _RIGHT
        if role == Qt.ItemDataRole.ForegroundRole and (row.elided or part.counting):
            return QColor(_GREY)  # a copy: the view may keep it
        if role == Qt.ItemDataRole.ToolTipRole:
            where = {
                "message": "the chat and tree",
                "resource": "the Resources panel",
                "tool": "the Tools list",
            }
            hint = f" — double-click to show it in {where[row.target.kind]}" if row.target else ""
            stub = " (a stub elided by the governor; the transcript keeps the original)" if row.elided else ""
            kind = KIND_TITLES.get(part.kind, part.kind)
            tokens = "not counted yet" if part.counting else f"{compact_tokens(part.tokens)} tokens"
            return plain_tip(f"{part.label} ({kind}): {tokens}{stub}{hint}")
        if role == TargetRole:
            return row.target
        if role == TokensRole:
            return None if part.counting else part.tokens
        return None
