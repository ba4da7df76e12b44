"""FullOutputView: opens a full-output log lazily and lets the user search, jump and pick lines.

The file is opened (an ``open`` and an ``mmap``, which may wait on a slow disk) in a worker thread, with
"Opening…" shown meanwhile; ``opened`` says how it went. It is never loaded whole: a worker thread
builds a sparse line index (progress shown) while
the first lines are already scrollable, rows are decoded only when painted, and search runs in another
worker thread that streams matching line numbers in and is cancelled by a new query or by closing
(both are asyncio tasks around ``asyncio.to_thread``, see ``workers.py``).
A missing or unreadable file is shown as an error, never as an empty log.
"""

from __future__ import annotations

import asyncio
import os
import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import Any

import shiboken6
from PySide6.QtCore import QEvent, QObject, Qt, QUrl, Signal
from PySide6.QtGui import (
    QDesktopServices,
    QFontDatabase,
    QFontMetrics,
    QGuiApplication,
    QKeyEvent,
    QKeySequence,
    QShortcut,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QHeaderView,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from piwork.core.truncate import format_size
from piwork.gui.background import BackgroundTasks
from piwork.gui.flow_layout import FlowLayout
from piwork.gui.inert_text import plain_label
from piwork.gui.logs.line_delegate import LogLineDelegate
from piwork.gui.logs.line_index import LineIndex, LogFileError
from piwork.gui.logs.lines_model import LogLinesModel
from piwork.gui.logs.search import MAX_MATCHES, compile_search
from piwork.gui.logs.workers import IndexJob, SearchJob


def quote_lines(path: str, first: int, last: int, text: str) -> str:
    """Log lines quoted for the chat: the file's name, the line numbers and a fence longer than any
    backtick run inside, so the lines arrive verbatim."""
    where = f"line {first}" if first == last else f"lines {first}–{last}"
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    name = os.path.basename(path) or path
    return f"From `{name}`, {where} ({path}):\n{fence}text\n{text}\n{fence}\n"


@dataclass
class _SearchState:
    running: bool = False
    capped: bool = False
    percent: int = 0


class FullOutputView(QWidget):
    send_to_chat = Signal(str)
    opened = Signal(bool)  # the file is open (True), or could not be opened (False: `error_text` says why)
    index_finished = Signal()
    search_finished = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._index: LineIndex | None = None
        self._model: LogLinesModel | None = None
        self._index_job: IndexJob | None = None
        self._opening = BackgroundTasks()  # the file being opened in a worker
        self._open_generation = 0  # a newer open (or a close) makes an older one's result stale
        self._search_job: SearchJob | None = None
        self._matches: list[int] = []
        self._search_state = _SearchState()
        self.path: str | None = None
        self.error_text = ""
        self.notice_text = ""

        self._status = plain_label()
        self._status.setWordWrap(True)
        self._status.setTextInteractionFlags(self._status.textInteractionFlags())
        self._progress = QProgressBar()
        self._progress.setRange(0, 1000)
        self._progress.setFormat("Indexing lines… %p%")
        self._progress.hide()

        self.search_field = QLineEdit(placeholderText="Search (Enter: next match, Shift+Enter: previous)")
        self.search_field.setMinimumWidth(self.search_field.fontMetrics().horizontalAdvance("M" * 12))
        self.regex_box = QCheckBox("Regex")
        self.case_box = QCheckBox("Match case")
        self._previous_button = QPushButton("Previous")
        self._next_button = QPushButton("Next")
        self.search_status = plain_label()
        self.goto_field = QSpinBox(minimum=1, maximum=1, prefix="Line ")
        goto_button = QPushButton("Go")
        search_row = FlowLayout(spacing=4)  # wraps in a narrow dock instead of scrolling sideways
        search_row.addWidget(self.search_field, 1)
        for widget in (
            self.regex_box,
            self.case_box,
            self._previous_button,
            self._next_button,
        ):
            search_row.addWidget(widget)
        search_row.addWidget(self.search_status, 1)
        search_row.addWidget(self.goto_field)
        search_row.addWidget(goto_button)

        # A one-column table, not a list view: its header keeps millions of fixed-height rows as one
        # size, while a list view lays out every row again whenever rows are appended.
        self.view = QTableView()
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.setShowGrid(False)
        self.view.setWordWrap(False)
        self.view.setTabKeyNavigation(False)
        self.view.horizontalHeader().hide()
        self.view.horizontalHeader().setStretchLastSection(True)
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self._delegate = LogLineDelegate(font, self.view)
        self.view.setItemDelegate(self._delegate)
        self.view.setFont(font)
        rows = self.view.verticalHeader()
        rows.hide()
        rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        rows.setMinimumSectionSize(1)
        rows.setDefaultSectionSize(QFontMetrics(font).height() + 2)
        # Three lines at least, not the view's default: the rows around it stay on screen in a short dock.
        self.view.setMinimumHeight(3 * rows.defaultSectionSize() + 2 * self.view.frameWidth())

        named: tuple[tuple[QWidget, str, str], ...] = (
            (
                self.search_field,
                "Search the full output",
                "Text or pattern to find; Enter steps to the next match.",
            ),
            (self.regex_box, "Regex", "Read the search as a regular expression."),
            (self.case_box, "Match case", "Tell upper and lower case apart when searching."),
            (self.goto_field, "Go to line", "Line number of the full output to show."),
            (
                self.view,
                "Full output lines",
                "Every line the command wrote, with its colours; select lines to copy.",
            ),
        )
        for control, name, description in named:
            control.setAccessibleName(name)
            control.setAccessibleDescription(description)
        goto_button.setAccessibleDescription("Show the line chosen beside it.")

        copy_path = QPushButton("Copy path")
        open_editor = QPushButton("Open in editor")
        self._send_button = QPushButton("Send selected lines to chat")
        actions = FlowLayout(spacing=4)
        for widget in (copy_path, open_editor, self._send_button):
            actions.addWidget(widget)
        actions.addStretch(1)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._status)
        layout.addWidget(self._progress)
        layout.addLayout(search_row)
        layout.addWidget(self.view, 1)
        layout.addLayout(actions)

        self.search_field.installEventFilter(self)
        self.search_field.textChanged.connect(lambda _text: self.start_search())
        self.regex_box.toggled.connect(lambda _on: self.start_search())
        self.case_box.toggled.connect(lambda _on: self.start_search())
        self._next_button.clicked.connect(self.next_match)
        self._previous_button.clicked.connect(self.previous_match)
        goto_button.clicked.connect(lambda: self.go_to_line(self.goto_field.value()))
        self.goto_field.editingFinished.connect(lambda: self.go_to_line(self.goto_field.value()))
        copy_path.clicked.connect(self.copy_path)
        open_editor.clicked.connect(self.open_in_editor)
        self._send_button.clicked.connect(self.send_selection)
        QShortcut(QKeySequence.StandardKey.Find, self, self.search_field.setFocus)
        for keys, step in (("F3", self.next_match), ("Shift+F3", self.previous_match)):
            QShortcut(QKeySequence(keys), self, step, context=Qt.ShortcutContext.WidgetWithChildrenShortcut)
        QShortcut(QKeySequence.StandardKey.Copy, self.view, self.copy_selection)
        self._set_enabled(False)

    # -- opening and indexing -------------------------------------------------------------------
    @property
    def model(self) -> LogLinesModel | None:
        return self._model

    def open_file(self, path: str) -> bool:
        """Start opening `path` in a worker ("Opening…" meanwhile) and return True; `opened` then says
        whether it could be opened (a missing or unreadable file is shown as an error)."""
        self.close_file()
        self.path = path
        self.error_text = ""
        self._status.setStyleSheet("")
        self._status.setText(f"Opening {path}…")
        self._opening.spawn(self._open(path, self._open_generation))
        return True

    @property
    def opening(self) -> bool:
        return self._opening.running

    async def _open(self, path: str, generation: int) -> None:
        try:
            index = await asyncio.to_thread(LineIndex, path)
        except LogFileError as exc:
            if shiboken6.isValid(self) and generation == self._open_generation:
                self._show_error(str(exc))
                self.opened.emit(False)
            return
        if not shiboken6.isValid(self) or generation != self._open_generation:
            index.close()  # another file was asked for, or the view closed, meanwhile
            return
        self._show_index(index)
        self.opened.emit(True)

    def _show_index(self, index: LineIndex) -> None:
        path = index.path
        self._index = index
        self._model = LogLinesModel(self._index, self)
        self.view.setModel(self._model)
        self.view.selectionModel().currentChanged.connect(lambda *_: self._on_current_row_changed())
        self._set_enabled(True)
        self._update_status()
        if self._index.complete:
            self._on_index_done()
            return
        self._progress.setValue(0)
        self._progress.show()
        self._index_job = IndexJob()
        self._index_job.start(
            path,
            0,
            self._index.block_count,
            self._index.size,
            self._on_index_batch,
            self._on_index_worker_finished,
            lambda exc: self._show_error(f"Reading {path} failed: {exc.strerror or exc}"),
        )

    @property
    def indexing(self) -> bool:
        """The file is being opened or its lines counted."""
        return self.opening or (self._index_job is not None and self._index_job.running)

    @property
    def searching(self) -> bool:
        return self._search_job is not None and self._search_job.running

    def close_file(self) -> None:
        self._open_generation += 1  # a file still being opened is closed when it arrives
        self._stop_search()
        if self._index_job is not None:
            self._index_job.cancel()  # the worker stops at its next chunk; nothing more arrives
            self._index_job = None
        self.view.setModel(None)
        if self._model is not None:
            self._model.deleteLater()
            self._model = None
        if self._index is not None:
            self._index.close()
            self._index = None
        self._matches = []
        self._progress.hide()
        self.search_status.clear()
        self._set_enabled(False)

    def reset(self) -> None:
        """Back to the empty state: no file, no error, no search (another session was opened)."""
        self.close_file()
        self.path = None
        self.error_text = ""
        self.notice_text = ""
        self._status.clear()
        self._status.setStyleSheet("")
        self.search_field.clear()

    def _show_error(self, message: str) -> None:
        self.error_text = message
        self._status.setText(f"Full output unavailable. {message}")
        self._status.setStyleSheet("color: palette(bright-text); background: #a33; padding: 4px;")
        self._progress.hide()

    def _on_index_batch(self, counts: list[int], done: int) -> None:
        if self._index is None or self._model is None:
            return
        self._index.add_block_counts(counts)
        self._model.sync_rows()
        self._progress.setValue(int(1000 * min(done, self._index.size) / max(1, self._index.size)))
        self._delegate.gutter_digits = len(str(self._model.rowCount()))
        self.goto_field.setMaximum(max(1, self._model.rowCount()))
        if self._index.complete:
            self._on_index_done()

    def _on_index_worker_finished(self) -> None:
        if self._index is not None and not self._index.complete and not self.error_text:
            self._show_error("Indexing stopped before the end of the file.")

    def _on_index_done(self) -> None:
        assert self._model is not None
        self._model.sync_rows()
        self._delegate.gutter_digits = len(str(self._model.rowCount()))
        self._progress.hide()
        self._update_status()
        self.goto_field.setMaximum(max(1, self._model.rowCount()))
        self.index_finished.emit()

    def _update_status(self) -> None:
        if self._index is None:
            return
        lines = f"{self._index.line_count:,} lines" if self._index.complete else "counting lines…"
        self._status.setStyleSheet("")
        self._status.setText(f"{self._index.path} — {format_size(self._index.size)}, {lines}")

    def _set_enabled(self, enabled: bool) -> None:
        for widget in (self.search_field, self.regex_box, self.case_box, self.goto_field, self._send_button):
            widget.setEnabled(enabled)

    # -- search -----------------------------------------------------------------------------------
    def start_search(self) -> None:
        self._stop_search()
        self._matches = []
        self._search_state = _SearchState()
        if self._model is not None:
            self._model.set_matches(set())
        text = self.search_field.text()
        if self._index is None or not text:
            self.search_status.clear()
            return
        try:
            query = compile_search(text, self.regex_box.isChecked(), self.case_box.isChecked())
        except re.error as exc:
            self.search_status.setText(f"Invalid pattern: {exc}")
            return
        self._search_state.running = True
        self._show_search_status()
        path = self._index.path
        self._search_job = SearchJob()
        self._search_job.start(
            path,
            query,
            self._index.size,
            self._index.newline_counts(),
            self._on_found,
            lambda result: self._on_search_completed(*result),
            lambda exc: self._on_search_failed(f"Searching {path} failed: {exc.strerror or exc}"),
        )

    def _stop_search(self) -> None:
        if self._search_job is not None:
            self._search_job.cancel()  # the worker stops at its next piece; nothing more arrives
            self._search_job = None

    @property
    def matches(self) -> list[int]:
        """0-based line numbers of matches found so far (ascending)."""
        return list(self._matches)

    def current_match(self) -> int | None:
        """1-based position of the selected line among the matches, None when it is not a match."""
        row = self.current_row()
        position = bisect_left(self._matches, row)
        return position + 1 if position < len(self._matches) and self._matches[position] == row else None

    def _on_current_row_changed(self) -> None:
        if self._matches:
            self._show_search_status()
        self._show_current_line()

    def _show_current_line(self) -> None:
        """The "Line N" box follows the selected row (a match, a click, a jump), unless it is being typed in."""
        row = self.current_row()
        if row < 0 or self.goto_field.hasFocus():
            return
        self.goto_field.setMaximum(max(self.goto_field.maximum(), row + 1))
        self.goto_field.setValue(row + 1)

    def _show_search_status(self) -> None:
        state = self._search_state
        total = len(self._matches)
        if not total:
            self.search_status.setText("Searching…" if state.running else "No match")
            return
        count = f"{total:,}" + ("+" if state.capped else "")
        current = self.current_match()
        text = f"match {current:,} of {count}" if current is not None else f"{count} matches"
        if state.running:
            text += f"… ({state.percent}%)"
        elif state.capped:
            text += f" (search stopped at {MAX_MATCHES:,})"
        self.search_status.setText(text)

    def _on_found(self, lines: list[int], done: int) -> None:
        if self._model is None or self._index is None:
            return
        self._search_state.percent = 100 * done // max(1, self._index.size)
        if lines:
            first = not self._matches
            self._matches.extend(lines)
            self._model.add_matches(lines)
            if first:
                self._select_row(lines[0])
        self._show_search_status()

    def _on_search_completed(self, total: int, capped: bool) -> None:
        self._search_state.running = False
        self._search_state.capped = capped
        self._show_search_status()
        self.search_finished.emit(total)

    def _on_search_failed(self, message: str) -> None:
        self._search_state.running = False
        self.search_status.setText(message)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """Enter in the search field goes to the next match, Shift+Enter to the previous one."""
        if watched is self.search_field and event.type() == QEvent.Type.KeyPress:
            assert isinstance(event, QKeyEvent)
            if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                if event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
                    self.previous_match()
                else:
                    self.next_match()
                return True
        return super().eventFilter(watched, event)

    def next_match(self) -> None:
        if not self._matches:
            return
        position = bisect_right(self._matches, self.current_row())
        self._select_row(self._matches[position % len(self._matches)])

    def previous_match(self) -> None:
        if not self._matches:
            return
        position = bisect_left(self._matches, self.current_row()) - 1
        self._select_row(self._matches[position % len(self._matches)])

    # -- navigation and selection ------------------------------------------------------------------
    def current_row(self) -> int:
        index = self.view.currentIndex()
        return index.row() if index.isValid() else -1

    def _select_row(self, row: int) -> None:
        if self._model is None or not 0 <= row < self._model.rowCount():
            return
        index = self._model.index(row)
        self.view.setCurrentIndex(index)
        self.view.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)

    def go_to_line(self, line: int) -> None:
        """Select 1-based `line` (clamped to the lines indexed so far)."""
        if self._model is None or self._model.rowCount() == 0:
            return
        self._select_row(max(0, min(line - 1, self._model.rowCount() - 1)))
        self.goto_field.setValue(self.current_row() + 1)  # shows the clamped line when asked for past the end

    def selected_rows(self) -> list[int]:
        return (
            sorted(index.row() for index in self.view.selectionModel().selectedIndexes())
            if self._model
            else []
        )

    def selected_text(self) -> str:
        if self._model is None:
            return ""
        return "\n".join(self._model.full_line_text(row) for row in self.selected_rows())

    def copy_selection(self) -> None:
        text = self.selected_text()
        if text:
            QGuiApplication.clipboard().setText(text)

    def send_selection(self) -> None:
        rows = self.selected_rows()
        if not rows or self.path is None:
            return
        self.send_to_chat.emit(quote_lines(self.path, rows[0] + 1, rows[-1] + 1, self.selected_text()))

    def copy_path(self) -> None:
        if self.path:
            QGuiApplication.clipboard().setText(self.path)

    def open_in_editor(self) -> bool:
        """Hand the log to the desktop's application for it; say so in the viewer when that fails."""
        path = self.path
        if not path:
            return False
        if not os.path.isfile(path):
            self._show_notice(f"Could not open {path}: the file is no longer there.")
            return False
        if not QDesktopServices.openUrl(QUrl.fromLocalFile(path)):
            self._show_notice(
                f"No application opened {path}. Copy its path and open it in an editor of your choice."
            )
            return False
        return True

    def _show_notice(self, message: str) -> None:
        self.notice_text = message
        self._status.setText(message)
        self._status.setStyleSheet("color: palette(bright-text); background: #a60; padding: 4px;")

    def closeEvent(self, event: Any) -> None:
        self.close_file()
        super().closeEvent(event)
