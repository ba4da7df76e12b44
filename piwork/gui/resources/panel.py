"""ResourcePanel: what the engine loaded for this project, in precedence order, and why.

Usage from the main window::

    panel = ResourcePanel()
    panel.set_resources(loaded)                    # piwork.core.resources.loader.LoadedResources
    panel.set_system_prompt(parts, counter)        # system_prompt_parts(prompt_input_for(...)), TokenCounter

The header shows the trust state and how it was decided, plus the entries that need trust. The
tree lists context files, skills, prompt templates and system prompt files with rank, scope, state
and path (blocked or losing rows greyed, the reason in the tooltip, shadowed skills naming the
winner); selecting a row previews its file. The second tab shows the assembled system prompt with
a token count per part, the third every tool with its schema and what it costs the next request.
"""

from __future__ import annotations

import asyncio
import html
import os
from collections.abc import Sequence

import shiboken6
from PySide6.QtCore import QEvent, QModelIndex, QObject, QSize, Qt, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QSplitter,
    QTabWidget,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from piwork.core.llm import TokenCounter
from piwork.core.paths import named_path
from piwork.core.resources import LoadedResources, PromptPart
from piwork.core.workflows import AgentRuntime
from piwork.gui.background import BackgroundTasks
from piwork.gui.resources.prompt_view import SystemPromptView
from piwork.gui.resources.rows_model import RANK_LEGEND, RANK_NOTE, ResourceRowsModel, state_reason
from piwork.gui.resources.tool_rows import ToolRow
from piwork.gui.resources.tools_view import ToolsView
from piwork.gui.trust_dialog import preview_text

MAX_COLUMN_WIDTH = 240
MIN_NAME_WIDTH = 72
MIN_PATH_WIDTH = 80
RANK, NAME, SCOPE, STATE, PATH = 0, 1, 2, 3, 4


