"""The Changes panel: every file changed since an entry of the session, hunk by hunk, to review and revert.

The files "since" are the entry's checkpoint (by default where the current branch's work starts, or the
entry :meth:`ChangesPanel.show_since` names) against the files on disk now, by any tool, commands
included (``core/checkpoints/changes.py``). Computing the changes, colouring a file and reverting run in
workers; the GUI thread lays out the rows and paints them. Reviewed marks are state-only session entries
(``piwork.review``) that Pi never sends to the model; a hunk that changes again is a new, unreviewed one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import shiboken6
from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt, QTimer, Signal
from PySide6.QtGui import QFontDatabase, QKeySequence, QPalette, QShortcut, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDockWidget,
    QListView,
    QMenu,
    QPushButton,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from piwork.core.agent import AgentEvent, AgentSettled, ToolExecutionEnd, TreeNavigated
from piwork.core.checkpoints import (
    NO_GIT_NOTICE,
    ChangedSinceShown,
    ChangeSet,
    FileChange,
    Hunk,
    NoCheckpoint,
    SessionCheckpoints,
    branch_start,
    changes_since,
    record_review,
    revert_file,
    revert_hunk,
    reviewed_keys,
)
from piwork.core.errors import PiworkError
from piwork.core.session import SessionTree
from piwork.core.settings_schema import CHECKPOINTS_MAX_FILE_MB
from piwork.core.workflows import AgentRuntime
from piwork.gui.background import BackgroundTasks, LatestWins, Request
from piwork.gui.changes.colouring import DiffRows, diff_rows
from piwork.gui.changes.diff_model import DiffDelegate, DiffModel
from piwork.gui.changes.files_model import STATUS_WORDS, FilesModel
from piwork.gui.chat.elided_label import ElidedLabel
from piwork.gui.dialogs import ask_yes_no
from piwork.gui.flow_layout import FlowLayout
from piwork.gui.inert_text import plain_label, plain_tip

REFRESH_DELAY_MS = 300  # after a tool call ends: one pass for a burst of calls
NOTHING_YET = "No file has changed on this branch yet."
POINTS_LISTED = 30  # prompts "Since…" offers
FILE_REVIEWED_TIP = "Mark every change of this file reviewed (kept in the session)"
HUNK_REVIEWED_TIP = "Mark this hunk reviewed, or no longer (R; kept in the session)"
REVERT_FILE_TIP = "Put the whole file back as it was (asks first)"
REVERT_HUNK_TIP = "Put back only this hunk's lines as they were (asks first)"


@dataclass(frozen=True)
class Computed:
    """What a worker found: the changes (None with a message saying why there are none to show)."""

    entry: str | None
    since: str
    changes: ChangeSet | None
    marks: frozenset[str]
    message: str | None = None
    store: SessionCheckpoints | None = None  # the session's checkpoints, opened by the worker
    points: tuple[tuple[str, str], ...] = ()  # (entry id, words) of the path's prompts, newest first


def _entry_words(tree: SessionTree, entry_id: str) -> str:
    record = tree.record(entry_id)
    if record is None:
        return entry_id
    summary = tree.summary(record)
    what = summary.role or summary.type
    preview = " ".join(summary.preview.split())[:60]
    return f"{what}: “{preview}”" if preview else what


def prompts_on_path(tree: SessionTree, limit: int = POINTS_LISTED) -> tuple[tuple[str, str], ...]:
    """The current path's user messages, newest first: the points "Since…" offers."""
    found: list[tuple[str, str]] = []
    for record in reversed(tree.path()):
        if record.type == "message" and record.role == "user":
            found.append((str(record.id), _entry_words(tree, str(record.id))))
            if len(found) >= limit:
                break
    return tuple(found)


