"""ToolsView: every tool of the session, whether it is on, whether the next request sends its schema,
and what it costs.

Sent tools come first (in the order the request lists them), then the ones left out, greyed, with why (a
read-only task leaves out the writing tools; other tools are simply turned off). Each tool's check box
turns it on or off for the session (``toolToggled``; the session sends the new set from its next
request on). Selecting a tool shows its description and its JSON schema as the request sends it, laid
out for reading, with a button that copies it. The X-ray's tool-schema rows land here (``select_tool``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QModelIndex, QObject, Qt, Signal
from PySide6.QtGui import QColor, QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from piwork.gui.flat_models import AnyIndex, FlatTableModel
from piwork.gui.inert_text import plain_tip
from piwork.gui.resources.tool_rows import ToolRow

TOOL_ROW_ROLE = Qt.ItemDataRole.UserRole + 1


def sent_first(rows: Sequence[ToolRow]) -> list[ToolRow]:
    return [r for r in rows if r.sent] + [r for r in rows if not r.sent]


class ToolsModel(FlatTableModel):
    columns = ("Tool", "Next request", "Tokens")
    column_tips = (
        "The tool's name as the model calls it; its check box turns it on or off for this session",
        "Whether the next request sends the tool's schema (the model can only call tools it is sent)",
        "Tokens its schema takes in the next request (the X-ray's figure); for a tool not sent, what its"
        " schema alone would take",
    )

    toggled = Signal(str, bool)  # a tool's check box was changed: (name, turned on)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.rows: list[ToolRow] = []

    def flags(self, index: AnyIndex) -> Qt.ItemFlag:
        flags = super().flags(index)
        return flags | Qt.ItemFlag.ItemIsUserCheckable if index.isValid() and index.column() == 0 else flags

    def setData(self, index: AnyIndex, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        """A check box change asks for the tool to be turned on or off; the row changes when the
        session's new figures arrive (``set_rows``)."""
        if role != Qt.ItemDataRole.CheckStateRole or not self.is_shown(index) or index.column() != 0:
            return False
        row = self.rows[index.row()]
        on = Qt.CheckState(value) == Qt.CheckState.Checked if not isinstance(value, bool) else value
        if on == row.active:
            return False
        self.rows[index.row()] = dataclasses.replace(
            row, active=on
        )  # shown at once, confirmed by the refresh
        self.dataChanged.emit(index, index, [Qt.ItemDataRole.CheckStateRole])
        self.toggled.emit(row.name, on)
        return True

    def shown_rows(self) -> int:
        return len(self.rows)

    def set_rows(self, rows: Sequence[ToolRow]) -> None:
        with self.replacing_rows():
            self.rows = sent_first(rows)

    def row_at(self, position: int) -> ToolRow | None:
        return self.rows[position] if 0 <= position < len(self.rows) else None

    def position_of(self, name: str) -> int | None:
        return next((i for i, row in enumerate(self.rows) if row.name == name), None)

    def data(self, index: AnyIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not self.is_shown(index):
            return None
        row, column = self.rows[index.row()], index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if column == 0:
                return row.name
            if column == 1:
                return "sent" if row.sent else "not sent"
            return f"{row.tokens:,}" if row.sent else f"({row.tokens:,})"
        if role == Qt.ItemDataRole.CheckStateRole and column == 0:
            return Qt.CheckState.Checked if row.active else Qt.CheckState.Unchecked
        if role == Qt.ItemDataRole.TextAlignmentRole and column == 2:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ForegroundRole and not row.sent:
            return QColor("#8a8a92")
        if role == Qt.ItemDataRole.ToolTipRole:
            switch = "on (uncheck to turn it off)" if row.active else "off (check to turn it on)"
            if row.sent:
                return plain_tip(
                    f"{row.name}: {switch}; sent with the next request, {row.tokens:,} tokens of it"
                )
            return plain_tip(
                f"{row.name}: {switch}. {row.reason} Its schema alone would take {row.tokens:,} tokens."
            )
        if role == TOOL_ROW_ROLE:
            return row
        return None


class ToolsView(QWidget):
    toolToggled = Signal(str, bool)  # (tool name, turned on) for the session

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = ToolsModel(self)
        self.model.toggled.connect(self.toolToggled)
        self.summary = QLabel("No session yet.")
        self.summary.setWordWrap(True)
        self.table = QTableView()
        self.table.setObjectName("toolsView")
        self.table.setAccessibleName("Tools")
        self.table.setAccessibleDescription(
            "Every tool of the session, whether it is on (its check box, Space to change it) and whether "
            "the next request sends it"
        )
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 6)
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.table.selectionModel().currentChanged.connect(self._on_current)
        self.description = QLabel()
        self.description.setObjectName("toolDescription")
        self.description.setWordWrap(True)
        self.description.setTextFormat(Qt.TextFormat.PlainText)
        self.description.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.schema = QPlainTextEdit(readOnly=True)
        self.schema.setObjectName("toolSchema")
        self.schema.setAccessibleName("Tool schema")
        self.schema.setAccessibleDescription("The selected tool's JSON schema as the request sends it")
        self.schema.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.schema.setPlaceholderText("Select a tool to see its schema.")
        self.copy_button = QPushButton("Copy schema")
        self.copy_button.setAccessibleDescription("Copy the selected tool's JSON schema")
        self.copy_button.setEnabled(False)
        self.copy_button.clicked.connect(self.copy_schema)
        details = QWidget()
        details_layout = QVBoxLayout(details)
        details_layout.setContentsMargins(0, 0, 0, 0)
        head = QHBoxLayout()
        head.addWidget(self.description, 1)
        head.addWidget(self.copy_button, 0, Qt.AlignmentFlag.AlignTop)
        details_layout.addLayout(head)
        details_layout.addWidget(self.schema, 1)
        self.splitter = QSplitter(
            Qt.Orientation.Vertical
        )  # the panel docks narrow: tools above, schema below
        self.splitter.addWidget(self.table)
        self.splitter.addWidget(details)
        self.splitter.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.summary)
        layout.addWidget(self.splitter, 1)

    def set_tools(self, rows: Sequence[ToolRow]) -> None:
        """Show ``rows`` (kept as they are when nothing changed; the selection stays on its tool)."""
        if sent_first(rows) == self.model.rows:
            return
        current = self.current_tool()
        self.model.set_rows(rows)
        sent = [r for r in rows if r.sent]
        left_out = len(rows) - len(sent)
        self.summary.setText(
            f"{len(sent)} of {len(rows)} tools sent with the next request, "
            f"{sum(r.tokens for r in sent):,} tokens of schemas"
            + (f"; {left_out} not sent (greyed)" if left_out else "")
            + ". Check or uncheck a tool to turn it on or off for this session."
        )
        self._fit_table()
        if current is not None:
            self.select_tool(current.name)

    def _fit_table(self) -> None:
        """As tall as its rows and no taller: the rest of a short dock goes to the schema."""
        table = self.table
        rows = max(3, self.model.rowCount())
        height = (
            table.horizontalHeader().sizeHint().height() + rows * table.verticalHeader().defaultSectionSize()
        )
        table.setMaximumHeight(height + 2 * table.frameWidth())
        self.splitter.setSizes(
            [table.maximumHeight(), max(1, self.splitter.height() - table.maximumHeight())]
        )

    def current_tool(self) -> ToolRow | None:
        index = self.table.currentIndex()
        return self.model.row_at(index.row()) if index.isValid() else None

    def select_tool(self, name: str) -> bool:
        position = self.model.position_of(name)
        if position is None:
            return False
        self.table.setCurrentIndex(self.model.index(position, 0))
        self.table.scrollTo(self.table.currentIndex())
        return True

    def _on_current(self, current: QModelIndex, _previous: QModelIndex) -> None:
        row = self.model.row_at(current.row()) if current.isValid() else None
        self.copy_button.setEnabled(row is not None)
        if row is None:
            self.description.clear()
            self.schema.clear()
            return
        switch = "On for this session." if row.active else "Off for this session."
        state = f"{switch} " + ("Sent with the next request." if row.sent else row.reason)
        self.description.setText(f"{row.description}\n\n{state}")
        self.schema.setPlainText(row.schema_json)

    def copy_schema(self) -> None:
        row = self.current_tool()
        if row is not None:
            QGuiApplication.clipboard().setText(row.schema_json)
