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
_DISPLAY = int(Qt.ItemDataRole.DisplayRole)
_ALIGNMENT = int(Qt.ItemDataRole.TextAlignmentRole)
_FOREGROUND = int(Qt.ItemDataRole.ForegroundRole)
_TOOLTIP = int(Qt.ItemDataRole.ToolTipRole)
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_GREY = QColor("#8a8a92")


@dataclass(frozen=True, slots=True)  # one per message of a long session
class JumpTarget:
    """Where a row leads: ``kind`` is "message" (``message_index`` into the request's messages; a tool
    result also has ``tool_call_id``), "resource" (``path`` of a context file, or "skills"), or "tool"."""

    kind: str
    message_index: int | None = None
    tool_call_id: str | None = None
    path: str | None = None


@dataclass(frozen=True, slots=True)  # one per message of a long session
class XrayRow:
    part: XrayPart
    target: JumpTarget | None
    elided: bool = False  # the governor sends a stub in place of this tool result


# The roles a cell answers: a view's delegate asks seven roles per cell on every paint (font, decoration,
# check state, background too), and the others are turned away before any row is looked up.
_ANSWERED = frozenset({_DISPLAY, _ALIGNMENT, _FOREGROUND, _TOOLTIP, int(TargetRole), int(TokensRole)})

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
        # display position -> the row's four texts, made the first time a view shows the row: a paint asks
        # again for every visible cell, and a table of thousands of rows only ever shows a screenful
        self._texts: dict[int, tuple[str, str, str, str]] = {}

    def set_project_dir(self, project_dir: str | None) -> None:
        if project_dir != self.project_dir:
            self.project_dir = project_dir
            self._texts.clear()
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
            self._texts = {}
            self.total = xray.total
            self.tokenizer = xray.tokenizer
            self.counting = xray.counting

    def clear(self) -> None:
        with self.replacing_rows():
            self._rows, self._order, self.total, self.counting = [], [], 0, 0
            self._texts = {}

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

    def _cell_texts(self, position: int, row: XrayRow) -> tuple[str, str, str, str]:
        texts = self._texts.get(position)
        if texts is None:
            part = row.part
            texts = self._texts[position] = (
                self._label(part),
                KIND_TITLES.get(part.kind, part.kind) + (" (elided)" if row.elided else ""),
                "counting…" if part.counting else f"{part.tokens:,}",
                "" if self.counting else f"{100 * part.share:.1f}%",
            )
        return texts

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        # A flat table's cells have no parent, so the row and column are all there is to check: this runs
        # for every role of every visible cell at each paint.
        if role not in _ANSWERED:
            return None
        position = index.row()
        if not 0 <= position < len(self._order):
            return None  # an invalid index has row -1
        row = self._rows[self._order[position]]
        column = index.column()
        if role == _DISPLAY:
            return self._cell_texts(position, row)[column] if 0 <= column < 4 else None
        if role == _ALIGNMENT:
            return _RIGHT if column >= 2 else None
        part = row.part
        if role == _FOREGROUND:
            return QColor(_GREY) if row.elided or part.counting else None  # a copy: the view may keep it
        if role == _TOOLTIP:
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
        return None if part.counting else part.tokens  # TokensRole