class ResourcePanel(QWidget):
    previewShown = Signal(str)  # path whose preview (read in a worker thread) is now on show
    toolToggled = Signal(str, bool)  # the Tools tab turned a tool on (True) or off for the session

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._tasks = BackgroundTasks()
        self._previewing: str | None = None
        self.loaded: LoadedResources | None = None
        self.trust_label = QLabel("No project loaded.")
        self.trust_label.setWordWrap(True)
        self.trust_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.model = ResourceRowsModel(self)
        self.view = QTreeView()
        self.view.setAccessibleName("Resources")
        self.view.setAccessibleDescription(
            "What the model is told, in precedence order, and why each is or is not in effect."
        )
        self.view.setModel(self.model)
        self.view.setUniformRowHeights(True)
        self.view.setIndentation(14)  # one level under the group titles: the rank column stays narrow
        self.view.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # a path's file name stays readable
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.selectionModel().currentChanged.connect(self._on_current_changed)
        header = self.view.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(PATH, QHeaderView.ResizeMode.Stretch)  # what the others leave
        header.setMinimumSectionSize(24)
        for column in (SCOPE, STATE):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self._name_width = MIN_NAME_WIDTH
        self.view.viewport().installEventFilter(self)  # its width shares the room out again
        self.rank_legend = QLabel(RANK_NOTE)  # short: the dock is narrow; the tooltip has every origin
        self.rank_legend.setToolTip(RANK_LEGEND)
        self.rank_legend.setObjectName("rankLegend")
        self.rank_legend.setWordWrap(True)
        self.rank_legend.setEnabled(False)  # a quiet note under the table
        self.reason_label = QLabel()
        self.reason_label.setWordWrap(True)
        self.preview = QPlainTextEdit(readOnly=True)
        self.preview.setAccessibleName("Resource file preview")
        self.preview.setAccessibleDescription("The text of the resource selected above")
        self.preview.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.preview.setPlaceholderText("Select a resource to preview its file.")
        details = QWidget()
        details_layout = QVBoxLayout(details)
        details_layout.setContentsMargins(0, 0, 0, 0)
        details_layout.addWidget(self.rank_legend)
        details_layout.addWidget(self.reason_label)
        details_layout.addWidget(self.preview, 1)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(self.view)
        splitter.addWidget(details)
        self.prompt_view = SystemPromptView()
        self.tools_view = ToolsView()
        self.tools_view.toolToggled.connect(self.toolToggled)
        self.tabs = QTabWidget()
        self.tabs.addTab(splitter, "Resources")
        self.tabs.addTab(self.prompt_view, "System prompt")
        self.tabs.addTab(self.tools_view, "Tools")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.trust_label)
        layout.addWidget(self.tabs, 1)

    def set_resources(self, loaded: LoadedResources) -> None:
        current = self.view.currentIndex()
        selected = self.model.row_at(current.siblingAtColumn(0)) if current.isValid() else None
        self.loaded = loaded
        self.trust_label.setText(self._trust_text(loaded))
        self.model.set_rows(loaded.rows, loaded.cwd)  # a reset: the selection goes without a currentChanged
        if selected is None or not self._reselect(selected.kind, selected.path):
            self._previewing = None
            self.reason_label.clear()
            self.preview.clear()
        self.view.expandAll()
        for group in range(self.model.rowCount()):  # group titles read across the row
            self.view.setFirstColumnSpanned(group, QModelIndex(), True)
        self._name_width = min(self.view.sizeHintForColumn(NAME), MAX_COLUMN_WIDTH)
        self._fit_columns()

    def _fit_columns(self) -> None:
        """Rank, scope and state as wide as their short words, the name as wide as it needs up to a share
        of what is left, the path the rest (elided in its middle): every column stays in the dock."""
        view, header = self.view, self.view.header()
        view.setColumnWidth(RANK, view.indentation() + view.fontMetrics().horizontalAdvance("Rank") + 16)
        width = view.viewport().width()
        scope = view.sizeHintForColumn(SCOPE)
        fixed = header.sectionSize(RANK) + header.sectionSize(STATE)
        # in a very narrow dock the scope gives way (each row's tooltip says it) before the name and path
        view.setColumnHidden(SCOPE, fixed + scope + MIN_NAME_WIDTH + MIN_PATH_WIDTH > width)
        if not view.isColumnHidden(SCOPE):
            fixed += header.sectionSize(SCOPE)
        room = width - fixed  # shared by the name and the path
        view.setColumnWidth(NAME, max(min(self._name_width, room // 2), MIN_NAME_WIDTH))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.view.viewport() and event.type() == QEvent.Type.Resize:
            self._fit_columns()
        return super().eventFilter(watched, event)

    def _reselect(self, kind: str, path: str) -> bool:
        """Select the row of ``kind`` at ``path`` again after a reload, which reads its file afresh."""
        for group in range(self.model.rowCount()):
            parent = self.model.index(group, 0)
            for position in range(self.model.rowCount(parent)):
                index = self.model.index(position, 0, parent)
                row = self.model.row_at(index)
                if row is not None and row.kind == kind and row.path == path:
                    self.view.setCurrentIndex(index)
                    return True
        return False

    def sizeHint(self) -> QSize:
        """Wide enough, as a dock, for name, scope and state beside the rank."""
        hint = super().sizeHint()
        return QSize(max(hint.width(), 600), hint.height())

    def set_system_prompt(self, parts: Sequence[PromptPart], counter: TokenCounter) -> None:
        self.prompt_view.set_parts(parts, counter)

    def set_tools(self, rows: Sequence[ToolRow]) -> None:
        """The session's tools with what the next request sends (from the context feed)."""
        self.tools_view.set_tools(rows)

    def select_tool(self, name: str) -> bool:
        """Show the Tools tab on ``name``'s row; False when the session has no such tool."""
        if not self.tools_view.select_tool(name):
            return False
        self.tabs.setCurrentWidget(self.tools_view)
        return True

    @staticmethod
    def _trust_text(loaded: LoadedResources) -> str:
        state = loaded.trust
        if state is None:
            word = "trusted" if loaded.project_trusted else "untrusted"
            return f"<b>Project {word}</b> — {html.escape(named_path(loaded.cwd), quote=False)}"
        how = state.describe().split(": ", 1)[-1]  # the heading already says trusted or not
        heading = (
            "Nothing in this project needs trust"
            if state.source == "no-project-resources"
            else f"Project {'trusted' if state.trusted else 'not trusted'}"
        )
        lines = [
            f"<b>{heading}</b> ({html.escape(how, quote=False)}) — {html.escape(named_path(state.cwd), quote=False)}"
        ]
        if state.resources:
            entries = ", ".join(
                f"<code>{html.escape(os.path.relpath(r.path, state.cwd), quote=False)}</code>"
                for r in state.resources
            )
            lines.append(f"Entries that need trust: {entries}")
        lines.extend(f"⚠ {html.escape(w, quote=False)}" for w in state.warnings)
        return "<br>".join(lines)

    def _on_current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        row = self.model.row_at(current.siblingAtColumn(0)) if current.isValid() else None
        if row is None:
            self.reason_label.clear()
            self.preview.clear()
            return
        warnings = "".join(f"<br>⚠ {html.escape(d.message, quote=False)}" for d in row.diagnostics)
        self.reason_label.setText(
            f"<code>{html.escape(named_path(row.path, self.model.project), quote=False)}</code><br>"
            f"{html.escape(state_reason(row, self.model.project), quote=False)}{warnings}"
        )
        self._previewing = None
        if row.state == "blocked-untrusted":
            self.preview.setPlainText("(not read: the project is not trusted)")
        else:
            self.preview.setPlainText("Reading…")
            self._previewing = row.path
            self._tasks.spawn(self._show_preview(row.path))

    async def _show_preview(self, path: str) -> None:
        text = await asyncio.to_thread(_preview_or_missing, path)
        if shiboken6.isValid(self) and path == self._previewing:  # still on show, still the selected row
            self.preview.setPlainText(text)
            self.previewShown.emit(path)

    def select_path(self, path: str, kind: str | None = None) -> bool:
        """Select the row of ``path`` (or, with only ``kind``, that group's first active row); shows the
        Resources tab. False when no row matches."""
        real = os.path.realpath(path) if path else ""
        for group in range(self.model.rowCount()):
            parent = self.model.index(group, 0)
            for position in range(self.model.rowCount(parent)):
                row = self.model.row_at(self.model.index(position, 0, parent))
                if row is None:
                    continue
                same_path = bool(path) and (row.path == path or os.path.realpath(row.path) == real)
                first_of_kind = not path and row.kind == kind and row.state == "active"
                if same_path or first_of_kind:
                    self.tabs.setCurrentIndex(0)
                    self.view.setCurrentIndex(self.model.index(position, 0, parent))
                    self.view.scrollTo(self.view.currentIndex())
                    return True
        return False

    def attach(self, runtime: AgentRuntime) -> None:
        self.set_resources(runtime.resources)

    def detach(self) -> None:
        """Nothing to let go: the resources shown stay until the next session's replace them."""

    def shutdown(self) -> None:
        self.prompt_view.shutdown()


def _preview_or_missing(path: str) -> str:
    return preview_text(path) if os.path.exists(path) else f"(no file at {path})"