def compute(
    checkpoints: SessionCheckpoints, tree: SessionTree, chosen: str | None, request: Request | None = None
) -> Computed:
    """In a worker: the changes since ``chosen`` (None: the start of the current branch's work)."""
    points = prompts_on_path(tree)
    entry = chosen or branch_start(tree)
    if entry is None:
        return Computed(None, "", None, frozenset(), NOTHING_YET, checkpoints, points)
    words = _entry_words(tree, entry)
    if chosen:
        since = f"Since {words}"
    elif (record := tree.record(entry)) is not None and record.parent_id is None:
        since = "Since the session began"
    else:
        since = f"Since this branch left {words}"
    marks = reviewed_keys(tree)
    try:
        changes = changes_since(checkpoints, tree, entry)
    except NoCheckpoint:
        message = NOTHING_YET if not chosen else "No files were checkpointed at or before this entry."
        return Computed(entry, since, None, marks, message, checkpoints, points)
    return Computed(entry, since, changes, marks, None, checkpoints, points)


class ChangesPanel(QWidget):
    showSince = Signal(str)  # the same as calling ``show_since`` (for views that prefer a signal)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("changesPanel")
        self._runtime: AgentRuntime | None = None
        self._store: SessionCheckpoints | None = None  # the open session's checkpoints, once opened
        self._marked: list[tuple[frozenset[str], bool]] = []  # marks written from here, in order
        self._unsubscribe: Callable[[], None] | None = None
        self._chosen: str | None = None  # the entry asked for; None: the branch start
        self.changes: ChangeSet | None = None
        self.marks: frozenset[str] = frozenset()
        self.current: FileChange | None = None
        self.hunk = 0
        self._note: str | None = None  # said before the summary once the changes are shown again
        self._stale = True  # what is shown may be out of date: computed again when next shown
        self._work = LatestWins()
        self._rows_work = LatestWins()  # a file's rows, made in a worker
        self._tasks = BackgroundTasks()
        self._refresh_timer = QTimer(self)
        self._refresh_timer.setSingleShot(True)
        self._refresh_timer.setInterval(REFRESH_DELAY_MS)
        self._refresh_timer.timeout.connect(self.refresh)
        self.showSince.connect(self.show_since)
        self._build()
        self._update_actions()

    # ---- building ------------------------------------------------------------------------------

    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(4)
        top = FlowLayout(spacing=4)
        self.since_label = ElidedLabel(self)
        self.since_label.setObjectName("changesSince")
        top.addWidget(self.since_label, 1)
        self.branch_start_button = QPushButton("Branch Start", self)
        self.branch_start_button.setToolTip("Show the changes since the start of this branch's work")
        self.branch_start_button.clicked.connect(self.show_branch_start)
        top.addWidget(self.branch_start_button)
        self.since_button = QToolButton(self)
        self.since_button.setText("Since…")
        self.since_button.setToolTip("Show the changes since one of this branch's prompts")
        self.since_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.since_menu = QMenu(self.since_button)
        self.since_button.setMenu(self.since_menu)
        top.addWidget(self.since_button)
        self.refresh_button = QPushButton("Refresh", self)
        self.refresh_button.setToolTip("Compare the files on disk again")
        self.refresh_button.clicked.connect(self.refresh)
        top.addWidget(self.refresh_button)
        layout.addLayout(top)
        self.summary = plain_label("", self)
        self.summary.setObjectName("changesSummary")
        self.summary.setWordWrap(True)
        layout.addWidget(self.summary)

        self.splitter = QSplitter(Qt.Orientation.Vertical, self)
        self.files_model = FilesModel(self)
        self.files = QListView(self.splitter)
        self.files.setObjectName("changedFiles")
        self.files.setAccessibleName("Changed files")
        self.files.setModel(self.files_model)
        self.files.setUniformItemSizes(True)
        self.files.setLayoutMode(QListView.LayoutMode.Batched)
        self.files.setBatchSize(2_000)
        self.files.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.files.selectionModel().currentRowChanged.connect(self._file_chosen)

        below = QWidget(self.splitter)
        column = QVBoxLayout(below)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(4)
        file_row = FlowLayout(spacing=4)
        self.file_title = ElidedLabel(below)
        self.file_title.setObjectName("changedFileTitle")
        file_row.addWidget(self.file_title, 1)
        self.file_reviewed = QPushButton("File Reviewed", below)
        self.file_reviewed.setCheckable(True)
        self.file_reviewed.clicked.connect(self.toggle_file_reviewed)
        file_row.addWidget(self.file_reviewed)
        self.revert_file_button = QPushButton("Revert File…", below)
        self.revert_file_button.clicked.connect(lambda: self._tasks.spawn(self.revert_current_file()))
        file_row.addWidget(self.revert_file_button)
        column.addLayout(file_row)

        hunk_row = FlowLayout(spacing=4)
        self.previous_hunk = QToolButton(below)
        self.previous_hunk.setText("▲")
        self.previous_hunk.setToolTip("Previous hunk (P)")
        self.previous_hunk.setAccessibleName("Previous hunk")
        self.previous_hunk.clicked.connect(lambda: self.go_to_hunk(self.hunk - 1))
        self.next_hunk = QToolButton(below)
        self.next_hunk.setText("▼")
        self.next_hunk.setToolTip("Next hunk (N)")
        self.next_hunk.setAccessibleName("Next hunk")
        self.next_hunk.clicked.connect(lambda: self.go_to_hunk(self.hunk + 1))
        self.hunk_label = plain_label("", below)
        self.hunk_label.setObjectName("hunkPosition")
        self.hunk_reviewed = QPushButton("Hunk Reviewed", below)
        self.hunk_reviewed.setCheckable(True)
        self.hunk_reviewed.clicked.connect(self.toggle_hunk_reviewed)
        self.revert_hunk_button = QPushButton("Revert Hunk…", below)
        self.revert_hunk_button.clicked.connect(lambda: self._tasks.spawn(self.revert_current_hunk()))
        for widget in (self.previous_hunk, self.next_hunk, self.hunk_label):
            hunk_row.addWidget(widget)
        hunk_row.addStretch(1)
        hunk_row.addWidget(self.hunk_reviewed)
        hunk_row.addWidget(self.revert_hunk_button)
        column.addLayout(hunk_row)

        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.diff_model = DiffModel(self)
        self.diff = QListView(below)
        self.diff.setObjectName("changeHunks")
        self.diff.setAccessibleName("Hunks of the changed file")
        self.diff.setModel(self.diff_model)
        self.diff.setUniformItemSizes(True)
        self.diff.setLayoutMode(QListView.LayoutMode.Batched)  # 30,000 rows are laid out in steps
        self.diff.setBatchSize(2_000)
        self.diff.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.delegate = DiffDelegate(font, self.diff)
        self.diff.setItemDelegate(self.delegate)
        self.diff.selectionModel().currentRowChanged.connect(self._diff_row_chosen)
        column.addWidget(self.diff, 1)
        self.splitter.addWidget(self.files)
        self.splitter.addWidget(below)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 3)
        layout.addWidget(self.splitter, 1)
        # reviewing by keyboard while the focus is in the panel (it has no text field to type in)
        for key, act in (
            ("N", lambda: self.go_to_hunk(self.hunk + 1)),
            ("P", lambda: self.go_to_hunk(self.hunk - 1)),
            ("R", self._review_key),
        ):
            shortcut = QShortcut(QKeySequence(key), self)
            shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
            shortcut.activated.connect(act)

    # ---- the session ---------------------------------------------------------------------------

    def attach(self, runtime: AgentRuntime) -> None:
        self.detach()
        self._runtime, self._store, self._marked = runtime, None, []
        self._chosen = None
        self._unsubscribe = runtime.session.subscribe(self._on_event)
        self._stale = True
        if self.isVisible():
            self.refresh()

    def detach(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self._runtime, self._store = None, None
        self._work.cancel()
        self._rows_work.cancel()
        if not shiboken6.isValid(self):  # the window went first
            return
        self._refresh_timer.stop()
        self._show(Computed(None, "", None, frozenset(), "No session is open."))

    def shutdown(self) -> None:
        self.detach()
        self._tasks.cancel_all()

    def _on_event(self, event: AgentEvent) -> None:
        if isinstance(event, (ToolExecutionEnd, AgentSettled, TreeNavigated)):
            self._stale = True
            if self.isVisible():
                self._refresh_timer.start()

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if self._stale and self._runtime is not None:
            self.refresh()

    # ---- what is shown -------------------------------------------------------------------------

    def show_since(self, entry_id: str) -> None:
        """Show the files changed since ``entry_id`` (the tree's "Changes since here"), opening the panel."""
        self._chosen = entry_id
        self._reveal()
        self.refresh()

    def show_branch_start(self) -> None:
        self._chosen = None
        self.refresh()

    def _reveal(self) -> None:
        widget = self.parentWidget()
        while widget is not None and not isinstance(widget, QDockWidget):
            widget = widget.parentWidget()
        if widget is not None:
            widget.show()
            widget.raise_()

    def _opener(self) -> Callable[[], SessionCheckpoints] | str:
        """What opens the session's checkpoints (in a worker: it loads the git-related code and resolves
        paths; the folder and size limit are the checkpointer's), or why there are none."""
        runtime = self._runtime
        if runtime is None:
            return "No session is open."
        if runtime.session.checkpointer is None:
            return "Checkpoints are turned off in Settings: changes cannot be shown."
        path = runtime.store.path
        if path is None:
            return NOTHING_YET
        if self._store is not None:
            store = self._store
            return lambda: store
        limit = runtime.resources.settings.values.value(CHECKPOINTS_MAX_FILE_MB)
        cwd, agent_dir = runtime.store.cwd, Path(runtime.resources.agent_dir)
        return lambda: SessionCheckpoints(cwd, path, agent_dir, limit)

    def refresh(self) -> None:
        """Compute the changes again (in a worker); the rows shown stay until the new ones arrive."""
        self._refresh_timer.stop()
        opener = self._opener()
        runtime = self._runtime
        if isinstance(opener, str) or runtime is None:
            self._show(Computed(self._chosen, "", None, frozenset(), str(opener)))
            return
        self._stale = False
        tree, chosen = runtime.store.tree, self._chosen
        self.summary.setText("Comparing the files…" if self.changes is None else self.summary.text())
        marked = len(self._marked)
        self._work.start(
            lambda request: compute(opener(), tree, chosen, request),
            lambda found: self._computed(runtime, found, marked),
            self._failed,
            failures=(OSError, PiworkError),
        )

    def _computed(self, runtime: AgentRuntime, found: Computed, marked: int) -> None:
        if runtime is not self._runtime:
            return
        self._store = found.store
        marks = found.marks
        for keys, reviewed in self._marked[marked:]:  # written while the worker read the tree
            marks = marks | keys if reviewed else marks - keys
        self._show(replace(found, marks=marks))

    def _failed(self, error: Exception) -> None:
        self._show(
            Computed(self._chosen, "", None, self.marks, f"The changes could not be computed: {error}")
        )

    def _show(self, found: Computed) -> None:
        previous = self.current.path if self.current is not None else None
        self.changes, self.marks = found.changes, found.marks
        self.since_label.setText(found.since)
        self._list_points(found.points)
        files = found.changes.files if found.changes is not None else ()
        self.files_model.set_files(files, self.marks)
        note, self._note = self._note, None
        text = found.message or self._summary_text()
        self.summary.setText(f"{note} {text}" if note else text)
        row = self.files_model.row_of(previous) if previous else -1
        if files:
            self.files.setCurrentIndex(self.files_model.index(max(row, 0), 0))
            self._file_chosen(self.files.currentIndex())
        else:
            self._show_file(None)

    def _list_points(self, points: tuple[tuple[str, str], ...]) -> None:
        self.since_menu.clear()
        for entry_id, words in points:
            action = self.since_menu.addAction(words.replace("&", "&&"))
            action.setCheckable(True)
            action.setChecked(entry_id == self._chosen)
            action.triggered.connect(lambda _checked=False, chosen=entry_id: self.show_since(chosen))
        self.since_button.setEnabled(bool(points))

    def _summary_text(self) -> str:
        changes = self.changes
        if changes is None:
            return ""
        if not changes.files:
            return "No file differs from then."
        reviewed = sum(1 for f in changes.files if f.reviewed(self.marks))
        counts = {s: sum(1 for f in changes.files if f.status == s) for s in STATUS_WORDS}
        parts = [f"{n} {STATUS_WORDS[s]}" for s, n in counts.items() if n]
        text = f"{len(changes.files)} file(s) changed: {', '.join(parts)}; {reviewed} reviewed."
        return text if changes.uses_git else f"{text} {NO_GIT_NOTICE}"

    def _file_chosen(self, index: QModelIndex) -> None:
        change = self.files_model.file_at(index.row())
        if change is not self.current:
            self._show_file(change)

    def _show_file(self, change: FileChange | None) -> None:
        shown = self.diff_model.change
        same_file = shown is not None and change is not None and shown.path == change.path
        self.current = change
        self._rows_work.cancel()
        if not same_file:  # the same file computed again keeps its rows until the new ones come
            self.hunk = 0
            self.diff_model.show(None, self.marks)
        if change is None or self.changes is None:
            self.diff_model.show(None, self.marks)
            self.file_title.setText("")
            self._update_actions()
            return
        self.file_title.setText(f"{change.path} ({STATUS_WORDS[change.status]})")
        changes, dark = self.changes, self._dark()
        self._rows_work.start(
            lambda request: diff_rows(changes, change, dark), lambda rows: self._rows_ready(rows, same_file)
        )
        self._update_actions()

    def _rows_ready(self, rows: DiffRows, same_file: bool) -> None:
        if rows.change is not self.current:
            return
        scrolled = self.diff.verticalScrollBar().value() if same_file else 0
        hunks = rows.change.hunks
        biggest = max(
            (max(h.old_start + len(h.old_lines), h.new_start + len(h.new_lines)) for h in hunks), default=0
        )
        self.delegate.digits = max(3, len(str(biggest)))
        self.diff_model.show(rows, self.marks)
        self.hunk = min(self.hunk, max(len(hunks) - 1, 0))
        self.diff.verticalScrollBar().setValue(scrolled)
        self._update_actions()

    def _dark(self) -> bool:
        return self.palette().color(QPalette.ColorRole.Base).lightness() < 128

    def _diff_row_chosen(self, index: QModelIndex) -> None:
        row = self.diff_model.row_at(index.row())
        if row is not None and row.hunk >= 0 and row.hunk != self.hunk:
            self.hunk = row.hunk
            self._update_actions()

    def go_to_hunk(self, number: int) -> None:
        change = self.current
        if change is None or not change.hunks:
            return
        self.hunk = max(0, min(number, len(change.hunks) - 1))
        row = self.diff_model.header_row(self.hunk)
        index = self.diff_model.index(row, 0)
        self.diff.selectionModel().setCurrentIndex(index, QItemSelectionModel.SelectionFlag.ClearAndSelect)
        self.diff.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtTop)
        self._update_actions()

    def current_hunk(self) -> Hunk | None:
        change = self.current
        if change is None or not 0 <= self.hunk < len(change.hunks):
            return None
        return change.hunks[self.hunk]

    def _read_only(self) -> str | None:
        runtime = self._runtime
        if runtime is None:
            return "No session is open."
        if runtime.store.read_only:  # open elsewhere: its files and marks are that window's to change
            why = runtime.store.read_only_reason or "it is open elsewhere"
            return f"This session is read-only ({why}): nothing is marked or reverted from here."
        return None

    def _update_actions(self) -> None:
        change, hunk = self.current, self.current_hunk()
        read_only = self._read_only()
        count = len(change.hunks) if change is not None else 0
        self.hunk_label.setText(f"Hunk {self.hunk + 1} of {count}" if count else "")
        self.previous_hunk.setEnabled(count > 0 and self.hunk > 0)
        self.next_hunk.setEnabled(count > 0 and self.hunk < count - 1)
        self.file_reviewed.setEnabled(change is not None and read_only is None)
        self.file_reviewed.setChecked(change is not None and change.reviewed(self.marks))
        self.hunk_reviewed.setEnabled(hunk is not None and read_only is None)
        self.hunk_reviewed.setChecked(
            hunk is not None and change is not None and (hunk.key in self.marks or change.key in self.marks)
        )
        self.file_reviewed.setToolTip(plain_tip(read_only or FILE_REVIEWED_TIP))
        self.hunk_reviewed.setToolTip(plain_tip(read_only or HUNK_REVIEWED_TIP))
        cannot = change.revert_note if change is not None and not change.can_revert else None
        self.revert_file_button.setToolTip(plain_tip(read_only or cannot or REVERT_FILE_TIP))
        self.revert_hunk_button.setToolTip(plain_tip(read_only or REVERT_HUNK_TIP))
        self.revert_file_button.setEnabled(change is not None and change.can_revert and read_only is None)
        self.revert_hunk_button.setEnabled(hunk is not None and read_only is None)
        self.branch_start_button.setEnabled(self._runtime is not None and self._chosen is not None)
        self.refresh_button.setEnabled(self._runtime is not None)

    # ---- reviewing -----------------------------------------------------------------------------

    def toggle_file_reviewed(self) -> None:
        change = self.current
        if change is None:
            return
        self._mark(change.review_keys(), change.path, not change.reviewed(self.marks))

    def _review_key(self) -> None:
        if self.hunk_reviewed.isEnabled():
            self.hunk_reviewed.click()

    def toggle_hunk_reviewed(self) -> None:
        change, hunk = self.current, self.current_hunk()
        if change is None or hunk is None:
            return
        if hunk.key in self.marks or change.key in self.marks:
            self._mark((hunk.key, change.key), change.path, False)  # the file is no longer all reviewed
        else:
            self._mark((hunk.key,), change.path, True)

    def _mark(self, keys: tuple[str, ...], path: str, reviewed: bool) -> None:
        runtime = self._runtime
        if runtime is None or self._read_only() is not None:
            self._update_actions()
            return
        try:
            record_review(runtime.store.tree, keys, [path], reviewed)
        except (OSError, PiworkError) as err:
            self.summary.setText(f"The review mark could not be saved: {err}")
            self._update_actions()
            return
        self._marked.append((frozenset(keys), reviewed))
        self.marks = self.marks | set(keys) if reviewed else self.marks - set(keys)
        self.files_model.set_marks(self.marks)
        self.diff_model.set_marks(self.marks)
        self.summary.setText(self._summary_text())
        self._update_actions()

    # ---- reverting -----------------------------------------------------------------------------

    async def revert_current_hunk(self) -> None:
        change, hunk, changes = self.current, self.current_hunk(), self.changes
        store = self._store
        if change is None or hunk is None or changes is None or store is None or self._read_only():
            return
        question = (
            f"Put back lines {hunk.header} of {change.path} as they were, and leave the rest of the file "
            "as it is now?"
        )
        if not await ask_yes_no(self, "Revert Hunk", question):
            return
        await self._revert(
            lambda: revert_hunk(store, changes, change, hunk), f"A hunk of {change.path} was reverted."
        )

    async def revert_current_file(self) -> None:
        change, changes = self.current, self.changes
        store = self._store
        if change is None or changes is None or store is None or self._read_only():
            return
        if change.status == "added":
            question = f"Delete {change.path}? It did not exist then."
        else:
            question = f"Put {change.path} back as it was, losing every change made to it since?"
        if not await ask_yes_no(self, "Revert File", question):
            return
        await self._revert(lambda: revert_file(store, changes, change), f"{change.path} was reverted.")

    async def _revert(self, work: Callable[[], None], done: str) -> None:
        try:
            await asyncio.to_thread(work)
        except ChangedSinceShown as err:
            self._note = f"Nothing was reverted: {err}."
            self.refresh()
            return
        except (OSError, PiworkError) as err:
            self.summary.setText(f"Nothing was reverted: {err}")
            return
        self._note = done
        self.refresh()
