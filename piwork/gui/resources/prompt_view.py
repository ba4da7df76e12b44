"""SystemPromptView: the assembled system prompt, part by part, with a token count for each.

Counting runs in a worker thread (a tokenizer on a long prompt is not free); the result comes back
to the GUI thread as an awaited value. With no tokenizer file available the counter estimates (chars/4) and the
column header says so.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import shiboken6
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLabel,
    QPlainTextEdit,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from piwork.core.llm import TokenCounter
from piwork.core.resources import PromptPart
from piwork.gui.background import BackgroundTasks

PART_TITLES = {
    "custom": "Replacement prompt (SYSTEM.md or option)",
    "role": "Role",
    "tools": "Tools",
    "rules": "Rules",
    "docs": "Documentation",
    "addendum": "Appended text (APPEND_SYSTEM.md or option)",
    "project_context": "Project context files",
    "skills": "Skills",
    "cwd": "Working directory",
}


class SystemPromptView(QWidget):
    counted = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.parts: list[PromptPart] = []
        self.counts: list[int] = []
        self.total = 0
        self._generation = 0
        self._unit = ""
        self._tasks = BackgroundTasks()
        self._closed = False
        self.summary = QLabel("No system prompt assembled yet.")
        self.summary.setWordWrap(True)  # a narrow dock wraps it rather than scrolling sideways
        self.table = QTableWidget(0, 3)
        self.table.setAccessibleName("System prompt parts")
        self.table.setAccessibleDescription(
            "The parts the system prompt is assembled from, with tokens per part"
        )
        self.table.setHorizontalHeaderLabels(["Part", "Tokens", "Characters"])
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.verticalHeader().hide()
        row_height = self.table.fontMetrics().height() + 8
        self.table.verticalHeader().setDefaultSectionSize(row_height)
        self.table.setMinimumHeight(row_height * (len(PART_TITLES) + 1) + 4)  # every part without scrolling
        self.table.setWordWrap(False)
        self.text = QPlainTextEdit(readOnly=True)
        self.text.setAccessibleName("System prompt text")
        self.text.setAccessibleDescription("The assembled system prompt the model is given")
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.table.currentCellChanged.connect(lambda row, *_a: self._show_part(row))
        splitter = QSplitter(Qt.Orientation.Vertical)  # the panel docks narrow: parts above, text below
        splitter.addWidget(self.table)
        splitter.addWidget(self.text)
        splitter.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.summary)
        layout.addWidget(splitter, 1)

    def set_parts(self, parts: Sequence[PromptPart], counter: TokenCounter) -> None:
        """Show `parts` (their concatenation is the prompt) and count their tokens in the background."""
        self._generation += 1
        self.parts = list(parts)
        self.counts = []
        self._unit = counter.info.label
        self.table.setHorizontalHeaderLabels(["Part", "Tokens", "Characters"])
        header_item = self.table.horizontalHeaderItem(1)
        if header_item is not None:
            header_item.setToolTip(f"Counted with {self._unit}")
        self.table.setRowCount(len(self.parts))
        for row, part in enumerate(self.parts):
            self.table.setItem(row, 0, QTableWidgetItem(PART_TITLES.get(part.name, part.name)))
            self.table.setItem(row, 1, QTableWidgetItem("…"))
            self.table.setItem(row, 2, QTableWidgetItem(f"{len(part.text):,}"))
        full = "".join(p.text for p in self.parts)
        self.text.setPlainText(full)
        self.table.resizeColumnsToContents()
        self.summary.setText(f"{len(full):,} characters; counting tokens…")
        generation, texts = self._generation, [p.text for p in self.parts]
        if self._closed:  # a prompt that arrives while the window closes is shown, not counted
            return
        self._tasks.spawn(self._count(generation, texts, full, counter))

    async def _count(self, generation: int, texts: list[str], full: str, counter: TokenCounter) -> None:
        counts, total = await asyncio.to_thread(_count_tokens, texts, full, counter)
        if shiboken6.isValid(self) and not self._closed:
            self._on_counted(generation, counts, total)

    def _on_counted(self, generation: int, counts: list[int], total: int) -> None:
        if generation != self._generation:
            return  # a newer prompt replaced this one meanwhile
        self.counts, self.total = counts, total
        for row, count in enumerate(counts):
            share = f"  ({count * 100 / total:.0f}%)" if total else ""
            self.table.setItem(row, 1, QTableWidgetItem(f"{count:,}{share}"))
        self.table.resizeColumnsToContents()
        length = sum(len(p.text) for p in self.parts)
        self.summary.setText(
            f"{total:,} tokens ({self._unit}), {length:,} characters in {len(self.parts)} parts"
        )
        self.counted.emit()

    def _show_part(self, row: int) -> None:
        if 0 <= row < len(self.parts):
            self.text.setPlainText(self.parts[row].text)

    def shutdown(self, *_args: Any) -> None:
        self._closed = True
        self._tasks.cancel_all()


def _count_tokens(texts: list[str], full: str, counter: TokenCounter) -> tuple[list[int], int]:
    return [counter.count(text) for text in texts], counter.count(full)
