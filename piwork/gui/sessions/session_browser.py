"""The session browser dialog: scope, search, sort, named-only; open, rename, delete (to the trash).

Listing, renaming (which reads and indexes the file, then appends and syncs an entry) and deleting run off
the GUI thread; ``renamed`` and ``deleted`` say when they are done."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from pathlib import Path

from PySide6.QtCore import QFile, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from piwork.core.errors import PiworkError
from piwork.core.session import SessionInfo, open_session
from piwork.gui.background import BackgroundTasks
from piwork.gui.dialogs import ask_text, ask_yes_no, tell
from piwork.gui.inert_text import plain_label
from piwork.gui.sessions.listing_worker import SessionListing
from piwork.gui.sessions.session_model import (
    COL_CREATED,
    COL_MODIFIED,
    InfoRole,
    SessionFilterProxy,
    SessionListModel,
    title_of,
)
from piwork.gui.window_flags import dialog_buttons

Confirm = Callable[[str, str], Awaitable[bool]]  # (title, question) -> yes?
AskName = Callable[[str], Awaitable[str | None]]  # current name -> new name, None = cancelled


def _ask_yes_no(parent: QWidget) -> Confirm:
    return lambda title, question: ask_yes_no(parent, title, question)


def _ask_name(parent: QWidget) -> AskName:
    # The dialog starts with `current` selected: typing replaces it, an arrow key keeps it to edit.
    return lambda current: ask_text(parent, "Rename Session", "Session name:", current)


def move_to_trash(path: str) -> bool:
    result = QFile.moveToTrash(path)  # PySide6 returns a bool or (bool, path in trash) depending on version
    return bool(result[0] if isinstance(result, tuple) else result)


def rename_session_file(path: str, name: str) -> None:
    """Append a session_info entry naming the session (never rewrites the file)."""
    session = open_session(path)
    try:
        session.tree.set_name(name)
    finally:
        session.close()


async def delete_session_file(path: str, confirm: Confirm) -> str:
    """Move ``path`` to the trash, or delete it after a second confirmation; returns what happened.
    The file work runs in a worker thread; ``confirm`` is asked on the GUI thread."""
    if await asyncio.to_thread(move_to_trash, path):
        return "trashed"
    if not await confirm(
        "Delete Permanently?", f"There is no trash here. Delete this file for good?\n\n{path}"
    ):
        return "kept"
    await asyncio.to_thread(os.remove, path)
    return "deleted"


class SessionBrowser(QDialog):
    sessionChosen = Signal(str)  # path
    renamed = Signal(str)  # path, once the name is written (or the rename failed and said so)
    deleted = Signal(str)  # path, once the delete finished (or was refused or failed)

    def __init__(
        self,
        cwd: str,
        agent_dir: Path,
        session_dir: Path | None = None,
        parent: QWidget | None = None,
        *,
        confirm: Confirm | None = None,
        ask_name: AskName | None = None,
    ) -> None:
        super().__init__(parent)
        dialog_buttons(self, maximize=True)
        self.setWindowTitle("Sessions")
        self.setObjectName("sessionBrowser")
        self.cwd = cwd
        self._confirm = confirm or _ask_yes_no(self)
        self._ask_name = ask_name or _ask_name(self)
        self.listing = SessionListing(agent_dir, session_dir, self)
        self._tasks = BackgroundTasks()
        self.model = SessionListModel(self)
        self.proxy = SessionFilterProxy(self)
        self.proxy.setSourceModel(self.model)

        self.scope = QComboBox(self)
        self.scope.addItem("This project", "project")
        self.scope.addItem("All projects", "all")
        self.scope.setAccessibleName("Which sessions")
        self.scope.setAccessibleDescription("Sessions of this project only, or of every project")
        self.search = QLineEdit(self)
        self.search.setAccessibleName("Search sessions")
        self.search.setPlaceholderText("Search names and messages…")
        self.search.setClearButtonEnabled(True)
        self.sort = QComboBox(self)
        self.sort.addItem("Newest modified", COL_MODIFIED)
        self.sort.addItem("Newest created", COL_CREATED)
        self.sort.setAccessibleName("Sort by")
        self.sort.setAccessibleDescription("Order the sessions by when they were last changed or created")
        self.named_only = QCheckBox("Named only", self)
        self.named_only.setAccessibleDescription("List only the sessions you gave a name")
        self.table = QTableView(self)
        self.table.setAccessibleName("Sessions")
        self.table.setAccessibleDescription("Enter opens the selected session")
        self.table.setObjectName("sessionTable")
        self.table.setModel(self.proxy)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.table.setWordWrap(False)
        date_width = self.table.fontMetrics().horizontalAdvance("2026-12-31 23:59") + 24
        for column in (2, 3):  # dates on one line (sized once: measuring every row is slow on long lists)
            self.table.setColumnWidth(column, date_width)
        self.table.setSortingEnabled(False)
        self.progress = QProgressBar(self)
        self.progress.setMaximumHeight(14)
        self.status = plain_label(parent=self)
        self.open_button = QPushButton("Open", self)
        self.open_button.setAccessibleDescription("Open the selected session in the window")
        self.open_button.setDefault(True)
        self.rename_button = QPushButton("Rename…", self)
        self.rename_button.setAccessibleDescription("Give the selected session another name")
        self.delete_button = QPushButton("Delete…", self)
        self.delete_button.setAccessibleDescription("Delete the selected session file, after asking")
        close_button = QPushButton("Close", self)
        close_button.setAccessibleDescription("Close the session browser")

        top = QHBoxLayout()
        top.addWidget(self.scope)
        top.addWidget(self.search, 1)
        top.addWidget(self.sort)
        top.addWidget(self.named_only)
        bottom = QHBoxLayout()
        bottom.addWidget(self.status, 1)
        bottom.addWidget(self.progress)
        bottom.addWidget(self.open_button)
        bottom.addWidget(self.rename_button)
        bottom.addWidget(self.delete_button)
        bottom.addWidget(close_button)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)
        layout.addLayout(bottom)
        self.resize(900, 560)

        self.scope.currentIndexChanged.connect(lambda _i: self.refresh())
        self.search.textChanged.connect(self._on_query)
        self.named_only.toggled.connect(self._on_named_only)
        self.sort.currentIndexChanged.connect(lambda _i: self._apply_sort())
        self.table.doubleClicked.connect(lambda _index: self.open_selected())
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._update_buttons())
        self.open_button.clicked.connect(self.open_selected)
        self.rename_button.clicked.connect(self.rename_selected)
        self.delete_button.clicked.connect(self.delete_selected)
        close_button.clicked.connect(self.reject)
        self.listing.progress.connect(self._on_progress)
        self.listing.finished.connect(self._on_listed)
        self.listing.failed.connect(self._on_failed)
        self._update_buttons()

    # ---- listing -----------------------------------------------------------------------------

    def refresh(self) -> None:
        self.progress.setRange(0, 0)
        self.progress.show()
        self.status.setText("Reading sessions…")
        self.listing.start(self.cwd if self.scope.currentData() == "project" else None)

    def _on_progress(self, done: int, total: int) -> None:
        self.progress.setRange(0, max(1, total))
        self.progress.setValue(done)

    def _on_listed(self, infos: list[SessionInfo]) -> None:
        self.model.set_sessions(infos)
        self.progress.hide()
        mismatched = sum(1 for i in infos if i.cwd_mismatch)
        text = f"{len(infos)} session{'s' if len(infos) != 1 else ''}"
        if mismatched:
            text += f" · {mismatched} started in another folder (⚠)"
        self.status.setText(text)
        self._apply_sort()
        if self.proxy.rowCount():
            self.table.selectRow(0)
        self._update_buttons()

    def _on_failed(self, message: str) -> None:
        self.progress.hide()
        self.status.setText(message)

    # ---- filtering and sorting ---------------------------------------------------------------

    def _on_query(self, text: str) -> None:
        self.model.fetch_all()
        self.proxy.set_query(text)
        self._update_buttons()

    def _on_named_only(self, on: bool) -> None:
        self.model.fetch_all()
        self.proxy.set_named_only(on)
        self._update_buttons()

    def _apply_sort(self) -> None:
        column = int(self.sort.currentData())
        if column != COL_MODIFIED:
            self.model.fetch_all()
        self.proxy.sort(column, Qt.SortOrder.DescendingOrder)

    # ---- actions -----------------------------------------------------------------------------

    def selected_info(self) -> SessionInfo | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows:
            return None
        info = rows[0].data(InfoRole)
        return info if isinstance(info, SessionInfo) else None

    def select_path(self, path: str) -> bool:
        for row in range(self.proxy.rowCount()):
            index = self.proxy.index(row, 0)
            info = index.data(InfoRole)
            if isinstance(info, SessionInfo) and str(info.path) == path:
                self.table.selectRow(row)
                return True
        return False

    def _update_buttons(self) -> None:
        has = self.selected_info() is not None
        for button in (self.open_button, self.rename_button, self.delete_button):
            button.setEnabled(has)

    def open_selected(self) -> None:
        info = self.selected_info()
        if info is None:
            return
        self.sessionChosen.emit(str(info.path))
        self.accept()

    def rename_selected(self) -> None:
        info = self.selected_info()
        if info is None:
            return
        shown = title_of(info)  # what the list shows: the name, else the first message's line
        current = info.name or ("" if shown == "—" else shown)
        self._tasks.spawn(self._rename(str(info.path), current))

    async def _rename(self, path: str, current: str) -> None:
        name = await self._ask_name(current)
        if name is None or name == current:
            return  # cancelled, or accepted unchanged: nothing to write
        try:
            try:
                await asyncio.to_thread(rename_session_file, path, name)
            except (PiworkError, OSError) as err:
                tell(self, "Rename failed", str(err))
                return
            self.model.rename_path(path, " ".join(name.split()))
        finally:
            self.renamed.emit(path)

    def delete_selected(self) -> None:
        info = self.selected_info()
        if info is None:
            return
        question = f"Move this session to the trash?\n\n{title_of(info)}\n{info.path}"
        self._tasks.spawn(self._delete(str(info.path), question))

    async def _delete(self, path: str, question: str) -> None:
        try:
            if not await self._confirm("Delete Session", question):
                return
            try:
                outcome = await delete_session_file(path, self._confirm)
            except OSError as err:
                tell(self, "Delete failed", str(err))
                return
            if outcome != "kept":
                self.model.remove_path(path)
                self.status.setText(f"Session {'moved to the trash' if outcome == 'trashed' else 'deleted'}.")
            self._update_buttons()
        finally:
            self.deleted.emit(path)

    def done(self, result: int) -> None:
        self.listing.cancel()  # a listing still running stops after the file it is reading
        self._tasks.cancel_all()  # a rename or delete already in its thread still finishes there
        super().done(result)
