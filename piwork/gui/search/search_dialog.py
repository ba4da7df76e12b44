"""Search every session of the project (or of all projects) and jump to the matching entry.

Typing restarts the search after a short pause; the previous search is cancelled at once. Results
stream in per session, newest session first. Enter, Open or a double click on a result asks to open that
session with the tree on that entry (``hitChosen``); on a session row it opens the session. Picking a
result to look at it (a click, the arrow keys) touches nothing outside the dialog, even where a style
activates items on a single click.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDialog,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from piwork.core.session import SESSION_NAME, SessionHits
from piwork.gui.inert_text import plain_label
from piwork.gui.search.hit_delegate import HitDelegate
from piwork.gui.search.results_model import PathRole, SearchResultsModel
from piwork.gui.search.worker import SessionSearch
from piwork.gui.window_flags import dialog_buttons

ListFiles = Callable[[bool], list[Path]]  # all projects? -> session files, newest first (runs on the worker)
SEARCH_DELAY_MS = 200
SCOPES = ("This project", "All projects")


class SearchDialog(QDialog):
    hitChosen = Signal(str, str)  # session file, entry id ("" for the session itself)

    def __init__(self, list_files: ListFiles, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        dialog_buttons(self, maximize=True)
        self.setObjectName("searchDialog")
        self.setWindowTitle("Search Sessions")
        self.list_files = list_files
        self.search = SessionSearch(self)
        self.model = SearchResultsModel(self)

        self.query = QLineEdit(placeholderText="Words to find in messages, tool calls and tool output")
        self.query.setAccessibleName("Words to find")
        self.query.setObjectName("searchQuery")
        self.query.setClearButtonEnabled(True)
        self.scope = QComboBox()
        self.scope.addItems(list(SCOPES))
        self.scope.setAccessibleName("Where to search")
        self.scope.setAccessibleDescription("This project's sessions or every project's")
        self.view = QTreeView()
        self.view.setAccessibleName("Search results")
        self.view.setAccessibleDescription("Matches grouped by session; Enter opens the session at the match")
        self.view.setObjectName("searchResults")
        self.view.setHeaderHidden(True)
        self.view.setModel(self.model)
        self.view.setItemDelegate(HitDelegate(self.view))
        self.view.setUniformRowHeights(True)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.view.setExpandsOnDoubleClick(False)
        self.status = plain_label("Type to search every session.")
        self.status.setObjectName("searchStatus")
        self.open_button = QPushButton("Open")
        self.open_button.setAccessibleDescription("Open the session at the selected match")
        self.open_button.setEnabled(False)

        top = QHBoxLayout()
        top.addWidget(self.query, 1)
        top.addWidget(self.scope)
        bottom = QHBoxLayout()
        bottom.addWidget(self.status, 1)
        bottom.addWidget(self.open_button)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.view, 1)
        layout.addLayout(bottom)

        self._timer = QTimer(self, singleShot=True, interval=SEARCH_DELAY_MS)
        self._timer.timeout.connect(self.run_search)
        self._running = 0  # generation of the search whose results are shown
        self._files_done = (0, 0)
        self.query.textChanged.connect(self._on_query_changed)
        self.scope.currentIndexChanged.connect(lambda _i: self.run_search())
        self.search.found.connect(self._on_found)
        self.search.progress.connect(self._on_progress)
        self.search.finished.connect(self._on_finished)
        self.view.doubleClicked.connect(
            self.open_index
        )  # not `activated`: a single click there on some styles
        self.view.selectionModel().currentChanged.connect(
            lambda current, _prev: self.open_button.setEnabled(current.isValid())
        )
        self.open_button.clicked.connect(lambda: self.open_index(self.view.currentIndex()))
        self.resize(900, 560)

    @property
    def all_projects(self) -> bool:
        return self.scope.currentIndex() == 1

    def set_query(self, text: str) -> None:
        self.query.setText(text)
        self.run_search()

    def _on_query_changed(self, _text: str) -> None:
        self.search.cancel()  # stop the old search now; the new one starts after the pause
        self._timer.start()

    def run_search(self) -> None:
        self._timer.stop()
        self.model.clear()
        self.model.show_cwd = self.all_projects
        text = self.query.text().strip()
        if not text:
            self.search.cancel()
            self._running = 0
            self.status.setText("Type to search every session.")
            return
        everywhere = self.all_projects
        self._running = self.search.start(text, lambda: self.list_files(everywhere))
        self.status.setText("Searching…")

    def _on_found(self, generation: int, result: SessionHits) -> None:
        if generation != self._running:
            return
        parent = self.model.add(result)
        self.view.expand(parent)
        if not self.view.currentIndex().isValid():
            self.view.setCurrentIndex(self.model.index(0, 0, parent))
        self._show_status(done=False)

    def _on_progress(self, generation: int, done: int, total: int) -> None:
        if generation == self._running:
            self._files_done = (done, total)
            self._show_status(done=False)

    def _on_finished(self, generation: int) -> None:
        if generation == self._running:
            self._show_status(done=True)

    def _show_status(self, done: bool) -> None:
        hits, sessions = self.model.hit_count, len(self.model.sessions)
        found = f"{hits} result{'s' if hits != 1 else ''} in {sessions} session{'s' if sessions != 1 else ''}"
        if done:
            self.status.setText(found if hits else "Nothing found.")
        else:
            files_done, total = self._files_done
            self.status.setText(f"{found} — searched {files_done} of {total} sessions…")

    def open_index(self, index: QModelIndex) -> None:
        if not index.isValid():
            return
        hit = self.model.hit_at(index)
        if hit is not None:
            path, found = hit
            # The name stands for the whole session: open it as it is, like its session row.
            self.hitChosen.emit(str(path), "" if found.kind == SESSION_NAME else found.entry_id)
        else:
            self.hitChosen.emit(str(index.data(PathRole)), "")

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Down, Qt.Key.Key_Up) and self.query.hasFocus():
            self.view.setFocus()
            self.view.keyPressEvent(event)
            return
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.open_index(self.view.currentIndex())
            return
        super().keyPressEvent(event)

    def done(self, result: int) -> None:
        self.search.cancel()
        super().done(result)
